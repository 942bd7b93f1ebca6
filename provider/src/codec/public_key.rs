//! `SubjectPublicKeyInfo` (RFC 5280, section 4.1.2.7) holding an ML-KEM
//! encapsulation key.
//!
//! ```text
//! SubjectPublicKeyInfo ::= SEQUENCE {
//!     algorithm         AlgorithmIdentifier,   -- parameters absent
//!     subjectPublicKey  BIT STRING }           -- 0 unused bits, then ek
//! ```

use super::der::{self, Reader};
use super::{algorithm, CodecError, KeyLayout};

/// Encodes `ek` as a DER `SubjectPublicKeyInfo` for `layout`.
///
/// `ek` should be `layout.ek_len` bytes; the output is well-formed DER
/// whatever its length, but only the right length decodes again.
#[must_use]
pub fn encode_spki(layout: &KeyLayout, ek: &[u8]) -> Vec<u8> {
    let bits_len = 1 + ek.len();
    let body_len = algorithm::encoded_len(layout.oid) + der::tlv_len(bits_len);
    let mut out = Vec::with_capacity(der::tlv_len(body_len));
    der::write_header(&mut out, der::SEQUENCE, body_len);
    algorithm::write(&mut out, layout.oid);
    der::write_header(&mut out, der::BIT_STRING, bits_len);
    out.push(0);
    out.extend_from_slice(ek);
    debug_assert_eq!(out.len(), der::tlv_len(body_len));
    out
}

/// Decodes a DER `SubjectPublicKeyInfo` for `layout` and returns the
/// encapsulation key it holds.
///
/// # Errors
///
/// [`CodecError::WrongAlgorithm`] if the key is for another algorithm,
/// [`CodecError::UnexpectedParameters`] for algorithm parameters,
/// [`CodecError::WrongKeyLength`] if the key is not `layout.ek_len` bytes,
/// and [`CodecError::Malformed`] if the DER is not strict or the BIT STRING
/// has unused bits.
pub fn decode_spki<'a>(layout: &KeyLayout, der: &'a [u8]) -> Result<&'a [u8], CodecError> {
    let mut fields = Reader::new(der::parse_exact(der, der::SEQUENCE)?);
    algorithm::expect(&mut fields, layout.oid)?;
    let bits = fields.read(der::BIT_STRING)?;
    fields.finish()?;
    let (&unused_bits, ek) = bits.split_first().ok_or(CodecError::Malformed)?;
    if unused_bits != 0 {
        return Err(CodecError::Malformed);
    }
    if ek.len() != layout.ek_len {
        return Err(CodecError::WrongKeyLength);
    }
    Ok(ek)
}

/// The algorithm object identifier (its DER content bytes) of a
/// `SubjectPublicKeyInfo`, or `None` if `der` does not start like one.
///
/// Only the fields up to the identifier are checked: this is for choosing a
/// [`KeyLayout`], after which [`decode_spki`] checks the rest.
#[must_use]
pub fn algorithm_oid_of_spki(der: &[u8]) -> Option<&[u8]> {
    let mut fields = Reader::new(der::parse_exact(der, der::SEQUENCE).ok()?);
    algorithm::read_oid(&mut fields).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::testutil::{keys, XorShift, LAYOUTS, ML_KEM_1024, ML_KEM_512, ML_KEM_768};

    fn spki(layout: &KeyLayout) -> Vec<u8> {
        encode_spki(layout, &keys(layout).1)
    }

    #[test]
    fn prefixes_match_openssl() {
        let expected: [(KeyLayout, [u8; 22]); 3] = [
            (
                ML_KEM_512,
                [
                    0x30, 0x82, 0x03, 0x32, 0x30, 0x0b, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65,
                    0x03, 0x04, 0x04, 0x01, 0x03, 0x82, 0x03, 0x21, 0x00,
                ],
            ),
            (
                ML_KEM_768,
                [
                    0x30, 0x82, 0x04, 0xb2, 0x30, 0x0b, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65,
                    0x03, 0x04, 0x04, 0x02, 0x03, 0x82, 0x04, 0xa1, 0x00,
                ],
            ),
            (
                ML_KEM_1024,
                [
                    0x30, 0x82, 0x06, 0x32, 0x30, 0x0b, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65,
                    0x03, 0x04, 0x04, 0x03, 0x03, 0x82, 0x06, 0x21, 0x00,
                ],
            ),
        ];
        for (layout, prefix) in expected {
            let der = spki(&layout);
            assert_eq!(der.len(), prefix.len() + layout.ek_len, "{}", layout.name);
            assert_eq!(der[..22], prefix, "{}", layout.name);
            assert_eq!(der[22..], keys(&layout).1, "{}", layout.name);
            assert_eq!(der.capacity(), der.len());
        }
    }

    #[test]
    fn round_trips() {
        for layout in &LAYOUTS {
            let der = spki(layout);
            assert_eq!(decode_spki(layout, &der), Ok(&keys(layout).1[..]));
            assert_eq!(algorithm_oid_of_spki(&der), Some(layout.oid));
        }
    }

    #[test]
    fn another_parameter_set_is_the_wrong_algorithm() {
        let der = spki(&ML_KEM_768);
        assert_eq!(
            decode_spki(&ML_KEM_512, &der),
            Err(CodecError::WrongAlgorithm)
        );
        assert_eq!(
            decode_spki(&ML_KEM_1024, &der),
            Err(CodecError::WrongAlgorithm)
        );
    }

    #[test]
    fn wrong_key_length() {
        let (_, ek) = keys(&ML_KEM_768);
        for len in [0, 1, ek.len() - 1] {
            let der = encode_spki(&ML_KEM_768, &ek[..len]);
            assert_eq!(
                decode_spki(&ML_KEM_768, &der),
                Err(CodecError::WrongKeyLength)
            );
        }
        let mut long = ek.clone();
        long.push(0);
        let der = encode_spki(&ML_KEM_768, &long);
        assert_eq!(
            decode_spki(&ML_KEM_768, &der),
            Err(CodecError::WrongKeyLength)
        );
    }

    #[test]
    fn parameters_are_refused() {
        let der = spki(&ML_KEM_768);
        // Rebuild with a NULL parameter: outer length + 2, algorithm length + 2.
        let mut with_null = vec![0x30, 0x82, 0x04, 0xb4, 0x30, 0x0d];
        with_null.extend_from_slice(&der[6..17]);
        with_null.extend_from_slice(&[0x05, 0x00]);
        with_null.extend_from_slice(&der[17..]);
        assert_eq!(
            decode_spki(&ML_KEM_768, &with_null),
            Err(CodecError::UnexpectedParameters)
        );
        assert_eq!(algorithm_oid_of_spki(&with_null), Some(ML_KEM_768.oid));
    }

    #[test]
    fn strictness() {
        let good = spki(&ML_KEM_768);

        let mut unused_bits = good.clone();
        unused_bits[21] = 1;
        assert_eq!(
            decode_spki(&ML_KEM_768, &unused_bits),
            Err(CodecError::Malformed)
        );

        let mut trailing = good.clone();
        trailing.push(0);
        assert_eq!(
            decode_spki(&ML_KEM_768, &trailing),
            Err(CodecError::Malformed)
        );

        let mut octet_string = good.clone();
        octet_string[17] = der::OCTET_STRING;
        assert_eq!(
            decode_spki(&ML_KEM_768, &octet_string),
            Err(CodecError::Malformed)
        );

        let empty_bits = [
            0x30, 0x0f, 0x30, 0x0b, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x04,
            0x02, 0x03, 0x00,
        ];
        assert_eq!(
            decode_spki(&ML_KEM_768, &empty_bits),
            Err(CodecError::Malformed)
        );

        // Non-minimal outer length (three length octets where two do).
        let mut long_form = vec![0x30, 0x83, 0x00];
        long_form.extend_from_slice(&good[2..]);
        assert_eq!(
            decode_spki(&ML_KEM_768, &long_form),
            Err(CodecError::Malformed)
        );
        assert_eq!(algorithm_oid_of_spki(&long_form), None);

        for len in 0..good.len() {
            assert_eq!(
                decode_spki(&ML_KEM_768, &good[..len]),
                Err(CodecError::Malformed),
                "truncated to {len}"
            );
        }
    }

    #[test]
    fn mutated_input_never_panics() {
        let mut rng = XorShift::new(0x0dd_ba11);
        let mut accepted = 0;
        for layout in &LAYOUTS {
            let valid = spki(layout);
            for _ in 0..1000 {
                let input = rng.mutate(&valid);
                if let Ok(ek) = decode_spki(layout, &input) {
                    assert_eq!(ek.len(), layout.ek_len);
                    accepted += 1;
                }
                let _ = algorithm_oid_of_spki(&input);
            }
        }
        for len in 0..2000 {
            let input = rng.bytes(len % 100);
            for layout in &LAYOUTS {
                assert!(decode_spki(layout, &input).is_err());
            }
            let _ = algorithm_oid_of_spki(&input);
        }
        assert!(accepted > 0);
    }
}
