//! The NIST-format KAT generator against liboqs: the published SHA-256
//! digests (copied into the code), the full `.rsp` texts and `kats.json` in
//! the shared vector directory (when present), and the `kat` binary.
//!
//! The vector directory is `$MLKEM_VECTORS_DIR`, or else
//! `<CARGO_MANIFEST_DIR>/../../shared/vectors`. Missing files are skipped
//! with a message, except under CI (`CI=true` or `1`, see
//! `test_tools::ci`), where they fail the test.

use std::path::PathBuf;
use std::process::Command;

use kem_core::{MlKem1024, MlKem512, MlKem768, ParameterSet};
use test_tools::nist_kat::*;

fn vectors_dir() -> PathBuf {
    match std::env::var_os("MLKEM_VECTORS_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/vectors"),
    }
}

/// Reads a file of the vector directory, or returns `None` after saying why
/// (panicking instead when `CI=true`).
fn read_vector_file(relative: &str) -> Option<String> {
    let path = vectors_dir().join(relative);
    match std::fs::read_to_string(&path) {
        Ok(text) => Some(text),
        Err(err) => {
            let reason = format!("cannot read {}: {err}", path.display());
            if test_tools::ci::running_in_ci() {
                panic!("{reason} (required under CI, CI=true or 1; set MLKEM_VECTORS_DIR)");
            }
            eprintln!("skipping: {reason}");
            None
        }
    }
}

/// The first `entries` entries of a KAT text (entries are separated by a
/// blank line).
fn first_entries(text: &str, entries: usize) -> &str {
    match text.match_indices("\n\n").nth(entries - 1) {
        Some((i, _)) => &text[..=i],
        None => text,
    }
}

fn check_set<P: ParameterSet>(set: KatParams) {
    assert_eq!(set.name(), P::NAME);

    let all = generate_kat::<P>(KAT_COUNT);
    assert_eq!(
        sha256_hex(&all),
        set.expected_digest(KAT_COUNT).unwrap(),
        "{} all",
        P::NAME
    );

    let single = first_entries(&all, 1);
    assert_eq!(single.lines().count(), 6);
    assert_eq!(
        sha256_hex(single),
        set.expected_digest(1).unwrap(),
        "{} single",
        P::NAME
    );
    assert_eq!(single, generate_kat::<P>(1), "{} count 1 prefix", P::NAME);

    assert_eq!(all.matches("count = ").count(), KAT_COUNT);
    assert!(all.ends_with('\n') && !all.ends_with("\n\n"));
    assert!(!all.contains('\r'));

    let file = format!("nist-kat/{}.liboqs-kat.rsp", P::NAME);
    if let Some(expected) = read_vector_file(&file) {
        // Compare without dumping two megabytes on failure.
        assert_eq!(expected.len(), all.len(), "{file}: length");
        if let Some((n, (a, b))) = expected
            .lines()
            .zip(all.lines())
            .enumerate()
            .find(|(_, (a, b))| a != b)
        {
            panic!(
                "{file}: line {} differs:\n  file:      {:.80}…\n  generated: {:.80}…",
                n + 1,
                a,
                b
            );
        }
        assert!(expected == all, "{file}: bytes differ");
    }
}

#[test]
fn ml_kem_512_matches_liboqs() {
    check_set::<MlKem512>(KatParams::MlKem512);
}

#[test]
fn ml_kem_768_matches_liboqs() {
    check_set::<MlKem768>(KatParams::MlKem768);
}

#[test]
fn ml_kem_1024_matches_liboqs() {
    check_set::<MlKem1024>(KatParams::MlKem1024);
}

/// Finds `"key": "<value>"` inside `object` (a JSON object's text).
fn json_string_field<'a>(object: &'a str, key: &str) -> Option<&'a str> {
    let after_key = &object[object.find(&format!("\"{key}\""))? + key.len() + 2..];
    let after_colon = after_key.trim_start().strip_prefix(':')?.trim_start();
    let value = after_colon.strip_prefix('"')?;
    Some(&value[..value.find('"')?])
}

/// The `{"single": …, "all": …}` object stored under `"name"` in kats.json.
fn kats_json_entry<'a>(json: &'a str, name: &str) -> Option<&'a str> {
    let key = format!("\"{name}\"");
    let start = json.find(&key)? + key.len();
    let rest = json[start..].trim_start().strip_prefix(':')?.trim_start();
    let body = rest.strip_prefix('{')?;
    Some(&body[..body.find('}')?])
}

#[test]
fn digests_match_kats_json() {
    let Some(json) = read_vector_file("liboqs/kats.json") else {
        return;
    };
    for set in KatParams::ALL {
        let entry = kats_json_entry(&json, set.name())
            .unwrap_or_else(|| panic!("kats.json has no {} object", set.name()));
        assert_eq!(
            json_string_field(entry, "single"),
            Some(set.expected_digest(1).unwrap())
        );
        assert_eq!(
            json_string_field(entry, "all"),
            Some(set.expected_digest(KAT_COUNT).unwrap())
        );
    }
}

#[test]
fn json_helpers() {
    let json = r#"{ "Kyber512": {"all": "x", "single": "y"},
        "ML-KEM-512" : { "all" : "aa", "single":"bb" }, "ML-KEM-5120": "zz" }"#;
    let entry = kats_json_entry(json, "ML-KEM-512").unwrap();
    assert_eq!(json_string_field(entry, "all"), Some("aa"));
    assert_eq!(json_string_field(entry, "single"), Some("bb"));
    assert_eq!(kats_json_entry(json, "ML-KEM-768"), None);
}

fn kat_command() -> Command {
    Command::new(env!("CARGO_BIN_EXE_kat"))
}

#[test]
fn cli_single_to_stdout_and_check() {
    for set in KatParams::ALL {
        let bits = &set.name()["ML-KEM-".len()..];
        let out = kat_command()
            .args(["--params", bits, "--count", "1", "--check"])
            .output()
            .expect("run kat");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).expect("utf-8");
        assert_eq!(sha256_hex(&text), set.expected_digest(1).unwrap());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(set.expected_digest(1).unwrap()), "{stderr}");
    }
}

#[test]
fn cli_writes_files_and_checks_all() {
    let dir = std::env::temp_dir().join(format!("kat-cli-test-{}", std::process::id()));
    let out = kat_command()
        .args(["--check", "--out"])
        .arg(&dir)
        .output()
        .expect("run kat");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for set in KatParams::ALL {
        let path = dir.join(format!("{}.rsp", set.name()));
        let text = std::fs::read_to_string(&path).expect("rsp file written");
        let digest = sha256_hex(&text);
        assert_eq!(digest, set.expected_digest(KAT_COUNT).unwrap());
        assert!(stdout.contains(&format!("{digest}  {}", path.display())));
    }
    std::fs::remove_dir_all(&dir).expect("remove temp dir");
}

#[test]
fn cli_rejects_bad_arguments() {
    // Two entries have no published digest: --check refuses (usage error).
    let out = kat_command()
        .args(["--params", "512", "--count", "2", "--check"])
        .output()
        .expect("run kat");
    assert_eq!(out.status.code(), Some(2));

    for args in [
        &["--params", "640"][..],
        &["--bogus"],
        &["--count"],
        &["--params"],
        &["--count", "-1"],
        &["--count", "x"],
        &["--params", "512", "--params", "768"],
        &["--check=yes"],
        &["extra"],
        &["--out="],
    ] {
        let out = kat_command().args(args).output().expect("run kat");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.starts_with("error: ") && stderr.contains("--help"),
            "{stderr}"
        );
    }

    let out = kat_command().arg("--help").output().expect("run kat");
    assert!(out.status.success());
}

#[test]
fn hex_and_sha256() {
    assert_eq!(hex_upper(&[0x00, 0xAB, 0x5f]), "00AB5F");
    assert_eq!(
        sha256_hex("abc"),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
}

#[test]
fn names() {
    for set in KatParams::ALL {
        assert_eq!(KatParams::from_name(set.name()), Some(set));
    }
    assert_eq!(KatParams::from_name("768"), Some(KatParams::MlKem768));
    assert_eq!(
        KatParams::from_name("ml-kem-512"),
        Some(KatParams::MlKem512)
    );
    assert_eq!(KatParams::from_name("all"), None);
    assert_eq!(KatParams::from_name("ML-KEM-"), None);
}

#[test]
fn empty_and_layout() {
    assert_eq!(generate_kat::<MlKem512>(0), "");
    let text = generate_kat::<MlKem512>(2);
    let lines: Vec<&str> = text.split('\n').collect();
    // 2 × 6 lines, one separator, and the empty piece after the final '\n'.
    assert_eq!(lines.len(), 14);
    assert_eq!(lines[0], "count = 0");
    assert_eq!(lines[6], "");
    assert_eq!(lines[7], "count = 1");
    assert_eq!(lines[13], "");
    assert!(lines[12].starts_with("ss = "));
    assert!(!text.ends_with("\n\n"));
    let sizes = [
        ("seed", 48),
        ("pk", 800),
        ("sk", 1632),
        ("ct", 768),
        ("ss", 32),
    ];
    for (line, (label, len)) in lines[1..6].iter().zip(sizes) {
        let (l, v) = line.split_once(" = ").expect("label = value");
        assert_eq!(l, label);
        assert_eq!(v.len(), 2 * len, "{label}");
        assert!(v
            .bytes()
            .all(|c| c.is_ascii_digit() || (b'A'..=b'F').contains(&c)));
    }
}

#[test]
fn ml_kem_768_count_0_shared_secret() {
    let text = generate_kat::<MlKem768>(1);
    assert!(
        text.ends_with("\nss = AC865F839FEF1BF3D528DD7504BED2F64B5502B0FA81D1C32763658E4AAC5037\n")
    );
}

#[test]
fn single_digests() {
    for set in KatParams::ALL {
        assert_eq!(
            sha256_hex(&set.generate(1)),
            set.expected_digest(1).unwrap(),
            "{}",
            set.name()
        );
    }
}
