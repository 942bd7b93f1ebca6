//! PEM armour (RFC 7468) in OpenSSL's layout: 64 Base64 characters a line,
//! every line ending in `\n`, through RustCrypto's `pem-rfc7468` (whose
//! Base64, `base64ct`, runs in constant time both ways: it is used on
//! private keys).

use pem_rfc7468::LineEnding;
use zeroize::Zeroizing;

use super::CodecError;

/// Wraps `der` in PEM armour with `label`, such as `"PRIVATE KEY"`,
/// `"ENCRYPTED PRIVATE KEY"` or `"PUBLIC KEY"`.
///
/// The result is zeroized on drop, since it may encode a private key, and
/// so is the buffer it is written in.
///
/// # Errors
///
/// [`CodecError::Malformed`] for a label RFC 7468 does not allow.
pub fn pem_encode(label: &str, der: &[u8]) -> Result<Zeroizing<String>, CodecError> {
    let len =
        pem_rfc7468::encoded_len(label, LineEnding::LF, der).map_err(|_| CodecError::Malformed)?;
    let mut buffer = Zeroizing::new(vec![0u8; len]);
    let text = pem_rfc7468::encode(label, LineEnding::LF, der, &mut buffer)
        .map_err(|_| CodecError::Malformed)?;
    // Sized up front so the secret is never left behind by a reallocation.
    let mut pem = Zeroizing::new(String::with_capacity(text.len()));
    pem.push_str(text);
    Ok(pem)
}

/// Undoes [`pem_encode`] strictly: only what it writes (the exact label,
/// full 64-character lines but the last, `\n` line ends, nothing before or
/// after) decodes. For tests and the fuzz targets only (OpenSSL's own
/// decoders unwrap PEM before ours run).
#[cfg(any(test, feature = "fuzzing"))]
pub fn pem_decode(label: &str, pem: &str) -> Option<Vec<u8>> {
    let (found, der) = pem_rfc7468::decode_vec(pem.as_bytes()).ok()?;
    let canonical = found == label && pem_encode(label, &der).ok()?.as_str() == pem;
    canonical.then_some(der)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pem_encode_ok(label: &str, der: &[u8]) -> Zeroizing<String> {
        pem_encode(label, der).expect("a valid label")
    }

    /// No key encodes to empty DER; `pem-rfc7468` writes that body as one
    /// empty line (the hand-written armour before it wrote none), which its
    /// decoder does not take back.
    #[test]
    fn empty_body() {
        let pem = pem_encode_ok("PUBLIC KEY", &[]);
        assert_eq!(
            *pem,
            "-----BEGIN PUBLIC KEY-----\n\n-----END PUBLIC KEY-----\n"
        );
        assert_eq!(pem_decode("PUBLIC KEY", &pem), None);
    }

    #[test]
    fn short_body() {
        assert_eq!(
            *pem_encode_ok("PRIVATE KEY", b"foobar"),
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
            *pem_encode_ok("PRIVATE KEY", &der),
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
            let pem = pem_encode_ok("PUBLIC KEY", &der);
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
        let pem = pem_encode_ok("PRIVATE KEY", &der).to_string();
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
