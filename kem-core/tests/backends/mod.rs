//! Running a test under every backend this CPU supports, and proving it did.
//!
//! Two environment variables make a silently skipped backend a failure
//! (`scripts/check-backends.sh` sets both for CI, from `/proc/cpuinfo`):
//!
//! - `MLKEM_EXPECT_BACKENDS` (comma-separated, slowest first, e.g.
//!   `portable,avx2,avx512`): the backends the CPU has; a test whose
//!   [`available_backends`](kem_core::available_backends) differs fails;
//! - `MLKEM_BACKEND_LOG` (a file): every backend a test ran to the end is
//!   appended as a line `<test binary> <backend>`, which the script compares
//!   with the CPU's list.

use std::io::Write;

use kem_core::BackendKind;

/// The backends to run, checked against `MLKEM_EXPECT_BACKENDS` when set.
pub fn backends_to_exercise() -> Vec<BackendKind> {
    let found = kem_core::available_backends();
    if let Ok(expected) = std::env::var("MLKEM_EXPECT_BACKENDS") {
        let names: Vec<&str> = found.iter().map(|kind| kind.name()).collect();
        let expected: Vec<&str> = expected.split(',').map(str::trim).collect();
        assert_eq!(
            names, expected,
            "the backends kem-core detects differ from the CPU's (MLKEM_EXPECT_BACKENDS)"
        );
    }
    found
}

/// Records that `kind` ran a whole test, in `MLKEM_BACKEND_LOG` when set.
pub fn record_exercised(kind: BackendKind) {
    let Some(log) = std::env::var_os("MLKEM_BACKEND_LOG") else {
        return;
    };
    // The binary's name without cargo's hash suffix (`vectors-0123abcd`).
    let exe = std::env::current_exe().expect("the test binary's path");
    let stem = exe.file_stem().and_then(|s| s.to_str()).unwrap_or("?");
    let binary = stem.rsplit_once('-').map_or(stem, |(name, _)| name);
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log)
        .unwrap_or_else(|e| panic!("MLKEM_BACKEND_LOG {}: {e}", log.to_string_lossy()));
    // One short write per line: appends from parallel tests stay whole.
    file.write_all(format!("{binary} {kind}\n").as_bytes())
        .expect("writing MLKEM_BACKEND_LOG");
}

/// Runs `test` once under every available backend (the portable reference
/// first), printing which one runs so that a failure names it.
#[allow(dead_code)]
pub fn for_each_backend(test: impl Fn()) {
    for kind in backends_to_exercise() {
        eprintln!("backend: {kind}");
        kem_core::with_backend(kind, &test).expect("available backend");
        record_exercised(kind);
    }
}
