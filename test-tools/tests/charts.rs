//! The `charts` binary on small CSVs: one SVG and one CSV per facet, the
//! defaults it takes from the `bench` and comparison headers, its file
//! names, bar labels and errors.

use std::path::PathBuf;
use std::process::{Command, Output};

const BENCH: &str = "\
parameter_set,implementation,operation,median_cycles,mean_cycles,min_cycles,ops_per_sec,ratio_vs_kem_core,iterations
ML-KEM-512,kem-core portable,keygen,30000,30100.5,29000,100000.0,,100
ML-KEM-512,kem-core avx2,keygen,12000,12100.0,11000,250000.0,,100
ML-KEM-512,kem-core portable,encaps,33000,33100.0,32000,90000.0,,100
ML-KEM-768,kem-core portable,keygen,50000,50100.0,49000,60000.0,,100
ML-KEM-768,kem-core portable,decaps,70000,70100.0,69000,40000.0,,100
ML-KEM-768,kem-core avx2,decaps,20000,20100.0,19000,150000.0,,100
";

const COMPARISON: &str = "\
algorithm,parameter_set,operation,implementation,openssl_version,ops_per_sec,seconds_per_op,ratio_to_baseline,rounds
ML-KEM-768,ML-KEM-768,keygen,ours,OpenSSL 3.5.5,73553,0.0000136,3.31,3
ML-KEM-768,ML-KEM-768,keygen,native,OpenSSL 3.5.5,22251,0.0000449,1.00,3
X25519MLKEM768,ML-KEM-768,keygen,ours,OpenSSL 3.5.5,20000,0.00005,1.5,3
X25519MLKEM768,ML-KEM-768,keygen,native,OpenSSL 3.5.5,,,,3
";

/// One run of `charts` in a fresh directory (unique per `name`) that holds
/// `input` as in.csv.
struct Run {
    dir: PathBuf,
    output: Output,
}

impl Run {
    fn new(name: &str, input: &str, args: &[&str]) -> Run {
        let dir = std::env::temp_dir().join(format!("charts-test-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create scratch dir");
        std::fs::write(dir.join("in.csv"), input).expect("write in.csv");
        let output = Command::new(env!("CARGO_BIN_EXE_charts"))
            .args(args)
            .current_dir(&dir)
            .output()
            .expect("run charts");
        Run { dir, output }
    }

    /// `charts --csv in.csv --out out ARGS`.
    fn charts(name: &str, input: &str, args: &[&str]) -> Run {
        Run::new(
            name,
            input,
            &[&["--csv", "in.csv", "--out", "out"], args].concat(),
        )
    }

    /// The stems of the files written, from the printed paths (each stem
    /// printed as .svg, then .csv).
    fn stems(&self) -> Vec<String> {
        let stderr = String::from_utf8_lossy(&self.output.stderr);
        assert!(self.output.status.success(), "charts failed: {stderr}");
        let stdout = String::from_utf8_lossy(&self.output.stdout);
        let paths: Vec<&str> = stdout.lines().collect();
        let stem = |pair: &[&str]| {
            let stem = pair[0].strip_suffix(".svg").expect("an SVG path first");
            assert_eq!(pair[1], format!("{stem}.csv"));
            stem.rsplit('/').next().unwrap().to_owned()
        };
        paths.chunks(2).map(stem).collect()
    }

    /// A file the run wrote under `out/`.
    fn file(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir.join("out").join(name)).expect(name)
    }

    /// The error line, for a run that must fail.
    fn error(&self) -> String {
        assert!(!self.output.status.success(), "charts succeeded");
        String::from_utf8_lossy(&self.output.stderr)
            .trim()
            .to_owned()
    }
}

/// Asserts that `svg` draws each of `texts` as one text element.
fn assert_draws(svg: &str, texts: &[&str]) {
    for text in texts {
        assert!(
            svg.contains(&format!(">\n{text}\n</text>")),
            "{text} missing"
        );
    }
}

#[test]
fn arguments() {
    let run = Run::new("default-out", BENCH, &["--csv", "in.csv"]);
    assert_eq!(run.stems(), ["ml-kem-512", "ml-kem-768"]);
    assert!(run.dir.join("charts/ml-kem-512.svg").is_file());
    let bad: [&[&str]; 5] = [
        &["--out", "o"],
        &["--csv"],
        &["--csv", "in.csv", "--bogus", "1"],
        &["--csv="],
        &["--csv", "in.csv", "--prefix="],
    ];
    for (i, args) in bad.into_iter().enumerate() {
        let run = Run::new(&format!("bad-{i}"), BENCH, args);
        assert_eq!(run.output.status.code(), Some(2), "{args:?}");
    }
}

#[test]
fn bars_labels_and_gaps() {
    let text = "algorithm,parameter_set,operation,implementation,ops_per_sec\n\
                ML-KEM-768,ML-KEM-768,keygen,ours,73553\n\
                ML-KEM-768,ML-KEM-768,encaps,ours,161804\n\
                ML-KEM-768,ML-KEM-768,keygen,native,22251\n\
                ML-KEM-768,ML-KEM-768,encaps,native,n/a\n";
    let run = Run::charts("labels", text, &[]);
    assert_eq!(run.stems(), ["ml-kem-768"]);
    let texts = [
        "73.6k",
        "162k",
        "22.3k",
        "n/a",
        "ML-KEM-768",
        "ours",
        "keygen",
        "0",
        "50k",
    ];
    assert_draws(&run.file("ml-kem-768.svg"), &texts);
    assert_draws(&run.file("ml-kem-768.svg"), &["ops/s (higher is better)"]);
    // Bar labels: three significant digits, small whole numbers as they are.
    let text = "operation,implementation,v\nk,a,999.7\nk,b,5\nk,c,0.25\nk,d,1500000\n";
    let svg = Run::charts("compact", text, &["--value", "v"]).file("in.svg");
    assert_draws(&svg, &["1.00k", "5", "0.250", "1.50M", "v"]);
}

#[test]
fn bench_csv_one_chart_per_parameter_set() {
    let run = Run::charts("bench", BENCH, &[]);
    assert_eq!(run.stems(), ["ml-kem-512", "ml-kem-768"]);
    let subtitle = "bench, in process · median of 100 timed runs · source: in.csv";
    let texts = ["ML-KEM-512", "median cycles (lower is better)", subtitle];
    assert_draws(&run.file("ml-kem-512.svg"), &texts);
    assert_draws(
        &run.file("ml-kem-512.svg"),
        &["kem-core portable", "kem-core avx2"],
    );
    assert_eq!(
        run.file("ml-kem-512.csv"),
        "operation,implementation,median_cycles\nkeygen,kem-core portable,30000\n\
         keygen,kem-core avx2,12000\nencaps,kem-core portable,33000\n"
    );
    assert_eq!(
        run.file("ml-kem-768.csv"),
        "operation,implementation,median_cycles\nkeygen,kem-core portable,50000\n\
         decaps,kem-core portable,70000\ndecaps,kem-core avx2,20000\n"
    );
}

#[test]
fn comparison_csv_splits_hybrids_by_algorithm() {
    let run = Run::charts("comparison", COMPARISON, &["--title", "openssl speed"]);
    assert_eq!(run.stems(), ["ml-kem-768", "x25519mlkem768"]);
    let subtitle = "OpenSSL 3.5.5 · median of 3 rounds · source: in.csv";
    let texts = [
        "openssl speed — ML-KEM-768",
        "ops/s (higher is better)",
        subtitle,
    ];
    assert_draws(&run.file("ml-kem-768.svg"), &texts);
    assert_eq!(
        run.file("ml-kem-768.csv"),
        "operation,implementation,ops_per_sec\nkeygen,ours,73553\nkeygen,native,22251\n"
    );
    // The unmeasured hybrid is a gap.
    assert_eq!(
        run.file("x25519mlkem768.csv"),
        "operation,implementation,ops_per_sec\nkeygen,ours,20000\nkeygen,native,\n"
    );
    assert_draws(&run.file("x25519mlkem768.svg"), &["n/a"]);
    // One algorithm per parameter set: one chart per parameter_set.
    let pure = "algorithm,parameter_set,operation,implementation,ops_per_sec\n\
                mlkem768,ML-KEM-768,keygen,ours,1\nmlkem512,ML-KEM-512,keygen,ours,2\n";
    assert_eq!(
        Run::charts("pure", pure, &[]).stems(),
        ["ml-kem-768", "ml-kem-512"]
    );
}

#[test]
fn explicit_columns_and_errors() {
    let args = [
        "--facet",
        "operation",
        "--group",
        "parameter_set",
        "--value",
        "ops_per_sec",
    ];
    let run = Run::charts("explicit", BENCH, &args);
    assert_eq!(run.stems(), ["keygen", "encaps", "decaps"]);
    assert_eq!(
        run.file("keygen.csv"),
        "parameter_set,implementation,ops_per_sec\nML-KEM-512,kem-core portable,100000.0\n\
         ML-KEM-512,kem-core avx2,250000.0\nML-KEM-768,kem-core portable,60000.0\n"
    );
    assert_draws(&run.file("keygen.svg"), &["ops_per_sec"]);

    let other = "operation,implementation,x\nkeygen,ours,abc\n";
    let cases: [(&str, &[&str], &str); 6] = [
        (BENCH, &["--facet", "implementation"], "in.csv: lines 2 and 5: two values for kem-core portable / keygen / kem-core portable; "),
        (BENCH, &["--group", "nope"], "--group: no column \"nope\" (columns: parameter_set, "),
        ("a,b\n1,2\n", &[], "no \"operation\" column, name one with --group"),
        (other, &[], "unknown CSV format, name the value column with --value"),
        (other, &["--value", "x"], "in.csv: line 2: column \"x\": not a number: \"abc\"\n"),
        ("operation,implementation,x\n", &[], "in.csv: no rows under the header\n"),
    ];
    for (i, (input, args, start)) in cases.into_iter().enumerate() {
        let error = Run::charts(&format!("error-{i}"), input, args).error() + "\n";
        assert!(
            error.starts_with(&format!("charts: error: {start}")),
            "{error}"
        );
    }
}

#[test]
fn file_names() {
    let text = "operation,implementation,ops\nkeygen,ours,5\nkeygen,theirs,n/a\n";
    let run = Run::charts("single", text, &["--value", "ops"]);
    assert_eq!(run.stems(), ["in"]);
    assert_draws(&run.file("in.svg"), &["in.csv"]);
    assert_eq!(run.file("in.csv"), text);
    for (i, (prefix, stem)) in [("Run 1", "run-1"), ("  R&D <x> ", "r-d-x")]
        .into_iter()
        .enumerate()
    {
        let run = Run::charts(
            &format!("prefix-{i}"),
            text,
            &["--value", "ops", "--prefix", prefix],
        );
        assert_eq!(run.stems(), [stem]);
    }
    // Unique stems, `chart` for a facet without letters or digits.
    let text = "parameter_set,operation,implementation,ops_per_sec,algorithm\n\
                A B,k,x,1,a\nA-B,k,x,1,a\n***,k,x,1,a\n";
    let run = Run::charts("stems", text, &["--facet", "parameter_set"]);
    assert_eq!(run.stems(), ["a-b", "a-b-2", "chart"]);
    let run = Run::charts(
        "stems-prefix",
        text,
        &["--facet", "parameter_set", "--prefix", "bench"],
    );
    assert_eq!(run.stems(), ["bench-a-b", "bench-a-b-2", "bench"]);
}
