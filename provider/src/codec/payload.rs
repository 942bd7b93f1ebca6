//! The six layouts of the PKCS#8 `privateKey` content (the "payload"), as
//! OpenSSL 3.5 writes and reads them.

use zeroize::Zeroizing;

use super::der::{self, Reader};
use super::format::PrivateKeyFormat;
use super::{CodecError, DecodedPrivateKey, KeyLayout, SEED_LEN};

/// Key material arranged as one payload format, ready to write.
#[derive(Clone, Copy)]
pub(super) enum Payload<'a> {
    /// `SEQUENCE { OCTET STRING seed, OCTET STRING dk }`.
    SeedPriv {
        seed: &'a [u8; SEED_LEN],
        dk: &'a [u8],
    },
    /// `OCTET STRING dk`.
    PrivOnly { dk: &'a [u8] },
    /// `OCTET STRING (dk || ek)`.
    OqsKeypair { dk: &'a [u8], ek: &'a [u8] },
    /// `[0] IMPLICIT OCTET STRING seed`.
    SeedOnly { seed: &'a [u8; SEED_LEN] },
    /// `dk`.
    BarePriv { dk: &'a [u8] },
    /// `seed`.
    BareSeed { seed: &'a [u8; SEED_LEN] },
}

impl<'a> Payload<'a> {
    /// Arranges the key material as `format`, or `None` if the format needs
    /// a seed and there is none.
    pub(super) fn new(
        format: PrivateKeyFormat,
        seed: Option<&'a [u8; SEED_LEN]>,
        dk: &'a [u8],
        ek: &'a [u8],
    ) -> Option<Self> {
        Some(match format {
            PrivateKeyFormat::SeedPriv => Self::SeedPriv { seed: seed?, dk },
            PrivateKeyFormat::PrivOnly => Self::PrivOnly { dk },
            PrivateKeyFormat::OqsKeypair => Self::OqsKeypair { dk, ek },
            PrivateKeyFormat::SeedOnly => Self::SeedOnly { seed: seed? },
            PrivateKeyFormat::BarePriv => Self::BarePriv { dk },
            PrivateKeyFormat::BareSeed => Self::BareSeed { seed: seed? },
        })
    }

    /// Checks that the keys the payload holds have `layout`'s lengths.
    pub(super) fn check_lengths(&self, layout: &KeyLayout) -> Result<(), CodecError> {
        let (dk_len, ek_len) = self.key_lens();
        if dk_len.is_none_or(|len| len == layout.dk_len)
            && ek_len.is_none_or(|len| len == layout.ek_len)
        {
            Ok(())
        } else {
            Err(CodecError::WrongKeyLength)
        }
    }

    /// The lengths of the decapsulation and encapsulation keys the payload
    /// holds, if it holds them.
    fn key_lens(&self) -> (Option<usize>, Option<usize>) {
        match *self {
            Self::SeedPriv { dk, .. } | Self::PrivOnly { dk } | Self::BarePriv { dk } => {
                (Some(dk.len()), None)
            }
            Self::OqsKeypair { dk, ek } => (Some(dk.len()), Some(ek.len())),
            Self::SeedOnly { .. } | Self::BareSeed { .. } => (None, None),
        }
    }

    /// The format this payload is in.
    fn format(&self) -> PrivateKeyFormat {
        match self {
            Self::SeedPriv { .. } => PrivateKeyFormat::SeedPriv,
            Self::PrivOnly { .. } => PrivateKeyFormat::PrivOnly,
            Self::OqsKeypair { .. } => PrivateKeyFormat::OqsKeypair,
            Self::SeedOnly { .. } => PrivateKeyFormat::SeedOnly,
            Self::BarePriv { .. } => PrivateKeyFormat::BarePriv,
            Self::BareSeed { .. } => PrivateKeyFormat::BareSeed,
        }
    }

    /// The outer tag and content length of this payload.
    fn shape(&self) -> Shape {
        let (dk_len, ek_len) = self.key_lens();
        Shape::new(self.format(), dk_len.unwrap_or(0), ek_len.unwrap_or(0))
    }

    /// Bytes the payload takes.
    pub(super) fn encoded_len(&self) -> usize {
        self.shape().encoded_len()
    }

    /// Appends the payload.
    pub(super) fn write(&self, out: &mut Vec<u8>) {
        let shape = self.shape();
        if let Some(tag) = shape.tag {
            der::write_header(out, tag, shape.content_len);
        }
        match *self {
            Self::SeedPriv { seed, dk } => {
                der::write_tlv(out, der::OCTET_STRING, seed);
                der::write_tlv(out, der::OCTET_STRING, dk);
            }
            Self::PrivOnly { dk } | Self::BarePriv { dk } => out.extend_from_slice(dk),
            Self::OqsKeypair { dk, ek } => {
                out.extend_from_slice(dk);
                out.extend_from_slice(ek);
            }
            Self::SeedOnly { seed } | Self::BareSeed { seed } => out.extend_from_slice(seed),
        }
    }
}

/// The outer tag of a payload (none for the bare formats) and the length of
/// what it wraps: the table OpenSSL matches input against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Shape {
    tag: Option<u8>,
    content_len: usize,
}

impl Shape {
    /// The shape of `format` around keys of the given lengths.
    fn new(format: PrivateKeyFormat, dk_len: usize, ek_len: usize) -> Self {
        let (tag, content_len) = match format {
            PrivateKeyFormat::SeedPriv => (
                Some(der::SEQUENCE),
                der::tlv_len(SEED_LEN) + der::tlv_len(dk_len),
            ),
            PrivateKeyFormat::PrivOnly => (Some(der::OCTET_STRING), dk_len),
            PrivateKeyFormat::OqsKeypair => (Some(der::OCTET_STRING), dk_len + ek_len),
            PrivateKeyFormat::SeedOnly => (Some(der::CONTEXT_0), SEED_LEN),
            PrivateKeyFormat::BarePriv => (None, dk_len),
            PrivateKeyFormat::BareSeed => (None, SEED_LEN),
        };
        Self { tag, content_len }
    }

    /// Bytes a payload of this shape takes.
    fn encoded_len(self) -> usize {
        match self.tag {
            Some(_) => der::tlv_len(self.content_len),
            None => self.content_len,
        }
    }

    /// Whether `payload` has this shape's length and outer tag and length
    /// octets: OpenSSL's test for which format an input is in.
    fn fits(self, payload: &[u8]) -> bool {
        payload.len() == self.encoded_len()
            && self
                .tag
                .is_none_or(|tag| der::parse_exact(payload, tag).is_ok())
    }
}

/// Decodes a payload in the first of `formats` whose shape it fits.
///
/// As in OpenSSL, the outer length and tag pick the format; if its inner
/// structure is then wrong the payload is [`CodecError::Malformed`] rather
/// than tried against the remaining formats. No fitting format is
/// [`CodecError::NoFormat`].
pub(super) fn decode(
    layout: &KeyLayout,
    payload: &[u8],
    formats: &[PrivateKeyFormat],
) -> Result<DecodedPrivateKey, CodecError> {
    let format = formats
        .iter()
        .copied()
        .find(|&format| Shape::new(format, layout.dk_len, layout.ek_len).fits(payload))
        .ok_or(CodecError::NoFormat)?;
    let (seed, dk) = match format {
        PrivateKeyFormat::SeedPriv => {
            let mut fields = Reader::new(der::parse_exact(payload, der::SEQUENCE)?);
            let seed = fields.read(der::OCTET_STRING)?;
            let dk = fields.read(der::OCTET_STRING)?;
            fields.finish()?;
            (Some(seed), Some(dk))
        }
        PrivateKeyFormat::PrivOnly => (None, Some(der::parse_exact(payload, der::OCTET_STRING)?)),
        PrivateKeyFormat::OqsKeypair => {
            // The public half is only checked for length, as OpenSSL does.
            let keys = der::parse_exact(payload, der::OCTET_STRING)?;
            let (dk, ek) = keys
                .split_at_checked(layout.dk_len)
                .ok_or(CodecError::Malformed)?;
            if ek.len() != layout.ek_len {
                return Err(CodecError::Malformed);
            }
            (None, Some(dk))
        }
        PrivateKeyFormat::SeedOnly => (Some(der::parse_exact(payload, der::CONTEXT_0)?), None),
        PrivateKeyFormat::BarePriv => (None, Some(payload)),
        PrivateKeyFormat::BareSeed => (Some(payload), None),
    };
    Ok(DecodedPrivateKey {
        seed: seed.map(copy_seed).transpose()?,
        dk: dk.map(|dk| copy_dk(layout, dk)).transpose()?,
    })
}

/// Copies a seed out of the input into zeroizing memory.
fn copy_seed(bytes: &[u8]) -> Result<Zeroizing<[u8; SEED_LEN]>, CodecError> {
    if bytes.len() != SEED_LEN {
        return Err(CodecError::Malformed);
    }
    let mut seed = Zeroizing::new([0; SEED_LEN]);
    seed.copy_from_slice(bytes);
    Ok(seed)
}

/// Copies a decapsulation key out of the input into zeroizing memory.
fn copy_dk(layout: &KeyLayout, bytes: &[u8]) -> Result<Zeroizing<Vec<u8>>, CodecError> {
    if bytes.len() != layout.dk_len {
        return Err(CodecError::Malformed);
    }
    Ok(Zeroizing::new(bytes.to_vec()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::testutil::{has_dk, has_seed, keys, seed, LAYOUTS, ML_KEM_512, ML_KEM_768};
    use PrivateKeyFormat::*;

    fn encode(layout: &KeyLayout, format: PrivateKeyFormat) -> Vec<u8> {
        let (dk, ek) = keys(layout);
        let seed = seed();
        let payload = Payload::new(format, Some(&seed), &dk, &ek).unwrap();
        payload.check_lengths(layout).unwrap();
        let mut out = Vec::new();
        payload.write(&mut out);
        assert_eq!(out.len(), payload.encoded_len());
        out
    }

    /// `(name, p8_bytes, p8_shift, p8_magic)` from OpenSSL 3.5's
    /// `ml_kem_codecs.c`, for ML-KEM-512, -768 and -1024.
    const OPENSSL_TABLES: [[(&str, usize, usize, u32); 6]; 3] = [
        [
            ("seed-priv", 0x06aa, 0, 0x3082_06a6),
            ("priv-only", 0x0664, 0, 0x0482_0660),
            ("oqskeypair", 0x0984, 0, 0x0482_0980),
            ("seed-only", 0x0042, 2, 0x8040),
            ("bare-priv", 0x0660, 4, 0),
            ("bare-seed", 0x0040, 4, 0),
        ],
        [
            ("seed-priv", 0x09aa, 0, 0x3082_09a6),
            ("priv-only", 0x0964, 0, 0x0482_0960),
            ("oqskeypair", 0x0e04, 0, 0x0482_0e00),
            ("seed-only", 0x0042, 2, 0x8040),
            ("bare-priv", 0x0960, 4, 0),
            ("bare-seed", 0x0040, 4, 0),
        ],
        [
            ("seed-priv", 0x0caa, 0, 0x3082_0ca6),
            ("priv-only", 0x0c64, 0, 0x0482_0c60),
            ("oqskeypair", 0x1284, 0, 0x0482_1280),
            ("seed-only", 0x0042, 2, 0x8040),
            ("bare-priv", 0x0c60, 4, 0),
            ("bare-seed", 0x0040, 4, 0),
        ],
    ];

    #[test]
    fn lengths_and_prefixes_match_openssl_tables() {
        for (layout, table) in LAYOUTS.iter().zip(OPENSSL_TABLES) {
            for (format, (name, bytes, shift, magic)) in
                PrivateKeyFormat::ALL.into_iter().zip(table)
            {
                assert_eq!(format.name(), name);
                let payload = encode(layout, format);
                assert_eq!(payload.len(), bytes, "{} {name}", layout.name);
                let magic = magic.to_be_bytes();
                assert_eq!(
                    payload[..4 - shift],
                    magic[shift..],
                    "{} {name}",
                    layout.name
                );
            }
        }
    }

    #[test]
    fn seed_priv_inner_fields_match_openssl() {
        // seed_offset 6 with magic 0x0440, priv_offset 0x4a with magic
        // 0x04820960, for ML-KEM-768.
        let payload = encode(&ML_KEM_768, SeedPriv);
        assert_eq!(payload[..6], [0x30, 0x82, 0x09, 0xa6, 0x04, 0x40]);
        assert_eq!(payload[6..0x46], seed());
        assert_eq!(payload[0x46..0x4a], [0x04, 0x82, 0x09, 0x60]);
        assert_eq!(payload[0x4a..], keys(&ML_KEM_768).0);
    }

    #[test]
    fn exact_small_payloads() {
        let seed = seed();
        let mut seed_only = vec![0x80, 0x40];
        seed_only.extend_from_slice(&seed);
        assert_eq!(encode(&ML_KEM_512, SeedOnly), seed_only);
        assert_eq!(encode(&ML_KEM_512, BareSeed), seed);

        let (dk, ek) = keys(&ML_KEM_512);
        let mut oqs = vec![0x04, 0x82, 0x09, 0x80];
        oqs.extend_from_slice(&dk);
        oqs.extend_from_slice(&ek);
        assert_eq!(encode(&ML_KEM_512, OqsKeypair), oqs);
        assert_eq!(encode(&ML_KEM_512, BarePriv), dk);
    }

    #[test]
    fn seed_formats_need_a_seed() {
        let (dk, ek) = keys(&ML_KEM_768);
        for format in PrivateKeyFormat::ALL {
            assert_eq!(
                Payload::new(format, None, &dk, &ek).is_some(),
                !has_seed(format),
                "{format}"
            );
        }
    }

    #[test]
    fn lengths_are_checked_where_used() {
        let seed = seed();
        let (dk, ek) = keys(&ML_KEM_768);
        let short = &dk[1..];
        let check = |format, dk, ek| {
            Payload::new(format, Some(&seed), dk, ek)
                .unwrap()
                .check_lengths(&ML_KEM_768)
        };
        for format in [SeedPriv, PrivOnly, OqsKeypair, BarePriv] {
            assert_eq!(check(format, short, &ek), Err(CodecError::WrongKeyLength));
        }
        assert_eq!(
            check(OqsKeypair, &dk, &ek[1..]),
            Err(CodecError::WrongKeyLength)
        );
        assert_eq!(check(PrivOnly, &dk, &[]), Ok(()));
        assert_eq!(check(SeedOnly, &[], &[]), Ok(()));
        assert_eq!(check(BareSeed, &[], &[]), Ok(()));
    }

    #[test]
    fn decodes_every_format() {
        let seed = seed();
        for layout in &LAYOUTS {
            let (dk, _) = keys(layout);
            for format in PrivateKeyFormat::ALL {
                let decoded = decode(layout, &encode(layout, format), &PrivateKeyFormat::ALL)
                    .unwrap_or_else(|e| panic!("{} {format}: {e}", layout.name));
                assert_eq!(decoded.seed.as_deref(), has_seed(format).then_some(&seed));
                assert_eq!(decoded.dk.as_deref(), has_dk(format).then_some(&dk));
            }
        }
    }

    #[test]
    fn only_enabled_formats_are_decoded() {
        for format in PrivateKeyFormat::ALL {
            let payload = encode(&ML_KEM_768, format);
            let others: Vec<_> = PrivateKeyFormat::ALL
                .into_iter()
                .filter(|&f| f != format)
                .collect();
            assert!(decode(&ML_KEM_768, &payload, &[format]).is_ok());
            assert_eq!(
                decode(&ML_KEM_768, &payload, &others).unwrap_err(),
                CodecError::NoFormat,
                "{format}"
            );
        }
        assert_eq!(
            decode(&ML_KEM_768, &[], &PrivateKeyFormat::ALL).unwrap_err(),
            CodecError::NoFormat
        );
    }

    #[test]
    fn right_length_wrong_tag_is_no_format() {
        for (format, at) in [(SeedPriv, 0), (PrivOnly, 0), (OqsKeypair, 1), (SeedOnly, 0)] {
            let mut payload = encode(&ML_KEM_768, format);
            payload[at] ^= 0x01;
            assert_eq!(
                decode(&ML_KEM_768, &payload, &PrivateKeyFormat::ALL).unwrap_err(),
                CodecError::NoFormat,
                "{format}"
            );
        }
    }

    #[test]
    fn bad_inner_fields_are_malformed() {
        // Offsets in the ML-KEM-768 seed-priv payload: the seed's tag and
        // length, then the dk's tag and its four length bytes.
        for (at, value) in [(4, 0x03), (5, 0x3f), (5, 0x41), (0x46, 0x03), (0x49, 0x5f)] {
            let mut payload = encode(&ML_KEM_768, SeedPriv);
            payload[at] = value;
            assert_eq!(
                decode(&ML_KEM_768, &payload, &[SeedPriv]).unwrap_err(),
                CodecError::Malformed,
                "byte {at:#x} = {value:#04x}"
            );
        }
    }

    #[test]
    fn debug_does_not_show_secrets() {
        let decoded = decode(&ML_KEM_768, &encode(&ML_KEM_768, SeedPriv), &[SeedPriv]).unwrap();
        assert_eq!(
            format!("{decoded:?}"),
            r#"DecodedPrivateKey { seed: Some("<redacted>"), dk: Some("<redacted>") }"#
        );
    }
}
