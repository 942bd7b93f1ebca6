//! The PKCS#8 envelope: `PrivateKeyInfo` (RFC 5208) and, on input, its
//! version-2 form `OneAsymmetricKey` (RFC 5958).
//!
//! ```text
//! OneAsymmetricKey ::= SEQUENCE {
//!     version              INTEGER { v1(0), v2(1) },
//!     privateKeyAlgorithm  AlgorithmIdentifier,      -- parameters absent
//!     privateKey           OCTET STRING,             -- the payload
//!     attributes       [0] IMPLICIT Attributes OPTIONAL,
//!     publicKey        [1] IMPLICIT BIT STRING OPTIONAL }  -- v2 only
//! ```

use zeroize::Zeroizing;

use super::der::{self, Reader};
use super::format::PrivateKeyFormat;
use super::payload::{self, Payload};
use super::{algorithm, CodecError, DecodedPrivateKey, KeyLayout, SEED_LEN};

/// The content of `version` for v1, the version we write.
const VERSION_1: u8 = 0;
/// The content of `version` for v2, which may carry a public key.
const VERSION_2: u8 = 1;

/// Encodes a DER `PrivateKeyInfo` in the first of `formats` the key
/// material allows, as OpenSSL does: formats that carry the seed are
/// skipped when `seed` is `None`.
///
/// `dk` (and, for [`PrivateKeyFormat::OqsKeypair`], `ek`) must have
/// `layout`'s lengths if the chosen format holds them. The output is version
/// 0 with absent algorithm parameters and no attributes.
///
/// # Errors
///
/// [`CodecError::NoFormatsEnabled`] if `formats` is empty,
/// [`CodecError::NoFormat`] if every format needs the missing seed, and
/// [`CodecError::WrongKeyLength`] if a key the format holds has the wrong
/// length.
pub fn encode_private_key_info(
    layout: &KeyLayout,
    seed: Option<&[u8; SEED_LEN]>,
    dk: &[u8],
    ek: &[u8],
    formats: &[PrivateKeyFormat],
) -> Result<Zeroizing<Vec<u8>>, CodecError> {
    if formats.is_empty() {
        return Err(CodecError::NoFormatsEnabled);
    }
    let payload = formats
        .iter()
        .find_map(|&format| Payload::new(format, seed, dk, ek))
        .ok_or(CodecError::NoFormat)?;
    payload.check_lengths(layout)?;

    let payload_len = payload.encoded_len();
    let version_len = der::tlv_len([VERSION_1].len());
    let body_len = version_len + algorithm::encoded_len(layout.oid) + der::tlv_len(payload_len);
    // Sized up front so the secret is never left behind by a reallocation.
    let mut out = Zeroizing::new(Vec::with_capacity(der::tlv_len(body_len)));
    der::write_header(&mut out, der::SEQUENCE, body_len);
    der::write_tlv(&mut out, der::INTEGER, &[VERSION_1]);
    algorithm::write(&mut out, layout.oid);
    der::write_header(&mut out, der::OCTET_STRING, payload_len);
    payload.write(&mut out);
    debug_assert_eq!(out.len(), der::tlv_len(body_len));
    Ok(out)
}

/// Decodes a DER `PrivateKeyInfo` (or v2 `OneAsymmetricKey`) for `layout`
/// whose payload is in one of `formats`.
///
/// The envelope must be strict DER with version 0 or 1 and absent algorithm
/// parameters. Attributes, and in a v2 key the public key, are skipped. The
/// payload's length and outer tag pick its format, as in OpenSSL.
///
/// # Errors
///
/// [`CodecError::WrongAlgorithm`] if the key is for another algorithm: the
/// caller's cue to decline quietly. [`CodecError::UnexpectedParameters`]
/// for algorithm parameters, [`CodecError::NoFormatsEnabled`] for empty
/// `formats`, [`CodecError::NoFormat`] if the payload fits none of them, and
/// [`CodecError::Malformed`] for anything else that is wrong.
pub fn decode_private_key_info(
    layout: &KeyLayout,
    der: &[u8],
    formats: &[PrivateKeyFormat],
) -> Result<DecodedPrivateKey, CodecError> {
    let mut fields = Reader::new(der::parse_exact(der, der::SEQUENCE)?);
    let may_have_public_key = match fields.read(der::INTEGER)? {
        [VERSION_1] => false,
        [VERSION_2] => true,
        _ => return Err(CodecError::Malformed),
    };
    algorithm::expect(&mut fields, layout.oid)?;
    let private_key = fields.read(der::OCTET_STRING)?;
    fields.read_optional(der::CONTEXT_0_CONSTRUCTED)?;
    if may_have_public_key {
        fields.read_optional(der::CONTEXT_1)?;
    }
    fields.finish()?;
    if formats.is_empty() {
        return Err(CodecError::NoFormatsEnabled);
    }
    payload::decode(layout, private_key, formats)
}

/// The algorithm object identifier (its DER content bytes) of a
/// `PrivateKeyInfo`, or `None` if `der` does not start like one.
///
/// Only the fields up to the identifier are checked: this is for choosing a
/// [`KeyLayout`], after which [`decode_private_key_info`] checks the rest.
#[must_use]
pub fn algorithm_oid_of_private_key_info(der: &[u8]) -> Option<&[u8]> {
    let mut fields = Reader::new(der::parse_exact(der, der::SEQUENCE).ok()?);
    fields.read(der::INTEGER).ok()?;
    algorithm::read_oid(&mut fields).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::testutil::{
        has_dk, has_seed, keys, seed, XorShift, LAYOUTS, ML_KEM_1024, ML_KEM_512, ML_KEM_768,
    };
    use PrivateKeyFormat::*;

    const ALL: &[PrivateKeyFormat] = &PrivateKeyFormat::ALL;

    fn encode_768(format: PrivateKeyFormat) -> Zeroizing<Vec<u8>> {
        let (dk, ek) = keys(&ML_KEM_768);
        encode_private_key_info(&ML_KEM_768, Some(&seed()), &dk, &ek, &[format]).unwrap()
    }

    /// Rebuilds a `PrivateKeyInfo` from its fields' DER.
    fn envelope(fields: &[&[u8]]) -> Vec<u8> {
        let body: Vec<u8> = fields.concat();
        let mut out = Vec::new();
        der::write_tlv(&mut out, der::SEQUENCE, &body);
        out
    }

    /// The DER of the ML-KEM-768 `privateKey` OCTET STRING for `format`.
    fn private_key_field(format: PrivateKeyFormat) -> Vec<u8> {
        let der = encode_768(format);
        let mut fields = Reader::new(der::parse_exact(&der, der::SEQUENCE).unwrap());
        fields.read(der::INTEGER).unwrap();
        fields.read(der::SEQUENCE).unwrap();
        let mut field = Vec::new();
        der::write_tlv(
            &mut field,
            der::OCTET_STRING,
            fields.read(der::OCTET_STRING).unwrap(),
        );
        field
    }

    /// The `version` field of a v1 and a v2 key.
    const V1: &[u8] = &[0x02, 0x01, 0x00];
    const V2: &[u8] = &[0x02, 0x01, 0x01];
    const ALG_768: &[u8] = &[
        0x30, 0x0b, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x04, 0x02,
    ];

    #[test]
    fn seed_only_512_is_the_ietf_example() {
        // draft-ietf-lamps-kyber-certificates, ML-KEM-512 seed format with
        // the seed 00 01 .. 3f.
        let mut expected = vec![
            0x30, 0x54, 0x02, 0x01, 0x00, 0x30, 0x0b, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65,
            0x03, 0x04, 0x04, 0x01, 0x04, 0x42, 0x80, 0x40,
        ];
        expected.extend_from_slice(&seed());
        let (dk, ek) = keys(&ML_KEM_512);
        let der =
            encode_private_key_info(&ML_KEM_512, Some(&seed()), &dk, &ek, &[SeedOnly]).unwrap();
        assert_eq!(*der, expected);
    }

    #[test]
    fn seed_priv_768_layout() {
        let der = encode_768(SeedPriv);
        assert_eq!(der.len(), 2498);
        assert_eq!(der[..4], [0x30, 0x82, 0x09, 0xbe]);
        assert_eq!(der[4..7], *V1);
        assert_eq!(der[7..20], *ALG_768);
        assert_eq!(
            der[20..30],
            [0x04, 0x82, 0x09, 0xaa, 0x30, 0x82, 0x09, 0xa6, 0x04, 0x40]
        );
        assert_eq!(der[30..94], seed());
        assert_eq!(der[94..98], [0x04, 0x82, 0x09, 0x60]);
        assert_eq!(der[98..], keys(&ML_KEM_768).0);
        // Written in place: no reallocation left a copy behind.
        assert_eq!(der.capacity(), der.len());
    }

    #[test]
    fn envelope_lengths_for_every_format() {
        // Payload lengths from OpenSSL plus the envelope: 24 bytes, or 20
        // when the payload is short enough for one-byte lengths.
        let expected = [
            (ML_KEM_512, [0x06aa, 0x0664, 0x0984, 0x42, 0x0660, 0x40]),
            (ML_KEM_768, [0x09aa, 0x0964, 0x0e04, 0x42, 0x0960, 0x40]),
            (ML_KEM_1024, [0x0caa, 0x0c64, 0x1284, 0x42, 0x0c60, 0x40]),
        ];
        for (layout, payload_lens) in expected {
            let (dk, ek) = keys(&layout);
            for (format, payload_len) in PrivateKeyFormat::ALL.into_iter().zip(payload_lens) {
                let der =
                    encode_private_key_info(&layout, Some(&seed()), &dk, &ek, &[format]).unwrap();
                let envelope = if payload_len < 0x80 { 20 } else { 24 };
                assert_eq!(
                    der.len(),
                    payload_len + envelope,
                    "{} {format}",
                    layout.name
                );
            }
        }
    }

    #[test]
    fn round_trips_every_format() {
        for layout in &LAYOUTS {
            let (dk, ek) = keys(layout);
            for format in PrivateKeyFormat::ALL {
                let der =
                    encode_private_key_info(layout, Some(&seed()), &dk, &ek, &[format]).unwrap();
                let decoded = decode_private_key_info(layout, &der, ALL).unwrap();
                assert_eq!(decoded.seed.as_deref(), has_seed(format).then_some(&seed()));
                assert_eq!(decoded.dk.as_deref(), has_dk(format).then_some(&dk));
                assert_eq!(algorithm_oid_of_private_key_info(&der), Some(layout.oid));
            }
        }
    }

    #[test]
    fn output_format_is_the_first_possible() {
        let (dk, ek) = keys(&ML_KEM_768);
        let encode = |seed: Option<&[u8; SEED_LEN]>, formats: &[PrivateKeyFormat]| {
            encode_private_key_info(&ML_KEM_768, seed, &dk, &ek, formats).map(|der| der.len())
        };
        assert_eq!(encode(Some(&seed()), ALL), Ok(24 + 0x09aa));
        assert_eq!(encode(None, ALL), Ok(24 + 0x0964));
        assert_eq!(
            encode(None, &[SeedOnly, BareSeed, BarePriv]),
            Ok(24 + 0x0960)
        );
        assert_eq!(encode(Some(&seed()), &[BareSeed, SeedPriv]), Ok(20 + 0x40));
        assert_eq!(
            encode(None, &[SeedOnly, BareSeed]),
            Err(CodecError::NoFormat)
        );
        assert_eq!(
            encode(Some(&seed()), &[]),
            Err(CodecError::NoFormatsEnabled)
        );
    }

    #[test]
    fn wrong_key_lengths_are_refused() {
        let (dk, ek) = keys(&ML_KEM_768);
        let encode = |dk: &[u8], ek: &[u8], format| {
            encode_private_key_info(&ML_KEM_768, Some(&seed()), dk, ek, &[format])
        };
        assert_eq!(
            encode(&dk[1..], &ek, PrivOnly).unwrap_err(),
            CodecError::WrongKeyLength
        );
        assert_eq!(
            encode(&dk, &ek[1..], OqsKeypair).unwrap_err(),
            CodecError::WrongKeyLength
        );
        assert!(encode(&[], &[], SeedOnly).is_ok());
    }

    #[test]
    fn oqs_keypair_ignores_the_public_half() {
        let der = encode_768(OqsKeypair);
        let decoded = decode_private_key_info(&ML_KEM_768, &der, ALL).unwrap();
        assert!(decoded.seed.is_none());
        assert_eq!(decoded.dk.as_deref(), Some(&keys(&ML_KEM_768).0));
    }

    #[test]
    fn another_algorithm_is_reported_as_such() {
        let der = encode_768(SeedPriv);
        for layout in [ML_KEM_512, ML_KEM_1024] {
            assert_eq!(
                decode_private_key_info(&layout, &der, ALL).unwrap_err(),
                CodecError::WrongAlgorithm
            );
        }
        // Even when no formats are enabled, "not ours" comes first.
        assert_eq!(
            decode_private_key_info(&ML_KEM_512, &der, &[]).unwrap_err(),
            CodecError::WrongAlgorithm
        );
    }

    #[test]
    fn algorithm_parameters_are_refused() {
        let mut alg = ALG_768.to_vec();
        alg[1] += 2;
        alg.extend_from_slice(&[0x05, 0x00]);
        let der = envelope(&[V1, &alg, &private_key_field(SeedOnly)]);
        assert_eq!(
            decode_private_key_info(&ML_KEM_768, &der, ALL).unwrap_err(),
            CodecError::UnexpectedParameters
        );
    }

    #[test]
    fn no_enabled_formats() {
        let der = encode_768(SeedOnly);
        assert_eq!(
            decode_private_key_info(&ML_KEM_768, &der, &[]).unwrap_err(),
            CodecError::NoFormatsEnabled
        );
        assert_eq!(
            decode_private_key_info(&ML_KEM_768, &der, &[SeedPriv, PrivOnly]).unwrap_err(),
            CodecError::NoFormat
        );
    }

    #[test]
    fn version_2_may_carry_attributes_and_a_public_key() {
        let key = private_key_field(SeedOnly);
        let attributes: &[u8] = &[0xa0, 0x00];
        let public_key: &[u8] = &[0x81, 0x03, 0x00, 0xaa, 0xbb];
        let ok = [
            envelope(&[V1, ALG_768, &key, attributes]),
            envelope(&[V2, ALG_768, &key]),
            envelope(&[V2, ALG_768, &key, attributes]),
            envelope(&[V2, ALG_768, &key, public_key]),
            envelope(&[V2, ALG_768, &key, attributes, public_key]),
        ];
        for der in ok {
            let decoded = decode_private_key_info(&ML_KEM_768, &der, ALL).unwrap();
            assert_eq!(decoded.seed.as_deref(), Some(&seed()));
        }
        let bad = [
            // A public key needs version 2.
            envelope(&[V1, ALG_768, &key, public_key]),
            // Out of order, repeated or unknown trailing fields.
            envelope(&[V2, ALG_768, &key, public_key, attributes]),
            envelope(&[V1, ALG_768, &key, attributes, attributes]),
            envelope(&[V1, ALG_768, &key, &[0x05, 0x00]]),
        ];
        for der in bad {
            assert_eq!(
                decode_private_key_info(&ML_KEM_768, &der, ALL).unwrap_err(),
                CodecError::Malformed
            );
        }
    }

    #[test]
    fn envelope_must_be_strict() {
        let key = private_key_field(SeedOnly);
        let bad = [
            envelope(&[&[0x02, 0x01, 0x02], ALG_768, &key]),
            envelope(&[&[0x02, 0x02, 0x00, 0x00], ALG_768, &key]),
            envelope(&[&[0x02, 0x00], ALG_768, &key]),
            envelope(&[ALG_768, &key]),
            envelope(&[V1, ALG_768]),
            envelope(&[V1, ALG_768, &key[2..]]),
        ];
        for der in bad {
            assert_eq!(
                decode_private_key_info(&ML_KEM_768, &der, ALL).unwrap_err(),
                CodecError::Malformed,
                "{der:02x?}"
            );
        }

        let mut trailing = encode_768(SeedOnly).to_vec();
        trailing.push(0);
        assert_eq!(
            decode_private_key_info(&ML_KEM_768, &trailing, ALL).unwrap_err(),
            CodecError::Malformed
        );

        // The same key with a non-minimal outer length.
        let good = encode_768(SeedOnly);
        let mut long_form = vec![0x30, 0x81];
        long_form.extend_from_slice(&good[1..]);
        assert_eq!(
            decode_private_key_info(&ML_KEM_768, &long_form, ALL).unwrap_err(),
            CodecError::Malformed
        );
        assert_eq!(algorithm_oid_of_private_key_info(&long_form), None);
    }

    #[test]
    fn oid_lookup() {
        assert_eq!(
            algorithm_oid_of_private_key_info(&encode_768(BarePriv)),
            Some(ML_KEM_768.oid)
        );
        // Works for keys we cannot decode, such as an RSA PrivateKeyInfo.
        let rsa = envelope(&[
            V1,
            &[
                0x30, 0x0d, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01, 0x05,
                0x00,
            ],
            &[0x04, 0x01, 0x00],
        ]);
        assert_eq!(
            algorithm_oid_of_private_key_info(&rsa),
            Some(&[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01][..])
        );
        assert_eq!(
            decode_private_key_info(&ML_KEM_768, &rsa, ALL).unwrap_err(),
            CodecError::WrongAlgorithm
        );
        assert_eq!(algorithm_oid_of_private_key_info(&[]), None);
        assert_eq!(algorithm_oid_of_private_key_info(&[0x30, 0x00]), None);
    }

    #[test]
    fn every_truncation_is_malformed() {
        for format in PrivateKeyFormat::ALL {
            let der = encode_768(format);
            for len in 0..der.len() {
                assert_eq!(
                    decode_private_key_info(&ML_KEM_768, &der[..len], ALL).unwrap_err(),
                    CodecError::Malformed,
                    "{format} truncated to {len}"
                );
            }
        }
    }

    #[test]
    fn mutated_and_random_input_never_panics() {
        let mut rng = XorShift::new(0x5eed_1234_abcd_ef01);
        let mut outcomes = [0usize; 2];
        for layout in &LAYOUTS {
            let (dk, ek) = keys(layout);
            for format in PrivateKeyFormat::ALL {
                let valid =
                    encode_private_key_info(layout, Some(&seed()), &dk, &ek, &[format]).unwrap();
                for round in 0..300 {
                    let mut input = rng.mutate(&valid);
                    for _ in 0..round % 3 {
                        input = rng.mutate(&input);
                    }
                    let enabled: Vec<_> = PrivateKeyFormat::ALL
                        .into_iter()
                        .filter(|_| rng.below(3) != 0)
                        .collect();
                    for formats in [ALL, &enabled[..]] {
                        let result = decode_private_key_info(layout, &input, formats);
                        if let Ok(decoded) = &result {
                            assert!(decoded.seed.is_some() || decoded.dk.is_some());
                            if let Some(dk) = &decoded.dk {
                                assert_eq!(dk.len(), layout.dk_len);
                            }
                        }
                        outcomes[usize::from(result.is_ok())] += 1;
                    }
                    let _ = algorithm_oid_of_private_key_info(&input);
                }
            }
        }
        for len in 0..2000 {
            let mut input = rng.bytes(len % 200);
            if len % 2 == 0 {
                input.splice(..0, [0x30, 0x81 + (len % 3) as u8]);
            }
            for layout in &LAYOUTS {
                assert!(decode_private_key_info(layout, &input, ALL).is_err());
            }
            let _ = algorithm_oid_of_private_key_info(&input);
        }
        // Both outcomes occurred: the mutations reach past the first check.
        assert!(outcomes[0] > 0 && outcomes[1] > 0, "{outcomes:?}");
    }
}
