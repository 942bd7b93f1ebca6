//! The `speed-compare` binary on the saved `openssl speed` outputs in
//! `../shared/fixtures/openssl-speed` (`--parse`): its tables, CSV and JSON.

use std::path::PathBuf;
use std::process::{Command, Output};

fn fixture(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/fixtures/openssl-speed")
        .join(name);
    assert!(
        path.is_file(),
        "missing speed fixture {}: the fixtures live in ../shared/fixtures/openssl-speed \
         next to the workspace",
        path.display()
    );
    path.display().to_string()
}

fn speed_compare(args: &[String]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_speed-compare"))
        .args(args)
        .output()
        .expect("run speed-compare")
}

/// A fresh scratch directory for this test's output files.
fn scratch(test: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("speed-compare-test-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

#[test]
fn parse_native_against_oqsprovider() {
    let dir = scratch("native-oqs");
    let (csv, json) = (dir.join("out.csv"), dir.join("out.json"));
    let out = speed_compare(&[
        "--parse".into(),
        format!("native={}", fixture("default-ossl-3.5.4.txt")),
        format!("oqsprovider={}", fixture("oqsprovider-0.10-ossl-3.4.1.txt")),
        "--baseline".into(),
        "native".into(),
        "--csv".into(),
        csv.display().to_string(),
        "--json".into(),
        json.display().to_string(),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("(OpenSSL 3.5.4)"), "{stdout}");
    assert!(stdout.contains("(OpenSSL 3.4.1)"), "{stdout}");

    // The ML-KEM-768 table: keygen 55637.7 / 23944.5 = 2.32x.
    let table = stdout
        .split("\n\n")
        .skip_while(|block| !block.starts_with("ML-KEM-768\n"))
        .take(3)
        .collect::<Vec<_>>()
        .join("\n\n");
    assert_eq!(
        table,
        "\
ML-KEM-768
operation  implementation  algorithm          s/op    ops/s  rounds  vs native
---------  --------------  ----------  -----------  -------  ------  ---------
keygen     native          ML-KEM-768  0.000041763  23944.5       1      1.00x
keygen     oqsprovider     mlkem768    0.000017973  55637.7       1      2.32x

encaps     native          ML-KEM-768  0.000022754  43948.4       1      1.00x
encaps     oqsprovider     mlkem768    0.000021544  46416.1       1      1.06x

decaps     native          ML-KEM-768  0.000043090  23207.0       1      1.00x
decaps     oqsprovider     mlkem768    0.000019935  50162.8       1      2.16x"
    );
    // Native's hybrids have no oqsprovider row.
    assert!(stdout.contains("\nSecP384r1MLKEM1024\n"), "{stdout}");

    let csv = std::fs::read_to_string(csv).expect("CSV written");
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "algorithm,parameter_set,operation,implementation,openssl_version,\
         ops_per_sec,seconds_per_op,ratio_to_baseline,rounds"
    );
    // 3 pure sets x 3 operations x 2 implementations, 3 hybrids x 3 x 1.
    assert_eq!(lines.len(), 1 + 18 + 9);
    assert!(
        lines.contains(
            &"mlkem768,ML-KEM-768,keygen,oqsprovider,3.4.1,55637.70,0.000017973424,2.3236,1"
        ),
        "{csv}"
    );
    assert!(
        lines.contains(
            &"X25519MLKEM768,X25519MLKEM768,encaps,native,3.5.4,8922.40,0.000112077468,1.0000,1"
        ),
        "{csv}"
    );

    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(json).expect("JSON written"))
            .expect("valid JSON");
    assert_eq!(json["mode"], "parse");
    assert_eq!(json["comparison"]["baseline"], "native");
    let runs = json["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[1]["implementation"], "oqsprovider");
    assert_eq!(runs[1]["openssl_version"], "3.4.1");
    let first = &runs[0]["results"][0];
    assert_eq!(first["algorithm"], "ML-KEM-512");
    assert_eq!(first["ops_per_sec"], 36428.6);
    assert_eq!(first["count"], 69943);
    assert_eq!(first["elapsed"], 1.92);
    let results = json["comparison"]["results"].as_array().expect("results");
    assert_eq!(results.len(), 27);
    let oqs_keygen = results
        .iter()
        .find(|r| {
            r["implementation"] == "oqsprovider"
                && r["parameter_set"] == "ML-KEM-768"
                && r["operation"] == "keygen"
        })
        .expect("oqsprovider ML-KEM-768 keygen");
    assert_eq!(
        oqs_keygen["ops_per_sec_per_round"],
        serde_json::json!([55637.7])
    );
    let ratio = oqs_keygen["ratio_to_baseline"].as_f64().expect("ratio");
    assert!((ratio - 55637.7 / 23944.5).abs() < 1e-12, "{ratio}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn parse_every_fixture_with_rounds_and_default_baseline() {
    // Two rounds of the seed oqsprovider run (the same file twice), the
    // lesec plugin's variant output, and native, which is the default
    // baseline when present.
    let seed = fixture("oqsprovider-seed-ossl-3.4.1.txt");
    let out = speed_compare(&[
        "--parse".into(),
        format!("oqs-seed={seed}"),
        format!("lesec={}", fixture("lesec-oqs-plugin-seed.txt")),
        format!("oqs-seed={seed}"),
        format!("native={}", fixture("default-ossl-3.5.4.txt")),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("baseline native"), "{stdout}");
    // ML-KEM-512 keygen: lesec 129890.0 / native 36428.6 = 3.57x; the seed
    // run's two rounds are the same file, so its median is its value.
    assert!(
        stdout.contains(
            "keygen     oqs-seed        mlkem512    0.000009436  105974.2       2      2.91x"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "keygen     lesec           ML-KEM-512  0.000007699  129890.0       1      3.57x"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("(OpenSSL version not given)"), "{stdout}");
}

#[test]
fn parse_errors_fail_with_a_message() {
    let dir = scratch("errors");
    let empty = dir.join("empty.txt");
    std::fs::write(&empty, "speed: Unknown algorithm ML-KEM-768\n").expect("write");
    let out = speed_compare(&["--parse".into(), format!("x={}", empty.display())]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("holds no KEM result of `openssl speed`"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());

    let out = speed_compare(&[
        "--parse".into(),
        format!("native={}", fixture("default-ossl-3.5.4.txt")),
        "--baseline".into(),
        "ours".into(),
    ]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("baseline \"ours\" is not one of the implementations (native)"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn bad_arguments_are_usage_errors() {
    let usage_error = |args: &[&str]| {
        let out = speed_compare(&args.iter().map(|a| a.to_string()).collect::<Vec<_>>());
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    for list in [
        &["--rounds", "0"][..],
        &["--seconds"],
        &["--frob"],
        &["--implementations", "ours,boring"],
        &["--parse", "--rounds", "2", "a=b"],
        &["--csv", "a", "--csv", "b"],
        &["--parse=yes", "a=b"],
    ] {
        usage_error(list);
    }
    let unknown = usage_error(&["rsa2048"]);
    assert!(unknown.contains("unknown algorithm \"rsa2048\" (known: ML-KEM-512 ML-KEM-768 ML-KEM-1024 X25519MLKEM768 SecP256r1MLKEM768 SecP384r1MLKEM1024)"), "{unknown}");
    let stderr = usage_error(&["--parse"]);
    assert!(
        stderr.contains("--parse needs NAME=FILE arguments"),
        "{stderr}"
    );
    let stderr = usage_error(&["--parse", "file.txt"]);
    assert!(
        stderr.contains("--parse: expected NAME=FILE, got \"file.txt\""),
        "{stderr}"
    );
}

/// A stand-in `openssl` at DIR/bin/openssl, with a libcrypto beside it in
/// DIR/lib64: `version` says 3.5.9, `speed -help` lists -kem-algorithms,
/// and `speed` prints the 3.5.4 fixture after its arguments and the
/// environment that matters.
fn fake_openssl(dir: &std::path::Path) -> PathBuf {
    std::fs::create_dir_all(dir.join("bin")).expect("bin");
    std::fs::create_dir_all(dir.join("lib64")).expect("lib64");
    std::fs::write(dir.join("lib64/libcrypto.so.3"), b"").expect("libcrypto");
    let script = format!(
        "#!/bin/sh\n\
         case \"$1 $2\" in\n\
         'version -m') echo 'MODULESDIR: \"{dir}/lib64/ossl-modules\"' ;;\n\
         'version '*) echo 'OpenSSL 3.5.9 1 Jan 2026 (Library: OpenSSL 3.5.9 1 Jan 2026)' ;;\n\
         'speed -help') echo ' -kem-algorithms  Benchmark KEMs' >&2; exit 1 ;;\n\
         *) echo \"args: $* conf=$OPENSSL_CONF lib=$LD_LIBRARY_PATH backend=$MLKEM_BACKEND\" >&2\n\
            cat '{fixture}' ;;\n\
         esac\n",
        dir = dir.display(),
        fixture = fixture("default-ossl-3.5.4.txt"),
    );
    let bin = dir.join("bin/openssl");
    std::fs::write(&bin, script).expect("script");
    let mode = std::os::unix::fs::PermissionsExt::from_mode(0o755);
    std::fs::set_permissions(&bin, mode).expect("chmod");
    bin
}

#[test]
fn measure_mode_with_a_stand_in_openssl() {
    let dir = scratch("measure");
    let openssl = fake_openssl(&dir.join("openssl"));
    std::fs::create_dir_all(dir.join("provider")).expect("provider dir");
    std::fs::write(dir.join("provider/mlkem.so"), b"").expect("mlkem.so");
    std::fs::write(dir.join("oqsprovider.so"), b"").expect("oqsprovider.so");
    let json = dir.join("out.json");
    let path = |p: PathBuf| p.display().to_string();
    let out = speed_compare(&[
        "--openssl".into(),
        path(openssl.clone()),
        "--provider-dir".into(),
        path(dir.join("provider")),
        "--oqsprovider".into(),
        path(dir.join("oqsprovider.so")),
        "--backend".into(),
        "portable".into(),
        "--rounds".into(),
        "2".into(),
        "--seconds".into(),
        "1".into(),
        "--raw-dir".into(),
        path(dir.join("raw")),
        "--json".into(),
        path(json.clone()),
        "mlkem768".into(),
        "X25519MLKEM768".into(),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let described = format!("OpenSSL 3.5.9 ({})", openssl.display());
    assert!(
        stdout.starts_with(&format!(
            "openssl speed: ours, native, oqsprovider on {described}; 2 rounds x 1 s per \
             operation, alternating; backend of ours: portable; baseline native\n\n\
             ML-KEM-768\n"
        )),
        "{stdout}"
    );
    // Only the sets asked for, though the output has six.
    assert!(stdout.contains("\nX25519MLKEM768\n"), "{stdout}");
    assert!(!stdout.contains("ML-KEM-512"), "{stdout}");
    assert!(
        stdout.contains(
            "keygen     oqsprovider     ML-KEM-768  0.000041763  23944.5       2      1.00x"
        ),
        "{stdout}"
    );
    assert!(
        stderr.contains("[round 2/2] oqsprovider: openssl speed mlkem768 X25519MLKEM768 (~6 s)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("warning: oqsprovider disables its own ML-KEM"),
        "{stderr}"
    );
    let raw = std::fs::read_to_string(dir.join("raw/ours-round2.stderr.txt")).expect("raw stderr");
    let lib = dir.join("openssl/lib64").display().to_string();
    assert!(raw.starts_with(&format!("args: speed -provider-path {} -provider mlkem -provider default -propquery provider=mlkem -seconds 1 ML-KEM-768 X25519MLKEM768 conf=/dev/null lib={lib}", dir.join("provider").display())), "{raw}");
    assert!(raw.contains(" backend=portable\n"), "{raw}");
    let native = std::fs::read_to_string(dir.join("raw/native-round1.stderr.txt")).expect("raw");
    assert!(
        native.starts_with("args: speed -seconds 1 ML-KEM-768 X25519MLKEM768 "),
        "{native}"
    );
    assert!(native.contains(" backend=\n"), "{native}");
    let oqs = std::fs::read_to_string(dir.join("raw/oqsprovider-round1.stderr.txt")).expect("raw");
    let oqs_flags = format!("-provider-path {} -provider oqsprovider -provider default -seconds 1 mlkem768 X25519MLKEM768", dir.display());
    assert!(oqs.contains(&oqs_flags), "{oqs}");

    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(json).expect("JSON written")).expect("JSON");
    assert_eq!(json["mode"], "measure");
    assert_eq!(
        json["settings"]["algorithms"],
        serde_json::json!(["ML-KEM-768", "X25519MLKEM768"])
    );
    assert_eq!(json["runs"].as_array().expect("runs").len(), 6);
    assert_eq!(json["runs"][5]["implementation"], "oqsprovider");
    assert_eq!(json["runs"][5]["round"], 2);
    assert_eq!(
        json["runs"][0]["results"]
            .as_array()
            .expect("results")
            .len(),
        6
    );
    let ours = &json["implementations"][0];
    assert_eq!(ours["env"]["MLKEM_BACKEND"], "portable");
    assert!(ours["env"]["LD_LIBRARY_PATH"]
        .as_str()
        .expect("lib")
        .starts_with(&lib));
    assert_eq!(ours["openssl_version"], "3.5.9");
    let line = ours["command_line"].as_str().expect("command line");
    assert!(
        line.starts_with("OPENSSL_CONF=/dev/null LD_LIBRARY_PATH="),
        "{line}"
    );
    assert!(line.contains(" MLKEM_BACKEND=portable "), "{line}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn measure_mode_errors() {
    let dir = scratch("measure-errors");
    let openssl = fake_openssl(&dir.join("openssl"));
    let fails = |args: &[&str]| {
        let mut all = vec!["--openssl".to_owned(), openssl.display().to_string()];
        all.extend(args.iter().map(|a| a.to_string()));
        let out = speed_compare(&all);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let err = fails(&["--backend", "neon"]);
    assert!(
        err.contains(
            "--backend: unknown backend \"neon\" (known: portable, avx2, avx512-keccak, avx512)"
        ),
        "{err}"
    );
    let err = fails(&[
        "--implementations",
        "ours",
        "--provider-dir",
        "/nonexistent",
    ]);
    assert!(
        err.contains("ours: /nonexistent/mlkem.so is missing"),
        "{err}"
    );
    let err = fails(&["--implementations", "oqsprovider"]);
    assert!(
        err.contains("oqsprovider: no oqsprovider.so in the MODULESDIR of OpenSSL 3.5.9"),
        "{err}"
    );
    let err = fails(&["--implementations", "native", "--baseline", "ours"]);
    assert!(
        err.contains("--baseline ours: not measured (measuring: native)"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(dir);
}
