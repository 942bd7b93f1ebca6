//! The single-threaded verification runner (`harness = false`): every check
//! of the vector, accumulated, differential and property tests, run one
//! after the other on the main thread, each under every backend the CPU
//! has.
//!
//! It exists for emulated targets: under `qemu-aarch64` a program that
//! creates a thread hangs, and libtest runs each test on a thread of its
//! own (even with `--test-threads=1`). The checks are the same functions
//! libtest runs on the host (`vectors.rs`, `accumulated.rs`,
//! `differential.rs`, `properties.rs` are compiled in as modules; their
//! checks are plain functions, which `libtest_tests!` wraps for libtest).
//!
//! On x86-64 hosts libtest already runs all of them, so this runner only
//! lists its checks unless `MLKEM_SINGLE_THREADED=1` is set; on other
//! targets it always runs. Missing vector files fail (as under `CI=true`).
//!
//! Expectations, so that an emulator or build that silently lost a backend
//! fails instead of passing on portable alone:
//!
//! - `MLKEM_EXPECT_BACKENDS`: the available backends, comma-separated
//!   (e.g. `portable,neon`), must be exactly these;
//! - `MLKEM_EXPECT_KECCAK`: the multi-way Keccak implementation the fastest
//!   backend uses, as [`kem_core::BackendKind::keccak_implementation`]
//!   names it (e.g. `neon-sha3` or `neon`).
//!
//! `MLKEM_DIFFERENTIAL_CASES` sets the differential test's cases per
//! parameter set (10,000 by default); `--quick` leaves out the 10,000-round
//! accumulated checks (the 100-round ones still run); `--ignored` adds the
//! million-round one.

// Each check file is a crate of its own under libtest and declares the
// helper modules it uses (`backends`, `libtest_tests`); compiled together
// here, those load once per file.
#![allow(clippy::duplicate_mod)]

#[path = "accumulated.rs"]
mod accumulated;
#[path = "differential.rs"]
mod differential;
#[path = "properties.rs"]
mod properties;
#[path = "vectors.rs"]
mod vectors;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::process::ExitCode;
use std::time::Instant;

use kem_core::{available_backends, BackendKind};

/// One check: its name and body (which panics on failure).
type Check = (&'static str, fn());

/// The checks that always run, in order: the vector families first.
const CHECKS: &[Check] = &[
    ("vectors::acvp_2024_keygen", vectors::acvp_2024_keygen),
    (
        "vectors::acvp_2024_encap_decap",
        vectors::acvp_2024_encap_decap,
    ),
    (
        "vectors::acvp_v1_1_0_40_keygen",
        vectors::acvp_v1_1_0_40_keygen,
    ),
    (
        "vectors::acvp_v1_1_0_40_encap_decap",
        vectors::acvp_v1_1_0_40_encap_decap,
    ),
    (
        "vectors::wycheproof_keygen_and_decaps",
        vectors::wycheproof_keygen_and_decaps,
    ),
    (
        "vectors::wycheproof_encaps_vectors",
        vectors::wycheproof_encaps_vectors,
    ),
    (
        "vectors::wycheproof_keygen_seed_vectors",
        vectors::wycheproof_keygen_seed_vectors,
    ),
    (
        "vectors::wycheproof_semi_expanded_decaps_vectors",
        vectors::wycheproof_semi_expanded_decaps_vectors,
    ),
    ("vectors::cctv_strcmp", vectors::cctv_strcmp),
    (
        "vectors::cctv_unlucky_sample_final",
        vectors::cctv_unlucky_sample_final,
    ),
    (
        "vectors::cctv_ipd_unlucky_sample_encaps_decaps",
        vectors::cctv_ipd_unlucky_sample_encaps_decaps,
    ),
    (
        "vectors::cctv_ipd_intermediate_encaps_decaps",
        vectors::cctv_ipd_intermediate_encaps_decaps,
    ),
    ("vectors::cctv_modulus", vectors::cctv_modulus),
    ("accumulated::accumulated_100", accumulated::accumulated_100),
    (
        "properties::keys_and_ciphertexts_round_trip",
        properties::keys_and_ciphertexts_round_trip,
    ),
    (
        "properties::flipped_ciphertext_bits_yield_the_implicit_rejection_secret",
        properties::flipped_ciphertext_bits_yield_the_implicit_rejection_secret,
    ),
    (
        "properties::parsers_apply_the_fips_203_input_checks",
        properties::parsers_apply_the_fips_203_input_checks,
    ),
    (
        "properties::parsers_never_panic_on_arbitrary_bytes",
        properties::parsers_never_panic_on_arbitrary_bytes,
    ),
    (
        "properties::randomness_comes_from_the_caller_in_fips_203_order",
        properties::randomness_comes_from_the_caller_in_fips_203_order,
    ),
    (
        "properties::a_failing_random_source_is_reported",
        properties::a_failing_random_source_is_reported,
    ),
    (
        "properties::errors_explain_themselves",
        properties::errors_explain_themselves,
    ),
    (
        "differential::every_backend_matches_portable_ml_kem_512",
        differential::every_backend_matches_portable_ml_kem_512,
    ),
    (
        "differential::every_backend_matches_portable_ml_kem_768",
        differential::every_backend_matches_portable_ml_kem_768,
    ),
    (
        "differential::every_backend_matches_portable_ml_kem_1024",
        differential::every_backend_matches_portable_ml_kem_1024,
    ),
];

/// The 10,000-round accumulated checks, left out with `--quick`.
const LONG_CHECKS: &[Check] = &[
    (
        "accumulated::accumulated_10k_ml_kem_512",
        accumulated::accumulated_10k_ml_kem_512,
    ),
    (
        "accumulated::accumulated_10k_ml_kem_768",
        accumulated::accumulated_10k_ml_kem_768,
    ),
    (
        "accumulated::accumulated_10k_ml_kem_1024",
        accumulated::accumulated_10k_ml_kem_1024,
    ),
];

/// Left out unless `--ignored` is given (as in libtest): a million rounds.
const IGNORED_CHECKS: &[Check] = &[(
    "accumulated::accumulated_1m_ml_kem_768",
    accumulated::accumulated_1m_ml_kem_768,
)];

/// Whether this run executes the checks (see the module docs).
fn enabled() -> bool {
    !cfg!(target_arch = "x86_64") || std::env::var("MLKEM_SINGLE_THREADED").as_deref() == Ok("1")
}

/// The expectation failures for this CPU and build (see the module docs).
fn unmet_expectations(backends: &[BackendKind]) -> Vec<String> {
    let mut unmet = Vec::new();
    if let Ok(expected) = std::env::var("MLKEM_EXPECT_BACKENDS") {
        let names: Vec<&str> = backends.iter().map(|kind| kind.name()).collect();
        let expected: Vec<&str> = expected.split(',').map(str::trim).collect();
        if names != expected {
            unmet.push(format!(
                "backends: expected {}, found {}",
                expected.join(","),
                names.join(",")
            ));
        }
    }
    if let Ok(expected) = std::env::var("MLKEM_EXPECT_KECCAK") {
        let fastest = *backends.last().expect("portable is always available");
        let found = fastest.keccak_implementation();
        if found != expected.trim() {
            unmet.push(format!(
                "Keccak of {fastest}: expected {expected}, found {found}"
            ));
        }
    }
    unmet
}

fn main() -> ExitCode {
    if !enabled() {
        println!(
            "single_threaded: {} checks, run by libtest on this host (set \
             MLKEM_SINGLE_THREADED=1 to run them here)",
            CHECKS.len() + LONG_CHECKS.len() + IGNORED_CHECKS.len()
        );
        return ExitCode::SUCCESS;
    }
    // Missing vector files fail the checks instead of skipping them.
    std::env::set_var("CI", "true");

    let backends = available_backends();
    println!("target: {}", std::env::consts::ARCH);
    for kind in &backends {
        println!(
            "backend available: {kind} (Keccak: {})",
            kind.keccak_implementation()
        );
    }
    let unmet = unmet_expectations(&backends);
    for problem in &unmet {
        println!("EXPECTATION FAILED: {problem}");
    }

    let flag = |name: &str| std::env::args().any(|arg| arg == name);
    let mut checks = CHECKS.to_vec();
    if !flag("--quick") {
        checks.extend_from_slice(LONG_CHECKS);
    }
    if flag("--ignored") {
        checks.extend_from_slice(IGNORED_CHECKS);
    }
    let started = Instant::now();
    let mut failed = Vec::new();
    for &(name, check) in &checks {
        let start = Instant::now();
        let outcome = catch_unwind(AssertUnwindSafe(check));
        let verdict = if outcome.is_ok() { "ok" } else { "FAILED" };
        println!(
            "{name} ... {verdict} ({:.1} s)",
            start.elapsed().as_secs_f64()
        );
        if outcome.is_err() {
            failed.push(name);
        }
    }

    let backend_names: Vec<&str> = backends.iter().map(|kind| kind.name()).collect();
    println!(
        "single_threaded: {} passed, {} failed, on {} ({:.0} s)",
        checks.len() - failed.len(),
        failed.len(),
        backend_names.join(" and "),
        started.elapsed().as_secs_f64()
    );
    for name in &failed {
        println!("failed: {name}");
    }
    if failed.is_empty() && unmet.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
