//! The names of the six PKCS#8 private key formats and OpenSSL's
//! preference-list syntax for choosing among them.

use core::fmt;

use super::CodecError;

/// How the seed and decapsulation key sit inside the PKCS#8 `privateKey`
/// OCTET STRING, named as OpenSSL names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PrivateKeyFormat {
    /// `SEQUENCE { OCTET STRING seed, OCTET STRING dk }`.
    SeedPriv,
    /// `OCTET STRING dk`.
    PrivOnly,
    /// `OCTET STRING (dk || ek)`, the legacy oqsprovider form.
    OqsKeypair,
    /// `[0] IMPLICIT OCTET STRING seed`.
    SeedOnly,
    /// The bare `dk` bytes.
    BarePriv,
    /// The bare seed bytes.
    BareSeed,
}

impl PrivateKeyFormat {
    /// Every format, in OpenSSL's default order of preference.
    pub const ALL: [Self; 6] = [
        Self::SeedPriv,
        Self::PrivOnly,
        Self::OqsKeypair,
        Self::SeedOnly,
        Self::BarePriv,
        Self::BareSeed,
    ];

    /// The format's OpenSSL name, as in `"seed-priv"`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::SeedPriv => "seed-priv",
            Self::PrivOnly => "priv-only",
            Self::OqsKeypair => "oqskeypair",
            Self::SeedOnly => "seed-only",
            Self::BarePriv => "bare-priv",
            Self::BareSeed => "bare-seed",
        }
    }

    /// The format named `name`, compared ignoring ASCII case.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|format| format.name().eq_ignore_ascii_case(name))
    }
}

impl fmt::Display for PrivateKeyFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Parses an OpenSSL-style format preference list.
///
/// Names are separated by spaces, tabs or commas and compared ignoring
/// ASCII case. A repeated name keeps its first position and unknown names
/// are skipped, as OpenSSL does. `None` (nothing configured) is every
/// format in the default order.
///
/// Unlike OpenSSL, which compares only as many characters as the list
/// entry has (so `seed` enables `seed-priv`), names must match in full.
///
/// # Errors
///
/// [`CodecError::NoFormatsEnabled`] if the list names no known format.
pub fn parse_format_list(list: Option<&str>) -> Result<Vec<PrivateKeyFormat>, CodecError> {
    let Some(list) = list else {
        return Ok(PrivateKeyFormat::ALL.to_vec());
    };
    let mut formats = Vec::with_capacity(PrivateKeyFormat::ALL.len());
    for format in list
        .split([' ', '\t', ','])
        .filter_map(PrivateKeyFormat::from_name)
    {
        if !formats.contains(&format) {
            formats.push(format);
        }
    }
    if formats.is_empty() {
        Err(CodecError::NoFormatsEnabled)
    } else {
        Ok(formats)
    }
}

#[cfg(test)]
mod tests {
    use super::PrivateKeyFormat::*;
    use super::*;

    #[test]
    fn names_match_openssl() {
        let names: Vec<&str> = PrivateKeyFormat::ALL.iter().map(|f| f.name()).collect();
        assert_eq!(
            names,
            [
                "seed-priv",
                "priv-only",
                "oqskeypair",
                "seed-only",
                "bare-priv",
                "bare-seed"
            ]
        );
        for format in PrivateKeyFormat::ALL {
            assert_eq!(PrivateKeyFormat::from_name(format.name()), Some(format));
            assert_eq!(format.to_string(), format.name());
        }
    }

    #[test]
    fn names_ignore_case_but_not_spelling() {
        assert_eq!(PrivateKeyFormat::from_name("SEED-Priv"), Some(SeedPriv));
        assert_eq!(PrivateKeyFormat::from_name("OQSKEYPAIR"), Some(OqsKeypair));
        assert_eq!(PrivateKeyFormat::from_name("seed"), None);
        assert_eq!(PrivateKeyFormat::from_name("seed-priv "), None);
        assert_eq!(PrivateKeyFormat::from_name(""), None);
    }

    #[test]
    fn no_list_is_the_default_order() {
        assert_eq!(parse_format_list(None), Ok(PrivateKeyFormat::ALL.to_vec()));
    }

    #[test]
    fn list_order_is_preference_order() {
        assert_eq!(
            parse_format_list(Some("bare-seed,priv-only\tSeed-Only  oqskeypair")),
            Ok(vec![BareSeed, PrivOnly, SeedOnly, OqsKeypair])
        );
        assert_eq!(parse_format_list(Some(" ,seed-only, ")), Ok(vec![SeedOnly]));
    }

    #[test]
    fn duplicates_keep_their_first_position() {
        assert_eq!(
            parse_format_list(Some("priv-only seed-priv PRIV-ONLY bare-priv seed-priv")),
            Ok(vec![PrivOnly, SeedPriv, BarePriv])
        );
    }

    #[test]
    fn unknown_names_are_skipped() {
        // `;` is no separator, so "seed-only;bare-seed" is one unknown name.
        assert_eq!(
            parse_format_list(Some("pkcs1, seed-only;bare-seed bare-priv")),
            Ok(vec![BarePriv])
        );
    }

    #[test]
    fn a_list_without_known_names_enables_nothing() {
        for list in ["", " \t,", "seed", "seed-priv;priv-only", "der"] {
            assert_eq!(
                parse_format_list(Some(list)),
                Err(CodecError::NoFormatsEnabled),
                "{list:?}"
            );
        }
    }
}
