//! The `openssl speed` parser (`test_tools::speed_output`) on the saved
//! outputs in `../shared/fixtures/openssl-speed` and on hand-made variants.

use std::path::PathBuf;

use test_tools::measure::Operation;
use test_tools::speed_output::{
    canonical_name, parameter_set, DoingLine, Source, SpeedRun, PARAMETER_SETS,
};

fn fixture(name: &str) -> String {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/fixtures/openssl-speed");
    let path = dir.join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read the speed fixture {} ({e}); the fixtures live in \
             ../shared/fixtures/openssl-speed next to the workspace",
            path.display()
        )
    })
}

/// Asserts the headline of `alg`/`op` and that it came from the table.
fn assert_headline(run: &SpeedRun, alg: &str, op: Operation, ops: f64, secs: f64) {
    let h = run.headline_for(alg, op).expect("headline");
    assert_eq!(h.source, Source::Table, "{alg} {op}");
    assert_eq!((h.ops_per_sec, h.seconds_per_op), (ops, secs), "{alg} {op}");
}

#[test]
fn default_openssl_3_5_4() {
    let run = SpeedRun::parse(&fixture("default-ossl-3.5.4.txt"));
    assert_eq!(run.version.as_deref(), Some("3.5.4"));
    assert_eq!(run.doing.len(), 18);
    assert_eq!(
        run.doing[0],
        DoingLine {
            algorithm: "ML-KEM-512".into(),
            operation: Operation::Keygen,
            seconds_requested: 2,
            count: 69943,
            elapsed: 1.92,
        }
    );
    assert_eq!(run.table.len(), 6);
    assert_eq!(
        run.algorithms(),
        [
            "ML-KEM-512",
            "ML-KEM-768",
            "ML-KEM-1024",
            "X25519MLKEM768",
            "SecP256r1MLKEM768",
            "SecP384r1MLKEM1024"
        ]
    );
    assert_headline(&run, "ML-KEM-512", Operation::Keygen, 36428.6, 0.000027);
    assert_headline(&run, "ML-KEM-768", Operation::Keygen, 23944.5, 0.000042);
    assert_headline(&run, "ML-KEM-1024", Operation::Decaps, 19249.2, 0.000052);
    assert_headline(
        &run,
        "SecP384r1MLKEM1024",
        Operation::Encaps,
        523.6,
        0.001910,
    );
    // 69943 ops in 1.92s is the table's 36428.6/s.
    let doing = run.doing[0].ops_per_sec().unwrap();
    assert!((doing - 36428.6).abs() < 0.05, "{doing}");
    assert_eq!(run.inconsistencies(), Vec::<String>::new());
    assert_eq!(run.headlines().len(), 18);
}

#[test]
fn oqsprovider_0_10_on_3_4_1() {
    let run = SpeedRun::parse(&fixture("oqsprovider-0.10-ossl-3.4.1.txt"));
    assert_eq!(run.version.as_deref(), Some("3.4.1"));
    assert_eq!(run.doing.len(), 9);
    assert_eq!(run.table.len(), 3);
    assert_eq!(run.algorithms(), ["mlkem512", "mlkem768", "mlkem1024"]);
    assert_headline(&run, "mlkem768", Operation::Keygen, 55637.7, 0.000018);
    // Looked up by another spelling of the same parameter set.
    assert_headline(&run, "ML-KEM-768", Operation::Encaps, 46416.1, 0.000022);
    assert_headline(&run, "MLKEM1024", Operation::Decaps, 36027.5, 0.000028);
    let d = &run.doing[3];
    assert_eq!((d.count, d.elapsed), (106268, 1.91));
    assert_eq!(run.inconsistencies(), Vec::<String>::new());
}

#[test]
fn oqsprovider_seed_on_3_4_1() {
    let run = SpeedRun::parse(&fixture("oqsprovider-seed-ossl-3.4.1.txt"));
    assert_eq!(run.version.as_deref(), Some("3.4.1"));
    assert_eq!(run.doing.len(), 9);
    assert_eq!(run.doing[0].seconds_requested, 10);
    assert_eq!((run.doing[8].count, run.doing[8].elapsed), (446131, 10.00));
    assert_headline(&run, "mlkem512", Operation::Keygen, 105974.2, 0.000009);
    assert_headline(&run, "mlkem1024", Operation::Decaps, 44613.1, 0.000022);
    // 1044906 ops in 9.86s = 105974.2/s.
    let doing = run.doing[0].ops_per_sec().unwrap();
    assert!((doing - 105974.2).abs() < 0.05, "{doing}");
    assert_eq!(run.inconsistencies(), Vec::<String>::new());
}

#[test]
fn lesec_plugin_variants_and_per_set_tables() {
    let run = SpeedRun::parse(&fixture("lesec-oqs-plugin-seed.txt"));
    assert_eq!(run.version, None);
    assert_eq!(run.doing.len(), 9);
    assert_eq!(
        run.doing[2],
        DoingLine {
            algorithm: "ML-KEM-512".into(),
            operation: Operation::Decaps,
            seconds_requested: 10,
            count: 993998,
            elapsed: 10.00,
        }
    );
    assert_eq!(run.doing[3].operation, Operation::Keygen);
    assert_eq!(run.doing[4].operation, Operation::Encaps);
    assert_eq!(run.table.len(), 3);
    assert_headline(&run, "ML-KEM-512", Operation::Keygen, 129890.0, 0.000008);
    assert_headline(&run, "ML-KEM-768", Operation::Encaps, 75639.6, 0.000013);
    assert_headline(&run, "ML-KEM-1024", Operation::Decaps, 46147.9, 0.000022);
    assert_eq!(run.inconsistencies(), Vec::<String>::new());
}

/// A real OpenSSL 3.5.5 run of `speed -seconds 1 rsa2048 ML-DSA-44
/// ML-KEM-512 X25519MLKEM768` (stderr, then stdout): RSA, RSA-KEM and
/// signature results around the ML-KEM ones.
const MIXED_3_5_5: &str = "\
Doing 2048 bits private rsa sign ops for 1s: 2752 2048 bits private RSA sign ops in 0.93s
Doing 2048 bits public rsa encrypt ops for 1s: 38587 2048 bits public RSA encrypt ops in 0.91s
Doing rsa2048 keygen ops for 1s: 19 rsa2048 KEM keygen ops in 0.95s
Doing ML-KEM-512 keygen ops for 1s: 35754 ML-KEM-512 KEM keygen ops in 0.99s
Doing ML-KEM-512 encaps ops for 1s: 52898 ML-KEM-512 KEM encaps ops in 0.98s
Doing ML-KEM-512 decaps ops for 1s: 38054 ML-KEM-512 KEM decaps ops in 1.00s
Doing X25519MLKEM768 keygen ops for 1s: 11439 X25519MLKEM768 KEM keygen ops in 0.99s
Doing rsa2048 keygen ops for 1s: 19 rsa2048 signature keygen ops in 1.00s
Doing ML-DSA-44 keygen ops for 1s: 7186 ML-DSA-44 signature keygen ops in 0.99s
Doing ML-DSA-44 signs ops for 1s: 1219 ML-DSA-44 signature sign ops in 1.00s
version: 3.5.5
built on: Sun Nov 29 19:52:10 2026 UTC
               sign    verify    encrypt   decrypt   sign/s verify/s  encr./s  decr./s
rsa  2048 bits 0.000338s 0.000023s 0.000024s 0.000368s   2959.1  44334.0  42403.3   2716.3
                           keygen    encaps    decaps keygens/s  encaps/s  decaps/s
                rsa2048 0.050000s 0.000024s 0.000334s      20.0   41570.1    2992.8
             ML-KEM-512 0.000028s 0.000019s 0.000026s   36115.2   53977.6   38054.0
         X25519MLKEM768 0.000087s 0.000102s 0.000078s   11554.5    9831.6   12829.0
                           keygen     signs    verify keygens/s    sign/s  verify/s
                rsa2048 0.052632s 0.000303s 0.000019s      19.0    3297.0   51891.0
              ML-DSA-44 0.000138s 0.000820s 0.000165s    7258.6    1219.0    6050.0
";

#[test]
fn other_algorithms_and_tables_are_skipped() {
    let run = SpeedRun::parse(MIXED_3_5_5);
    assert_eq!(run.version.as_deref(), Some("3.5.5"));
    // RSA and signature progress lines are not KEM results; RSA-KEM is.
    let doing: Vec<(&str, Operation)> = run
        .doing
        .iter()
        .map(|d| (d.algorithm.as_str(), d.operation))
        .collect();
    assert_eq!(
        doing,
        [
            ("rsa2048", Operation::Keygen),
            ("ML-KEM-512", Operation::Keygen),
            ("ML-KEM-512", Operation::Encaps),
            ("ML-KEM-512", Operation::Decaps),
            ("X25519MLKEM768", Operation::Keygen),
        ]
    );
    let rows: Vec<&str> = run.table.iter().map(|r| r.algorithm.as_str()).collect();
    assert_eq!(rows, ["rsa2048", "ML-KEM-512", "X25519MLKEM768"]);
    assert_headline(&run, "ML-KEM-512", Operation::Encaps, 53977.6, 0.000019);
    assert_headline(&run, "X25519MLKEM768", Operation::Decaps, 12829.0, 0.000078);
    assert_eq!(run.headline_for("ML-DSA-44", Operation::Keygen), None);
    // Every row, RSA-KEM's included, agrees with its progress line.
    assert_eq!(run.inconsistencies(), Vec::<String>::new());
}

#[test]
fn progress_lines_alone_give_headlines() {
    let run = SpeedRun::parse(
        "Doing mlkem768 keygen ops for 2s: 106268 mlkem768 KEM keygen ops in 1.91s\n\
         Doing 8704 bits ML-KEM-768 decap ops for 10s: 654224 ops in 10.00s\n",
    );
    let keygen = run.headline_for("ML-KEM-768", Operation::Keygen).unwrap();
    assert_eq!(keygen.source, Source::Doing);
    assert_eq!(keygen.algorithm, "mlkem768");
    assert!((keygen.ops_per_sec - 55637.7).abs() < 0.05);
    let decaps = run.headline_for("mlkem768", Operation::Decaps).unwrap();
    assert_eq!(
        (decaps.ops_per_sec, decaps.algorithm.as_str()),
        (65422.4, "ML-KEM-768")
    );
    assert_eq!(run.headline_for("ML-KEM-768", Operation::Encaps), None);
}

#[test]
fn disagreements_are_reported() {
    let run = SpeedRun::parse(
        "Doing ML-KEM-512 keygen ops for 2s: 69943 ML-KEM-512 KEM keygen ops in 1.92s\n\
         keygen encaps decaps keygens/s encaps/s decaps/s\n\
         ML-KEM-512 0.000027s 0.000019s 0.000050s 37000.0 51479.6 35973.0\n",
    );
    assert_eq!(
        run.inconsistencies(),
        [
            "ML-KEM-512 keygen: table has 37000 ops/s but the progress line has \
             69943 ops in 1.92s (36428.6 ops/s)",
            "ML-KEM-512 decaps: table has 0.00005s/op but 35973 ops/s",
        ]
    );
}

#[test]
fn malformed_and_unrelated_text_gives_an_empty_run() {
    let run = SpeedRun::parse(
        "speed: Unknown algorithm ML-KEM-768\n\
         Doing ML-KEM-512 keygen ops for 2s: many ML-KEM-512 KEM keygen ops in 1.92s\n\
         Doing ML-KEM-512 keygen ops for 2s: 5 ML-KEM-512 KEM keygen ops in -1s\n\
         keygen encaps decaps keygens/s encaps/s decaps/s\n\
         ML-KEM-512 0.000027s 0.000019s nan 37000.0 51479.6 35973.0\n\
         ML-KEM-512 0.000027s 0.000019s 0.000028s 37000.0 51479.6 35973.0\n",
    );
    // The bad row ends the table, so the next row is not read either.
    assert!(run.is_empty(), "{run:?}");
}

#[test]
fn canonical_names() {
    for (name, canonical) in [
        ("ML-KEM-768", "ML-KEM-768"),
        ("mlkem768", "ML-KEM-768"),
        ("MLKEM768", "ML-KEM-768"),
        ("mlkem512", "ML-KEM-512"),
        ("ml-kem-1024", "ML-KEM-1024"),
        ("X25519MLKEM768", "X25519MLKEM768"),
        ("x25519_mlkem768", "X25519MLKEM768"),
        ("SecP256r1MLKEM768", "SecP256r1MLKEM768"),
        ("p256_mlkem768", "SecP256r1MLKEM768"),
        ("SecP384r1MLKEM1024", "SecP384r1MLKEM1024"),
        ("p384_mlkem1024", "SecP384r1MLKEM1024"),
    ] {
        assert_eq!(canonical_name(name), Some(canonical), "{name}");
    }
    assert_eq!(canonical_name("rsa2048"), None);
    assert_eq!(canonical_name("mlkem"), None);
    assert_eq!(parameter_set("mlkem1024"), "ML-KEM-1024");
    assert_eq!(parameter_set("frodo640aes"), "frodo640aes");
    for set in PARAMETER_SETS {
        assert_eq!(canonical_name(set), Some(set));
    }
}
