//! Where the time of an operation goes (feature `profiling`, off in normal
//! builds): per thread, how many times each symmetric primitive of FIPS 203
//! section 4.1 ran (G, H, J, PRF, XOF), how many Keccak-f[1600]
//! permutations ran one-way and four-way, and the clock ticks spent inside
//! those permutations.
//!
//! Nothing is counted until [`enable`]: while profiling is off, a build
//! with the feature costs a few relaxed atomic loads per hash call and per
//! permutation (about 1,000 cycles each), so timings taken then stay
//! comparable with a normal build.
//! kem-core has no clock of its own (its only `unsafe` is in the SIMD
//! backends and the volatile wipe), so the caller may pass one to
//! [`enable`], e.g. a `rdtsc` reader. Without a clock the counters still count and the ticks stay 0.
//!
//! Counting a primitive that runs four-wide counts each of its four
//! streams. Timing every permutation costs two clock reads each; a caller
//! can subtract that overhead, which it can measure by timing an empty
//! span with the same clock.
//!
//! ```
//! use kem_core::{profiling, DecapsulationKey, MlKem768};
//!
//! profiling::enable(None);
//! profiling::take();
//! let dk = DecapsulationKey::<MlKem768>::from_seed_parts(&[1; 32], &[2; 32]);
//! let keygen = profiling::take();
//! // KeyGen: one G, one H(ek), k² = 9 XOF streams, 2k = 6 PRF streams.
//! assert_eq!((keygen.g, keygen.h, keygen.xof, keygen.prf), (1, 1, 9, 6));
//! # drop(dk);
//! ```

use core::cell::Cell;
use core::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

static ENABLED: AtomicBool = AtomicBool::new(false);
static CLOCK: OnceLock<fn() -> u64> = OnceLock::new();

/// Counters of one thread since the last [`take`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Profile {
    /// Calls of G = SHA3-512.
    pub g: u64,
    /// Calls of H = SHA3-256 (including H(ek) computed alongside matrix
    /// sampling).
    pub h: u64,
    /// Calls of J = SHAKE256 to 32 bytes (implicit rejection).
    pub j: u64,
    /// PRF streams (SHAKE256 for the noise polynomials).
    pub prf: u64,
    /// XOF streams (SHAKE128 for the entries of Â).
    pub xof: u64,
    /// One-way Keccak-f[1600] permutations.
    pub permutations: u64,
    /// Four-way Keccak-f[1600] permutations (each permutes four states).
    pub permutations_x4: u64,
    /// Eight-way Keccak-f[1600] permutations (the AVX-512 backend; each
    /// permutes eight states).
    pub permutations_x8: u64,
    /// Clock ticks spent in all permutations, one-way and four-way.
    pub keccak_ticks: u64,
}

/// A primitive counted by [`Profile`].
#[derive(Clone, Copy)]
pub(crate) enum Primitive {
    G,
    H,
    J,
    Prf,
    Xof,
}

thread_local! {
    static COUNTERS: Cell<Profile> = const {
        Cell::new(Profile {
            g: 0,
            h: 0,
            j: 0,
            prf: 0,
            xof: 0,
            permutations: 0,
            permutations_x4: 0,
            permutations_x8: 0,
            keccak_ticks: 0,
        })
    };
}

/// Starts counting, in every thread. `clock` times the permutations (ticks
/// in any unit, e.g. CPU cycles); only the first clock given is kept.
pub fn enable(clock: Option<fn() -> u64>) {
    if let Some(clock) = clock {
        let _ = CLOCK.set(clock);
    }
    ENABLED.store(true, Ordering::Relaxed);
}

/// Stops counting (the counters keep their values until [`take`]).
pub fn disable() {
    ENABLED.store(false, Ordering::Relaxed);
}

fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// The installed clock, while profiling is on.
fn clock() -> Option<fn() -> u64> {
    if enabled() {
        CLOCK.get().copied()
    } else {
        None
    }
}

/// Returns this thread's counters and resets them to zero.
pub fn take() -> Profile {
    COUNTERS.with(|counters| counters.take())
}

fn update(change: impl FnOnce(&mut Profile)) {
    if !enabled() {
        return;
    }
    COUNTERS.with(|counters| {
        let mut profile = counters.get();
        change(&mut profile);
        counters.set(profile);
    });
}

/// Counts `streams` runs of `primitive`.
pub(crate) fn count(primitive: Primitive, streams: u64) {
    update(|p| {
        let counter = match primitive {
            Primitive::G => &mut p.g,
            Primitive::H => &mut p.h,
            Primitive::J => &mut p.j,
            Primitive::Prf => &mut p.prf,
            Primitive::Xof => &mut p.xof,
        };
        *counter += streams;
    });
}

/// When a permutation started: the clock's reading (0 without a clock).
pub(crate) struct PermutationStart(u64);

/// Starts timing a permutation.
pub(crate) fn permutation_start() -> PermutationStart {
    PermutationStart(clock().map_or(0, |clock| clock()))
}

/// Ends timing a permutation begun at `start`; `ways` (1, 4 or 8) says
/// which kind.
pub(crate) fn permutation_end(start: PermutationStart, ways: u8) {
    let ticks = clock().map_or(0, |clock| clock().wrapping_sub(start.0));
    update(|p| {
        match ways {
            1 => p.permutations += 1,
            4 => p.permutations_x4 += 1,
            _ => p.permutations_x8 += 1,
        }
        p.keccak_ticks += ticks;
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        available_backends, with_backend, Ciphertext, DecapsulationKey, MlKem1024, MlKem512,
        MlKem768, ParameterSet,
    };

    /// The primitive calls of FIPS 203's algorithms for one set: KeyGen
    /// (Algorithms 13 and 16), Encaps (14 and 17) and Decaps (15 and 18).
    fn expected_calls<P: ParameterSet>() -> [(u64, u64, u64, u64, u64); 3] {
        let k = P::K as u64;
        [
            // KeyGen: G(d ‖ k), k² XOF, 2k PRF, H(ek).
            (1, 1, 0, 2 * k, k * k),
            // Encaps from a parsed ek (H(ek) and Â cached): G(m ‖ H(ek)),
            // 2k + 1 PRF.
            (1, 0, 0, 2 * k + 1, 0),
            // Decaps with a parsed dk: K-PKE.Decrypt, then G and J, then
            // the re-encryption's 2k + 1 PRF.
            (1, 0, 1, 2 * k + 1, 0),
        ]
    }

    fn counts(p: &Profile) -> (u64, u64, u64, u64, u64) {
        (p.g, p.h, p.j, p.prf, p.xof)
    }

    fn check<P: ParameterSet>() {
        enable(None);
        for backend in available_backends() {
            with_backend(backend, || {
                take();
                let dk = DecapsulationKey::<P>::from_seed_parts(&[3; 32], &[4; 32]);
                let keygen = take();
                let (ct, _) = dk.encapsulation_key().encapsulate_deterministic(&[5; 32]);
                let encaps = take();
                let ct = Ciphertext::<P>::from_bytes(ct.as_bytes()).expect("ciphertext");
                take();
                dk.decapsulate(&ct);
                let decaps = take();
                let expected = expected_calls::<P>();
                for (what, (profile, want)) in
                    [keygen, encaps, decaps].iter().zip(expected).enumerate()
                {
                    assert_eq!(counts(profile), want, "{} {backend:?} op {what}", P::NAME);
                    assert!(
                        profile.permutations + profile.permutations_x4 + profile.permutations_x8
                            > 0,
                        "{} {backend:?} op {what}: no permutation counted",
                        P::NAME
                    );
                }
            })
            .expect("available backend");
        }
    }

    #[test]
    fn counts_follow_fips_203() {
        check::<MlKem512>();
        check::<MlKem768>();
        check::<MlKem1024>();
    }

    #[test]
    fn take_resets() {
        enable(None);
        take();
        count(Primitive::G, 2);
        assert_eq!(take().g, 2);
        assert_eq!(take(), Profile::default());
    }
}
