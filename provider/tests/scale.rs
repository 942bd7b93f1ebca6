//! Concurrency and scale: many threads sharing one provider instance and one
//! ML-KEM-768 key, encapsulating and decapsulating through EVP.
//!
//! Sizes come from the environment, so CI runs a short form and
//! `scripts/reliability.sh` the long one:
//!
//! - `MLKEM_SCALE_THREADS` (default 8): threads sharing the key;
//! - `MLKEM_SCALE_ROUNDS` (default 1,000; 100 in a debug build):
//!   encapsulate + decapsulate pairs per thread (the long form uses 10,000);
//! - `MLKEM_SCALE_MIN_SPEEDUP` (default 1.2; the long form uses 1.6): two
//!   threads on the shared key must reach at least this multiple of one
//!   thread's throughput. 1.2 is a bar CI meets on a shared two-core
//!   machine: a provider serialised behind one lock stays at or below 1.0,
//!   and when other processes keep the CPUs busy a fair scheduler still
//!   gives two threads a larger share than one (with k other busy threads
//!   on two CPUs, 4/(k+2) against 2/(k+1) CPUs: at least 1.33x). On a
//!   machine with a single CPU the comparison is printed, not asserted.
//!
//! Two threads scale only if nothing in the provider (or in the test's own
//! helpers) serialises the operations behind one lock. Each configuration is
//! run three times and judged by its best run: noise (other processes, a
//! hypervisor's steal that the guest does not see, clock changes) only ever
//! slows a run down, while a lock holds even the best two-thread run to one
//! thread's rate. Each run also records the CPU time this process and the
//! rest of the machine used (getrusage, /proc/stat). A miss is measured
//! again, up to three attempts; three misses fail as a serialisation when
//! the machine was quiet, and as inconclusive when other processes kept
//! more than a quarter of a CPU busy.

mod common;

use std::collections::HashSet;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use common::evp::{assert_bytes_eq, Lib, Pkey};

/// ML-KEM-768's ciphertext length.
const CT_LEN: usize = 1088;
/// Measurements of each configuration (1 and 2 threads), alternating.
const REPEATS: usize = 3;

/// The tests of this binary measure wall-clock time: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

/// A positive integer from the environment, or `default`.
fn env_count(name: &str, default: usize) -> usize {
    match std::env::var(name) {
        Ok(text) => match text.trim().parse::<usize>() {
            Ok(n) if n > 0 => n,
            _ => panic!("{name}={text:?} is not a positive integer"),
        },
        Err(_) => default,
    }
}

/// The speed-up two threads must reach when `MLKEM_SCALE_MIN_SPEEDUP` is
/// not set (see the module documentation).
const DEFAULT_MIN_SPEEDUP: f64 = 1.2;

/// `MLKEM_SCALE_MIN_SPEEDUP`, or [`DEFAULT_MIN_SPEEDUP`].
fn min_speedup() -> f64 {
    let Ok(text) = std::env::var("MLKEM_SCALE_MIN_SPEEDUP") else {
        return DEFAULT_MIN_SPEEDUP;
    };
    match text.trim().parse::<f64>() {
        Ok(x) if x > 0.0 => x,
        _ => panic!("MLKEM_SCALE_MIN_SPEEDUP={text:?} is not a positive number"),
    }
}

/// Encapsulation + decapsulation pairs per thread (fewer by default in an
/// unoptimised build).
fn rounds() -> usize {
    let default = if cfg!(debug_assertions) { 100 } else { 1_000 };
    env_count("MLKEM_SCALE_ROUNDS", default)
}

/// A ciphertext's first 16 bytes: enough to tell apart ciphertexts that
/// fresh randomness made (a repeat means m was reused).
fn fingerprint(ct: &[u8]) -> u128 {
    u128::from_le_bytes(ct[..16].try_into().expect("a full ciphertext"))
}

/// Runs `pairs` encapsulate + decapsulate pairs on `key` with one pair of
/// contexts, checking every secret, and returns the ciphertexts'
/// fingerprints.
fn pairs_on_one_thread(lib: &Lib, key: &Pkey<'_>, pairs: usize, thread: usize) -> Vec<u128> {
    let enc = lib.encapsulator(key, None);
    let dec = lib.decapsulator(key);
    let mut seen = Vec::with_capacity(pairs);
    for round in 0..pairs {
        let (ct, secret) = enc
            .try_encapsulate_into(CT_LEN, 32)
            .unwrap_or_else(|e| panic!("thread {thread} round {round}: encapsulate:\n{e}"));
        let received = dec
            .try_decapsulate_into(&ct, 32)
            .unwrap_or_else(|e| panic!("thread {thread} round {round}: decapsulate:\n{e}"));
        assert_bytes_eq!(received, secret, "thread {thread} round {round}");
        seen.push(fingerprint(&ct));
    }
    seen
}

/// Splits `total` pairs over `threads` threads on the shared key; returns
/// the wall time and every fingerprint.
fn run(lib: &Lib, key: &Pkey<'_>, threads: usize, total: usize) -> (Duration, Vec<u128>) {
    let start = Instant::now();
    let per_thread = common::on_threads(threads, |thread| {
        let share = total / threads + usize::from(thread < total % threads);
        pairs_on_one_thread(lib, key, share, thread)
    });
    let elapsed = start.elapsed();
    (elapsed, per_thread.into_iter().flatten().collect())
}

fn pairs_per_second(pairs: usize, elapsed: Duration) -> f64 {
    pairs as f64 / elapsed.as_secs_f64()
}

fn best(values: &[f64]) -> f64 {
    values.iter().copied().fold(0.0, f64::max)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

#[test]
fn many_threads_share_one_provider_and_one_key() {
    let _serial = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
    let threads = env_count("MLKEM_SCALE_THREADS", 8);
    let rounds = rounds();
    let lib = Lib::new();
    let key = lib.keygen("ML-KEM-768", None);

    let (elapsed, fingerprints) = run(&lib, &key, threads, threads * rounds);
    let total = threads * rounds;
    assert_eq!(fingerprints.len(), total);
    let distinct: HashSet<u128> = fingerprints.into_iter().collect();
    assert_eq!(
        distinct.len(),
        total,
        "repeated ciphertexts across {threads} threads: encapsulation randomness was reused"
    );
    println!(
        "scale: {threads} threads x {rounds} encapsulate+decapsulate pairs (ML-KEM-768, one key): \
         {total} pairs in {:.2} s, {:.0} pairs/s",
        elapsed.as_secs_f64(),
        pairs_per_second(total, elapsed)
    );
}

/// CPU time: this process's (user + system) and the whole machine's busy
/// time (everything but idle and I/O wait, steal included), to tell a
/// serialised provider from a machine busy with other work.
#[derive(Clone, Copy)]
struct CpuClock {
    process: Duration,
    machine: Duration,
}

impl CpuClock {
    fn now() -> Self {
        // SAFETY: getrusage writes one struct rusage, which we pass.
        let usage = unsafe {
            let mut usage = std::mem::zeroed::<libc::rusage>();
            assert_eq!(libc::getrusage(libc::RUSAGE_SELF, &mut usage), 0);
            usage
        };
        let time = |t: libc::timeval| {
            Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
        };
        CpuClock {
            process: time(usage.ru_utime) + time(usage.ru_stime),
            machine: machine_busy(),
        }
    }
}

/// The machine's busy time from the first line of /proc/stat: user, nice,
/// system, irq, softirq and steal (idle and iowait left out).
fn machine_busy() -> Duration {
    let stat = std::fs::read_to_string("/proc/stat").expect("/proc/stat");
    let ticks: Vec<u64> = stat
        .lines()
        .next()
        .and_then(|line| line.strip_prefix("cpu "))
        .expect("the cpu line of /proc/stat")
        .split_whitespace()
        .map(|n| n.parse().expect("a tick count"))
        .collect();
    let busy: u64 = [0, 1, 2, 5, 6, 7]
        .iter()
        .filter_map(|&i| ticks.get(i))
        .sum();
    // SAFETY: a plain query.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    Duration::from_nanos(busy * 1_000_000_000 / per_second)
}

/// One timed run.
struct Measurement {
    /// Pairs per second.
    rate: f64,
    /// CPUs this process kept busy on average.
    ours: f64,
    /// CPUs the rest of the machine kept busy (other processes, steal).
    others: f64,
}

fn measure(lib: &Lib, key: &Pkey<'_>, threads: usize, total: usize) -> Measurement {
    let before = CpuClock::now();
    let (elapsed, fingerprints) = run(lib, key, threads, total);
    let after = CpuClock::now();
    assert_eq!(fingerprints.len(), total);
    let wall = elapsed.as_secs_f64();
    let ours = (after.process - before.process).as_secs_f64();
    let machine = after.machine.saturating_sub(before.machine).as_secs_f64();
    Measurement {
        rate: pairs_per_second(total, elapsed),
        ours: ours / wall,
        others: (machine - ours).max(0.0) / wall,
    }
}

/// Other processes may use this much CPU (on average, in CPUs) during a
/// throughput comparison before it counts as disturbed.
const QUIET_MACHINE: f64 = 0.25;
/// Comparisons tried before a miss fails the test.
const ATTEMPTS: usize = 3;

/// One comparison: the best 1-thread and 2-thread rates, and the median load
/// other processes put on the machine meanwhile.
struct Comparison {
    one: f64,
    two: f64,
    others: f64,
}

fn compare(lib: &Lib, key: &Pkey<'_>, total: usize, attempt: usize) -> Comparison {
    let (mut one, mut two, mut others) = (Vec::new(), Vec::new(), Vec::new());
    for repeat in 0..REPEATS {
        for (threads, rates) in [(1, &mut one), (2, &mut two)] {
            let m = measure(lib, key, threads, total);
            println!(
                "throughput: attempt {attempt}, run {}/{REPEATS}, {threads} thread(s), {total} \
                 pairs: {:.0} pairs/s (this process used {:.2} CPUs, the rest of the machine \
                 {:.2})",
                repeat + 1,
                m.rate,
                m.ours,
                m.others
            );
            rates.push(m.rate);
            others.push(m.others);
        }
    }
    Comparison {
        one: best(&one),
        two: best(&two),
        others: median(others),
    }
}

#[test]
fn two_threads_outrun_one_on_the_same_key() {
    let _serial = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
    // The same total work for both configurations: as much as the shared-key
    // test does.
    let total = env_count("MLKEM_SCALE_THREADS", 8) * rounds();
    let required = min_speedup();
    let lib = Lib::new();
    let key = lib.keygen("ML-KEM-768", None);
    // Warm up (DRBG instantiation per thread, caches, CPU clocks).
    run(&lib, &key, 2, total / 10 + 2);

    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    // One CPU cannot run two threads at once: measure, do not assert.
    let attempts = if cpus >= 2 { ATTEMPTS } else { 1 };
    for attempt in 1..=attempts {
        let c = compare(&lib, &key, total, attempt);
        let speedup = c.two / c.one;
        println!(
            "throughput: best of {REPEATS}: 1 thread {:.0} pairs/s, 2 threads {:.0} pairs/s \
             on the same key, speedup {speedup:.2}x ({cpus} CPUs; other processes used {:.2} \
             CPUs)",
            c.one, c.two, c.others
        );
        if cpus < 2 {
            println!("throughput: one CPU, so the {required}x bar is not asserted");
            return;
        }
        if speedup >= required {
            return;
        }
        if attempt == attempts {
            assert!(
                c.others > QUIET_MACHINE,
                "two threads on one key reached only {speedup:.2}x one thread's throughput \
                 (required {required}x) in each of {attempts} attempts, the last on a quiet \
                 machine: something serialises the operations"
            );
            panic!(
                "two threads on one key reached only {speedup:.2}x one thread's throughput \
                 (required {required}x), but other processes kept {:.2} CPUs busy in the last \
                 of {attempts} attempts: inconclusive, run again on an idle machine",
                c.others
            );
        }
        println!("throughput: below the bar; measuring again");
    }
}
