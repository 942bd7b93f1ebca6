//! Provider load/unload cycles, in a process of their own.
//!
//! OpenSSL gives every loaded provider instance a fresh error-library
//! number, and those are 8 bits wide: after about 127 loads in one process
//! the numbers wrap, two instances share one, and unloading either drops
//! the other's reason strings. (An OpenSSL limitation, not this
//! provider's.) So these cycles must not run next to the tests that check
//! reason strings (`in_process`, `hybrid_in_process`), and assert none.
//!
//! `MLKEM_LOAD_CYCLES` sets the number of cycles (default 1,000, about 2 s).
//! Resident memory is read after cycle 100 (when OpenSSL's caches, the
//! provider's statics and the allocator's arenas have settled) and after
//! the last cycle; it may grow by at most `RSS_SLACK_KIB`, or by
//! `MLKEM_LOAD_CYCLES_RSS_SLACK_KIB` where a sanitizer's own bookkeeping
//! grows with every load (`scripts/sanitizers.sh tsan`: ThreadSanitizer
//! keeps about 11 KiB per cycle; leaks are LeakSanitizer's and valgrind's
//! to find).

mod common;

use std::sync::{Mutex, PoisonError};

use openssl_sys as ffi;

use common::evp::{assert_bytes_eq, take_errors, Lib, Pkey, LIFECYCLE};

/// Name, encapsulation key and ciphertext length of each parameter set.
const SETS: [(&str, usize, usize); 3] = [
    ("ML-KEM-512", 800, 768),
    ("ML-KEM-768", 1184, 1088),
    ("ML-KEM-1024", 1568, 1568),
];

/// Where the resident-memory baseline is taken.
const RSS_BASELINE_CYCLE: usize = 100;
/// How much resident memory may grow from the baseline to the last cycle.
const RSS_SLACK_KIB: u64 = 1024;

/// `MLKEM_LOAD_CYCLES_RSS_SLACK_KIB`, or [`RSS_SLACK_KIB`].
fn rss_slack_kib() -> u64 {
    match std::env::var("MLKEM_LOAD_CYCLES_RSS_SLACK_KIB") {
        Ok(text) => text
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("MLKEM_LOAD_CYCLES_RSS_SLACK_KIB={text:?} is not a number")),
        Err(_) => RSS_SLACK_KIB,
    }
}

/// The tests of this binary read the process's resident memory: one at a
/// time.
static SERIAL: Mutex<()> = Mutex::new(());

/// `MLKEM_LOAD_CYCLES`, or 1,000.
fn cycles() -> usize {
    match std::env::var("MLKEM_LOAD_CYCLES") {
        Ok(text) => match text.trim().parse::<usize>() {
            Ok(n) if n > RSS_BASELINE_CYCLE => n,
            _ => panic!("MLKEM_LOAD_CYCLES={text:?} is not a number above {RSS_BASELINE_CYCLE}"),
        },
        Err(_) => 1_000,
    }
}

/// This process's resident set size (`VmRSS`), in KiB.
fn resident_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("a VmRSS line in /proc/self/status")
}

/// Encapsulates to `key` and checks decapsulation gives the same secret.
fn round_trip(lib: &Lib, key: &Pkey<'_>, ct_len: usize, what: &str) {
    let (ct, secret) = lib
        .encapsulator(key, None)
        .try_encapsulate_into(ct_len, 32)
        .unwrap_or_else(|e| panic!("{what}: encapsulate failed:\n{e}"));
    let received = lib
        .decapsulator(key)
        .try_decapsulate_into(&ct, 32)
        .unwrap_or_else(|e| panic!("{what}: decapsulate failed:\n{e}"));
    assert_bytes_eq!(received, secret, "{what}");
}

#[test]
fn provider_load_unload_cycles() {
    let _serial = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
    let cycles = cycles();
    let start = std::time::Instant::now();
    let mut baseline = None;
    for cycle in 1..=cycles {
        let lib = Lib::new();
        let (name, ek_len, ct_len) = SETS[cycle % 3];
        let key = lib.keygen(name, None);
        assert_eq!(key.public().len(), ek_len, "cycle {cycle}");
        if cycle % 20 == 0 {
            round_trip(&lib, &key, ct_len, &format!("cycle {cycle}"));
        }
        drop(key);
        drop(lib);
        if cycle == RSS_BASELINE_CYCLE {
            baseline = Some(resident_kib());
        }
    }
    let baseline = baseline.expect("more cycles than the baseline cycle");
    let last = resident_kib();
    let growth = last.saturating_sub(baseline);
    let slack = rss_slack_kib();
    println!(
        "load cycles: {cycles} provider load/unload cycles in {:.2} s; VmRSS after cycle \
         {RSS_BASELINE_CYCLE}: {baseline} KiB, after cycle {cycles}: {last} KiB \
         (growth {growth} KiB, allowed {slack} KiB)",
        start.elapsed().as_secs_f64()
    );
    assert!(
        growth <= slack,
        "resident memory grew by {growth} KiB over {} load/unload cycles \
         ({baseline} -> {last} KiB): a leak per cycle",
        cycles - RSS_BASELINE_CYCLE
    );
}

#[test]
fn reload_in_one_library_context() {
    let _serial = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
    let lib = Lib::new();
    for cycle in 0..50 {
        // A second activation of the same provider, then its release.
        let exclusive = LIFECYCLE.write().unwrap_or_else(PoisonError::into_inner);
        // SAFETY: a live context and a NUL-terminated name.
        let extra = unsafe { ffi::OSSL_PROVIDER_load(lib.ctx, c"mlkem".as_ptr()) };
        drop(exclusive);
        assert!(!extra.is_null(), "cycle {cycle}: {}", take_errors());
        let key = lib.keygen("ML-KEM-768", None);
        {
            let _exclusive = LIFECYCLE.write().unwrap_or_else(PoisonError::into_inner);
            // SAFETY: the reference loaded above, released once.
            assert_eq!(unsafe { ffi::OSSL_PROVIDER_unload(extra) }, 1);
        }
        // The key outlives the extra activation.
        round_trip(&lib, &key, 1088, &format!("cycle {cycle}"));
    }
}
