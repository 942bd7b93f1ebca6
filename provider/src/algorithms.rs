//! The one table that drives the provider: for each ML-KEM parameter set,
//! its names, OID, sizes, security figures, TLS group and kem-core types.
//! The TLS groups' names and code points come from the `tls-groups` crate,
//! the one table the check and the test tools read too.
//! Dispatch tables, TLS-GROUP capabilities, encoders and decoders are all
//! generated from it.

use core::ffi::CStr;

use kem_core::{MlKem1024, MlKem512, MlKem768, ParameterSet};
pub(crate) use tls_groups::Group as TlsGroup;

use crate::codec::KeyLayout;
use crate::error::Result;
use crate::material::{self, KeyData};

/// One ML-KEM parameter set, as the provider presents it.
pub(crate) struct Algorithm {
    /// The canonical name, `ML-KEM-768`.
    pub(crate) name: &'static CStr,
    /// Name and aliases, colon separated, as OpenSSL 3.5 registers them.
    pub(crate) names: &'static CStr,
    /// Dotted OID, its short and long names, for `core_obj_create`.
    pub(crate) oid: &'static CStr,
    pub(crate) oid_short_name: &'static CStr,
    pub(crate) oid_long_name: &'static CStr,
    /// What the key codecs need (DER OID, lengths).
    pub(crate) layout: KeyLayout,
    /// `bits` as OpenSSL reports it (512, 768, 1024).
    pub(crate) bits: u32,
    /// Claimed security strength (128, 192, 256).
    pub(crate) security_bits: u32,
    /// NIST security category (1, 3, 5).
    pub(crate) security_category: u32,
    /// Ciphertext length.
    pub(crate) ct_len: usize,
    /// The pure ML-KEM TLS group.
    pub(crate) tls_group: &'static TlsGroup,
    /// Key constructors for this parameter set.
    pub(crate) from_seed: fn(&[u8]) -> Result<Box<dyn KeyData>>,
    pub(crate) from_private: fn(&[u8]) -> Result<Box<dyn KeyData>>,
    pub(crate) from_public: fn(&[u8]) -> Result<Box<dyn KeyData>>,
}

const fn oid_der(last: u8) -> [u8; 9] {
    // 2.16.840.1.101.3.4.4.<last>: NIST's KEM arc.
    [0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x04, last]
}

macro_rules! ml_kem {
    ($set:ty, $bits:literal, $oid_last:literal, $category:literal, $group:expr) => {{
        const OID_DER: [u8; 9] = oid_der($oid_last);
        Algorithm {
            name: cstr_concat!("ML-KEM-", $bits),
            names: concat_names!($bits, $oid_last),
            oid: cstr_concat!("2.16.840.1.101.3.4.4.", $oid_last),
            oid_short_name: cstr_concat!("id-alg-ml-kem-", $bits),
            oid_long_name: cstr_concat!("ML-KEM-", $bits),
            layout: KeyLayout {
                name: concat!("ML-KEM-", $bits),
                oid: &OID_DER,
                ek_len: <$set>::EK_LEN,
                dk_len: <$set>::DK_LEN,
            },
            bits: $bits,
            security_bits: <$set>::SECURITY_BITS as u32,
            security_category: $category,
            ct_len: <$set>::CT_LEN,
            tls_group: &$group,
            from_seed: material::from_seed::<$set>,
            from_private: material::from_private::<$set>,
            from_public: material::from_public::<$set>,
        }
    }};
}

macro_rules! cstr_concat {
    ($($part:expr),*) => {
        match CStr::from_bytes_with_nul(concat!($($part),*, "\0").as_bytes()) {
            Ok(name) => name,
            Err(_) => panic!("no interior NUL"),
        }
    };
}

macro_rules! concat_names {
    ($bits:literal, $oid_last:literal) => {
        cstr_concat!(
            "ML-KEM-",
            $bits,
            ":MLKEM",
            $bits,
            ":id-alg-ml-kem-",
            $bits,
            ":2.16.840.1.101.3.4.4.",
            $oid_last
        )
    };
}

/// ML-KEM-512, -768 and -1024, in that order (as a `const`, for the
/// provider's compile-time algorithm tables).
pub(crate) const ALGORITHMS: [Algorithm; 3] = [
    ml_kem!(MlKem512, 512, 1, 1, tls_groups::MLKEM512),
    ml_kem!(MlKem768, 768, 2, 3, tls_groups::MLKEM768),
    ml_kem!(MlKem1024, 1024, 3, 5, tls_groups::MLKEM1024),
];

/// The same table as a `static`, so keys can hold `&'static Algorithm`.
pub(crate) static ML_KEM: [Algorithm; 3] = ALGORITHMS;

/// The algorithm whose name or alias is `name` (case-insensitive).
#[cfg(test)]
pub(crate) fn by_name(name: &str) -> Option<&'static Algorithm> {
    ML_KEM.iter().find(|alg| {
        alg.names
            .to_str()
            .is_ok_and(|names| names.split(':').any(|n| n.eq_ignore_ascii_case(name)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_matches_fips_203_and_openssl_names() {
        let expected = [
            ("ML-KEM-512", 800, 1632, 768, 128, 0x0200),
            ("ML-KEM-768", 1184, 2400, 1088, 192, 0x0201),
            ("ML-KEM-1024", 1568, 3168, 1568, 256, 0x0202),
        ];
        for (alg, (name, ek, dk, ct, sec, group)) in ML_KEM.iter().zip(expected) {
            assert_eq!(alg.name.to_str().unwrap(), name);
            assert_eq!(alg.layout.name, name);
            assert_eq!(
                (alg.layout.ek_len, alg.layout.dk_len, alg.ct_len),
                (ek, dk, ct)
            );
            assert_eq!(alg.security_bits, sec);
            assert_eq!(alg.tls_group.code_point, group);
        }
        assert_eq!(
            ML_KEM[1].names.to_str().unwrap(),
            "ML-KEM-768:MLKEM768:id-alg-ml-kem-768:2.16.840.1.101.3.4.4.2"
        );
        assert_eq!(ML_KEM[2].oid.to_str().unwrap(), "2.16.840.1.101.3.4.4.3");
        assert_eq!(ML_KEM[0].tls_group.name(), "MLKEM512");
        assert_eq!(ML_KEM[1].tls_group.names, [c"MLKEM768", c"mlkem768"]);
        assert_eq!(by_name("mlkem1024").unwrap().bits, 1024);
        assert!(by_name("ML-KEM-2048").is_none());
    }
}
