//! Base64 (RFC 4648, section 4: standard alphabet, with padding).
//!
//! Encoding runs in time independent of the data, with no secret-indexed
//! table lookups, since it is used on private keys.

/// Characters the encoding of `len` bytes takes.
pub(super) const fn encoded_len(len: usize) -> usize {
    len.div_ceil(3) * 4
}

/// Appends the Base64 encoding of `data` to `out`.
pub(super) fn encode_into(out: &mut String, data: &[u8]) {
    for chunk in data.chunks(3) {
        let mut block = [0; 3];
        block[..chunk.len()].copy_from_slice(chunk);
        let [a, b, c] = block;
        let sextets = [
            a >> 2,
            (a << 4 | b >> 4) & 0x3f,
            (b << 2 | c >> 6) & 0x3f,
            c & 0x3f,
        ];
        // A chunk of n bytes yields n + 1 characters; the rest is padding.
        for (i, sextet) in sextets.into_iter().enumerate() {
            out.push(if i <= chunk.len() {
                encode_sextet(sextet)
            } else {
                '='
            });
        }
    }
}

/// The alphabet character for a 6-bit value, without branching on it.
///
/// `(k - s) >> 8` is all ones exactly when `s > k` (an arithmetic shift of
/// a negative number), so each line adds the gap between two ranges of the
/// alphabet only for values past the first: `A`-`Z`, `a`-`z`, `0`-`9`, `+`,
/// `/`.
fn encode_sextet(sextet: u8) -> char {
    let s = i16::from(sextet);
    let mut c = s + i16::from(b'A');
    c += ((25 - s) >> 8) & 6;
    c -= ((51 - s) >> 8) & 75;
    c -= ((61 - s) >> 8) & 15;
    c += ((62 - s) >> 8) & 3;
    char::from(c.to_le_bytes()[0])
}

/// Decodes canonical padded Base64: no whitespace, and unused bits of the
/// last character must be zero. For tests and the fuzz targets only; not
/// constant-time.
#[cfg(any(test, feature = "fuzzing"))]
pub(super) fn decode(text: &str) -> Option<Vec<u8>> {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let text = text.as_bytes();
    if !text.len().is_multiple_of(4) {
        return None;
    }
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let blocks = text.len() / 4;
    for (index, block) in text.chunks(4).enumerate() {
        let padding = block.iter().rev().take_while(|&&c| c == b'=').count();
        if padding > 2 || (padding > 0 && index + 1 != blocks) {
            return None;
        }
        let mut bits = 0u32;
        for &c in &block[..4 - padding] {
            let value = ALPHABET.iter().position(|&a| a == c)?;
            bits = bits << 6 | value as u32;
        }
        bits <<= 6 * padding;
        let bytes = &bits.to_be_bytes()[1..4 - padding];
        if bits.to_be_bytes()[4 - padding..].iter().any(|&b| b != 0) {
            return None;
        }
        out.extend_from_slice(bytes);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encode(data: &[u8]) -> String {
        let mut out = String::new();
        encode_into(&mut out, data);
        assert_eq!(out.len(), encoded_len(data.len()));
        out
    }

    /// RFC 4648, section 10.
    const VECTORS: [(&str, &str); 7] = [
        ("", ""),
        ("f", "Zg=="),
        ("fo", "Zm8="),
        ("foo", "Zm9v"),
        ("foob", "Zm9vYg=="),
        ("fooba", "Zm9vYmE="),
        ("foobar", "Zm9vYmFy"),
    ];

    #[test]
    fn rfc_4648_vectors() {
        for (data, base64) in VECTORS {
            assert_eq!(encode(data.as_bytes()), base64);
            assert_eq!(decode(base64).as_deref(), Some(data.as_bytes()));
        }
    }

    #[test]
    fn every_sextet_maps_to_the_alphabet() {
        let alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        for (sextet, expected) in (0..64).zip(alphabet.chars()) {
            assert_eq!(encode_sextet(sextet), expected, "{sextet}");
        }
    }

    #[test]
    fn every_byte_value() {
        let data: Vec<u8> = (0..=255).collect();
        let base64 = encode(&data);
        assert!(base64.starts_with("AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8g"));
        assert!(base64.ends_with("+/w=="));
        assert_eq!(decode(&base64), Some(data));
    }

    #[test]
    fn decode_is_strict() {
        for bad in [
            "Zg=", "Zg===", "Z===", "Zh==", "Zm9=", "Zg==Zg==", "Zm9v\n", "Zm 9",
        ] {
            assert_eq!(decode(bad), None, "{bad:?}");
        }
    }
}
