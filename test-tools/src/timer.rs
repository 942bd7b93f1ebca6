//! The per-call counter of the benchmarks: on x86_64 the time-stamp counter
//! (`rdtsc`, `lfence`-fenced so that it is not reordered around the measured
//! code), elsewhere [`std::time::Instant`] in nanoseconds. The TSC ticks at
//! a constant rate (the nominal frequency, not the core clock), so the
//! reports' "cycles" are TSC ticks and ops/s come from wall-clock time.

use std::time::{Duration, Instant};

/// Whether per-call times come from the x86_64 time-stamp counter.
pub const USES_RDTSC: bool = cfg!(target_arch = "x86_64");

/// The unit of counter readings in tables and CSV columns: `"cycles"` (TSC
/// ticks) with `rdtsc`, `"ns"` otherwise.
pub const UNIT: &str = if USES_RDTSC { "cycles" } else { "ns" };

/// A short description of the counter, for report headers.
pub const COUNTER: &str = if USES_RDTSC {
    "rdtsc (x86_64 time-stamp counter, lfence-fenced)"
} else {
    "std::time::Instant (nanoseconds; no rdtsc on this architecture)"
};

/// Reads the counter: TSC ticks.
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

/// Reads the counter: nanoseconds since its first read.
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
    now().wrapping_sub(start) as f64 / wall.elapsed().as_secs_f64()
}
