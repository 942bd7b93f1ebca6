//! Cycle-accurate timing of one operation repeated many times.
//!
//! On x86_64 every call is timed with the time-stamp counter (`rdtsc`,
//! fenced with `lfence` so that it is not reordered around the measured
//! code). The TSC ticks at a constant rate, which on modern CPUs is the
//! nominal frequency rather than the current core clock, so "cycles" here
//! are TSC ticks. Operations per second are therefore computed from the
//! wall-clock time of the measured loop, not from the cycle counts.
//!
//! On other architectures the per-call counter falls back to
//! [`std::time::Instant`] in nanoseconds; [`UNIT`] says which is in use.

use std::hint::black_box;
use std::time::{Duration, Instant};

/// Whether per-call times come from the x86_64 time-stamp counter.
pub const USES_RDTSC: bool = cfg!(target_arch = "x86_64");

/// The unit of per-call times: `"cycles"` (TSC ticks) with `rdtsc`, `"ns"`
/// otherwise.
pub const UNIT: &str = if USES_RDTSC { "cycles" } else { "ns" };

/// A short description of the per-call counter, for report headers.
pub const COUNTER: &str = if USES_RDTSC {
    "rdtsc (x86_64 time-stamp counter, lfence-fenced)"
} else {
    "std::time::Instant (nanoseconds; no rdtsc on this architecture)"
};

/// Reads the per-call counter: TSC ticks on x86_64.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub fn now() -> u64 {
    use core::arch::x86_64::{_mm_lfence, _rdtsc};
    // SAFETY: `rdtsc` and `lfence` are part of the x86_64 baseline (SSE2 is
    // mandatory on x86_64); they read the time-stamp counter and order loads,
    // touch no memory of ours and have no preconditions.
    unsafe {
        _mm_lfence();
        let t = _rdtsc();
        _mm_lfence();
        t
    }
}

/// Reads the per-call counter: nanoseconds since the first call on
/// architectures without `rdtsc`.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
pub fn now() -> u64 {
    use std::sync::OnceLock;
    static START: OnceLock<Instant> = OnceLock::new();
    let start = *START.get_or_init(Instant::now);
    u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// Estimates the counter's rate in ticks per second by busy-waiting for
/// `span` of wall-clock time (about 1e9 when the unit is ns).
pub fn counter_frequency(span: Duration) -> f64 {
    let wall = Instant::now();
    let start = now();
    while wall.elapsed() < span {
        std::hint::spin_loop();
    }
    let ticks = now().wrapping_sub(start);
    ticks as f64 / wall.elapsed().as_secs_f64()
}

/// How many times to run an operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// Untimed runs first, to warm caches, branch predictors and clocks.
    pub warmup: usize,
    /// Timed runs (at least 1).
    pub iterations: usize,
}

/// Summary of the per-call times of one measured operation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stats {
    /// Median per-call time in [`UNIT`].
    pub median: u64,
    /// Mean per-call time in [`UNIT`].
    pub mean: f64,
    /// Fastest call in [`UNIT`].
    pub min: u64,
    /// Calls per second over the wall-clock time of the timed loop (which
    /// includes the small cost of reading the counter twice per call).
    pub ops_per_sec: f64,
    /// Number of timed calls.
    pub iterations: usize,
}

/// Runs `f` `config.warmup` times untimed, then `config.iterations` times,
/// timing each call, and summarises the times. The closure's result is
/// passed through [`black_box`] so the work cannot be optimised away; the
/// closure should `black_box` its inputs too.
pub fn measure<R, F: FnMut() -> R>(config: Config, mut f: F) -> Stats {
    for _ in 0..config.warmup {
        black_box(f());
    }
    let n = config.iterations.max(1);
    let mut samples = Vec::with_capacity(n);
    let wall = Instant::now();
    for _ in 0..n {
        let start = now();
        let out = f();
        let end = now();
        black_box(out);
        samples.push(end.wrapping_sub(start));
    }
    let elapsed = wall.elapsed().as_secs_f64();
    summarise(&mut samples, elapsed)
}

/// An operation to time, boxed so that benchmarks of different
/// implementations can be run interleaved by [`measure_interleaved`].
pub struct Bench<'a> {
    /// Implementation label, e.g. `"kem-core/portable"`.
    pub implementation: String,
    /// What is measured.
    pub operation: Operation,
    run: Box<dyn Timed + 'a>,
}

impl<'a> Bench<'a> {
    /// Wraps `f`. Each timed call covers `f` and moving its result into a
    /// slot; the result is dropped after the timing, as in [`measure`]. The
    /// closure should `black_box` its inputs.
    pub fn new<R: 'a, F: FnMut() -> R + 'a>(
        implementation: impl Into<String>,
        operation: Operation,
        f: F,
    ) -> Self {
        Self {
            implementation: implementation.into(),
            operation,
            run: Box::new(Slot { f, out: None }),
        }
    }
}

impl std::fmt::Debug for Bench<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bench")
            .field("implementation", &self.implementation)
            .field("operation", &self.operation)
            .finish_non_exhaustive()
    }
}

/// A closure and a slot for its last result.
trait Timed {
    /// Runs the closure once, keeping the result.
    fn call(&mut self);
    /// Drops the kept result.
    fn discard(&mut self);
}

struct Slot<F, R> {
    f: F,
    out: Option<R>,
}

impl<R, F: FnMut() -> R> Timed for Slot<F, R> {
    fn call(&mut self) {
        // `out` is empty here (see `discard`), so nothing is dropped inside
        // the timed region.
        self.out = Some(black_box((self.f)()));
    }

    fn discard(&mut self) {
        drop(black_box(self.out.take()));
    }
}

/// Times several operations fairly on a noisy machine: after
/// `config.warmup` untimed calls of each, the `config.iterations` timed calls
/// of each are split into `rounds` chunks, and the chunks run round-robin
/// (bench 1, bench 2, ..., bench 1, ...), each chunk after one untimed call
/// to re-warm caches. A burst of background load then hits every bench
/// alike instead of whichever happened to be running. Results are in the
/// order of `benches`.
pub fn measure_interleaved(
    config: Config,
    benches: &mut [Bench<'_>],
    rounds: usize,
) -> Vec<Measurement> {
    let n = config.iterations.max(1);
    let rounds = rounds.clamp(1, n);
    for bench in benches.iter_mut() {
        for _ in 0..config.warmup {
            bench.run.call();
            bench.run.discard();
        }
    }
    let mut samples: Vec<Vec<u64>> = benches.iter().map(|_| Vec::with_capacity(n)).collect();
    let mut elapsed = vec![0f64; benches.len()];
    for round in 0..rounds {
        let chunk = n * (round + 1) / rounds - n * round / rounds;
        for (i, bench) in benches.iter_mut().enumerate() {
            bench.run.call();
            bench.run.discard();
            let wall = Instant::now();
            for _ in 0..chunk {
                let start = now();
                bench.run.call();
                let end = now();
                bench.run.discard();
                samples[i].push(end.wrapping_sub(start));
            }
            elapsed[i] += wall.elapsed().as_secs_f64();
        }
    }
    benches
        .iter()
        .zip(samples.iter_mut().zip(elapsed))
        .map(|(bench, (samples, secs))| Measurement {
            implementation: bench.implementation.clone(),
            operation: bench.operation,
            stats: summarise(samples, secs),
        })
        .collect()
}

/// Summarises per-call times taken over `elapsed_secs` of wall-clock time.
/// Sorts `samples`; returns all zeros for an empty slice.
pub fn summarise(samples: &mut [u64], elapsed_secs: f64) -> Stats {
    let n = samples.len();
    if n == 0 {
        return Stats {
            median: 0,
            mean: 0.0,
            min: 0,
            ops_per_sec: 0.0,
            iterations: 0,
        };
    }
    samples.sort_unstable();
    let median = if n % 2 == 1 {
        samples[n / 2]
    } else {
        // Average of the two middle values, without overflow.
        let (a, b) = (samples[n / 2 - 1], samples[n / 2]);
        a / 2 + b / 2 + (a % 2 + b % 2) / 2
    };
    let sum: u128 = samples.iter().map(|&s| u128::from(s)).sum();
    Stats {
        median,
        mean: sum as f64 / n as f64,
        min: samples[0],
        ops_per_sec: if elapsed_secs > 0.0 {
            n as f64 / elapsed_secs
        } else {
            f64::INFINITY
        },
        iterations: n,
    }
}

/// The operations a KEM benchmark reports, in report order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Operation {
    /// KeyGen from a 64-byte seed d ‖ z.
    Keygen,
    /// Encaps from the serialized encapsulation key (parse + encapsulate).
    Encaps,
    /// Decaps from the serialized decapsulation key and ciphertext
    /// (parse key + parse ciphertext + decapsulate).
    Decaps,
    /// Encaps with an already parsed (expanded) encapsulation key.
    EncapsCached,
    /// Decaps with an already parsed (expanded) decapsulation key.
    DecapsCached,
}

impl Operation {
    /// Every operation, in report order.
    pub const ALL: [Operation; 5] = [
        Operation::Keygen,
        Operation::Encaps,
        Operation::Decaps,
        Operation::EncapsCached,
        Operation::DecapsCached,
    ];

    /// The label used in tables and CSV.
    pub fn label(self) -> &'static str {
        match self {
            Operation::Keygen => "keygen",
            Operation::Encaps => "encaps",
            Operation::Decaps => "decaps",
            Operation::EncapsCached => "encaps (cached key)",
            Operation::DecapsCached => "decaps (cached key)",
        }
    }
}

impl std::fmt::Display for Operation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.label())
    }
}

/// One measured (implementation, operation) pair.
#[derive(Clone, Debug, PartialEq)]
pub struct Measurement {
    /// Implementation label, e.g. `"kem-core/portable"`.
    pub implementation: String,
    /// What was measured.
    pub operation: Operation,
    /// The timing summary.
    pub stats: Stats,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summarise_odd_and_even() {
        let s = summarise(&mut [5, 1, 3], 1.0);
        assert_eq!((s.median, s.min, s.iterations), (3, 1, 3));
        assert!((s.mean - 3.0).abs() < 1e-9);
        assert!((s.ops_per_sec - 3.0).abs() < 1e-9);
        let s = summarise(&mut [4, 1, 3, 10], 2.0);
        assert_eq!(s.median, 3);
        let s = summarise(&mut [u64::MAX, u64::MAX], 1.0);
        assert_eq!(s.median, u64::MAX);
        assert_eq!(summarise(&mut [], 1.0).iterations, 0);
    }

    #[test]
    fn measure_counts_and_is_monotonic() {
        let mut calls = 0;
        let s = measure(
            Config {
                warmup: 3,
                iterations: 10,
            },
            || {
                calls += 1;
                black_box(calls)
            },
        );
        assert_eq!(calls, 13);
        assert_eq!(s.iterations, 10);
        assert!(s.min <= s.median);
        assert!(s.ops_per_sec > 0.0);
    }

    #[test]
    fn interleaved_runs_every_bench() {
        let (mut a, mut b) = (0usize, 0usize);
        let mut benches = vec![
            Bench::new("a", Operation::Keygen, || {
                a += 1;
                vec![0u8; 16]
            }),
            Bench::new("b", Operation::Encaps, || {
                b += 1;
                black_box(b)
            }),
        ];
        let config = Config {
            warmup: 2,
            iterations: 10,
        };
        let results = measure_interleaved(config, &mut benches, 3);
        drop(benches);
        assert_eq!(results.len(), 2);
        assert_eq!(results[0].implementation, "a");
        assert_eq!(results[1].operation, Operation::Encaps);
        assert!(results.iter().all(|m| m.stats.iterations == 10));
        // 2 warm-up + 3 re-warm + 10 timed calls each.
        assert_eq!((a, b), (15, 15));
    }
}
