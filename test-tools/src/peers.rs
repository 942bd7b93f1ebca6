//! Peer ML-KEM implementations, run the way the bench runs kem-core so that
//! their timings compare, and their outputs for fixed inputs, to be
//! cross-checked against kem-core byte for byte.
//!
//! Peers: RustCrypto `ml-kem` 0.3 (feature `peers`, its `hazmat`
//! `encapsulate_deterministic`); `libcrux-ml-kem` 0.0.11, its `portable`
//! module and its default API (AVX2 or NEON picked at run time when compiled
//! in, see the feature `peers-libcrux-avx2`); liboqs, either 0.13 through the
//! `oqs` crate (`peers-liboqs`) or one installed on this machine
//! (`peers-liboqs-system`, see [`liboqs`]).
//!
//! Each operation is deterministic on fixed inputs: keygen from the seed
//! d ‖ z; encaps parses and checks the serialized ek (FIPS 203 section 7.2),
//! then encapsulates with m; decaps parses and checks the serialized
//! expanded dk (section 7.3) and the ciphertext, then decapsulates.
//! RustCrypto also gets the cached-key rows (its parsed key objects), as
//! kem-core does; the byte-array APIs of libcrux and liboqs have none.

use std::hint::black_box;
use std::marker::PhantomData;

use kem_core::ParameterSet;
use libcrux_ml_kem::{MlKemCiphertext, MlKemPrivateKey, MlKemPublicKey};
#[allow(deprecated)]
use ml_kem::ExpandedKeyEncoding as _;
use ml_kem::{Decapsulate as _, KeyExport as _};

use crate::measure::{Bench, Operation};

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
        [
            ("ek", self.ek == other.ek),
            ("dk", self.dk == other.dk),
            ("ciphertext", self.ct == other.ct),
            ("shared secret (encaps)", self.ss_encaps == other.ss_encaps),
            ("shared secret (decaps)", self.ss_decaps == other.ss_decaps),
        ]
        .into_iter()
        .filter_map(|(field, same)| (!same).then_some(field))
        .collect()
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
    /// liboqs (mlkem-native): the `oqs` crate's or the one installed here.
    #[cfg(any(feature = "peers-liboqs", liboqs_system))]
    Liboqs,
}

impl Peer {
    /// Every peer, in report order.
    pub const ALL: [Peer; 3 + cfg!(any(feature = "peers-liboqs", liboqs_system)) as usize] = [
        Peer::RustCrypto,
        Peer::LibcruxPortable,
        Peer::LibcruxAuto,
        #[cfg(any(feature = "peers-liboqs", liboqs_system))]
        Peer::Liboqs,
    ];

    /// Implementation label for tables, e.g. `"libcrux/auto(avx2)"`.
    pub fn label(self) -> String {
        match self {
            Peer::RustCrypto => "rustcrypto-ml-kem".to_owned(),
            Peer::LibcruxPortable => "libcrux/portable".to_owned(),
            Peer::LibcruxAuto => format!("libcrux/auto({})", libcrux_auto_platform()),
            #[cfg(any(feature = "peers-liboqs", liboqs_system))]
            Peer::Liboqs => liboqs::label(),
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
            #[cfg(any(feature = "peers-liboqs", liboqs_system))]
            Peer::Liboqs => liboqs::description(),
        }
    }

    /// The peer's outputs for `inputs`. Panics if the peer rejects its own
    /// keys (which would be a bug in the peer or in this adapter).
    pub fn known_answer<P: ParameterSet>(self, inputs: &Inputs) -> KnownAnswer {
        adapter(self, P::K, "", inputs).0
    }

    /// The peer's operations on `inputs`, ready to be timed (see
    /// [`crate::measure::measure_trials`]).
    pub fn benches<P: ParameterSet>(self, inputs: &Inputs) -> Vec<Bench<'static>> {
        adapter(self, P::K, &self.label(), inputs).1
    }
}

/// Rust's run-time detection of an x86_64 feature (false elsewhere).
macro_rules! x86 {
    ($feature:tt) => {{
        #[cfg(target_arch = "x86_64")]
        let detected = std::arch::is_x86_feature_detected!($feature);
        #[cfg(not(target_arch = "x86_64"))]
        let detected = false;
        detected
    }};
}

/// Which code path libcrux's default API takes on this machine: `"avx2"`,
/// `"neon"` or `"portable"`. Mirrors libcrux-platform's checks (AVX2 needs
/// AVX, BMI1, BMI2, FMA and MOVBE too) and libcrux's build-script switches.
fn libcrux_auto_platform() -> &'static str {
    let disabled = |switch: Option<&str>| matches!(switch, Some("1" | "y" | "Y"));
    let avx2_compiled =
        cfg!(feature = "peers-libcrux-avx2") || !disabled(option_env!("LIBCRUX_DISABLE_SIMD256"));
    if cfg!(target_arch = "x86_64")
        && avx2_compiled
        && x86!("avx2")
        && x86!("avx")
        && x86!("bmi1")
        && x86!("bmi2")
        && x86!("fma")
        && x86!("movbe")
    {
        "avx2"
    } else if cfg!(target_arch = "aarch64") && !disabled(option_env!("LIBCRUX_DISABLE_SIMD128")) {
        "neon"
    } else {
        "portable"
    }
}

/// One peer on one parameter set: keygen, and encaps and decaps from
/// serialized keys.
trait PeerKem: Copy + 'static {
    /// What keygen returns (and the keygen row times).
    type Keys: 'static;
    /// Serialized ek, expanded dk and ciphertext.
    type Ek: AsRef<[u8]> + 'static;
    type Dk: AsRef<[u8]> + 'static;
    type Ct: AsRef<[u8]> + 'static;

    /// KeyGen_internal(d, z) from the seed d ‖ z.
    fn keygen(self, seed: [u8; 64]) -> Self::Keys;
    /// The serialized ek and expanded dk of `keys`.
    fn export(keys: &Self::Keys) -> (Self::Ek, Self::Dk);
    /// Parses and checks ek (section 7.2), then encapsulates with `m`.
    fn encaps(self, ek: &Self::Ek, m: [u8; 32]) -> (Self::Ct, [u8; 32]);
    /// Parses and checks dk (section 7.3) and ct, then decapsulates.
    fn decaps(self, dk: &Self::Dk, ct: &Self::Ct) -> [u8; 32];
    /// The cached-key rows, for a peer with parsed key objects.
    fn cached_benches(self, _label: &str, _inputs: &Inputs) -> Vec<Bench<'static>> {
        Vec::new()
    }
}

/// `kem`'s outputs for `inputs`, and its operations on them, ready to be
/// timed under `label`.
fn run<T: PeerKem>(kem: T, label: &str, inputs: &Inputs) -> (KnownAnswer, Vec<Bench<'static>>) {
    let (seed, m) = (inputs.seed(), inputs.m);
    let (ek, dk) = T::export(&kem.keygen(seed));
    let (ct, ss_encaps) = kem.encaps(&ek, m);
    let answer = KnownAnswer {
        ek: ek.as_ref().to_vec(),
        dk: dk.as_ref().to_vec(),
        ct: ct.as_ref().to_vec(),
        ss_encaps,
        ss_decaps: kem.decaps(&dk, &ct),
    };
    let mut benches = vec![
        Bench::new(label, Operation::Keygen, move || {
            kem.keygen(black_box(seed))
        }),
        Bench::new(label, Operation::Encaps, move || {
            kem.encaps(black_box(&ek), black_box(m))
        }),
        Bench::new(label, Operation::Decaps, move || {
            kem.decaps(black_box(&dk), black_box(&ct))
        }),
    ];
    benches.extend(kem.cached_benches(label, inputs));
    (answer, benches)
}

/// Two byte arrays: (ek, dk) or (ct, shared secret).
type Pair<const A: usize, const B: usize> = ([u8; A], [u8; B]);

/// A peer on one parameter set with a byte-array API: keygen from the seed,
/// encaps from ek bytes (checking ek), decaps from dk and ct bytes (checking
/// dk). (An indirect call costs a few cycles, next to tens of thousands per
/// operation.)
#[derive(Clone, Copy)]
struct ByteKem<const EK: usize, const DK: usize, const CT: usize> {
    keygen: fn(&[u8; 64]) -> Pair<EK, DK>,
    encaps: fn(&[u8; EK], &[u8; 32]) -> Pair<CT, 32>,
    decaps: fn(&[u8; DK], &[u8; CT]) -> [u8; 32],
}

impl<const EK: usize, const DK: usize, const CT: usize> PeerKem for ByteKem<EK, DK, CT> {
    type Keys = Pair<EK, DK>;
    type Ek = [u8; EK];
    type Dk = [u8; DK];
    type Ct = [u8; CT];

    fn keygen(self, seed: [u8; 64]) -> Self::Keys {
        (self.keygen)(&seed)
    }

    fn export(keys: &Self::Keys) -> Self::Keys {
        *keys
    }

    fn encaps(self, ek: &[u8; EK], m: [u8; 32]) -> Pair<CT, 32> {
        (self.encaps)(ek, &m)
    }

    fn decaps(self, dk: &[u8; DK], ct: &[u8; CT]) -> [u8; 32] {
        (self.decaps)(dk, ct)
    }
}

/// The [`ByteKem`] of a libcrux module, e.g. `mlkem768::portable`, on
/// libcrux's packed (byte-array) types.
macro_rules! libcrux {
    ($($module:ident)::+) => {{
        use libcrux_ml_kem::$($module)::+ as lc;
        ByteKem {
            keygen: |seed| {
                let pair = lc::generate_key_pair(*seed);
                (*pair.pk(), *pair.sk())
            },
            encaps: |ek, m| {
                let pk = MlKemPublicKey::from(ek);
                assert!(lc::validate_public_key(&pk), "libcrux rejected its ek");
                let (ct, ss) = lc::encapsulate(&pk, *m);
                (*ct.as_slice(), ss)
            },
            decaps: |dk, ct| {
                let (sk, ct) = (MlKemPrivateKey::from(dk), MlKemCiphertext::from(ct));
                assert!(lc::validate_private_key(&sk, &ct), "libcrux rejected its dk");
                lc::decapsulate(&sk, &ct)
            },
        }
    }};
}

/// The [`ByteKem`] of liboqs's ML-KEM-`$n` (`OQS_KEM_ml_kem_$n_*`, which
/// pick their code by the CPU themselves), with the sizes of `$ours`.
#[cfg(any(feature = "peers-liboqs", liboqs_system))]
macro_rules! liboqs_set {
    ($n:literal, $ours:ty) => {{
        use liboqs::{filled, Status};
        unsafe extern "C" {
            #[link_name = concat!("OQS_KEM_ml_kem_", $n, "_keypair_derand")]
            fn keypair_derand(ek: *mut u8, dk: *mut u8, seed: *const u8) -> Status;
            /// liboqs 0.13 has no derandomized encaps: m goes through
            /// [`liboqs::set_coins`].
            #[cfg(feature = "peers-liboqs")]
            #[link_name = concat!("OQS_KEM_ml_kem_", $n, "_encaps")]
            fn encaps(ct: *mut u8, ss: *mut u8, ek: *const u8) -> Status;
            #[cfg(liboqs_system)]
            #[link_name = concat!("OQS_KEM_ml_kem_", $n, "_encaps_derand")]
            fn encaps(ct: *mut u8, ss: *mut u8, ek: *const u8, m: *const u8) -> Status;
            #[link_name = concat!("OQS_KEM_ml_kem_", $n, "_decaps")]
            fn decaps(ss: *mut u8, ct: *const u8, dk: *const u8) -> Status;
        }
        liboqs::init();
        // SAFETY (each call): buffers of the set's sizes, kem-core's (the
        // same in liboqs: FIPS 203's), a 64-byte seed and a 32-byte m.
        ByteKem::<
            { <$ours as ParameterSet>::EK_LEN },
            { <$ours as ParameterSet>::DK_LEN },
            { <$ours as ParameterSet>::CT_LEN },
        > {
            keygen: |seed| {
                filled("liboqs keygen failed", |ek, dk| unsafe {
                    keypair_derand(ek, dk, seed.as_ptr())
                })
            },
            encaps: |ek, m| {
                #[cfg(feature = "peers-liboqs")]
                liboqs::set_coins(*m);
                filled("liboqs rejected its ek", |ct, ss| unsafe {
                    #[cfg(feature = "peers-liboqs")]
                    let status = encaps(ct, ss, ek.as_ptr());
                    #[cfg(liboqs_system)]
                    let status = encaps(ct, ss, ek.as_ptr(), m.as_ptr());
                    status
                })
            },
            decaps: |dk, ct| {
                let (ss, []) = filled("liboqs rejected its dk", |ss, _| unsafe {
                    decaps(ss, ct.as_ptr(), dk.as_ptr())
                });
                ss
            },
        }
    }};
}

/// RustCrypto `ml-kem` on its parameter set `P`.
#[derive(Clone, Copy)]
struct RustCrypto<P>(PhantomData<P>);

/// For each parameter set (kem-core's and RustCrypto's type `$set`,
/// libcrux's module, liboqs's name), RustCrypto's [`PeerKem`] (its hazmat encaps is not
/// generic) and the arms of [`adapter`].
macro_rules! parameter_sets {
    ($($k:literal => $set:ident, $libcrux:ident, $n:literal;)+) => {
        $(impl PeerKem for RustCrypto<ml_kem::$set> {
            type Keys = ml_kem::DecapsulationKey<ml_kem::$set>;
            type Ek = Vec<u8>;
            type Dk = Vec<u8>;
            type Ct = ml_kem::Ciphertext<ml_kem::$set>;

            fn keygen(self, seed: [u8; 64]) -> Self::Keys {
                Self::Keys::from_seed(ml_kem::Seed::from(seed))
            }

            fn export(dk: &Self::Keys) -> (Vec<u8>, Vec<u8>) {
                #[allow(deprecated)]
                let expanded = dk.to_expanded_bytes().to_vec();
                (dk.encapsulation_key().to_bytes().to_vec(), expanded)
            }

            fn encaps(self, ek: &Vec<u8>, m: [u8; 32]) -> (Self::Ct, [u8; 32]) {
                type Ek = ml_kem::EncapsulationKey<ml_kem::$set>;
                let bytes = ml_kem::Key::<Ek>::try_from(ek.as_slice()).expect("ek length");
                let ek = Ek::new(&bytes).expect("RustCrypto rejected its ek");
                let (ct, ss) = ek.encapsulate_deterministic(&m.into());
                (ct, ss.into())
            }

            fn decaps(self, dk: &Vec<u8>, ct: &Self::Ct) -> [u8; 32] {
                type DkBytes = ml_kem::ExpandedDecapsulationKey<ml_kem::$set>;
                let bytes = DkBytes::try_from(dk.as_slice()).expect("dk length");
                let ct = Self::Ct::try_from(ct.as_slice()).expect("ct length");
                #[allow(deprecated)]
                let dk = Self::Keys::from_expanded(&bytes).expect("RustCrypto rejected its dk");
                dk.decapsulate(&ct).into()
            }

            fn cached_benches(self, label: &str, inputs: &Inputs) -> Vec<Bench<'static>> {
                let dk = self.keygen(inputs.seed());
                let ek = dk.encapsulation_key().clone();
                let m = ml_kem::B32::from(inputs.m);
                let (ct, _) = ek.encapsulate_deterministic(&m);
                vec![
                    Bench::new(label, Operation::EncapsCached, move || {
                        black_box(&ek).encapsulate_deterministic(black_box(&m))
                    }),
                    Bench::new(label, Operation::DecapsCached, move || {
                        black_box(&dk).decapsulate(black_box(&ct))
                    }),
                ]
            }
        })+

        /// [`run`] for `peer` on the parameter set with this `k`.
        fn adapter(
            peer: Peer,
            k: usize,
            label: &str,
            inputs: &Inputs,
        ) -> (KnownAnswer, Vec<Bench<'static>>) {
            match (k, peer) {
                $(
                    ($k, Peer::RustCrypto) => run(RustCrypto::<ml_kem::$set>(PhantomData), label, inputs),
                    ($k, Peer::LibcruxPortable) => run(libcrux!($libcrux::portable), label, inputs),
                    ($k, Peer::LibcruxAuto) => run(libcrux!($libcrux), label, inputs),
                    #[cfg(any(feature = "peers-liboqs", liboqs_system))]
                    ($k, Peer::Liboqs) => run(liboqs_set!($n, kem_core::$set), label, inputs),
                )+
                (k, _) => unreachable!("no ML-KEM parameter set with k = {k}"),
            }
        }
    };
}

parameter_sets! {
    2 => MlKem512, mlkem512, "512";
    3 => MlKem768, mlkem768, "768";
    4 => MlKem1024, mlkem1024, "1024";
}

/// liboqs's ML-KEM: 0.13 through the `oqs` crate (feature `peers-liboqs`;
/// encaps made deterministic through an RNG callback) or one installed on
/// this machine (`peers-liboqs-system`, which `build.rs` finds and links;
/// its label carries `OQS_version()`, e.g. `liboqs-system-0.16.0/auto(avx2)`).
/// Never both, as they are the same C symbols: `linked` is the one built.
/// The functions are declared here, from liboqs's `oqs/common.h` and
/// `oqs/kem_ml_kem.h`, for either.
#[cfg(any(feature = "peers-liboqs", liboqs_system))]
mod liboqs {
    use std::ffi::{c_char, c_int, CStr};
    use std::sync::Once;

    #[cfg(feature = "peers-liboqs")]
    use oqs_crate as linked;
    #[cfg(feature = "peers-liboqs")]
    pub(super) use oqs_crate::set_coins;
    #[cfg(liboqs_system)]
    use system as linked;

    pub(super) use linked::{description, label};

    /// `OQS_STATUS`, a C enum; `OQS_SUCCESS` is 0.
    pub(super) type Status = c_int;

    unsafe extern "C" {
        fn OQS_init();
        fn OQS_version() -> *const c_char;
        /// `ext`: an `OQS_CPU_EXT` value.
        fn OQS_CPU_has_extension(ext: c_int) -> c_int;
    }

    /// `OQS_init` (CPU detection), and the flavour's own set-up, once.
    pub(super) fn init() {
        static INIT: Once = Once::new();
        // SAFETY: liboqs's initialization; no arguments, idempotent.
        INIT.call_once(|| unsafe {
            OQS_init();
            linked::init();
        });
    }

    /// Two output buffers of `A` and `B` bytes, filled by the liboqs call
    /// `fill`, which must report success (else a panic with `what`).
    pub(super) fn filled<const A: usize, const B: usize>(
        what: &str,
        fill: impl FnOnce(*mut u8, *mut u8) -> Status,
    ) -> super::Pair<A, B> {
        let (mut a, mut b) = ([0u8; A], [0u8; B]);
        assert!(fill(a.as_mut_ptr(), b.as_mut_ptr()) == 0, "{what}");
        (a, b)
    }

    /// `OQS_version()`, e.g. `"0.16.0"`.
    fn version() -> String {
        // SAFETY: returns a pointer to a static NUL-terminated string.
        let version = unsafe { CStr::from_ptr(OQS_version()) };
        version.to_string_lossy().into_owned()
    }

    /// Which ML-KEM code path liboqs takes on this machine: `"avx2"`,
    /// `"neon"` or `"portable"`, by liboqs's own rule: in a portable
    /// (`OQS_DIST_BUILD`) build, the x86_64 code when the CPU has AVX2, BMI2
    /// and POPCNT, the aarch64 code when it has NEON; otherwise whatever
    /// native code the build compiled in. An extension whose `OQS_CPU_EXT`
    /// value is unknown is asked of Rust's detection instead.
    fn platform() -> &'static str {
        let [avx2, bmi2, popcnt, neon] = linked::cpu_extensions();
        let has = |ext: Option<c_int>, detected: bool| match ext {
            Some(ext) => {
                init();
                // SAFETY: liboqs's CPU-feature query, initialized above.
                unsafe { OQS_CPU_has_extension(ext) != 0 }
            }
            None => detected,
        };
        match linked::NATIVE {
            "x86_64"
                if !linked::DIST
                    || has(avx2, x86!("avx2"))
                        && has(bmi2, x86!("bmi2"))
                        && has(popcnt, x86!("popcnt")) =>
            {
                "avx2"
            }
            "aarch64" if !linked::DIST || has(neon, cfg!(target_arch = "aarch64")) => "neon",
            _ => "portable",
        }
    }

    /// liboqs 0.13 through the `oqs` crate, a portable build.
    #[cfg(feature = "peers-liboqs")]
    mod oqs_crate {
        use std::cell::Cell;
        use std::ffi::c_int;

        use oqs::ffi::common::OQS_CPU_EXT::*;

        pub(super) const DIST: bool = true;
        pub(super) const NATIVE: &str = std::env::consts::ARCH;

        /// The `OQS_CPU_EXT` values of AVX2, BMI2, POPCNT and ARM_NEON.
        pub(super) fn cpu_extensions() -> [Option<c_int>; 4] {
            [
                OQS_CPU_EXT_AVX2,
                OQS_CPU_EXT_BMI2,
                OQS_CPU_EXT_POPCNT,
                OQS_CPU_EXT_ARM_NEON,
            ]
            .map(|ext| Some(ext as c_int))
        }

        pub(crate) fn label() -> String {
            format!("liboqs/auto({})", super::platform())
        }

        pub(crate) fn description() -> String {
            format!(
                "liboqs {} (mlkem-native; oqs crate 0.11, ML-KEM only, no OpenSSL), \
                 run-time selection -> {}; keygen via OQS_KEM_keypair_derand, encaps \
                 with m fed through a liboqs RNG callback",
                super::version(),
                super::platform()
            )
        }

        thread_local! {
            static COINS: Cell<Option<[u8; 32]>> = const { Cell::new(None) };
        }

        /// Makes the next `OQS_randombytes` call on this thread return `m`:
        /// mlkem-native's `crypto_kem_enc` draws its m with one such call,
        /// then runs `crypto_kem_enc_derand`.
        #[inline(always)]
        pub(crate) fn set_coins(m: [u8; 32]) {
            COINS.with(|coins| coins.set(Some(m)));
        }

        /// Installs [`coins`] as liboqs's RNG, for the whole process.
        pub(super) fn init() {
            // SAFETY: `coins` has the signature liboqs expects and lives for
            // the whole program.
            unsafe { oqs::ffi::rand::OQS_randombytes_custom_algorithm(Some(coins)) };
        }

        /// `OQS_randombytes` replacement: hands out the m of [`set_coins`],
        /// once; any other draw aborts, as nothing else here should use it.
        ///
        /// # Safety
        /// `out` must be valid for `len` bytes of writes (liboqs's contract).
        unsafe extern "C" fn coins(out: *mut u8, len: usize) {
            match COINS.with(Cell::take) {
                Some(m) if len == m.len() => {
                    // SAFETY: the caller passes a buffer of `len` bytes.
                    unsafe { std::ptr::copy_nonoverlapping(m.as_ptr(), out, len) }
                }
                pending => {
                    eprintln!(
                        "peers: liboqs drew {len} random bytes with {} coins pending; only \
                         encaps through this adapter may use liboqs's RNG",
                        if pending.is_some() { "32" } else { "no" }
                    );
                    std::process::abort();
                }
            }
        }
    }

    /// The liboqs installed on this machine (any with derandomized encaps);
    /// `build.rs` passes on what its headers say as
    /// `TEST_TOOLS_LIBOQS_SYSTEM_*`.
    #[cfg(liboqs_system)]
    mod system {
        use std::ffi::c_int;

        pub(super) const DIST: bool =
            matches!(env!("TEST_TOOLS_LIBOQS_SYSTEM_DIST").as_bytes(), b"1");
        pub(super) const NATIVE: &str = env!("TEST_TOOLS_LIBOQS_SYSTEM_NATIVE");

        pub(super) fn init() {}

        /// The `OQS_CPU_EXT` values of AVX2, BMI2, POPCNT and ARM_NEON, where
        /// `build.rs` found them in `oqs/common.h`.
        pub(super) fn cpu_extensions() -> [Option<c_int>; 4] {
            [
                option_env!("TEST_TOOLS_LIBOQS_SYSTEM_CPU_EXT_AVX2"),
                option_env!("TEST_TOOLS_LIBOQS_SYSTEM_CPU_EXT_BMI2"),
                option_env!("TEST_TOOLS_LIBOQS_SYSTEM_CPU_EXT_POPCNT"),
                option_env!("TEST_TOOLS_LIBOQS_SYSTEM_CPU_EXT_ARM_NEON"),
            ]
            .map(|value| value.and_then(|v| v.parse().ok()))
        }

        /// The table label (`auto`: code picked at run time; `fixed`: the
        /// only code the build carries).
        pub(crate) fn label() -> String {
            let how = if DIST { "auto" } else { "fixed" };
            format!(
                "liboqs-system-{}/{how}({})",
                super::version(),
                super::platform()
            )
        }

        pub(crate) fn description() -> String {
            let version = super::version();
            let headers = env!("TEST_TOOLS_LIBOQS_SYSTEM_HEADER_VERSION");
            let mismatch = if headers != version {
                format!(" (but its headers say {headers:?})")
            } else {
                String::new()
            };
            let selection = if DIST {
                "portable build, run-time selection"
            } else {
                "non-portable build, fixed code path"
            };
            let sha3 = match env!("TEST_TOOLS_LIBOQS_SYSTEM_SHA3_OPENSSL") {
                "1" => "OpenSSL's",
                _ => "liboqs's own",
            };
            format!(
                "liboqs {version}{mismatch} installed on this machine, {} library in {} \
                 (found through {}; built for {}), mlkem-native, {selection} -> {}, SHA-3 \
                 {sha3}; OQS_KEM_ml_kem_NNN_keypair_derand / _encaps_derand / _decaps",
                env!("TEST_TOOLS_LIBOQS_SYSTEM_LINK"),
                env!("TEST_TOOLS_LIBOQS_SYSTEM_LIBDIR"),
                env!("TEST_TOOLS_LIBOQS_SYSTEM_SOURCE"),
                env!("TEST_TOOLS_LIBOQS_SYSTEM_BUILD_TARGET"),
                super::platform(),
            )
        }
    }
}
