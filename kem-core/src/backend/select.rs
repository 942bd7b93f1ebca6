//! Choosing the backend: detected once per process (the preferred one of
//! those the CPU supports, see [`preferred_backend`]), overridable for the
//! process by the `MLKEM_BACKEND` environment variable or [`set_backend`],
//! and for one thread and closure by [`with_backend`] (tests and benchmarks
//! compare backends that way).

use core::cell::Cell;
use core::fmt;
use std::sync::atomic::{AtomicU8, Ordering};

use crate::error::Error;

/// The implementations kem-core can run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BackendKind {
    /// Portable Rust, the reference for every other backend.
    Portable,
    /// x86-64 AVX2 (with BMI1): 4-way Keccak for sampling, AVX2 code for
    /// the arithmetic.
    #[cfg(target_arch = "x86_64")]
    Avx2,
    /// x86-64 AVX-512 (F, BW and VL, with AVX2 and BMI1) for the sponges
    /// alone: [`BackendKind::Avx512`]'s pools, Keccak and rejection
    /// sampling, with all the arithmetic (NTT, inverse NTT, base
    /// multiplication included) on the AVX2 code, so that it runs no 512-bit
    /// multiply. The default on Intel CPUs (see [`preferred_backend`]).
    #[cfg(target_arch = "x86_64")]
    Avx512Keccak,
    /// x86-64 AVX-512 (F, BW and VL, with AVX2 and BMI1): pools of sponges
    /// on an eight-way Keccak on 512-bit vectors or a four-way one on
    /// AVX-512VL instructions, whichever a step needs; NTT, inverse NTT and
    /// base multiplication on 512-bit vectors; the rest of the arithmetic is
    /// the AVX2 code.
    #[cfg(target_arch = "x86_64")]
    Avx512,
    /// AArch64 Neon: NTT, sampling, compression and coding on 128-bit
    /// vectors, the matrix and noise sponges on a two-way Keccak (with the
    /// SHA-3 extension where the CPU has it).
    #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
    Neon,
}

impl BackendKind {
    /// Every backend this build contains, from the portable reference to
    /// the one that uses the most of the CPU's vector instructions.
    pub const ALL: &'static [BackendKind] = &[
        BackendKind::Portable,
        #[cfg(target_arch = "x86_64")]
        BackendKind::Avx2,
        #[cfg(target_arch = "x86_64")]
        BackendKind::Avx512Keccak,
        #[cfg(target_arch = "x86_64")]
        BackendKind::Avx512,
        #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
        BackendKind::Neon,
    ];

    /// The backend's short name, as `MLKEM_BACKEND` takes it.
    pub fn name(self) -> &'static str {
        match self {
            BackendKind::Portable => "portable",
            #[cfg(target_arch = "x86_64")]
            BackendKind::Avx2 => "avx2",
            #[cfg(target_arch = "x86_64")]
            BackendKind::Avx512Keccak => "avx512-keccak",
            #[cfg(target_arch = "x86_64")]
            BackendKind::Avx512 => "avx512",
            #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
            BackendKind::Neon => "neon",
        }
    }

    /// The backend named `name` (case-insensitive), if this build has it.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL
            .iter()
            .copied()
            .find(|kind| kind.name().eq_ignore_ascii_case(name.trim()))
    }

    /// Whether this CPU can run the backend.
    pub fn is_available(self) -> bool {
        match self {
            BackendKind::Portable => true,
            #[cfg(target_arch = "x86_64")]
            BackendKind::Avx2 => {
                std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("bmi1")
            }
            #[cfg(target_arch = "x86_64")]
            BackendKind::Avx512Keccak | BackendKind::Avx512 => {
                BackendKind::Avx2.is_available()
                    && std::is_x86_feature_detected!("avx512f")
                    && std::is_x86_feature_detected!("avx512vl")
                    && std::is_x86_feature_detected!("avx512bw")
            }
            #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
            BackendKind::Neon => std::arch::is_aarch64_feature_detected!("neon"),
        }
    }

    /// The Keccak-f\[1600\] implementation the backend's sponges run on, on
    /// this CPU: `keccak` (the `keccak` crate, one state at a time) for
    /// portable, else the backend's multi-way permutation.
    pub fn keccak_implementation(self) -> &'static str {
        match self {
            BackendKind::Portable => "keccak",
            #[cfg(target_arch = "x86_64")]
            BackendKind::Avx2 => "avx2-x4",
            #[cfg(target_arch = "x86_64")]
            BackendKind::Avx512Keccak | BackendKind::Avx512 => "avx512-x8",
            #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
            BackendKind::Neon if crate::backend::aarch64::has_sha3() => "neon-sha3-x2",
            #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
            BackendKind::Neon => "neon-x2",
        }
    }

    fn to_code(self) -> u8 {
        Self::ALL.iter().position(|&k| k == self).expect("listed") as u8 + 1
    }

    fn from_code(code: u8) -> Self {
        Self::ALL[usize::from(code) - 1]
    }
}

impl fmt::Display for BackendKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The backends this CPU can run, in the order of [`BackendKind::ALL`].
pub fn available_backends() -> Vec<BackendKind> {
    BackendKind::ALL
        .iter()
        .copied()
        .filter(|kind| kind.is_available())
        .collect()
}

/// The process-wide choice; 0 until first decided.
static PROCESS_BACKEND: AtomicU8 = AtomicU8::new(0);

thread_local! {
    /// A [`with_backend`] override for the current thread.
    static THREAD_BACKEND: Cell<Option<BackendKind>> = const { Cell::new(None) };
}

/// The backend a process runs when `MLKEM_BACKEND` names none: the last
/// available one of [`BackendKind::ALL`], except on Intel CPUs with
/// AVX-512, where it is [`BackendKind::Avx512Keccak`].
///
/// Intel cores power up their 512-bit multipliers and lower their clock
/// for code that uses them, and drop back after well under a millisecond
/// without them, so an operation between other work (a TLS handshake)
/// pays the change; only operations repeated back to back gain from the
/// 512-bit arithmetic there. AMD's cores run 512-bit code at their usual
/// clock (measurements: docs/performance.md, "Lab notes").
pub fn preferred_backend() -> BackendKind {
    // The last of `BackendKind::ALL` that this CPU runs: the widest SIMD.
    let widest = *available_backends()
        .last()
        .expect("portable is always available");
    #[cfg(target_arch = "x86_64")]
    if widest == BackendKind::Avx512 && is_intel() {
        return BackendKind::Avx512Keccak;
    }
    widest
}

/// Whether the CPU's vendor string (CPUID leaf 0) is Intel's.
#[cfg(target_arch = "x86_64")]
fn is_intel() -> bool {
    // SAFETY: every x86-64 CPU has CPUID, and leaf 0 exists on all of them.
    // (`__cpuid` is a safe function in newer Rust than the MSRV.)
    #[allow(unsafe_code, unused_unsafe)]
    let leaf = unsafe { core::arch::x86_64::__cpuid(0) };
    // The vendor string is EBX, EDX, ECX: "Genu" "ineI" "ntel".
    [leaf.ebx, leaf.edx, leaf.ecx] == [0x756e_6547, 0x4965_6e69, 0x6c65_746e]
}

/// The process default: `MLKEM_BACKEND` when it names an available backend,
/// else [`preferred_backend`].
fn default_backend() -> BackendKind {
    std::env::var("MLKEM_BACKEND")
        .ok()
        .and_then(|name| BackendKind::from_name(&name))
        .filter(|kind| kind.is_available())
        .unwrap_or_else(preferred_backend)
}

/// The backend that operations on this thread use now.
pub fn active_backend() -> BackendKind {
    if let Some(kind) = THREAD_BACKEND.with(Cell::get) {
        return kind;
    }
    match PROCESS_BACKEND.load(Ordering::Relaxed) {
        0 => {
            let kind = default_backend();
            // A concurrent first call decides the same way; either store wins.
            let _ = PROCESS_BACKEND.compare_exchange(
                0,
                kind.to_code(),
                Ordering::Relaxed,
                Ordering::Relaxed,
            );
            BackendKind::from_code(PROCESS_BACKEND.load(Ordering::Relaxed))
        }
        code => BackendKind::from_code(code),
    }
}

/// Makes `kind` the backend of the whole process (e.g. from a provider
/// configuration). Fails with [`Error::BackendUnavailable`] if this CPU
/// cannot run it.
pub fn set_backend(kind: BackendKind) -> Result<(), Error> {
    if !kind.is_available() {
        return Err(Error::BackendUnavailable);
    }
    PROCESS_BACKEND.store(kind.to_code(), Ordering::Relaxed);
    Ok(())
}

/// Runs `f` with `kind` as the backend of the current thread, then restores
/// the previous choice (also when `f` panics). Fails with
/// [`Error::BackendUnavailable`] if this CPU cannot run it.
pub fn with_backend<R>(kind: BackendKind, f: impl FnOnce() -> R) -> Result<R, Error> {
    if !kind.is_available() {
        return Err(Error::BackendUnavailable);
    }
    struct Restore(Option<BackendKind>);
    impl Drop for Restore {
        fn drop(&mut self) {
            THREAD_BACKEND.with(|cell| cell.set(self.0));
        }
    }
    let _restore = Restore(THREAD_BACKEND.with(|cell| cell.replace(Some(kind))));
    Ok(f())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for &kind in BackendKind::ALL {
            assert_eq!(BackendKind::from_name(kind.name()), Some(kind));
            assert_eq!(
                BackendKind::from_name(&kind.name().to_uppercase()),
                Some(kind)
            );
        }
        assert_eq!(BackendKind::from_name("neon-or-something"), None);
        assert!(BackendKind::Portable.is_available());
        assert_eq!(available_backends()[0], BackendKind::Portable);
    }

    #[test]
    fn with_backend_scopes_the_choice_to_the_closure() {
        let before = active_backend();
        for kind in available_backends() {
            let inner = with_backend(kind, || {
                let nested = with_backend(BackendKind::Portable, active_backend).unwrap();
                assert_eq!(nested, BackendKind::Portable);
                active_backend()
            });
            assert_eq!(inner, Ok(kind));
        }
        assert_eq!(active_backend(), before);
    }
}
