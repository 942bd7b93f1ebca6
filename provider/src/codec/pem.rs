//! PEM armour (RFC 7468) in OpenSSL's layout: 64 Base64 characters a line,
//! every line ending in `\n`.

use zeroize::Zeroizing;

use super::base64;

/// Input bytes per 64-character line.
const BYTES_PER_LINE: usize = 48;

const BEGIN: &str = "-----BEGIN ";
const END: &str = "-----END ";
const DASHES: &str = "-----\n";

/// Wraps `der` in PEM armour with `label`, such as `"PRIVATE KEY"`,
/// `"ENCRYPTED PRIVATE KEY"` or `"PUBLIC KEY"`.
///
/// The result is zeroized on drop, since it may encode a private key.
#[must_use]
pub fn pem_encode(label: &str, der: &[u8]) -> Zeroizing<String> {
    let lines = der.len().div_ceil(BYTES_PER_LINE);
    let len = BEGIN.len()
        + END.len()
        + 2 * (label.len() + DASHES.len())
        + base64::encoded_len(der.len())
        + lines;
    // Sized up front so the secret is never left behind by a reallocation.
    let mut pem = Zeroizing::new(String::with_capacity(len));
    for part in [BEGIN, label, DASHES] {
        pem.push_str(part);
    }
    for line in der.chunks(BYTES_PER_LINE) {
        base64::encode_into(&mut pem, line);
        pem.push('\n');
    }
    for part in [END, label, DASHES] {
        pem.push_str(part);
    }
    debug_assert_eq!(pem.len(), len);
    pem
}

/// Undoes [`pem_encode`] strictly: the exact label, full 64-character lines
/// but the last, and nothing before or after. For tests and the fuzz
/// targets only (OpenSSL's own decoders unwrap PEM before ours run).
#[cfg(any(test, feature = "fuzzing"))]
pub fn pem_decode(label: &str, pem: &str) -> Option<Vec<u8>> {
    let body = pem
        .strip_prefix(BEGIN)?
        .strip_prefix(label)?
        .strip_prefix(DASHES)?
        .strip_suffix(DASHES)?
        .strip_suffix(label)?
        .strip_suffix(END)?;
    if body.is_empty() {
        return Some(Vec::new());
    }
    let lines: Vec<&str> = body.strip_suffix('\n')?.split('\n').collect();
    let (last, full) = lines.split_last()?;
    if full.iter().any(|line| line.len() != 64) || !(1..=64).contains(&last.len()) {
        return None;
    }
    base64::decode(&lines.concat())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_body() {
        assert_eq!(
            *pem_encode("PUBLIC KEY", &[]),
            "-----BEGIN PUBLIC KEY-----\n-----END PUBLIC KEY-----\n"
        );
        assert_eq!(
            pem_decode("PUBLIC KEY", &pem_encode("PUBLIC KEY", &[])),
            Some(vec![])
        );
    }

    #[test]
    fn short_body() {
        assert_eq!(
            *pem_encode("PRIVATE KEY", b"foobar"),
            "-----BEGIN PRIVATE KEY-----\nZm9vYmFy\n-----END PRIVATE KEY-----\n"
        );
    }

    #[test]
    fn ietf_ml_kem_512_seed_example() {
        // The ML-KEM-512 seed-only PrivateKeyInfo with seed 00 01 .. 3f.
        let mut der = vec![
            0x30, 0x54, 0x02, 0x01, 0x00, 0x30, 0x0b, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65,
            0x03, 0x04, 0x04, 0x01, 0x04, 0x42, 0x80, 0x40,
        ];
        der.extend(0..64);
        assert_eq!(
            *pem_encode("PRIVATE KEY", &der),
            "-----BEGIN PRIVATE KEY-----\n\
             MFQCAQAwCwYJYIZIAWUDBAQBBEKAQAABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZ\n\
             GhscHR4fICEiIyQlJicoKSorLC0uLzAxMjM0NTY3ODk6Ozw9Pj8=\n\
             -----END PRIVATE KEY-----\n"
        );
    }

    #[test]
    fn lines_wrap_at_exactly_64() {
        for (len, line_lens) in [
            (47, &[64][..]),
            (48, &[64]),
            (49, &[64, 4]),
            (96, &[64, 64]),
            (97, &[64, 64, 4]),
            (100, &[64, 64, 8]),
        ] {
            let der: Vec<u8> = (0..len).map(|i| (i * 7) as u8).collect();
            let pem = pem_encode("PUBLIC KEY", &der);
            assert_eq!(pem.capacity(), pem.len());
            let lines: Vec<&str> = pem.lines().collect();
            assert_eq!(lines.first(), Some(&"-----BEGIN PUBLIC KEY-----"));
            assert_eq!(lines.last(), Some(&"-----END PUBLIC KEY-----"));
            let body: Vec<usize> = lines[1..lines.len() - 1].iter().map(|l| l.len()).collect();
            assert_eq!(body, line_lens, "{len} bytes");
            assert!(pem.ends_with("-----\n"));
            assert_eq!(pem_decode("PUBLIC KEY", &pem), Some(der));
        }
    }

    #[test]
    fn decode_is_strict() {
        let der: Vec<u8> = (0..100).collect();
        let pem = pem_encode("PRIVATE KEY", &der).to_string();
        assert_eq!(pem_decode("PRIVATE KEY", &pem), Some(der));
        let bad = [
            pem.replace("PRIVATE KEY", "PUBLIC KEY"),
            pem.replacen('\n', "\r\n", 1),
            pem.trim_end().to_owned(),
            format!("{pem}\n"),
            format!(" {pem}"),
            pem.replacen("\n", "", 2),
            pem.replacen('A', "*", 1),
        ];
        for pem in bad {
            assert_eq!(pem_decode("PRIVATE KEY", &pem), None, "{pem:?}");
        }
    }
}
