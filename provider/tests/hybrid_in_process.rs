//! In-process tests of the hybrid KEMs (X25519MLKEM768, SecP256r1MLKEM768,
//! SecP384r1MLKEM1024, X448MLKEM1024): the provider loaded into a fresh
//! `OSSL_LIB_CTX` of this process's libcrypto (the system OpenSSL 3.0, which
//! has X25519, X448 and EC but no ML-KEM, so every hybrid operation here is
//! the provider's) and
//! driven through EVP (the wrappers of `common::evp`).
//!
//! The reference for each value is independent of the provider: kem-core
//! for the ML-KEM half, and the `openssl` crate in the *default* library
//! context for the X25519 / ECDH half (never the test's context, whose
//! providers are under test).
//!
//! curveSM2MLKEM768 needs OpenSSL 4.0's `curveSM2` key type, which 3.0
//! lacks: `tls.rs` tests it against OpenSSL 4.0.
//!
//! Layouts (draft-ietf-tls-ecdhe-mlkem, as OpenSSL 3.5 names them): for
//! X25519MLKEM768 and X448MLKEM1024 the ML-KEM part comes first, for the two EC groups the
//! uncompressed point comes first; public keys, ciphertexts, shared secrets
//! and private keys (expanded dk, then the raw X25519 key or the big-endian
//! EC scalar, in the same order) all follow the group's order.
//!
//! Error checks read OpenSSL's (per-thread) error queue; `LIFECYCLE`
//! orders provider loading and teardown against the EVP calls whose errors
//! a test reads, as in `in_process.rs`.

mod common;

use std::collections::HashSet;
use std::ffi::c_int;

use kem_core::{Ciphertext, DecapsulationKey, EncapsulationKey, MlKem1024, MlKem768, ParameterSet};
use openssl::bn::{BigNum, BigNumContext};
use openssl::derive::Deriver;
use openssl::ec::{EcGroup, EcKey, EcPoint, PointConversionForm};
use openssl::nid::Nid;
use openssl::pkey::{Id, PKey, Private, Public};
use openssl_sys as ffi;

use common::evp::{
    assert_bytes_eq, assert_bytes_ne, clear_errors, hex, message, Lib, MustFail, PkeyCtx,
};

// ------------------------------------------------------------------ contexts

/// Hybrid encapsulation and decapsulation, into buffers of exactly a
/// group's sizes.
impl PkeyCtx<'_> {
    /// Encapsulates into buffers of exactly `h`'s sizes.
    #[track_caller]
    fn encapsulate(&self, h: &Hybrid) -> (Vec<u8>, Vec<u8>) {
        let (ct, secret) = self
            .try_encapsulate_into(h.ct_len, h.secret_len)
            .unwrap_or_else(|e| panic!("{} encapsulate failed:\n{e}", h.name));
        assert_eq!(ct.len(), h.ct_len, "{} ciphertext length", h.name);
        assert_eq!(secret.len(), h.secret_len, "{} secret length", h.name);
        (ct, secret)
    }

    #[track_caller]
    fn decapsulate(&self, h: &Hybrid, ct: &[u8]) -> Vec<u8> {
        let secret = self
            .try_decapsulate_into(ct, h.secret_len)
            .unwrap_or_else(|e| panic!("{} decapsulate failed:\n{e}", h.name));
        assert_eq!(secret.len(), h.secret_len, "{} secret length", h.name);
        secret
    }
}

// ------------------------------------------------------------------ expectations

/// The ML-KEM half.
#[derive(Clone, Copy, Debug)]
enum MlKem {
    K768,
    K1024,
}

/// The classical half.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Classical {
    X25519,
    X448,
    P256,
    P384,
}

/// One hybrid group: names, layout and the figures OpenSSL 3.5 reports.
struct Hybrid {
    name: &'static str,
    ml_kem: MlKem,
    classical: Classical,
    /// Whether the ML-KEM part comes first in every encoding.
    ml_kem_first: bool,
    /// ML-KEM ek, dk and ciphertext lengths (FIPS 203).
    ek_len: usize,
    dk_len: usize,
    ml_ct_len: usize,
    /// Classical public key (raw X25519 / uncompressed point), private key
    /// (raw / scalar) and shared secret lengths.
    x_pub_len: usize,
    x_priv_len: usize,
    x_secret_len: usize,
    /// The totals, spelled out (draft-ietf-tls-ecdhe-mlkem).
    pub_len: usize,
    ct_len: usize,
    secret_len: usize,
    priv_len: usize,
    bits: c_int,
    security_bits: c_int,
}

const HYBRIDS: [Hybrid; 4] = [
    Hybrid {
        name: "X25519MLKEM768",
        ml_kem: MlKem::K768,
        classical: Classical::X25519,
        ml_kem_first: true,
        ek_len: 1184,
        dk_len: 2400,
        ml_ct_len: 1088,
        x_pub_len: 32,
        x_priv_len: 32,
        x_secret_len: 32,
        pub_len: 1216,
        ct_len: 1120,
        secret_len: 64,
        priv_len: 2432,
        bits: 768,
        security_bits: 192,
    },
    Hybrid {
        name: "SecP256r1MLKEM768",
        ml_kem: MlKem::K768,
        classical: Classical::P256,
        ml_kem_first: false,
        ek_len: 1184,
        dk_len: 2400,
        ml_ct_len: 1088,
        x_pub_len: 65,
        x_priv_len: 32,
        x_secret_len: 32,
        pub_len: 1249,
        ct_len: 1153,
        secret_len: 64,
        priv_len: 2432,
        bits: 768,
        security_bits: 192,
    },
    Hybrid {
        name: "SecP384r1MLKEM1024",
        ml_kem: MlKem::K1024,
        classical: Classical::P384,
        ml_kem_first: false,
        ek_len: 1568,
        dk_len: 3168,
        ml_ct_len: 1568,
        x_pub_len: 97,
        x_priv_len: 48,
        x_secret_len: 48,
        pub_len: 1665,
        ct_len: 1665,
        secret_len: 80,
        priv_len: 3216,
        bits: 1024,
        security_bits: 256,
    },
    Hybrid {
        name: "X448MLKEM1024",
        ml_kem: MlKem::K1024,
        classical: Classical::X448,
        ml_kem_first: true,
        ek_len: 1568,
        dk_len: 3168,
        ml_ct_len: 1568,
        x_pub_len: 56,
        x_priv_len: 56,
        x_secret_len: 56,
        pub_len: 1624,
        ct_len: 1624,
        secret_len: 88,
        priv_len: 3224,
        bits: 1024,
        security_bits: 256,
    },
];

impl Hybrid {
    /// Splits a concatenation into (ML-KEM part, classical part).
    #[track_caller]
    fn split<'a>(&self, bytes: &'a [u8], ml_len: usize, x_len: usize) -> (&'a [u8], &'a [u8]) {
        assert_eq!(bytes.len(), ml_len + x_len, "{} split", self.name);
        if self.ml_kem_first {
            bytes.split_at(ml_len)
        } else {
            let (x, ml) = bytes.split_at(x_len);
            (ml, x)
        }
    }

    fn join(&self, ml: &[u8], x: &[u8]) -> Vec<u8> {
        if self.ml_kem_first {
            [ml, x].concat()
        } else {
            [x, ml].concat()
        }
    }

    #[track_caller]
    fn split_pub<'a>(&self, public: &'a [u8]) -> (&'a [u8], &'a [u8]) {
        self.split(public, self.ek_len, self.x_pub_len)
    }

    #[track_caller]
    fn split_priv<'a>(&self, private: &'a [u8]) -> (&'a [u8], &'a [u8]) {
        self.split(private, self.dk_len, self.x_priv_len)
    }

    #[track_caller]
    fn split_ct<'a>(&self, ct: &'a [u8]) -> (&'a [u8], &'a [u8]) {
        self.split(ct, self.ml_ct_len, self.x_pub_len)
    }

    #[track_caller]
    fn split_secret<'a>(&self, secret: &'a [u8]) -> (&'a [u8], &'a [u8]) {
        self.split(secret, 32, self.x_secret_len)
    }

    /// The offset of the classical part in a public key or ciphertext.
    fn x_offset(&self, ml_len: usize) -> usize {
        if self.ml_kem_first {
            ml_len
        } else {
            0
        }
    }

    /// The offset of the ML-KEM part in a public key or ciphertext.
    fn ml_offset(&self) -> usize {
        if self.ml_kem_first {
            0
        } else {
            self.x_pub_len
        }
    }
}

// ------------------------------------------------------------------ kem-core reference

fn ml_decapsulate_with<P: ParameterSet>(dk: &[u8], ct: &[u8]) -> [u8; 32] {
    let dk = DecapsulationKey::<P>::from_bytes(dk).expect("kem-core parses the exported dk");
    let ct = Ciphertext::<P>::from_bytes(ct).expect("kem-core parses the ciphertext");
    *dk.decapsulate(&ct).as_bytes()
}

fn ml_ek_of_dk_with<P: ParameterSet>(dk: &[u8]) -> Vec<u8> {
    let dk = DecapsulationKey::<P>::from_bytes(dk).expect("kem-core parses the exported dk");
    dk.encapsulation_key().as_bytes().to_vec()
}

fn ml_encapsulate_with<P: ParameterSet>(ek: &[u8], m: &[u8; 32]) -> (Vec<u8>, [u8; 32]) {
    let ek = EncapsulationKey::<P>::from_bytes(ek).expect("kem-core parses the exported ek");
    let (ct, secret) = ek.encapsulate_deterministic(m);
    (ct.as_bytes().to_vec(), *secret.as_bytes())
}

/// kem-core's ML-KEM.Decaps(dk, ct).
fn ml_decapsulate(set: MlKem, dk: &[u8], ct: &[u8]) -> [u8; 32] {
    match set {
        MlKem::K768 => ml_decapsulate_with::<MlKem768>(dk, ct),
        MlKem::K1024 => ml_decapsulate_with::<MlKem1024>(dk, ct),
    }
}

/// The ek embedded in an expanded dk, as kem-core parses it.
fn ml_ek_of_dk(set: MlKem, dk: &[u8]) -> Vec<u8> {
    match set {
        MlKem::K768 => ml_ek_of_dk_with::<MlKem768>(dk),
        MlKem::K1024 => ml_ek_of_dk_with::<MlKem1024>(dk),
    }
}

/// kem-core's ML-KEM.Encaps_internal(ek, m).
fn ml_encapsulate(set: MlKem, ek: &[u8], m: &[u8; 32]) -> (Vec<u8>, [u8; 32]) {
    match set {
        MlKem::K768 => ml_encapsulate_with::<MlKem768>(ek, m),
        MlKem::K1024 => ml_encapsulate_with::<MlKem1024>(ek, m),
    }
}

// ------------------------------------------------------------------ openssl-crate reference
//
// Everything below runs in the default library context (the `openssl`
// crate's), never in a test's `Lib`.

fn ec_group(c: Classical) -> EcGroup {
    let nid = match c {
        Classical::P256 => Nid::X9_62_PRIME256V1,
        Classical::P384 => Nid::SECP384R1,
        Classical::X25519 | Classical::X448 => unreachable!("{c:?} is not an EC group"),
    };
    EcGroup::from_curve_name(nid).expect("EC group")
}

/// The classical private key as an `openssl` key (the EC public point is
/// recomputed from the scalar, not taken from the provider).
/// The `openssl` key type of a Montgomery curve.
fn ecx_id(c: Classical) -> Id {
    match c {
        Classical::X25519 => Id::X25519,
        Classical::X448 => Id::X448,
        Classical::P256 | Classical::P384 => unreachable!("{c:?} is an EC group"),
    }
}

fn x_private_key(c: Classical, private: &[u8]) -> PKey<Private> {
    match c {
        Classical::X25519 | Classical::X448 => {
            PKey::private_key_from_raw_bytes(private, ecx_id(c)).expect("raw X25519/X448 key")
        }
        Classical::P256 | Classical::P384 => {
            let group = ec_group(c);
            let mut ctx = BigNumContext::new().expect("BN_CTX");
            let scalar = BigNum::from_slice(private).expect("scalar");
            let mut point = EcPoint::new(&group).expect("point");
            point
                .mul_generator2(&group, &scalar, &mut ctx)
                .expect("scalar * G");
            let key = EcKey::from_private_components(&group, &scalar, &point).expect("EC key");
            key.check_key().expect("EC key pair is consistent");
            PKey::from_ec_key(key).expect("EC PKey")
        }
    }
}

/// The encoded public key (raw X25519, or the uncompressed point) of a
/// classical private key.
fn x_public_of_private(c: Classical, private: &[u8]) -> Vec<u8> {
    let key = x_private_key(c, private);
    match c {
        Classical::X25519 | Classical::X448 => key.raw_public_key().expect("raw public key"),
        Classical::P256 | Classical::P384 => {
            let group = ec_group(c);
            let mut ctx = BigNumContext::new().expect("BN_CTX");
            key.ec_key()
                .expect("EC key")
                .public_key()
                .to_bytes(&group, PointConversionForm::UNCOMPRESSED, &mut ctx)
                .expect("point encoding")
        }
    }
}

/// Parses an encoded classical public key; `None` where OpenSSL rejects it.
fn x_public_key(c: Classical, public: &[u8]) -> Option<PKey<Public>> {
    match c {
        Classical::X25519 | Classical::X448 => {
            PKey::public_key_from_raw_bytes(public, ecx_id(c)).ok()
        }
        Classical::P256 | Classical::P384 => {
            let group = ec_group(c);
            let mut ctx = BigNumContext::new().expect("BN_CTX");
            let point = EcPoint::from_bytes(&group, public, &mut ctx).ok()?;
            let key = EcKey::from_public_key(&group, &point).ok()?;
            key.check_key().ok()?;
            PKey::from_ec_key(key).ok()
        }
    }
}

/// X25519 / ECDH of a classical private key with a peer's encoded public
/// key; `None` where OpenSSL rejects the peer key or the result.
fn x_derive(c: Classical, private: &[u8], peer: &[u8]) -> Option<Vec<u8>> {
    let own = x_private_key(c, private);
    let peer = x_public_key(c, peer)?;
    let mut deriver = Deriver::new(&own).ok()?;
    deriver.set_peer(&peer).ok()?;
    deriver.derive_to_vec().ok()
}

/// A fresh classical key pair: (private, encoded public).
fn x_generate(c: Classical) -> (Vec<u8>, Vec<u8>) {
    match c {
        Classical::X25519 | Classical::X448 => {
            let key = if c == Classical::X25519 {
                PKey::generate_x25519().expect("X25519 keygen")
            } else {
                PKey::generate_x448().expect("X448 keygen")
            };
            (
                key.raw_private_key().expect("raw private"),
                key.raw_public_key().expect("raw public"),
            )
        }
        Classical::P256 | Classical::P384 => {
            let group = ec_group(c);
            let key = EcKey::generate(&group).expect("EC keygen");
            let len = if c == Classical::P256 { 32 } else { 48 };
            let private = key.private_key().to_vec_padded(len).expect("scalar");
            let mut ctx = BigNumContext::new().expect("BN_CTX");
            let public = key
                .public_key()
                .to_bytes(&group, PointConversionForm::UNCOMPRESSED, &mut ctx)
                .expect("point encoding");
            (private, public)
        }
    }
}

/// Low-order u-coordinates of X25519 or X448 (`len` bytes): 0 and 1, with
/// which the shared secret is zero.
fn low_order_points(len: usize) -> Vec<Vec<u8>> {
    let mut one = vec![0u8; len];
    one[0] = 1;
    vec![vec![0u8; len], one]
}

/// A copy of an uncompressed EC point with its y coordinate's lowest bit
/// flipped: for a given x at most two y (y and p - y, of opposite parity)
/// are on the curve, so (x, y ^ 1) is not (checked with OpenSSL).
fn ec_point_off_curve(c: Classical, point: &[u8]) -> Vec<u8> {
    let mut bad = point.to_vec();
    *bad.last_mut().expect("non-empty point") ^= 0x01;
    assert!(
        x_public_key(c, &bad).is_none(),
        "the modified point is still on the curve"
    );
    bad
}

// ------------------------------------------------------------------ 0. the table

#[test]
fn expected_sizes_are_consistent() {
    for h in &HYBRIDS {
        assert_eq!(h.pub_len, h.ek_len + h.x_pub_len, "{}", h.name);
        assert_eq!(h.ct_len, h.ml_ct_len + h.x_pub_len, "{}", h.name);
        assert_eq!(h.secret_len, 32 + h.x_secret_len, "{}", h.name);
        assert_eq!(h.priv_len, h.dk_len + h.x_priv_len, "{}", h.name);
    }
}

// ------------------------------------------------------------------ 1. round trip

#[test]
fn keygen_sizes_parameters_and_round_trip_every_hybrid() {
    let lib = Lib::new();
    for h in &HYBRIDS {
        let key = lib.keygen(h.name, None);
        assert!(key.is_a(h.name), "{} key is_a", h.name);
        let public = key.encoded_public();
        assert_eq!(public.len(), h.pub_len, "{} encoded-pub-key length", h.name);
        assert_bytes_eq!(
            key.octets(c"pub").expect("pub"),
            public,
            "{} pub equals encoded-pub-key",
            h.name
        );
        assert_eq!(key.private().len(), h.priv_len, "{} priv length", h.name);

        // Key parameters, directly and through libcrypto's accessors.
        assert_eq!(key.int(c"bits"), Some(h.bits), "{} bits", h.name);
        assert_eq!(
            key.int(c"security-bits"),
            Some(h.security_bits),
            "{} security-bits",
            h.name
        );
        assert_eq!(
            key.int(c"max-size"),
            Some(h.ct_len as c_int),
            "{} max-size",
            h.name
        );
        // SAFETY: a live key (each call).
        unsafe {
            assert_eq!(ffi::EVP_PKEY_get_bits(key.0), h.bits, "{}", h.name);
            assert_eq!(
                ffi::EVP_PKEY_get_security_bits(key.0),
                h.security_bits,
                "{}",
                h.name
            );
            assert_eq!(
                ffi::EVP_PKEY_get_size(key.0),
                h.ct_len as c_int,
                "{}",
                h.name
            );
        }

        let enc = lib.encapsulator(&key, None);
        assert_eq!(
            enc.encapsulate_sizes(),
            (h.ct_len, h.secret_len),
            "{} encapsulate size query",
            h.name
        );
        let (ct, secret) = enc.encapsulate(h);
        let dec = lib.decapsulator(&key);
        assert_eq!(
            dec.decapsulate_size(&ct),
            h.secret_len,
            "{} decapsulate size query",
            h.name
        );
        assert_bytes_eq!(dec.decapsulate(h, &ct), secret, "{} shared secrets", h.name);

        // Larger buffers work too; the lengths come back exact.
        let (ct_big, secret_big) = enc
            .try_encapsulate_into(h.ct_len + 100, h.secret_len + 100)
            .unwrap_or_else(|e| panic!("{} large buffers:\n{e}", h.name));
        assert_eq!((ct_big.len(), secret_big.len()), (h.ct_len, h.secret_len));
        assert_bytes_eq!(
            dec.try_decapsulate_into(&ct_big, h.secret_len + 100)
                .unwrap_or_else(|e| panic!("{} large secret buffer:\n{e}", h.name)),
            secret_big
        );

        // A second encapsulation draws fresh randomness for both halves.
        let (ct2, secret2) = enc.encapsulate(h);
        let ((ct_m, ct_x), (ct2_m, ct2_x)) = (h.split_ct(&ct), h.split_ct(&ct2));
        assert_bytes_ne!(ct2_m, ct_m, "{} repeated ML-KEM ciphertext", h.name);
        assert_bytes_ne!(ct2_x, ct_x, "{} repeated ephemeral key", h.name);
        let ((ss_m, ss_x), (ss2_m, ss2_x)) = (h.split_secret(&secret), h.split_secret(&secret2));
        assert_bytes_ne!(ss2_m, ss_m, "{} repeated ML-KEM secret", h.name);
        assert_bytes_ne!(ss2_x, ss_x, "{} repeated classical secret", h.name);
        assert_bytes_eq!(dec.decapsulate(h, &ct2), secret2);

        // Two generations give two keys, different in both halves.
        let other = lib.keygen(h.name, None).encoded_public();
        let ((pub_m, pub_x), (other_m, other_x)) = (h.split_pub(&public), h.split_pub(&other));
        assert_bytes_ne!(other_m, pub_m, "{} repeated ek", h.name);
        assert_bytes_ne!(other_x, pub_x, "{} repeated classical key", h.name);

        // The EC points are uncompressed.
        if matches!(h.classical, Classical::P256 | Classical::P384) {
            assert_eq!(pub_x[0], 0x04, "{} public point form", h.name);
            assert_eq!(ct_x[0], 0x04, "{} ephemeral point form", h.name);
        }
    }
}

// ------------------------------------------------------------------ 2. layout

#[test]
fn layout_matches_kem_core_and_openssl() {
    let lib = Lib::new();
    for h in &HYBRIDS {
        let key = lib.keygen(h.name, None);
        let public = key.encoded_public();
        let private = key.private();
        let (ek, x_pub) = h.split_pub(&public);
        let (dk, x_priv) = h.split_priv(&private);

        // The key's own halves agree with each other.
        assert_bytes_eq!(
            ml_ek_of_dk(h.ml_kem, dk),
            ek,
            "{}: the ek in pub is the one embedded in the exported dk",
            h.name
        );
        assert_bytes_eq!(
            x_public_of_private(h.classical, x_priv),
            x_pub,
            "{}: the classical public key is the exported private key's",
            h.name
        );

        // Provider encapsulation, checked half by half.
        let enc = lib.encapsulator(&key, None);
        let dec = lib.decapsulator(&key);
        for round in 0..3 {
            let (ct, secret) = enc.encapsulate(h);
            let (ct_m, ct_x) = h.split_ct(&ct);
            let (ss_m, ss_x) = h.split_secret(&secret);
            assert_bytes_eq!(
                ss_m,
                ml_decapsulate(h.ml_kem, dk, ct_m),
                "{} round {round}: ML-KEM part of the secret",
                h.name
            );
            let expected_x = x_derive(h.classical, x_priv, ct_x).unwrap_or_else(|| {
                panic!(
                    "{} round {round}: OpenSSL rejects the ephemeral key",
                    h.name
                )
            });
            assert_bytes_eq!(
                ss_x,
                expected_x,
                "{} round {round}: classical part of the secret",
                h.name
            );
            assert_bytes_eq!(dec.decapsulate(h, &ct), secret);
        }

        // The other way round: a ciphertext built by kem-core and OpenSSL
        // decapsulates, through the provider, to the independent secret.
        let m = message(0x5a);
        let (ct_m, ss_m) = ml_encapsulate(h.ml_kem, ek, &m);
        let (eph_priv, eph_pub) = x_generate(h.classical);
        let ss_x = x_derive(h.classical, &eph_priv, x_pub).expect("independent derive");
        let ct = h.join(&ct_m, &eph_pub);
        assert_bytes_eq!(
            dec.decapsulate(h, &ct),
            h.join(&ss_m, &ss_x),
            "{}: independently built ciphertext",
            h.name
        );

        // ikme fixes the ML-KEM half only (m of Encaps_internal); the
        // ephemeral classical key stays fresh.
        let (ct1, secret1) = lib.encapsulator(&key, Some(&m)).encapsulate(h);
        let (ct2, secret2) = lib.encapsulator(&key, Some(&m)).encapsulate(h);
        for (ct_i, secret_i) in [(&ct1, &secret1), (&ct2, &secret2)] {
            assert_bytes_eq!(h.split_ct(ct_i).0, ct_m, "{}: ikme ciphertext", h.name);
            assert_bytes_eq!(h.split_secret(secret_i).0, ss_m, "{}: ikme secret", h.name);
            assert_bytes_eq!(dec.decapsulate(h, ct_i), secret_i);
        }
        assert_bytes_ne!(
            h.split_ct(&ct1).1,
            h.split_ct(&ct2).1,
            "{}: ikme reused the ephemeral key",
            h.name
        );
    }
}

// ------------------------------------------------------------------ 3. TLS server path

#[test]
fn paramgen_key_takes_peer_public_key_once() {
    let lib = Lib::new();
    for h in &HYBRIDS {
        // The client's key pair; the server's empty key from paramgen.
        let client = lib.keygen(h.name, None);
        let client_pub = client.encoded_public();
        let server = lib.paramgen(h.name);
        assert!(server.is_a(h.name), "{} paramgen key is_a", h.name);
        assert!(
            server.octets(c"encoded-pub-key").is_none(),
            "{}: paramgen key has a public key",
            h.name
        );
        assert!(server.octets(c"priv").is_none(), "{}: priv", h.name);
        assert_eq!(server.int(c"bits"), Some(h.bits), "{} empty bits", h.name);
        assert_eq!(
            server.int(c"max-size"),
            Some(h.ct_len as c_int),
            "{} empty max-size",
            h.name
        );
        lib.try_encapsulator(&server, None)
            .must_fail("encapsulate_init on an empty key")
            .assert_reason("missing public key", None);
        lib.try_decapsulator(&server)
            .must_fail("decapsulate_init on an empty key")
            .assert_reason("missing private key", None);

        server
            .set_encoded_public_key(&client_pub)
            .unwrap_or_else(|e| panic!("{} set encoded public key failed:\n{e}", h.name));
        assert_bytes_eq!(server.encoded_public(), client_pub, "{} set key", h.name);
        assert_eq!(server.eq_raw(&client), 1, "{}: EVP_PKEY_eq", h.name);

        // The server encapsulates to the client, who decapsulates.
        let (ct, secret) = lib.encapsulator(&server, None).encapsulate(h);
        assert_bytes_eq!(
            lib.decapsulator(&client).decapsulate(h, &ct),
            secret,
            "{}: client and server secrets",
            h.name
        );
        lib.try_decapsulator(&server)
            .must_fail("decapsulate_init on a public key")
            .assert_reason("missing private key", None);

        // The key is set once.
        let other = lib.keygen(h.name, None).encoded_public();
        server
            .set_encoded_public_key(&other)
            .must_fail("second encoded public key accepted")
            .assert_reason("key cannot be modified", None);
        client
            .set_encoded_public_key(&other)
            .must_fail("encoded public key replaced a key pair's")
            .assert_reason("key cannot be modified", None);
        assert_bytes_eq!(server.encoded_public(), client_pub, "{} unchanged", h.name);
        assert_bytes_eq!(client.encoded_public(), client_pub, "{} unchanged", h.name);
    }
}

// ------------------------------------------------------------------ 4. corrupted peer input

/// (a) Encoded public keys a TLS peer could send that must not be taken.
#[test]
fn corrupted_peer_public_keys_are_rejected() {
    let lib = Lib::new();
    for h in &HYBRIDS {
        let good = lib.keygen(h.name, None).encoded_public();
        let server = lib.paramgen(h.name);

        // Wrong lengths.
        for len in [0, 1, h.ek_len, h.pub_len - 1, h.pub_len + 1, 2 * h.pub_len] {
            let mut bad = good.clone();
            bad.resize(len, 0x42);
            server
                .set_encoded_public_key(&bad)
                .must_fail(&format!("{}: a {len}-byte public key was taken", h.name))
                .assert_reason(
                    "invalid length",
                    Some(&format!(
                        "{} public key must be {} bytes, got {len}",
                        h.name, h.pub_len
                    )),
                );
        }

        // An ML-KEM part with a coefficient >= q (FIPS 203 7.2).
        let mut unreduced = good.clone();
        let at = h.ml_offset();
        unreduced[at] = 0xff;
        unreduced[at + 1] |= 0x0f;
        server
            .set_encoded_public_key(&unreduced)
            .must_fail(&format!("{}: an unreduced ek was taken", h.name))
            .assert_reason("invalid key", None);

        match h.classical {
            Classical::P256 | Classical::P384 => {
                let curve = if h.classical == Classical::P256 {
                    "P-256"
                } else {
                    "P-384"
                };
                let (_, x) = h.split_pub(&good);
                let mut bad_points = vec![ec_point_off_curve(h.classical, x)];
                // Compressed / infinity prefixes on a 65/97-byte point, and
                // an all-zero "point".
                for prefix in [0x00, 0x02, 0x03, 0x05] {
                    let mut p = x.to_vec();
                    p[0] = prefix;
                    bad_points.push(p);
                }
                bad_points.push(vec![0u8; h.x_pub_len]);
                for point in &bad_points {
                    assert!(
                        x_public_key(h.classical, point).is_none(),
                        "OpenSSL takes the test's bad point"
                    );
                    let (ek, _) = h.split_pub(&good);
                    let bad = h.join(ek, point);
                    server
                        .set_encoded_public_key(&bad)
                        .must_fail(&format!("{}: bad point {} was taken", h.name, hex(point)))
                        .assert_reason("invalid key", Some(curve));
                    // The same through an import.
                    lib.fromdata(h.name, ffi::EVP_PKEY_PUBLIC_KEY, &[(c"pub", &bad)])
                        .must_fail(&format!("{}: bad point imported", h.name))
                        .assert_reason("invalid key", Some(curve));
                }
            }
            Classical::X25519 | Classical::X448 => {
                // Every 32-byte (56-byte) string is an X25519 (X448)
                // u-coordinate, so taking an all-zero (low-order) key may be
                // deferred to the key agreement, which must then fail: the
                // result is zero, which OpenSSL rejects (checked here on its
                // own first).
                let curve = format!("{:?}", h.classical);
                let (own_priv, _) = x_generate(h.classical);
                for low_order in low_order_points(h.x_pub_len) {
                    assert!(
                        x_derive(h.classical, &own_priv, &low_order).is_none(),
                        "OpenSSL's {curve} accepts low-order point {}",
                        hex(&low_order)
                    );
                    let (ek, _) = h.split_pub(&good);
                    let bad = h.join(ek, &low_order);
                    let peer = lib.paramgen(h.name);
                    match peer.set_encoded_public_key(&bad) {
                        Err(errors) => errors.assert_not_empty("low-order X25519 key"),
                        Ok(()) => {
                            let enc = lib.encapsulator(&peer, None);
                            enc.try_encapsulate_into(h.ct_len, h.secret_len)
                                .must_fail(&format!(
                                    "{}: encapsulated to low-order {curve} key {}",
                                    h.name,
                                    hex(&low_order)
                                ))
                                .assert_reason(
                                    "invalid key",
                                    Some(&format!("{curve} key agreement failed")),
                                );
                        }
                    }
                }
            }
        }

        // Nothing was taken: the key is still empty, and takes a good key.
        assert!(
            server.octets(c"encoded-pub-key").is_none(),
            "{}: a failed set left a public key",
            h.name
        );
        lib.try_encapsulator(&server, None)
            .must_fail("encapsulate_init on a still-empty key")
            .assert_reason("missing public key", None);
        server
            .set_encoded_public_key(&good)
            .unwrap_or_else(|e| panic!("{}: good key after bad ones:\n{e}", h.name));
        assert_bytes_eq!(server.encoded_public(), good);
    }
}

/// (b) A ciphertext whose classical part (the peer's ephemeral key) is
/// invalid: decapsulation fails with an error, and the context still works.
#[test]
fn corrupted_classical_ciphertext_fails_cleanly() {
    let lib = Lib::new();
    for h in &HYBRIDS {
        let key = lib.keygen(h.name, None);
        let x_priv = h.split_priv(&key.private()).1.to_vec();
        let (ct, secret) = lib.encapsulator(&key, None).encapsulate(h);
        let dec = lib.decapsulator(&key);
        let (ct_m, ct_x) = h.split_ct(&ct);

        let (bad_parts, reason_detail): (Vec<Vec<u8>>, String) = match h.classical {
            Classical::X25519 | Classical::X448 => (
                low_order_points(h.x_pub_len),
                format!("{:?} key agreement failed", h.classical),
            ),
            Classical::P256 | Classical::P384 => {
                let curve = if h.classical == Classical::P256 {
                    "P-256"
                } else {
                    "P-384"
                };
                let mut compressed_prefix = ct_x.to_vec();
                compressed_prefix[0] = 0x02;
                (
                    vec![
                        ec_point_off_curve(h.classical, ct_x),
                        compressed_prefix,
                        vec![0u8; h.x_pub_len],
                    ],
                    curve.to_owned(),
                )
            }
        };
        for bad_x in &bad_parts {
            // OpenSSL on its own refuses this peer key (or its result).
            assert!(
                x_derive(h.classical, &x_priv, bad_x).is_none(),
                "{}: OpenSSL accepts {}",
                h.name,
                hex(bad_x)
            );
            let bad = h.join(ct_m, bad_x);
            dec.try_decapsulate_into(&bad, h.secret_len)
                .must_fail(&format!(
                    "{}: decapsulated with classical part {}",
                    h.name,
                    hex(bad_x)
                ))
                .assert_reason("invalid key", Some(&reason_detail));
        }
        // The context and key still work.
        assert_bytes_eq!(dec.decapsulate(h, &ct), secret, "{} after failures", h.name);
    }
}

/// (c) Ciphertexts of the wrong length.
#[test]
fn wrong_length_ciphertext_fails() {
    let lib = Lib::new();
    for h in &HYBRIDS {
        let key = lib.keygen(h.name, None);
        let (ct, secret) = lib.encapsulator(&key, None).encapsulate(h);
        let dec = lib.decapsulator(&key);
        for len in [
            1,
            h.x_pub_len,
            h.ml_ct_len,
            h.ct_len - 1,
            h.ct_len + 1,
            2 * h.ct_len,
        ] {
            let mut bad = ct.clone();
            bad.resize(len, 0);
            dec.try_decapsulate_into(&bad, h.secret_len)
                .must_fail(&format!("{}: a {len}-byte ciphertext decapsulated", h.name))
                .assert_reason(
                    "invalid length",
                    Some(&format!(
                        "{} ciphertext must be {} bytes, got {len}",
                        h.name, h.ct_len
                    )),
                );
        }
        // An empty ciphertext: libcrypto 3.0 refuses it itself (returns 0,
        // raises nothing) before the provider sees it.
        let mut out = vec![0u8; h.secret_len];
        let mut out_len = out.len();
        // SAFETY: a live context, a writable secret buffer, and a readable
        // one-byte buffer of which zero bytes are passed.
        let rc = unsafe {
            ffi::EVP_PKEY_decapsulate(dec.0, out.as_mut_ptr(), &mut out_len, ct.as_ptr(), 0)
        };
        assert!(rc <= 0, "{}: an empty ciphertext decapsulated", h.name);
        clear_errors();
        assert_bytes_eq!(dec.decapsulate(h, &ct), secret, "{} after failures", h.name);
    }
}

/// (d) A corrupted ML-KEM part decapsulates (implicit rejection) to a
/// different ML-KEM secret, J(z ‖ c); the classical part is unaffected.
#[test]
fn corrupted_ml_kem_ciphertext_gives_implicit_rejection() {
    let lib = Lib::new();
    for h in &HYBRIDS {
        let key = lib.keygen(h.name, None);
        let private = key.private();
        let dk = h.split_priv(&private).0;
        let (ct, secret) = lib.encapsulator(&key, None).encapsulate(h);
        let (ss_m, ss_x) = h.split_secret(&secret);
        let dec = lib.decapsulator(&key);
        let base = h.ml_offset();
        for at in [0, h.ml_ct_len / 2, h.ml_ct_len - 1] {
            let mut corrupted = ct.clone();
            corrupted[base + at] ^= 0x01;
            let rejected = dec.decapsulate(h, &corrupted);
            let (rej_m, rej_x) = h.split_secret(&rejected);
            assert_bytes_ne!(rej_m, ss_m, "{}: corrupted ML-KEM part accepted", h.name);
            assert_bytes_eq!(
                rej_m,
                ml_decapsulate(h.ml_kem, dk, h.split_ct(&corrupted).0),
                "{}: J(z ‖ c) at {at}",
                h.name
            );
            assert_bytes_eq!(rej_x, ss_x, "{}: classical part changed", h.name);
            // Deterministic.
            assert_bytes_eq!(dec.decapsulate(h, &corrupted), rejected);
        }
        // The classical part's offset is where the layout says: flipping a
        // bit there (a valid-length, likely invalid point / different
        // X25519 key) never changes the ML-KEM half.
        let mut other_x = ct.clone();
        other_x[h.x_offset(h.ml_ct_len) + 5] ^= 0x20;
        if let Ok(s) = dec.try_decapsulate_into(&other_x, h.secret_len) {
            assert_bytes_eq!(h.split_secret(&s).0, ss_m, "{}: ML-KEM half", h.name);
            assert_bytes_ne!(h.split_secret(&s).1, ss_x, "{}: classical half", h.name);
        }
    }
}

// ------------------------------------------------------------------ 5. import / export

#[test]
fn import_export_round_trip() {
    let lib = Lib::new();
    for h in &HYBRIDS {
        let original = lib.keygen(h.name, None);
        let public = original.encoded_public();
        let private = original.private();
        let original_dec = lib.decapsulator(&original);

        // Public key only.
        let public_only = lib
            .fromdata(h.name, ffi::EVP_PKEY_PUBLIC_KEY, &[(c"pub", &public)])
            .unwrap_or_else(|e| panic!("{} public import failed:\n{e}", h.name));
        assert!(public_only.is_a(h.name));
        assert_bytes_eq!(public_only.encoded_public(), public, "{} pub", h.name);
        assert!(
            public_only.octets(c"priv").is_none(),
            "{}: public key exports priv",
            h.name
        );
        assert_eq!(public_only.int(c"bits"), Some(h.bits));
        let (ct, secret) = lib.encapsulator(&public_only, None).encapsulate(h);
        assert_bytes_eq!(
            original_dec.decapsulate(h, &ct),
            secret,
            "{}: encapsulated to the imported public key",
            h.name
        );
        lib.try_decapsulator(&public_only)
            .must_fail("decapsulate_init with a public key")
            .assert_reason("missing private key", None);
        assert_eq!(public_only.eq_raw(&original), 1, "{}: eq public", h.name);

        // Private and public key.
        let pair = lib
            .fromdata(
                h.name,
                ffi::EVP_PKEY_KEYPAIR,
                &[(c"priv", &private), (c"pub", &public)],
            )
            .unwrap_or_else(|e| panic!("{} key pair import failed:\n{e}", h.name));
        assert_bytes_eq!(pair.private(), private, "{} priv round trip", h.name);
        assert_bytes_eq!(pair.encoded_public(), public, "{} pub round trip", h.name);
        assert_bytes_eq!(
            lib.decapsulator(&pair).decapsulate(h, &ct),
            secret,
            "{}: imported key decapsulates the original's ciphertext",
            h.name
        );
        let (ct2, secret2) = lib.encapsulator(&original, None).encapsulate(h);
        assert_bytes_eq!(lib.decapsulator(&pair).decapsulate(h, &ct2), secret2);
        let (ct3, secret3) = lib.encapsulator(&pair, None).encapsulate(h);
        assert_bytes_eq!(original_dec.decapsulate(h, &ct3), secret3);
        assert_eq!(pair.eq_raw(&original), 1, "{}: eq pair", h.name);
        assert_eq!(pair.eq_raw(&public_only), 1, "{}: eq pair/public", h.name);

        // EVP_PKEY_dup keeps everything.
        let copy = original
            .dup()
            .unwrap_or_else(|e| panic!("{} dup failed:\n{e}", h.name));
        assert_eq!(copy.eq_raw(&original), 1, "{}: eq dup", h.name);
        assert_bytes_eq!(copy.private(), private, "{} dup priv", h.name);
        assert_bytes_eq!(lib.decapsulator(&copy).decapsulate(h, &ct), secret);

        // Other keys are not equal.
        let other = lib.keygen(h.name, None);
        assert_eq!(other.eq_raw(&original), 0, "{}: eq other key", h.name);
        assert_eq!(other.eq_raw(&public_only), 0, "{}: eq other", h.name);

        // Wrong lengths.
        lib.fromdata(
            h.name,
            ffi::EVP_PKEY_PUBLIC_KEY,
            &[(c"pub", &public[..h.pub_len - 1])],
        )
        .must_fail("short public key imported")
        .assert_reason(
            "invalid length",
            Some(&format!(
                "{} public key must be {} bytes, got {}",
                h.name,
                h.pub_len,
                h.pub_len - 1
            )),
        );
        lib.fromdata(
            h.name,
            ffi::EVP_PKEY_KEYPAIR,
            &[(c"priv", &private[1..]), (c"pub", &public)],
        )
        .must_fail("short private key imported")
        .assert_reason(
            "invalid length",
            Some(&format!(
                "{} private key must be {} bytes, got {}",
                h.name,
                h.priv_len,
                h.priv_len - 1
            )),
        );
    }
    // Keys of different hybrids never compare equal.
    let a = lib.keygen(HYBRIDS[0].name, None);
    let b = lib.keygen(HYBRIDS[1].name, None);
    assert_ne!(a.eq_raw(&b), 1, "keys of two hybrids compared equal");
}

/// Importing a private key with a public key of another key pair must not
/// give an inconsistent key: either the import fails (as the provider's
/// ML-KEM import does: "explicit public key does not match private") or
/// the public key is ignored and the key is the private key's (as OpenSSL
/// 3.5's own hybrids do).
#[test]
fn import_with_mismatched_public_key_is_not_inconsistent() {
    let lib = Lib::new();
    let mut problems = Vec::new();
    for h in &HYBRIDS {
        let a = lib.keygen(h.name, None);
        let b = lib.keygen(h.name, None);
        let (a_priv, a_pub, b_pub) = (a.private(), a.encoded_public(), b.encoded_public());
        let imported = match lib.fromdata(
            h.name,
            ffi::EVP_PKEY_KEYPAIR,
            &[(c"priv", &a_priv), (c"pub", &b_pub)],
        ) {
            Err(errors) => {
                errors.assert_not_empty("mismatched key pair import");
                continue;
            }
            Ok(key) => key,
        };
        let got = imported.encoded_public();
        if got != a_pub {
            let half = |part: &[u8], a: &[u8], b: &[u8]| match (part == a, part == b) {
                (true, _) => "A's",
                (_, true) => "B's",
                _ => "neither A's nor B's",
            };
            let ((got_m, got_x), (a_m, a_x), (b_m, b_x)) =
                (h.split_pub(&got), h.split_pub(&a_pub), h.split_pub(&b_pub));
            problems.push(format!(
                "{}: importing A's priv with B's pub gave a key whose public key has {} \
                 ML-KEM part and {} classical part",
                h.name,
                half(got_m, a_m, b_m),
                half(got_x, a_x, b_x),
            ));
        }
        let (ct, secret) = lib.encapsulator(&imported, None).encapsulate(h);
        match lib
            .decapsulator(&imported)
            .try_decapsulate_into(&ct, h.secret_len)
        {
            Ok(s) if s == secret => {}
            Ok(s) => {
                let ((s_m, s_x), (e_m, e_x)) = (h.split_secret(&s), h.split_secret(&secret));
                problems.push(format!(
                    "{}: the imported key decapsulates what its own public key encapsulates \
                     to another secret (ML-KEM half {}, classical half {})",
                    h.name,
                    if s_m == e_m { "equal" } else { "different" },
                    if s_x == e_x { "equal" } else { "different" },
                ));
            }
            Err(e) => problems.push(format!(
                "{}: the imported key cannot decapsulate for its own public key:\n{e}",
                h.name
            )),
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The EC points of draft-ietf-tls-ecdhe-mlkem are uncompressed (RFC 8446
/// 4.2.8.2: `legacy_form = 4`); OpenSSL's point parser also takes the
/// X9.62 "hybrid" form (0x06 / 0x07 with the y parity), which a peer must
/// not be able to substitute.
#[test]
fn ec_points_must_be_uncompressed() {
    let lib = Lib::new();
    let mut problems = Vec::new();
    for h in HYBRIDS
        .iter()
        .filter(|h| matches!(h.classical, Classical::P256 | Classical::P384))
    {
        let key = lib.keygen(h.name, None);
        let public = key.encoded_public();
        let to_hybrid_form = |point: &[u8]| {
            let mut p = point.to_vec();
            assert_eq!(p[0], 0x04);
            p[0] = 0x06 | (point[point.len() - 1] & 1);
            p
        };

        let (ek, x) = h.split_pub(&public);
        let server = lib.paramgen(h.name);
        if server
            .set_encoded_public_key(&h.join(ek, &to_hybrid_form(x)))
            .is_ok()
        {
            let now = server.encoded_public();
            problems.push(format!(
                "{}: a public key with its point in the hybrid form was taken (the key's \
                 encoded-pub-key is then {} the original)",
                h.name,
                if now == public {
                    "equal to"
                } else {
                    "different from"
                }
            ));
        }

        let (ct, secret) = lib.encapsulator(&key, None).encapsulate(h);
        let (ct_m, ct_x) = h.split_ct(&ct);
        let other_form = h.join(ct_m, &to_hybrid_form(ct_x));
        if let Ok(s) = lib
            .decapsulator(&key)
            .try_decapsulate_into(&other_form, h.secret_len)
        {
            problems.push(format!(
                "{}: a ciphertext with its ephemeral point in the hybrid form decapsulated \
                 to {}",
                h.name,
                if s == secret {
                    "the original ciphertext's secret"
                } else {
                    "another secret"
                }
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

// ------------------------------------------------------------------ 6. threads

#[test]
fn one_hybrid_key_shared_by_four_threads() {
    const THREADS: usize = 4;
    let rounds = if cfg!(debug_assertions) { 20 } else { 200 };
    let lib = Lib::new();
    for h in &HYBRIDS {
        let key = lib.keygen(h.name, None);
        let private = key.private();
        let (dk, x_priv) = h.split_priv(&private);
        let ciphertexts = common::on_threads(THREADS, |thread| {
            let enc = lib.encapsulator(&key, None);
            let dec = lib.decapsulator(&key);
            let mut seen = Vec::with_capacity(rounds);
            for round in 0..rounds {
                let (ct, secret) = enc.encapsulate(h);
                assert_bytes_eq!(
                    dec.decapsulate(h, &ct),
                    secret,
                    "{} thread {thread} round {round}",
                    h.name
                );
                if round % 50 == 0 {
                    // Now and then, the independent check too.
                    let (ct_m, ct_x) = h.split_ct(&ct);
                    let expected = h.join(
                        &ml_decapsulate(h.ml_kem, dk, ct_m),
                        &x_derive(h.classical, x_priv, ct_x).expect("derive"),
                    );
                    assert_bytes_eq!(secret, expected, "{} independent", h.name);
                }
                seen.push(ct);
            }
            seen
        });
        let all: HashSet<&Vec<u8>> = ciphertexts.iter().flatten().collect();
        assert_eq!(
            all.len(),
            THREADS * rounds,
            "{}: repeated ciphertexts across threads",
            h.name
        );
    }
}
