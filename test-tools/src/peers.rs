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
//! Peer (feature `peers-liboqs`):
//! - liboqs 0.13 through the `oqs` 0.11 crate (built from source, ML-KEM
//!   only, no OpenSSL, so SHA-3 is liboqs's own). Its ML-KEM is
//!   mlkem-native; liboqs's portable ("dist") build carries both the C and
//!   the x86_64 AVX2 (or aarch64) code and picks at run time. Keygen goes
//!   through `OQS_KEM_keypair_derand` (seed d ‖ z). liboqs 0.13 has no
//!   derandomized encaps, so this adapter installs a liboqs RNG callback
//!   that hands out exactly the m the caller set for the next encaps (see
//!   [`liboqs_rng`]); encaps is then Encaps_internal(ek, m), as for the other
//!   peers. liboqs's encaps and decaps do the section 7.2 and 7.3 checks
//!   themselves (mlkem-native's `check_pk` and `check_sk`).
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
    /// liboqs (mlkem-native) through the `oqs` crate, run-time platform
    /// selection.
    #[cfg(feature = "peers-liboqs")]
    Liboqs,
}

impl Peer {
    /// Every peer, in report order.
    pub const ALL: [Peer; 3 + cfg!(feature = "peers-liboqs") as usize] = [
        Peer::RustCrypto,
        Peer::LibcruxPortable,
        Peer::LibcruxAuto,
        #[cfg(feature = "peers-liboqs")]
        Peer::Liboqs,
    ];

    /// Implementation label for tables, e.g. `"libcrux/auto(avx2)"`.
    pub fn label(self) -> String {
        match self {
            Peer::RustCrypto => "rustcrypto-ml-kem".to_owned(),
            Peer::LibcruxPortable => "libcrux/portable".to_owned(),
            Peer::LibcruxAuto => format!("libcrux/auto({})", libcrux_auto_platform()),
            #[cfg(feature = "peers-liboqs")]
            Peer::Liboqs => format!("liboqs/auto({})", liboqs_platform()),
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
            #[cfg(feature = "peers-liboqs")]
            Peer::Liboqs => format!(
                "liboqs {} (mlkem-native; oqs crate 0.11, ML-KEM only, no OpenSSL), \
                 run-time selection -> {}; keygen via OQS_KEM_keypair_derand, encaps \
                 with m fed through a liboqs RNG callback",
                liboqs_version(),
                liboqs_platform()
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
            #[cfg(feature = "peers-liboqs")]
            Peer::Liboqs => liboqs_known_answer(&set::liboqs(), inputs),
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
            #[cfg(feature = "peers-liboqs")]
            Peer::Liboqs => liboqs_benches(set::liboqs(), &label, inputs),
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

/// Which ML-KEM code path liboqs takes on this machine: `"avx2"` (x86_64
/// with AVX2, BMI2 and POPCNT, liboqs's own test), `"neon"` (aarch64) or
/// `"portable"` (mlkem-native's C code). Asks liboqs's CPU detection.
#[cfg(feature = "peers-liboqs")]
pub fn liboqs_platform() -> &'static str {
    use oqs::ffi::common::{OQS_CPU_has_extension, OQS_CPU_EXT};
    oqs::init();
    // SAFETY: liboqs's CPU-feature query, initialized by `oqs::init`.
    let has = |ext| unsafe { OQS_CPU_has_extension(ext) } != 0;
    if cfg!(target_arch = "x86_64")
        && has(OQS_CPU_EXT::OQS_CPU_EXT_AVX2)
        && has(OQS_CPU_EXT::OQS_CPU_EXT_BMI2)
        && has(OQS_CPU_EXT::OQS_CPU_EXT_POPCNT)
    {
        return "avx2";
    }
    if cfg!(target_arch = "aarch64") && has(OQS_CPU_EXT::OQS_CPU_EXT_ARM_NEON) {
        return "neon";
    }
    "portable"
}

/// The version of the liboqs linked in, e.g. `"0.13.0"`.
#[cfg(feature = "peers-liboqs")]
pub fn liboqs_version() -> String {
    // SAFETY: returns a pointer to a static NUL-terminated string.
    let version = unsafe { std::ffi::CStr::from_ptr(oqs::ffi::common::OQS_version()) };
    version.to_string_lossy().into_owned()
}

/// The RNG callback that makes liboqs's encaps deterministic. liboqs 0.13
/// has `OQS_KEM_keypair_derand` but no derandomized encaps; mlkem-native's
/// `crypto_kem_enc` draws its 32-byte m with one `OQS_randombytes` call and
/// then runs `crypto_kem_enc_derand`. The callback installed here (for the
/// whole process, once) hands out the m that [`set_coins`] stored for the
/// calling thread, once; any other draw from liboqs's RNG aborts the
/// process, since nothing else in this program should use it.
///
/// [`set_coins`]: liboqs_rng::set_coins
#[cfg(feature = "peers-liboqs")]
mod liboqs_rng {
    use std::cell::Cell;
    use std::sync::Once;

    thread_local! {
        static COINS: Cell<Option<[u8; 32]>> = const { Cell::new(None) };
    }

    /// Makes the next `OQS_randombytes` call on this thread return `m`.
    #[inline(always)]
    pub(super) fn set_coins(m: [u8; 32]) {
        COINS.with(|coins| coins.set(Some(m)));
    }

    /// Installs the callback in liboqs (idempotent).
    pub(super) fn install() {
        static INSTALL: Once = Once::new();
        INSTALL.call_once(|| {
            oqs::init();
            // SAFETY: `coins` has the signature liboqs expects and lives for
            // the whole program.
            unsafe { oqs::ffi::rand::OQS_randombytes_custom_algorithm(Some(coins)) };
        });
    }

    /// `OQS_randombytes` replacement.
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

/// One liboqs ML-KEM parameter set, as its derandomized keygen, encaps and
/// decaps function pointers (the per-algorithm functions that `OQS_KEM`
/// points to, which dispatch on the CPU themselves), on fixed-size buffers.
#[cfg(feature = "peers-liboqs")]
#[derive(Clone, Copy)]
struct Liboqs<const PK: usize, const SK: usize, const CT: usize> {
    keypair_derand:
        unsafe extern "C" fn(*mut u8, *mut u8, *const u8) -> oqs::ffi::common::OQS_STATUS,
    encaps: unsafe extern "C" fn(*mut u8, *mut u8, *const u8) -> oqs::ffi::common::OQS_STATUS,
    decaps: unsafe extern "C" fn(*mut u8, *const u8, *const u8) -> oqs::ffi::common::OQS_STATUS,
}

#[cfg(feature = "peers-liboqs")]
impl<const PK: usize, const SK: usize, const CT: usize> Liboqs<PK, SK, CT> {
    /// Looks up `algorithm` in liboqs and checks its sizes against kem-core's.
    fn new(algorithm: oqs::kem::Algorithm) -> Self {
        liboqs_rng::install();
        let kem = oqs::kem::Kem::new(algorithm).expect("liboqs lacks the algorithm");
        assert_eq!(
            (
                kem.length_public_key(),
                kem.length_secret_key(),
                kem.length_ciphertext(),
                kem.length_shared_secret(),
                kem.length_keypair_seed(),
            ),
            (PK, SK, CT, 32, 64),
            "liboqs {} sizes",
            algorithm.name()
        );
        // The `oqs` crate keeps its `OQS_KEM` private; take the function
        // pointers from a second one of our own.
        // SAFETY: `to_id` is a NUL-terminated algorithm name; the returned
        // object is read and freed here; the functions it points to are
        // static and outlive it.
        unsafe {
            let raw = oqs::ffi::kem::OQS_KEM_new(algorithm.to_id());
            assert!(!raw.is_null(), "OQS_KEM_new failed");
            let api = Liboqs {
                keypair_derand: (*raw).keypair_derand.expect("keypair_derand"),
                encaps: (*raw).encaps.expect("encaps"),
                decaps: (*raw).decaps.expect("decaps"),
            };
            oqs::ffi::kem::OQS_KEM_free(raw);
            api
        }
    }

    /// KeyGen_internal(d, z) from the seed d ‖ z: (ek, dk).
    #[inline(always)]
    fn keygen(&self, seed: &[u8; 64]) -> ([u8; PK], [u8; SK]) {
        let mut ek = [0u8; PK];
        let mut dk = [0u8; SK];
        // SAFETY: buffers of the sizes checked in `new`.
        let status =
            unsafe { (self.keypair_derand)(ek.as_mut_ptr(), dk.as_mut_ptr(), seed.as_ptr()) };
        assert!(
            matches!(status, oqs::ffi::common::OQS_STATUS::OQS_SUCCESS),
            "liboqs keygen failed"
        );
        (ek, dk)
    }

    /// Encaps from serialized ek bytes with the given m (liboqs checks ek,
    /// section 7.2).
    #[inline(always)]
    fn encaps_from_bytes(&self, ek: &[u8; PK], m: [u8; 32]) -> ([u8; CT], [u8; 32]) {
        let mut ct = [0u8; CT];
        let mut ss = [0u8; 32];
        liboqs_rng::set_coins(m);
        // SAFETY: buffers of the sizes checked in `new`; the RNG callback
        // hands out m.
        let status = unsafe { (self.encaps)(ct.as_mut_ptr(), ss.as_mut_ptr(), ek.as_ptr()) };
        assert!(
            matches!(status, oqs::ffi::common::OQS_STATUS::OQS_SUCCESS),
            "liboqs rejected its ek"
        );
        (ct, ss)
    }

    /// Decaps from serialized dk and ct bytes (liboqs checks dk, section
    /// 7.3 hash check).
    #[inline(always)]
    fn decaps_from_bytes(&self, dk: &[u8; SK], ct: &[u8; CT]) -> [u8; 32] {
        let mut ss = [0u8; 32];
        // SAFETY: buffers of the sizes checked in `new`.
        let status = unsafe { (self.decaps)(ss.as_mut_ptr(), ct.as_ptr(), dk.as_ptr()) };
        assert!(
            matches!(status, oqs::ffi::common::OQS_STATUS::OQS_SUCCESS),
            "liboqs rejected its dk"
        );
        ss
    }
}

#[cfg(feature = "peers-liboqs")]
fn liboqs_known_answer<const PK: usize, const SK: usize, const CT: usize>(
    api: &Liboqs<PK, SK, CT>,
    inputs: &Inputs,
) -> KnownAnswer {
    let (ek, dk) = api.keygen(&inputs.seed());
    let (ct, ss_encaps) = api.encaps_from_bytes(&ek, inputs.m);
    let ss_decaps = api.decaps_from_bytes(&dk, &ct);
    KnownAnswer {
        ek: ek.to_vec(),
        dk: dk.to_vec(),
        ct: ct.to_vec(),
        ss_encaps,
        ss_decaps,
    }
}

#[cfg(feature = "peers-liboqs")]
fn liboqs_benches<const PK: usize, const SK: usize, const CT: usize>(
    api: Liboqs<PK, SK, CT>,
    label: &str,
    inputs: &Inputs,
) -> Vec<Bench<'static>> {
    let seed = inputs.seed();
    let m = inputs.m;
    let (ek, dk) = api.keygen(&seed);
    let ek: Box<[u8; PK]> = Box::new(ek);
    let dk: Box<[u8; SK]> = Box::new(dk);
    let (ct, _) = api.encaps_from_bytes(&ek, m);
    let ct: Box<[u8; CT]> = Box::new(ct);
    vec![
        Bench::new(label, Operation::Keygen, move || {
            api.keygen(black_box(&seed))
        }),
        Bench::new(label, Operation::Encaps, move || {
            api.encaps_from_bytes(black_box(&ek), black_box(m))
        }),
        Bench::new(label, Operation::Decaps, move || {
            api.decaps_from_bytes(black_box(&dk), black_box(&ct))
        }),
    ]
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

/// Builds the per-parameter-set module: RustCrypto adapters, the two
/// libcrux code paths and (feature `peers-liboqs`) liboqs.
macro_rules! peer_set {
    ($module:ident, $ours:ty, $rustcrypto:ty, $libcrux:ident, $liboqs:ident) => {
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

            /// liboqs (mlkem-native), its run-time platform selection.
            #[cfg(feature = "peers-liboqs")]
            pub(super) fn liboqs() -> super::Liboqs<
                { <$ours as ParameterSet>::EK_LEN },
                { <$ours as ParameterSet>::DK_LEN },
                { <$ours as ParameterSet>::CT_LEN },
            > {
                super::Liboqs::new(oqs::kem::Algorithm::$liboqs)
            }
        }
    };
}

peer_set!(
    k512,
    kem_core::MlKem512,
    ml_kem::MlKem512,
    mlkem512,
    MlKem512
);
peer_set!(
    k768,
    kem_core::MlKem768,
    ml_kem::MlKem768,
    mlkem768,
    MlKem768
);
peer_set!(
    k1024,
    kem_core::MlKem1024,
    ml_kem::MlKem1024,
    mlkem1024,
    MlKem1024
);
