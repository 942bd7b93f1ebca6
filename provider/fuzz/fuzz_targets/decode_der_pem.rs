//! Fuzz target: the provider's key codec (`provider/src/codec`) on arbitrary
//! DER and PEM: `decode_private_key_info`, `decode_spki`, the
//! `algorithm_oid_of_*` probes, and on what they accept the encoders
//! (`encode_private_key_info`, `encode_spki`, `pem_encode`, `key_to_text`).
//!
//! Input layout: one selector byte, then the document (DER, or PEM with the
//! label `PRIVATE KEY` or `PUBLIC KEY`; the provider itself only decodes
//! DER, OpenSSL unwraps PEM before it, so here the codec's strict test
//! decoder `pem_decode` unwraps it). The selector picks the private key
//! formats the decoder accepts:
//!
//! - bits 0-5: one bit per `PrivateKeyFormat::ALL` entry; none set means
//!   all formats (OpenSSL's default), unless bit 6 is set: then none;
//! - bit 7: the enabled formats in reverse order of preference.
//!
//! The document is tried as every parameter set's `PrivateKeyInfo` and
//! `SubjectPublicKeyInfo`. Checked, besides "never panics":
//!
//! - what decodes names the parameter set's OID, and keys have its lengths;
//!   `WrongAlgorithm` only for a well-formed structure with another OID;
//! - an SPKI re-encodes to exactly its input (strict DER), and so does a
//!   PrivateKeyInfo unless it holds what the encoder never writes
//!   (version 2, attributes, a public key, the oqskeypair ek);
//! - exactly one enabled format matches, and the material decoded is what
//!   that format carries;
//! - the material re-encodes in every format that can carry it, and
//!   decodes back to the same material;
//! - accepted PEM re-armours to exactly its input;
//! - `parse_format_list` on the document (as text) keeps the known names,
//!   in order, without duplicates.

#![no_main]

use std::borrow::Cow;

use libfuzzer_sys::fuzz_target;
use mlkem::codec::{self, CodecError, DecodedPrivateKey, KeyLayout, PrivateKeyFormat, SEED_LEN};

/// The three parameter sets: OIDs 2.16.840.1.101.3.4.4.{1,2,3} and the
/// FIPS 203 key lengths.
const LAYOUTS: [KeyLayout; 3] = [
    KeyLayout {
        name: "ML-KEM-512",
        oid: &[0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x04, 0x01],
        ek_len: 800,
        dk_len: 1632,
    },
    KeyLayout {
        name: "ML-KEM-768",
        oid: &[0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x04, 0x02],
        ek_len: 1184,
        dk_len: 2400,
    },
    KeyLayout {
        name: "ML-KEM-1024",
        oid: &[0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x04, 0x03],
        ek_len: 1568,
        dk_len: 3168,
    },
];

/// The PEM labels of the two structures.
const PEM_LABELS: [&str; 2] = ["PRIVATE KEY", "PUBLIC KEY"];

fuzz_target!(|data: &[u8]| {
    let Some((&selector, document)) = data.split_first() else {
        return;
    };
    check_format_list(document);
    let formats = formats_from_selector(selector);
    let der = unwrap_pem(document).map_or(Cow::Borrowed(document), Cow::Owned);
    for layout in &LAYOUTS {
        check_spki(layout, &der);
        check_private_key_info(layout, &der, &formats);
    }
});

fn formats_from_selector(selector: u8) -> Vec<PrivateKeyFormat> {
    let mut formats: Vec<PrivateKeyFormat> = PrivateKeyFormat::ALL
        .into_iter()
        .enumerate()
        .filter(|&(bit, _)| selector & (1 << bit) != 0)
        .map(|(_, format)| format)
        .collect();
    if formats.is_empty() && selector & 0x40 == 0 {
        formats = codec::parse_format_list(None).expect("the default list is valid");
        assert_eq!(formats, PrivateKeyFormat::ALL);
    }
    if selector & 0x80 != 0 {
        formats.reverse();
    }
    formats
}

/// The DER inside `document` if it is PEM the codec's strict decoder takes.
fn unwrap_pem(document: &[u8]) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(document).ok()?;
    PEM_LABELS.into_iter().find_map(|label| {
        let der = codec::pem_decode(label, text)?;
        assert_eq!(
            codec::pem_encode(label, &der).expect("a valid label").as_str(),
            text,
            "accepted PEM re-armours to its input"
        );
        Some(der)
    })
}

fn check_spki(layout: &KeyLayout, der: &[u8]) {
    let oid = codec::algorithm_oid_of_spki(der);
    match codec::decode_spki(layout, der) {
        Ok(ek) => {
            assert_eq!(oid, Some(layout.oid), "{}: SPKI OID", layout.name);
            assert_eq!(ek.len(), layout.ek_len, "{}: ek length", layout.name);
            assert_eq!(
                codec::encode_spki(layout, ek),
                der,
                "{}: an accepted SPKI re-encodes to its input",
                layout.name
            );
            let text = codec::key_to_text(layout, None, None, Some(ek), true, 15)
                .expect("a public key prints");
            assert!(text.contains(" Public-Key:\n"));
        }
        Err(CodecError::WrongAlgorithm) => assert!(
            oid.is_some_and(|oid| oid != layout.oid),
            "{}: WrongAlgorithm needs another OID, got {oid:02x?}",
            layout.name
        ),
        Err(_) => {}
    }
}

fn check_private_key_info(layout: &KeyLayout, der: &[u8], formats: &[PrivateKeyFormat]) {
    let oid = codec::algorithm_oid_of_private_key_info(der);
    let decoded = match codec::decode_private_key_info(layout, der, formats) {
        Ok(decoded) => decoded,
        Err(CodecError::WrongAlgorithm) => {
            assert!(
                oid.is_some_and(|oid| oid != layout.oid),
                "{}: WrongAlgorithm needs another OID, got {oid:02x?}",
                layout.name
            );
            return;
        }
        Err(CodecError::NoFormatsEnabled) => {
            assert!(formats.is_empty(), "NoFormatsEnabled with {formats:?}");
            return;
        }
        Err(_) => return,
    };
    assert_eq!(oid, Some(layout.oid), "{}: PrivateKeyInfo OID", layout.name);
    let seed = decoded.seed.as_deref();
    let dk = decoded.dk.as_deref().map(Vec::as_slice);
    if let Some(dk) = dk {
        assert_eq!(dk.len(), layout.dk_len, "{}: dk length", layout.name);
    }

    // The payload's length and outer tag differ between the six formats of
    // each parameter set, so exactly one can have matched.
    let matched: Vec<PrivateKeyFormat> = formats
        .iter()
        .copied()
        .filter(|&format| codec::decode_private_key_info(layout, der, &[format]).is_ok())
        .collect();
    let [format] = matched[..] else {
        panic!("{}: formats {matched:?} all match", layout.name);
    };
    assert_eq!(seed.is_some(), carries_seed(format), "{format:?} seed");
    assert_eq!(dk.is_some(), carries_dk(format), "{format:?} dk");

    let ek = dk.map(|dk| embedded_ek(layout, dk));
    let reencoded = codec::encode_private_key_info(
        layout,
        seed,
        dk.unwrap_or_default(),
        ek.unwrap_or_default(),
        &[format],
    )
    .expect("decoded material re-encodes in its own format");
    if format != PrivateKeyFormat::OqsKeypair && reencoded.as_slice() != der {
        assert!(
            der.len() > reencoded.len() || only_version_differs(der, &reencoded),
            "{}: {format:?} input differs from its re-encoding beyond version, \
             attributes and public key",
            layout.name
        );
    }

    for format in PrivateKeyFormat::ALL {
        check_reencoding(layout, format, seed, dk, ek);
    }

    let text = codec::key_to_text(layout, seed, dk, ek, true, 15).expect("a private key prints");
    assert!(text.contains(" Private-Key:\n"));
    assert_eq!(
        codec::key_to_text(layout, seed, dk, ek, false, 15).is_ok(),
        ek.is_some(),
        "public text needs an ek"
    );
}

/// Encodes the material in `format` and decodes it back.
fn check_reencoding(
    layout: &KeyLayout,
    format: PrivateKeyFormat,
    seed: Option<&[u8; SEED_LEN]>,
    dk: Option<&[u8]>,
    ek: Option<&[u8]>,
) {
    let encoded = codec::encode_private_key_info(
        layout,
        seed,
        dk.unwrap_or_default(),
        ek.unwrap_or_default(),
        &[format],
    );
    if carries_seed(format) && seed.is_none() {
        assert_eq!(encoded.err(), Some(CodecError::NoFormat), "{format:?}");
        return;
    }
    if carries_dk(format) && dk.is_none() {
        assert_eq!(
            encoded.err(),
            Some(CodecError::WrongKeyLength),
            "{format:?}"
        );
        return;
    }
    let encoded = encoded.unwrap_or_else(|e| panic!("{}: {format:?}: {e}", layout.name));
    assert_eq!(
        codec::algorithm_oid_of_private_key_info(&encoded),
        Some(layout.oid)
    );
    let back = codec::decode_private_key_info(layout, &encoded, &[format])
        .unwrap_or_else(|e| panic!("{}: {format:?} does not decode: {e}", layout.name));
    let expected = DecodedPrivateKey {
        seed: seed.filter(|_| carries_seed(format)).map(|s| (*s).into()),
        dk: dk.filter(|_| carries_dk(format)).map(|d| d.to_vec().into()),
    };
    assert_eq!(back.seed, expected.seed, "{format:?} seed round trip");
    assert_eq!(back.dk, expected.dk, "{format:?} dk round trip");
}

/// `parse_format_list` on `document` as text: the known names, first
/// occurrence first.
fn check_format_list(document: &[u8]) {
    let Ok(text) = std::str::from_utf8(document) else {
        return;
    };
    let mut expected: Vec<PrivateKeyFormat> = Vec::new();
    for format in text
        .split([' ', '\t', ','])
        .filter_map(PrivateKeyFormat::from_name)
    {
        if !expected.contains(&format) {
            expected.push(format);
        }
    }
    match codec::parse_format_list(Some(text)) {
        Ok(formats) => assert_eq!(formats, expected, "format list {text:?}"),
        Err(error) => {
            assert_eq!(error, CodecError::NoFormatsEnabled);
            assert!(expected.is_empty(), "format list {text:?}");
        }
    }
}

fn carries_seed(format: PrivateKeyFormat) -> bool {
    use PrivateKeyFormat::*;
    matches!(format, SeedPriv | SeedOnly | BareSeed)
}

fn carries_dk(format: PrivateKeyFormat) -> bool {
    use PrivateKeyFormat::*;
    matches!(format, SeedPriv | PrivOnly | OqsKeypair | BarePriv)
}

/// The ek inside a dk: `dk_PKE ‖ ek ‖ H(ek) ‖ z`.
fn embedded_ek<'a>(layout: &KeyLayout, dk: &'a [u8]) -> &'a [u8] {
    let at = layout.dk_len - 64 - layout.ek_len;
    &dk[at..at + layout.ek_len]
}

/// Whether `input` is `reencoded` with version 1 (v2) in place of 0: one
/// differing byte, 1 where the re-encoding has 0.
fn only_version_differs(input: &[u8], reencoded: &[u8]) -> bool {
    if input.len() != reencoded.len() {
        return false;
    }
    let mut differing = input.iter().zip(reencoded).filter(|(a, b)| a != b);
    matches!((differing.next(), differing.next()), (Some((1, 0)), None))
}
