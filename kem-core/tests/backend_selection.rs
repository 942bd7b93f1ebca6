//! Backend selection through the environment: `MLKEM_BACKEND` is read once,
//! when the first operation decides the process backend, so each case runs
//! in a child process (this test binary re-run with the variable set).

mod backends;

use std::process::Command;

use kem_core::{active_backend, BackendKind};

/// The child: prints the backend it was given.
#[test]
#[ignore = "child process of mlkem_backend_selects_the_process_backend"]
fn report_backend_child() {
    println!("active backend: {}", active_backend());
}

/// The backend a child process reports with `MLKEM_BACKEND=value`.
fn backend_with_env(value: &str) -> String {
    let output = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "report_backend_child",
            "--ignored",
            "--nocapture",
        ])
        .env("MLKEM_BACKEND", value)
        .output()
        .unwrap();
    assert!(output.status.success());
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("active backend: "))
        .unwrap_or_else(|| panic!("child printed no backend: {stdout}"));
    line.to_owned()
}

#[test]
fn mlkem_backend_selects_the_process_backend() {
    let backends = backends::backends_to_exercise();
    let preferred = kem_core::preferred_backend();
    for kind in backends {
        assert_eq!(backend_with_env(kind.name()), kind.name());
        assert_eq!(backend_with_env(&kind.name().to_uppercase()), kind.name());
        backends::record_exercised(kind);
    }
    // Unknown names fall back to the preferred backend.
    assert_eq!(backend_with_env("no-such-backend"), preferred.name());
    assert_eq!(backend_with_env(""), preferred.name());
    assert_eq!(BackendKind::ALL[0], BackendKind::Portable);
}

/// The preferred backend is the last available one, except on an Intel CPU
/// with AVX-512, where it is `avx512-keccak`; the vendor is read from
/// `/proc/cpuinfo` here, not from CPUID as kem-core reads it.
#[test]
fn the_preferred_backend_follows_the_cpu_vendor() {
    let available = kem_core::available_backends();
    let last = *available.last().unwrap();
    let Ok(cpuinfo) = std::fs::read_to_string("/proc/cpuinfo") else {
        eprintln!("no /proc/cpuinfo; only the fallback checked");
        assert!(available.contains(&kem_core::preferred_backend()));
        return;
    };
    let intel = cpuinfo
        .lines()
        .find_map(|line| line.strip_prefix("vendor_id"))
        .is_some_and(|value| value.trim_start_matches([' ', '\t', ':']) == "GenuineIntel");
    let expected = match (last.name(), intel) {
        ("avx512", true) => "avx512-keccak",
        (name, _) => name,
    };
    assert_eq!(kem_core::preferred_backend().name(), expected);
}
