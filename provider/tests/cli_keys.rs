//! Keys through the real `openssl` CLI on every OpenSSL of the matrix
//! (system 3.0, 3.5, 4.0): genpkey, pkey, -pubout, -text, DER and PEM,
//! encrypted PKCS#8, and deterministic keys from `-pkeyopt hexseed:`.

mod common;

use common::{hex_seed, matrix, ours, read, scratch, write, SETS};

#[test]
fn genpkey_pkey_round_trips_der_pem_and_text() {
    for ssl in matrix() {
        let dir = scratch(&format!("keys-{}", ssl.series));
        let p = ours();
        for set in SETS {
            ssl.ok(&dir, "genpkey", &p, &["-algorithm", set, "-out", "key.pem"]);
            let pem = String::from_utf8(read(&dir, "key.pem")).unwrap();
            assert!(pem.starts_with("-----BEGIN PRIVATE KEY-----\n"), "{pem}");

            // PEM -> DER -> PEM is the identity.
            ssl.ok(
                &dir,
                "pkey",
                &p,
                &["-in", "key.pem", "-outform", "DER", "-out", "key.der"],
            );
            ssl.ok(
                &dir,
                "pkey",
                &p,
                &["-inform", "DER", "-in", "key.der", "-out", "again.pem"],
            );
            assert_eq!(
                read(&dir, "key.pem"),
                read(&dir, "again.pem"),
                "{set} on {}",
                ssl.series
            );

            // Public key, PEM and DER, and back.
            ssl.ok(
                &dir,
                "pkey",
                &p,
                &["-in", "key.pem", "-pubout", "-out", "pub.pem"],
            );
            ssl.ok(
                &dir,
                "pkey",
                &p,
                &[
                    "-in", "key.pem", "-pubout", "-outform", "DER", "-out", "pub.der",
                ],
            );
            let spki = read(&dir, "pub.der");
            let ek_len = match set {
                "ML-KEM-512" => 800,
                "ML-KEM-768" => 1184,
                _ => 1568,
            };
            assert_eq!(spki.len(), ek_len + 22, "SPKI of {set}");
            ssl.ok(
                &dir,
                "pkey",
                &p,
                &[
                    "-pubin", "-inform", "DER", "-in", "pub.der", "-out", "pub2.pem",
                ],
            );
            assert_eq!(read(&dir, "pub.pem"), read(&dir, "pub2.pem"));

            // Text: the OpenSSL 3.5 layout.
            let text = ssl
                .ok(&dir, "pkey", &p, &["-in", "key.pem", "-text", "-noout"])
                .stdout;
            let text = String::from_utf8(text).unwrap();
            assert!(
                text.starts_with(&format!("{set} Private-Key:\nseed:\n    ")),
                "{text}"
            );
            assert!(
                text.contains("\ndk:\n    ") && text.contains("\nek:\n    "),
                "{text}"
            );
            let text = ssl
                .ok(
                    &dir,
                    "pkey",
                    &p,
                    &["-pubin", "-in", "pub.pem", "-text", "-noout"],
                )
                .stdout;
            assert!(String::from_utf8(text)
                .unwrap()
                .starts_with(&format!("{set} Public-Key:\nek:\n")));
        }
    }
}

#[test]
fn encrypted_pkcs8_round_trip() {
    for ssl in matrix() {
        let dir = scratch(&format!("epki-{}", ssl.series));
        let p = ours();
        ssl.ok(
            &dir,
            "genpkey",
            &p,
            &["-algorithm", "ML-KEM-1024", "-out", "key.pem"],
        );
        ssl.ok(
            &dir,
            "pkey",
            &p,
            &[
                "-in",
                "key.pem",
                "-aes256",
                "-passout",
                "pass:correct horse",
                "-out",
                "enc.pem",
            ],
        );
        let enc = String::from_utf8(read(&dir, "enc.pem")).unwrap();
        assert!(
            enc.starts_with("-----BEGIN ENCRYPTED PRIVATE KEY-----\n"),
            "{enc}"
        );
        ssl.ok(
            &dir,
            "pkey",
            &p,
            &[
                "-in",
                "enc.pem",
                "-passin",
                "pass:correct horse",
                "-out",
                "dec.pem",
            ],
        );
        assert_eq!(read(&dir, "key.pem"), read(&dir, "dec.pem"));
        // DER form too (pkey encrypts PEM only; pkcs8 -topk8 writes DER).
        ssl.ok(
            &dir,
            "pkcs8",
            &p,
            &[
                "-topk8",
                "-in",
                "key.pem",
                "-v2",
                "aes-128-cbc",
                "-passout",
                "pass:pw",
                "-outform",
                "DER",
                "-out",
                "enc.der",
            ],
        );
        ssl.ok(
            &dir,
            "pkey",
            &p,
            &[
                "-inform", "DER", "-in", "enc.der", "-passin", "pass:pw", "-out", "dec2.pem",
            ],
        );
        assert_eq!(read(&dir, "key.pem"), read(&dir, "dec2.pem"));
        // A wrong passphrase is a clean failure.
        let out = ssl.with_flags(
            &dir,
            "pkey",
            &p,
            &["-in", "enc.pem", "-passin", "pass:wrong", "-noout"],
        );
        assert!(out.status.code().is_some_and(|c| c != 0), "{out:?}");
    }
}

#[test]
fn hexseed_keys_are_identical_across_versions() {
    let seed = hex_seed(3);
    let mut reference: Option<(Vec<u8>, Vec<u8>)> = None;
    for ssl in matrix() {
        let dir = scratch(&format!("seed-{}", ssl.series));
        let p = ours();
        ssl.ok(
            &dir,
            "genpkey",
            &p,
            &[
                "-algorithm",
                "ML-KEM-768",
                "-pkeyopt",
                &format!("hexseed:{seed}"),
                "-out",
                "key.pem",
            ],
        );
        ssl.ok(
            &dir,
            "pkey",
            &p,
            &["-in", "key.pem", "-pubout", "-out", "pub.pem"],
        );
        let pair = (read(&dir, "key.pem"), read(&dir, "pub.pem"));
        match &reference {
            None => reference = Some(pair),
            Some(first) => assert_eq!(first, &pair, "OpenSSL {} differs", ssl.series),
        }
    }
}

/// Runs `openssl ARGS...` in `dir` with our provider and the default one
/// loaded by a config file whose provider section holds `setting` (3.0 has
/// no -provparam), and checks that it succeeds.
fn run_with_setting(ssl: &common::OpenSsl, dir: &std::path::Path, setting: &str, args: &[&str]) {
    let out = output_with_setting(ssl, dir, setting, args);
    common::assert_success(&out, setting);
}

/// `args` run with providers `default` and `mlkem` loaded through a config
/// file whose `[mlkem]` section has `setting` (and without `MLKEM_BACKEND`
/// in the environment): its output, success or not.
fn output_with_setting(
    ssl: &common::OpenSsl,
    dir: &std::path::Path,
    setting: &str,
    args: &[&str],
) -> std::process::Output {
    let name = format!("{}.cnf", setting.replace([' ', '='], ""));
    write(
        dir,
        &name,
        format!(
            "openssl_conf = init\n[init]\nproviders = prov\n[prov]\ndefault = dflt\n\
             mlkem = mlkem\n[dflt]\nactivate = 1\n[mlkem]\nactivate = 1\n{setting}\n"
        ),
    );
    ssl.command(dir)
        .env("OPENSSL_CONF", dir.join(&name))
        .env("OPENSSL_MODULES", common::module_dir())
        .env_remove("MLKEM_BACKEND")
        .args(args)
        .output()
        .unwrap()
}

/// `openssl list -providers -verbose` prints our build info, which names the
/// backend running: the CPU's preferred one, or the one the `backend`
/// setting names. A name kem-core does not have keeps the provider from
/// loading (OpenSSL then leaves it out of the list, and ML-KEM is missing).
#[test]
fn build_info_names_the_backend_the_setting_chooses() {
    let ssl = common::system();
    let dir = scratch("backend-setting");
    let list = ["list", "-providers", "-verbose"];
    let build_info = |setting: &str| {
        let out = output_with_setting(&ssl, &dir, setting, &list);
        common::assert_success(&out, setting);
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let line = stdout
            .lines()
            .find(|line| line.trim_start().starts_with("build info: mlkem-provider"));
        line.unwrap_or_else(|| panic!("{setting}: no build info of ours in {stdout}"))
            .to_owned()
    };
    let names = |kind: kem_core::BackendKind| format!("(kem-core, Rust; backend {})", kind.name());
    let preferred = build_info("# no backend setting");
    assert!(
        preferred.ends_with(&names(kem_core::preferred_backend())),
        "{preferred}"
    );
    for kind in kem_core::available_backends() {
        let line = build_info(&format!("backend = {}", kind.name()));
        assert!(line.ends_with(&names(kind)), "{line}");
    }

    let bad = "backend = no-such-backend";
    let out = output_with_setting(&ssl, &dir, bad, &list);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        !stdout.contains("mlkem-provider"),
        "{bad} still loaded: {stdout}"
    );
    let genpkey = ["genpkey", "-algorithm", "ML-KEM-768", "-out", "bad.pem"];
    let out = output_with_setting(&ssl, &dir, bad, &genpkey);
    assert!(!out.status.success(), "{bad}: genpkey succeeded");
}

#[test]
fn output_formats_follow_the_provider_config() {
    let ssl = common::system();
    let dir = scratch("formats");
    let p = ours();
    ssl.ok(
        &dir,
        "genpkey",
        &p,
        &[
            "-algorithm",
            "ML-KEM-512",
            "-pkeyopt",
            &format!("hexseed:{}", hex_seed(9)),
            "-out",
            "both.pem",
        ],
    );
    run_with_setting(
        &ssl,
        &dir,
        "ml-kem.output_formats = seed-only",
        &[
            "pkey", "-in", "both.pem", "-outform", "DER", "-out", "seed.der",
        ],
    );
    let der = read(&dir, "seed.der");
    // PrivateKeyInfo with a 66-byte [0] seed payload: 30 54 02 01 00 30 0b ... 04 42 80 40 <seed>
    assert_eq!(der.len(), 86, "{der:02x?}");
    assert_eq!(&der[der.len() - 66..der.len() - 64], &[0x80, 0x40]);
}

#[test]
fn keys_drop_their_seed_under_retain_seed_no() {
    let ssl = common::system();
    let dir = scratch("retain-seed");
    let seed = format!("hexseed:{}", hex_seed(11));
    let p = ours();
    let gen = ["-algorithm", "ML-KEM-512", "-pkeyopt", &seed];
    ssl.ok(
        &dir,
        "genpkey",
        &p,
        &[&gen[..], &["-out", "both.pem"]].concat(),
    );
    let with = |setting, args: &[&str]| run_with_setting(&ssl, &dir, setting, args);
    let der = ["-outform", "DER", "-out"];
    let decoded = [&["pkey", "-in", "both.pem"][..], &der, &["decoded.der"]].concat();
    let generated = [&["genpkey"][..], &gen, &der, &["generated.der"]].concat();
    let expanded = [&["pkey", "-in", "both.pem"][..], &der, &["expanded.der"]].concat();
    with("ml-kem.retain_seed = no", &decoded);
    with("ml-kem.retain_seed = no", &generated);
    with("ml-kem.output_formats = priv-only", &expanded);
    let both = [&["-in", "both.pem"][..], &der, &["both.der"]].concat();
    ssl.ok(&dir, "pkey", &p, &both);
    // Without the seed, the preferred seed-priv form falls back to the
    // expanded key alone: the same bytes as priv-only output.
    let expanded = read(&dir, "expanded.der");
    assert_ne!(
        read(&dir, "both.der"),
        expanded,
        "priv-only output kept the seed"
    );
    assert_eq!(
        read(&dir, "decoded.der"),
        expanded,
        "decoded key kept its seed"
    );
    assert_eq!(
        read(&dir, "generated.der"),
        expanded,
        "generated key kept its seed"
    );
}
