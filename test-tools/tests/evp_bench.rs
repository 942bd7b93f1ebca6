//! The `evp-bench` binary against the built provider (`bash
//! scripts/build-provider.sh` first): command line, tables, CSV and JSON.

use std::process::{Command, Output};

fn evp_bench(args: &[&str]) -> Output {
    let output = Command::new(env!("CARGO_BIN_EXE_evp-bench"))
        .args(args)
        .output();
    output.expect("run evp-bench")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn bad_command_lines_are_usage_errors() {
    for (args, message) in [
        (&["--trials", "0"][..], "expected a whole number above 0"),
        (&["--iterations", "x"], "expected a whole number above 0"),
        (&["--csv"], "a value is required"),
        (
            &["--implementation", "a=/d"],
            "expected NAME=DIR:PROVIDER[:NAMES]",
        ),
        (
            &["--implementation", "=/d:p"],
            "expected NAME=DIR:PROVIDER[:NAMES]",
        ),
        (
            &["--implementation", "a=/d:p:nonsense"],
            "expected `oqs` or FROM=TO pairs",
        ),
        (
            &["--implementation", "ours=/d:p"],
            "the name \"ours\" is taken",
        ),
        (
            &["--implementation", "a=:p", "--implementation", "a=:q"],
            "the name \"a\" is taken",
        ),
        (&["--bogus"], "unexpected argument"),
    ] {
        let out = evp_bench(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            text(&out.stderr).contains(message),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
}

#[test]
fn failures_name_the_implementation_and_algorithm() {
    let out = evp_bench(&["--trials=1", "--iterations=1", "ML-KEM-2048"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("evp-bench: error: ours: ML-KEM-2048: "),
        "{stderr}"
    );
    let out = evp_bench(&["--provider-dir", "/nonexistent", "ML-KEM-512"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("/nonexistent/mlkem.so is missing"));
}

#[test]
fn measures_every_operation_and_writes_csv_and_json() {
    let dir = std::env::temp_dir().join(format!("evp-bench-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (csv, json) = (dir.join("out.csv"), dir.join("out.json"));
    let provider_dir = test_tools::cli::default_provider_dir();
    let oqs_names = format!("oq={}:mlkem:oqs", provider_dir.display());
    let out = evp_bench(&[
        "--quick",
        "--iterations=3",
        "--implementation",
        &oqs_names,
        "--csv",
        csv.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
        "mlkem768",
        "ML-KEM-768",
        "ML-KEM-512",
    ]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    assert!(stdout.starts_with("evp-bench: OpenSSL "), "{stdout}");
    assert!(
        stdout.contains("3 trials x 3 iterations per measurement"),
        "{stdout}"
    );
    assert!(stdout.contains("  oq: provider mlkem ("), "{stdout}");
    assert_eq!(
        stdout.matches("\n== ML-KEM-768 ==\n").count(),
        1,
        "{stdout}"
    );
    assert!(stdout.contains("ops/s / ours"), "{stdout}");
    for operation in ["keygen", "encaps", "decaps"] {
        assert!(
            stdout.contains(&format!("\n{operation}     ours ")),
            "{stdout}"
        );
        assert!(
            stdout.contains(&format!("\n{operation}     oq (mlkem512) ")),
            "{stdout}"
        );
    }

    let csv = std::fs::read_to_string(csv).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some(
            "algorithm,parameter_set,operation,implementation,openssl_version,ops_per_sec,\
             seconds_per_op,median_us,mean_us,mean_cycles,trials,iterations"
        )
    );
    assert_eq!(lines.count(), 2 * 3 * 2, "{csv}");
    assert!(csv.contains("\nmlkem768,ML-KEM-768,keygen,oq,"), "{csv}");

    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    assert_eq!(json["tool"], "evp-bench");
    assert_eq!(
        (json["trials"].as_u64(), json["iterations"].as_u64()),
        (Some(3), Some(3))
    );
    assert_eq!(json["implementations"][0]["propquery"], "provider=mlkem");
    assert_eq!(json["implementations"][1]["name"], "oq");
    let results = json["results"].as_array().unwrap();
    assert_eq!(results.len(), 12);
    for row in results {
        assert_eq!(row["raw_trials"].as_array().unwrap().len(), 3, "{row}");
        assert_eq!(row["iterations"], 3, "{row}");
        let (rate, seconds) = (row["ops_per_sec"].as_f64(), row["seconds_per_op"].as_f64());
        assert!(
            (rate.unwrap() * seconds.unwrap() - 1.0).abs() < 1e-9,
            "{row}"
        );
        assert!(row["mean_cycles"].as_f64().unwrap() > 0.0, "{row}");
    }
    std::fs::remove_dir_all(dir).unwrap();
}
