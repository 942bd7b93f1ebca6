//! The `bench` binary, in `--quick` runs: its run settings, the parameter
//! sets it measures, its CSV, `--check-bars` and its argument errors.

use std::process::{Command, Output};

fn bench(args: &[&str]) -> (Output, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_bench"))
        .args(args)
        .output()
        .expect("run bench");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    (out, stdout)
}

#[test]
fn settings_sets_and_csv() {
    let csv = std::env::temp_dir().join(format!("bench-test-{}.csv", std::process::id()));
    let csv_flag = format!("--csv={}", csv.display());
    let (out, stdout) = bench(&["--quick", "--params", "768,ML-KEM-512,768", &csv_flag]);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("runs: 100 timed (in 10 interleaved chunks) + 10 warm-up"));
    let (at_768, at_512) = (
        stdout.find("== ML-KEM-768 ==").unwrap(),
        stdout.find("== ML-KEM-512 ==").unwrap(),
    );
    assert!(at_768 < at_512, "sets in the order given");
    assert_eq!(stdout.matches("== ML-KEM-").count(), 2, "{stdout}");
    let text = std::fs::read_to_string(&csv).expect("CSV written");
    std::fs::remove_file(&csv).unwrap();
    assert!(
        text.starts_with("parameter_set,implementation,operation,median_"),
        "{text}"
    );
    for set in [
        "ML-KEM-768,kem-core/portable,keygen",
        "ML-KEM-512,kem-core/portable,decaps",
    ] {
        assert!(text.contains(set), "{set} missing: {text}");
    }
    let (_, stdout) = bench(&["--iterations=7", "--quick", "--params", "512"]);
    assert!(
        stdout.contains("runs: 7 timed (in 1 interleaved chunks)"),
        "{stdout}"
    );
    let (_, stdout) = bench(&["--quick", "--rounds", "20", "--params", "512"]);
    assert!(
        stdout.contains("runs: 100 timed (in 20 interleaved chunks)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("\nCSV:\nparameter_set,"),
        "CSV on stdout without --csv"
    );
}

#[test]
fn check_bars_fails_the_run() {
    // Without ML-KEM-768 no bar is measured: a failure only with --check-bars.
    let (out, _) = bench(&["--quick", "--params", "512", "--check-bars"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("no bar was measured"),
        "{stderr}"
    );
    assert!(bench(&["--quick", "--params", "512"]).0.status.success());
    // On ML-KEM-768 the exit status follows the printed verdicts.
    let (out, stdout) = bench(&["--quick", "--params", "768", "--check-bars"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stdout.contains("overall: ") {
        let failed = stdout.contains("overall: FAIL");
        assert_eq!(out.status.success(), !failed, "{stdout}{stderr}");
        assert_eq!(stderr.contains("a bar FAILED"), failed, "{stderr}");
    } else {
        assert!(
            !out.status.success() && stderr.contains("no bar was measured"),
            "{stderr}"
        );
    }
}

#[test]
fn bad_arguments() {
    for bad in [
        &["--iterations"][..],
        &["--iterations", "0"],
        &["--rounds", "x"],
        &["--params", "999"],
        &["--params", ""],
        &["--csv", ""],
        &["--frobnicate"],
        &["--quick=1"],
        &["--check-bars=yes"],
    ] {
        let (out, _) = bench(bad);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
    }
}
