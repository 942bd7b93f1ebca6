//! `tls-bench` with other providers beside ours (`--provider NAME=DIR`,
//! `--oqsprovider`, `--baseline`), without oqsprovider: our own module
//! loaded a second time under another name stands in for one, the legacy
//! provider for one that lacks a group; and on OpenSSL 3.5 (the build
//! scripts/build-openssl.sh caches), that every row measures the provider
//! it names.

mod common;

use std::ffi::CStr;
use std::path::{Path, PathBuf};

use common::{tls_bench, tls_bench_with};
use test_tools::ci::running_in_ci;
use test_tools::cli::default_provider_dir;

/// The groups measured when none is named.
const DEFAULT_GROUPS: [&str; 5] = [
    "X25519",
    "MLKEM768",
    "X25519MLKEM768",
    "SecP256r1MLKEM768",
    "MLKEM1024",
];

/// A fresh directory of this test's own, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("tls-bench-providers-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create a temporary directory");
        TempDir(dir)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A directory holding our module as `mlkemtwin.so`.
fn twin() -> TempDir {
    let dir = TempDir::new("twin");
    let module = default_provider_dir().join("mlkem.so");
    std::fs::copy(&module, dir.path().join("mlkemtwin.so")).expect("copy mlkem.so");
    dir
}

/// OpenSSL 3.5 and later have ML-KEM in the default provider.
fn native_has_mlkem() -> bool {
    openssl::version::number() >= 0x3050_0000
}

/// The CSV's rows as header -> cell maps.
fn csv_rows(text: &str) -> Vec<std::collections::HashMap<String, String>> {
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().expect("a header").split(',').collect();
    let row = |line: &str| {
        let cells = line.split(',').map(str::to_owned);
        header.iter().map(|h| h.to_string()).zip(cells).collect()
    };
    lines.map(row).collect()
}

fn number(row: &std::collections::HashMap<String, String>, key: &str) -> f64 {
    let cell = row.get(key).unwrap_or_else(|| panic!("no {key}: {row:?}"));
    cell.parse().unwrap_or_else(|_| panic!("{key} = {cell:?}"))
}

#[test]
fn a_second_provider_is_measured_beside_ours() {
    let twin = twin();
    let csv = twin.path().join("out.csv");
    let json = twin.path().join("out.json");
    let provider = format!("mlkemtwin={}", twin.path().display());
    let (csv_flag, json_flag) = (
        format!("--csv={}", csv.display()),
        format!("--json={}", json.display()),
    );
    let (out, stdout, stderr) = tls_bench(&[
        "--handshakes",
        "20",
        "--rounds",
        "1",
        "--provider",
        &provider,
        "--baseline",
        "ours",
        &csv_flag,
        &json_flag,
    ]);
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(
        stdout.contains("  mlkemtwin: providers mlkemtwin (")
            && stdout.contains("propquery ?provider=mlkemtwin\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("server µs  client µs  vs X25519  vs ours  rounds\n"),
        "{stdout}"
    );

    let csv = std::fs::read_to_string(&csv).expect("CSV written");
    assert!(
        csv.starts_with(
            "group,implementation,openssl_version,handshakes_per_sec,ms_per_handshake,\
             ratio_to_x25519,rounds,handshakes,seconds,server_us_per_handshake,\
             client_us_per_handshake,baseline,ratio_to_baseline\n"
        ),
        "{csv}"
    );
    let rows = csv_rows(&csv);
    for group in DEFAULT_GROUPS {
        for implementation in ["ours", "mlkemtwin"] {
            let row = rows
                .iter()
                .find(|r| r["group"] == group && r["implementation"] == implementation)
                .unwrap_or_else(|| panic!("no {group} row of {implementation}: {csv}"));
            let rate = number(row, "handshakes_per_sec");
            assert!(rate > 1.0 && rate < 1e6, "{row:?}");
            let ms = number(row, "ms_per_handshake");
            assert!((ms * rate / 1e3 - 1.0).abs() < 1e-2, "{row:?}");
            let (server, client) = (
                number(row, "server_us_per_handshake"),
                number(row, "client_us_per_handshake"),
            );
            assert!(server > 0.0 && client > 0.0, "{row:?}");
            assert!(server + client <= ms * 1e3 * 1.01, "{row:?}");
            assert_eq!((&row["rounds"][..], &row["handshakes"][..]), ("1", "20"));
            assert_eq!(row["baseline"], "ours", "{row:?}");
            let ratio = number(row, "ratio_to_baseline");
            match implementation {
                "ours" => assert_eq!(row["ratio_to_baseline"], "1.0000", "{row:?}"),
                _ => assert!(ratio > 0.05 && ratio < 20.0, "{row:?}"),
            }
            let to_x25519 = number(row, "ratio_to_x25519");
            assert!(to_x25519 > 0.05 && to_x25519 < 20.0, "{row:?}");
        }
    }

    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(json["baseline"], "ours");
    let described = json["implementations"].as_array().unwrap();
    assert!(described
        .iter()
        .any(|d| d.as_str().unwrap().starts_with("mlkemtwin: ")));
    let round = &json["results"][0]["raw_rounds"][0];
    assert!(round["server_us_per_handshake"].as_f64().unwrap() > 0.0);
    assert!(round["client_us_per_handshake"].as_f64().unwrap() > 0.0);
}

#[test]
fn a_missing_module_is_an_error() {
    let (out, _, stderr) = tls_bench(&[
        "--handshakes",
        "20",
        "--rounds",
        "1",
        "--provider",
        "foo=/nonexistent",
    ]);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("tls-bench: error: foo: /nonexistent/foo.so is missing"),
        "{stderr}"
    );
    if !native_has_mlkem() {
        let (out, _, stderr) = tls_bench(&["--handshakes", "2", "--oqsprovider", "/nonexistent"]);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.contains("oqsprovider: /nonexistent/oqsprovider.so is missing"),
            "{stderr}"
        );
    }
}

/// The directory the linked libcrypto loads provider modules from.
fn modules_dir() -> PathBuf {
    /// `OPENSSL_MODULES_DIR`, OpenSSL_version's key for MODULESDIR.
    const OPENSSL_MODULES_DIR: i32 = 8;
    // SAFETY: OpenSSL_version returns a static string for every key.
    let text = unsafe { CStr::from_ptr(openssl_sys::OpenSSL_version(OPENSSL_MODULES_DIR)) };
    let text = text.to_string_lossy();
    // 3.0 writes `MODULESDIR: "DIR"`.
    let dir = text.split('"').nth(1).unwrap_or(&text);
    PathBuf::from(dir)
}

#[test]
fn a_provider_without_a_group_gets_an_na_row_and_fails_the_run() {
    let dir = modules_dir();
    if native_has_mlkem() || !dir.join("legacy.so").is_file() {
        eprintln!("skipped: needs OpenSSL 3.0-3.4 with legacy.so in {dir:?}");
        return;
    }
    let provider = format!("legacy={}", dir.display());
    let (out, stdout, stderr) = tls_bench(&[
        "--handshakes",
        "20",
        "--rounds",
        "1",
        "--groups",
        "X25519,MLKEM768",
        "--provider",
        &provider,
        "--baseline",
        "legacy",
    ]);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(
        stderr.contains("tls-bench: error: legacy has no group MLKEM768"),
        "{stderr}"
    );
    assert!(
        stdout.contains("n/a: legacy has no group MLKEM768\n"),
        "{stdout}"
    );
    let row = |group: &str, implementation: &str| {
        let found = stdout
            .lines()
            .find(|l| l.split_whitespace().take(2).eq([group, implementation]));
        found
            .unwrap_or_else(|| panic!("no {group} {implementation} row: {stdout}"))
            .split_whitespace()
            .collect::<Vec<_>>()
    };
    let na = ["n/a", "n/a", "n/a", "n/a", "n/a", "n/a", "0"];
    assert_eq!(row("MLKEM768", "legacy")[2..], na, "{stdout}");
    // Ours' MLKEM768 has no baseline to compare with; its X25519 has.
    assert_eq!(row("MLKEM768", "ours")[7], "n/a", "{stdout}");
    assert_ne!(row("X25519", "ours")[7], "n/a", "{stdout}");
}

#[test]
fn names_are_checked() {
    for bad in [
        &["--provider", "twin"][..],
        &["--provider", "=dir"],
        &["--provider", "a/b=dir"],
        &["--provider", "ours=dir"],
        &["--provider", "x=d", "--provider", "x=e"],
        &["--baseline", "nobody"],
        &["--baseline", "oqsprovider"],
        &["--connect", "h:1", "--provider", "x=d"],
    ] {
        let (out, _, stderr) = tls_bench(bad);
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {stderr}");
    }
}

/// The lib directory of the newest OpenSSL 3.5 that scripts/build-openssl.sh
/// cached, if built (a failure under CI).
fn openssl_35_lib() -> Option<PathBuf> {
    let lib = test_tools::openssl_cache::cached("3.5").map(|prefix| prefix.join("lib"));
    if lib.is_none() {
        assert!(!running_in_ci(), "OpenSSL 3.5 is not built");
        eprintln!("skipped: OpenSSL 3.5 is not built (scripts/build-openssl.sh 3.5)");
    }
    lib
}

/// On OpenSSL 3.5+ the default provider has the ML-KEM groups, and libssl
/// takes a group the preferred provider (`?provider=NAME`) lacks from it:
/// a row labelled NAME would measure OpenSSL's code. tls-bench checks which
/// provider served every handshake's key exchange: a provider with the
/// groups passes (our module as `--provider mlkem`, each group and alias),
/// one without them (the system's legacy provider) fails the run, naming
/// the group and the provider.
#[test]
fn on_openssl_35_every_row_measures_the_provider_it_names() {
    let Some(lib) = openssl_35_lib() else { return };
    let env = [("LD_LIBRARY_PATH", lib.as_path())];
    let mut groups: Vec<&str> = tls_groups::offered_everywhere()
        .flat_map(|g| g.names.iter().map(|n| n.to_str().unwrap()))
        .collect();
    // tls-bench runs a group once, whatever the case (mlkem768 is MLKEM768).
    groups.dedup_by(|a, b| a.eq_ignore_ascii_case(b));
    groups.push("X25519");
    let (groups, ours) = (
        groups.join(","),
        format!("mlkem={}", default_provider_dir().display()),
    );
    let args = ["--handshakes", "2", "--rounds", "1", "--groups", &groups];
    let (out, stdout, stderr) = tls_bench_with(&[&args[..], &["--provider", &ours]].concat(), &env);
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(stdout.starts_with("tls-bench: OpenSSL 3.5."), "{stdout}");
    assert!(
        stdout.contains(
            "every post-quantum handshake's key exchange checked to be the \
                         implementation's provider's"
        ),
        "{stdout}"
    );
    for group in groups.split(',') {
        let row = stdout
            .lines()
            .find(|l| l.split_whitespace().take(2).eq([group, "mlkem"]));
        let row = row.unwrap_or_else(|| panic!("no {group} mlkem row: {stdout}"));
        assert!(!row.contains("n/a"), "{row}");
    }
    assert!(
        stdout
            .contains("note: mlkem: X25519 is classical: provider default serves its key exchange"),
        "{stdout}"
    );

    let dir = modules_dir();
    if !dir.join("legacy.so").is_file() {
        assert!(!running_in_ci(), "no legacy.so in {dir:?}");
        eprintln!("skipped the provider without the groups: no legacy.so in {dir:?}");
        return;
    }
    let legacy = format!("legacy={}", dir.display());
    let args = [
        "--handshakes",
        "2",
        "--rounds",
        "1",
        "--groups",
        "X25519,MLKEM768",
    ];
    let (out, stdout, stderr) =
        tls_bench_with(&[&args[..], &["--provider", &legacy]].concat(), &env);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    let why = "legacy has no group MLKEM768: provider default served its key exchange, not legacy";
    assert!(
        stderr.contains(&format!("tls-bench: error: {why}")),
        "{stderr}"
    );
    assert!(stdout.contains(&format!("n/a: {why}\n")), "{stdout}");
    let row = stdout
        .lines()
        .find(|l| l.split_whitespace().take(2).eq(["MLKEM768", "legacy"]));
    assert!(row.is_some_and(|r| r.contains("n/a")), "{stdout}");
}
