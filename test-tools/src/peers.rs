//! Adapters that run peer ML-KEM implementations the same way the bench runs
//! kem-core, so that their timings are comparable, and that produce their
//! outputs for fixed inputs, so that they can be cross-checked against
//! kem-core byte for byte.
//!
//! Peers (feature `peers`):
//! - RustCrypto `ml-kem` 0.3 (with its `hazmat` feature, for
//!   `encapsulate_deterministic`).
//! - `libcrux-ml-kem` 0.0.11, twice: its explicit `portable` module, and its
//!   default top-level API, which picks AVX2 (x86_64) or NEON (aarch64) at run
//!   time when it was compiled with that support. libcrux's build script
//!   compiles the AVX2 code into every x86_64 build unless
//!   `LIBCRUX_DISABLE_SIMD256` is set; the feature `peers-libcrux-avx2`
//!   turns it on regardless.
//!
//! What each operation covers (all deterministic, fixed inputs):
//! - keygen: key pair from the 64-byte seed d ‖ z.
//! - encaps: parse + validate the serialized encapsulation key (FIPS 203
//!   section 7.2 modulus check), then encapsulate with the given m.
//! - decaps: parse + validate the serialized (expanded, FIPS 203 format)
//!   decapsulation key (section 7.3 hash check) and the ciphertext, then
//!   decapsulate.
//! - RustCrypto also gets the cached-key rows (its parsed key objects), as
//!   kem-core does; libcrux's packed API has no parsed key to cache.

use std::hint::black_box;

use kem_core::ParameterSet;
use libcrux_ml_kem::{MlKemCiphertext, MlKemKeyPair, MlKemPrivateKey, MlKemPublicKey};

use crate::cycles::{Bench, Operation};

/// Fixed inputs of the deterministic algorithms: KeyGen_internal(d, z) and
/// Encaps_internal(ek, m).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Inputs {
    /// Key-generation seed d.
    pub d: [u8; 32],
    /// Implicit-rejection seed z.
    pub z: [u8; 32],
    /// Encapsulation randomness m.
    pub m: [u8; 32],
}

impl Inputs {
    /// The 64-byte seed d ‖ z.
    pub fn seed(&self) -> [u8; 64] {
        let mut seed = [0u8; 64];
        seed[..32].copy_from_slice(&self.d);
        seed[32..].copy_from_slice(&self.z);
        seed
    }
}

/// The outputs of one deterministic KeyGen, Encaps and Decaps, serialized in
/// the FIPS 203 formats.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KnownAnswer {
    /// Encapsulation key ek.
    pub ek: Vec<u8>,
    /// Expanded decapsulation key dk_PKE ‖ ek ‖ H(ek) ‖ z.
    pub dk: Vec<u8>,
    /// Ciphertext from Encaps(ek, m).
    pub ct: Vec<u8>,
    /// Shared secret from Encaps.
    pub ss_encaps: [u8; 32],
    /// Shared secret from Decaps(dk, ct), parsing dk and ct from bytes.
    pub ss_decaps: [u8; 32],
}

impl KnownAnswer {
    /// Names of the fields in which `self` and `other` differ (empty when
    /// they agree).
    pub fn differences(&self, other: &KnownAnswer) -> Vec<&'static str> {
        let mut out = Vec::new();
        if self.ek != other.ek {
            out.push("ek");
        }
        if self.dk != other.dk {
            out.push("dk");
        }
        if self.ct != other.ct {
            out.push("ciphertext");
        }
        if self.ss_encaps != other.ss_encaps {
            out.push("shared secret (encaps)");
        }
        if self.ss_decaps != other.ss_decaps {
            out.push("shared secret (decaps)");
        }
        out
    }
}

/// A peer implementation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Peer {
    /// RustCrypto `ml-kem` 0.3.
    RustCrypto,
    /// `libcrux-ml-kem`, its `portable` module.
    LibcruxPortable,
    /// `libcrux-ml-kem`, its default API with run-time platform selection.
    LibcruxAuto,
}

impl Peer {
    /// Every peer, in report order.
    pub const ALL: [Peer; 3] = [Peer::RustCrypto, Peer::LibcruxPortable, Peer::LibcruxAuto];

    /// Implementation label for tables, e.g. `"libcrux/auto(avx2)"`.
    pub fn label(self) -> String {
        match self {
            Peer::RustCrypto => "rustcrypto-ml-kem".to_owned(),
            Peer::LibcruxPortable => "libcrux/portable".to_owned(),
            Peer::LibcruxAuto => format!("libcrux/auto({})", libcrux_auto_platform()),
        }
    }

    /// One-line description for the report header.
    pub fn description(self) -> String {
        match self {
            Peer::RustCrypto => "RustCrypto ml-kem 0.3 (hazmat; decaps key in the \
                                 deprecated expanded form, as FIPS 203 stores it)"
                .to_owned(),
            Peer::LibcruxPortable => "libcrux-ml-kem 0.0.11, mlkemNNN::portable".to_owned(),
            Peer::LibcruxAuto => format!(
                "libcrux-ml-kem 0.0.11, default API, run-time selection -> {}",
                libcrux_auto_platform()
            ),
        }
    }

    /// The peer's outputs for `inputs`. Panics if the peer rejects its own
    /// keys (which would be a bug in the peer or in this adapter).
    pub fn known_answer<P: ParameterSet>(self, inputs: &Inputs) -> KnownAnswer {
        dispatch!(P, set => match self {
            Peer::RustCrypto => set::rustcrypto_known_answer(inputs),
            Peer::LibcruxPortable => libcrux_known_answer(&set::libcrux_portable(), inputs),
            Peer::LibcruxAuto => libcrux_known_answer(&set::libcrux_auto(), inputs),
        })
    }

    /// The peer's operations on `inputs`, ready to be timed (see
    /// [`crate::cycles::measure_interleaved`]).
    pub fn benches<P: ParameterSet>(self, inputs: &Inputs) -> Vec<Bench<'static>> {
        let label = self.label();
        dispatch!(P, set => match self {
            Peer::RustCrypto => set::rustcrypto_benches(&label, inputs),
            Peer::LibcruxPortable => libcrux_benches(set::libcrux_portable(), &label, inputs),
            Peer::LibcruxAuto => libcrux_benches(set::libcrux_auto(), &label, inputs),
        })
    }
}

/// Which code path libcrux's default API takes on this machine: `"avx2"`,
/// `"neon"` or `"portable"`. Mirrors libcrux-platform's checks (AVX2 needs
/// AVX, BMI1, BMI2, FMA and MOVBE too) and libcrux's build-script switches.
pub fn libcrux_auto_platform() -> &'static str {
    #[cfg(target_arch = "x86_64")]
    {
        let compiled = cfg!(feature = "peers-libcrux-avx2")
            || !matches!(
                option_env!("LIBCRUX_DISABLE_SIMD256"),
                Some("1" | "y" | "Y")
            );
        let cpu = std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("avx")
            && std::arch::is_x86_feature_detected!("bmi1")
            && std::arch::is_x86_feature_detected!("bmi2")
            && std::arch::is_x86_feature_detected!("fma")
            && std::arch::is_x86_feature_detected!("movbe");
        if compiled && cpu {
            return "avx2";
        }
    }
    #[cfg(target_arch = "aarch64")]
    {
        if !matches!(
            option_env!("LIBCRUX_DISABLE_SIMD128"),
            Some("1" | "y" | "Y")
        ) {
            return "neon";
        }
    }
    "portable"
}

/// Runs `$body` with `$set` naming the per-parameter-set module for `$p`.
macro_rules! dispatch {
    ($p:ty, $set:ident => $body:expr) => {
        match <$p as ParameterSet>::K {
            2 => {
                use k512 as $set;
                $body
            }
            3 => {
                use k768 as $set;
                $body
            }
            4 => {
                use k1024 as $set;
                $body
            }
            k => unreachable!("no ML-KEM parameter set with k = {k}"),
        }
    };
}
use dispatch;

/// One libcrux parameter set and code path, as pointers to its functions on
/// libcrux's packed (byte-array) types. (An indirect call costs a few
/// cycles, next to tens of thousands per operation.)
#[derive(Clone, Copy)]
struct Libcrux<const PK: usize, const SK: usize, const CT: usize> {
    keygen: fn([u8; 64]) -> MlKemKeyPair<SK, PK>,
    encaps: fn(&MlKemPublicKey<PK>, [u8; 32]) -> (MlKemCiphertext<CT>, [u8; 32]),
    decaps: fn(&MlKemPrivateKey<SK>, &MlKemCiphertext<CT>) -> [u8; 32],
    validate_public: fn(&MlKemPublicKey<PK>) -> bool,
    validate_private: fn(&MlKemPrivateKey<SK>, &MlKemCiphertext<CT>) -> bool,
}

impl<const PK: usize, const SK: usize, const CT: usize> Libcrux<PK, SK, CT> {
    /// Encaps from serialized ek bytes: wrap, validate (section 7.2),
    /// encapsulate.
    #[inline(always)]
    fn encaps_from_bytes(&self, ek: &[u8; PK], m: [u8; 32]) -> (MlKemCiphertext<CT>, [u8; 32]) {
        let pk = MlKemPublicKey::from(ek);
        assert!((self.validate_public)(&pk), "libcrux rejected its ek");
        (self.encaps)(&pk, m)
    }

    /// Decaps from serialized dk and ct bytes: wrap, validate (section 7.3
    /// hash check), decapsulate.
    #[inline(always)]
    fn decaps_from_bytes(&self, dk: &[u8; SK], ct: &[u8; CT]) -> [u8; 32] {
        let sk = MlKemPrivateKey::from(dk);
        let ct = MlKemCiphertext::from(ct);
        assert!((self.validate_private)(&sk, &ct), "libcrux rejected its dk");
        (self.decaps)(&sk, &ct)
    }
}

fn libcrux_known_answer<const PK: usize, const SK: usize, const CT: usize>(
    api: &Libcrux<PK, SK, CT>,
    inputs: &Inputs,
) -> KnownAnswer {
    let pair = (api.keygen)(inputs.seed());
    let (ct, ss_encaps) = api.encaps_from_bytes(pair.pk(), inputs.m);
    let ss_decaps = api.decaps_from_bytes(pair.sk(), ct.as_slice());
    KnownAnswer {
        ek: pair.pk().to_vec(),
        dk: pair.sk().to_vec(),
        ct: ct.as_slice().to_vec(),
        ss_encaps,
        ss_decaps,
    }
}

fn libcrux_benches<const PK: usize, const SK: usize, const CT: usize>(
    api: Libcrux<PK, SK, CT>,
    label: &str,
    inputs: &Inputs,
) -> Vec<Bench<'static>> {
    let seed = inputs.seed();
    let m = inputs.m;
    let pair = (api.keygen)(seed);
    let ek: Box<[u8; PK]> = Box::new(*pair.pk());
    let dk: Box<[u8; SK]> = Box::new(*pair.sk());
    let (ct, _) = api.encaps_from_bytes(&ek, m);
    let ct: Box<[u8; CT]> = Box::new(*ct.as_slice());
    vec![
        Bench::new(label, Operation::Keygen, move || {
            (api.keygen)(black_box(seed))
        }),
        Bench::new(label, Operation::Encaps, move || {
            api.encaps_from_bytes(black_box(&ek), black_box(m))
        }),
        Bench::new(label, Operation::Decaps, move || {
            api.decaps_from_bytes(black_box(&dk), black_box(&ct))
        }),
    ]
}

/// Builds the per-parameter-set module: RustCrypto adapters and the two
/// libcrux code paths.
macro_rules! peer_set {
    ($module:ident, $ours:ty, $rustcrypto:ty, $libcrux:ident) => {
        mod $module {
            use std::hint::black_box;

            use libcrux_ml_kem::$libcrux as lc;
            #[allow(deprecated)]
            use ml_kem::ExpandedKeyEncoding as _;
            use ml_kem::{Decapsulate as _, KeyExport as _};

            use kem_core::ParameterSet;

            use super::{Inputs, KnownAnswer, Libcrux};
            use crate::cycles::{Bench, Operation};

            type Ek = ml_kem::EncapsulationKey<$rustcrypto>;
            type Dk = ml_kem::DecapsulationKey<$rustcrypto>;
            type EkBytes = ml_kem::Key<Ek>;
            type DkBytes = ml_kem::ExpandedDecapsulationKey<$rustcrypto>;
            type CtBytes = ml_kem::Ciphertext<$rustcrypto>;

            /// Encaps from serialized ek bytes: copy into RustCrypto's array,
            /// parse with the section 7.2 check, encapsulate.
            #[inline(always)]
            fn rc_encaps(ek: &[u8], m: &ml_kem::B32) -> (CtBytes, ml_kem::SharedKey) {
                let bytes = EkBytes::try_from(ek).expect("ek length");
                let ek = Ek::new(&bytes).expect("RustCrypto rejected its ek");
                ek.encapsulate_deterministic(m)
            }

            /// Decaps from serialized (expanded) dk and ct bytes: copy into
            /// RustCrypto's arrays, parse with the section 7.2 and 7.3
            /// checks, decapsulate.
            #[inline(always)]
            fn rc_decaps(dk: &[u8], ct: &[u8]) -> ml_kem::SharedKey {
                let bytes = DkBytes::try_from(dk).expect("dk length");
                let ct = CtBytes::try_from(ct).expect("ct length");
                #[allow(deprecated)]
                let dk = Dk::from_expanded(&bytes).expect("RustCrypto rejected its dk");
                dk.decapsulate(&ct)
            }

            fn rc_keygen(seed: [u8; 64]) -> Dk {
                Dk::from_seed(ml_kem::Seed::from(seed))
            }

            pub(super) fn rustcrypto_known_answer(inputs: &Inputs) -> KnownAnswer {
                let dk = rc_keygen(inputs.seed());
                let ek = dk.encapsulation_key().to_bytes().to_vec();
                #[allow(deprecated)]
                let dk = dk.to_expanded_bytes().to_vec();
                let (ct, ss_encaps) = rc_encaps(&ek, &ml_kem::B32::from(inputs.m));
                let ss_decaps = rc_decaps(&dk, &ct);
                KnownAnswer {
                    ek,
                    dk,
                    ct: ct.to_vec(),
                    ss_encaps: ss_encaps.into(),
                    ss_decaps: ss_decaps.into(),
                }
            }

            pub(super) fn rustcrypto_benches(label: &str, inputs: &Inputs) -> Vec<Bench<'static>> {
                let seed = inputs.seed();
                let m = ml_kem::B32::from(inputs.m);
                let dk = rc_keygen(seed);
                let ek = dk.encapsulation_key().clone();
                let ek_bytes = ek.to_bytes().to_vec();
                #[allow(deprecated)]
                let dk_bytes = dk.to_expanded_bytes().to_vec();
                let (ct, _) = ek.encapsulate_deterministic(&m);
                let ct_bytes = ct.to_vec();
                vec![
                    Bench::new(label, Operation::Keygen, move || rc_keygen(black_box(seed))),
                    Bench::new(label, Operation::Encaps, move || {
                        rc_encaps(black_box(&ek_bytes), black_box(&m))
                    }),
                    Bench::new(label, Operation::Decaps, move || {
                        rc_decaps(black_box(&dk_bytes), black_box(&ct_bytes))
                    }),
                    Bench::new(label, Operation::EncapsCached, move || {
                        black_box(&ek).encapsulate_deterministic(black_box(&m))
                    }),
                    Bench::new(label, Operation::DecapsCached, move || {
                        black_box(&dk).decapsulate(black_box(&ct))
                    }),
                ]
            }

            type Lc = Libcrux<
                { <$ours as ParameterSet>::EK_LEN },
                { <$ours as ParameterSet>::DK_LEN },
                { <$ours as ParameterSet>::CT_LEN },
            >;

            /// libcrux's explicit portable code path.
            pub(super) fn libcrux_portable() -> Lc {
                Libcrux {
                    keygen: lc::portable::generate_key_pair,
                    encaps: lc::portable::encapsulate,
                    decaps: lc::portable::decapsulate,
                    validate_public: lc::portable::validate_public_key,
                    validate_private: lc::portable::validate_private_key,
                }
            }

            /// libcrux's default API (run-time platform selection).
            pub(super) fn libcrux_auto() -> Lc {
                Libcrux {
                    keygen: lc::generate_key_pair,
                    encaps: lc::encapsulate,
                    decaps: lc::decapsulate,
                    validate_public: lc::validate_public_key,
                    validate_private: lc::validate_private_key,
                }
            }
        }
    };
}

peer_set!(k512, kem_core::MlKem512, ml_kem::MlKem512, mlkem512);
peer_set!(k768, kem_core::MlKem768, ml_kem::MlKem768, mlkem768);
peer_set!(k1024, kem_core::MlKem1024, ml_kem::MlKem1024, mlkem1024);
