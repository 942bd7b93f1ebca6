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

/// One run of `charts` in a fresh directory that holds `input` as in.csv.
struct Run {
    dir: PathBuf,
    output: Output,
}

impl Run {
    /// `charts ARGS` with in.csv written first; the run's directory is
    /// unique per test (`name`).
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
        let mut all = vec!["--csv", "in.csv", "--out", "out"];
        all.extend_from_slice(args);
        Run::new(name, input, &all)
    }

    /// The stems of the files written, from the printed paths (each stem
    /// printed as .svg, then .csv).
    fn stems(&self) -> Vec<String> {
        let stdout = String::from_utf8_lossy(&self.output.stdout);
        assert!(self.output.status.success(), "charts failed: {self:?}");
        let paths: Vec<&str> = stdout.lines().collect();
        let mut stems = Vec::new();
        for pair in paths.chunks(2) {
            let stem = pair[0].strip_suffix(".svg").expect("an SVG path first");
            assert_eq!(pair[1], format!("{stem}.csv"));
            let name = stem.rsplit('/').next().unwrap().to_owned();
            stems.push(name);
        }
        stems
    }

    /// A file the run wrote under `out/`.
    fn file(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir.join("out").join(name)).expect(name)
    }

    /// The error line, for a run that must fail.
    fn error(&self) -> String {
        assert!(!self.output.status.success(), "charts succeeded");
        let stderr = String::from_utf8_lossy(&self.output.stderr);
        stderr.trim().to_owned()
    }
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", String::from_utf8_lossy(&self.output.stderr))
    }
}

/// Whether `svg` draws `text` as one text element.
fn draws(svg: &str, text: &str) -> bool {
    svg.contains(&format!(">\n{text}\n</text>"))
}

#[test]
fn arguments() {
    let run = Run::new("default-out", BENCH, &["--csv", "in.csv"]);
    assert_eq!(run.stems(), ["ml-kem-512", "ml-kem-768"]);
    assert!(run.dir.join("charts/ml-kem-512.svg").is_file());
    for (i, bad) in [
        &["--out", "o"][..],
        &["--csv"],
        &["--csv", "in.csv", "--bogus", "1"],
        &["--csv="],
        &["--csv", "in.csv", "--prefix="],
    ]
    .into_iter()
    .enumerate()
    {
        let run = Run::new(&format!("bad-{i}"), BENCH, bad);
        assert_eq!(run.output.status.code(), Some(2), "{bad:?}: {run:?}");
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
    let svg = run.file("ml-kem-768.svg");
    for text in [
        "73.6k",
        "162k",
        "22.3k",
        "n/a",
        "ML-KEM-768",
        "ours",
        "keygen",
        "ops/s (higher is better)",
        "0",
        "50k",
    ] {
        assert!(draws(&svg, text), "{text} missing");
    }
    // Bar labels: three significant digits, small whole numbers as they are.
    let text = "operation,implementation,v\nk,a,999.7\nk,b,5\nk,c,0.25\nk,d,1500000\n";
    let svg = Run::charts("compact", text, &["--value", "v"]).file("in.svg");
    for text in ["1.00k", "5", "0.250", "1.50M", "v"] {
        assert!(draws(&svg, text), "{text} missing");
    }
}

#[test]
fn bench_csv_one_chart_per_parameter_set() {
    let run = Run::charts("bench", BENCH, &[]);
    assert_eq!(run.stems(), ["ml-kem-512", "ml-kem-768"]);
    let svg = run.file("ml-kem-512.svg");
    for text in [
        "ML-KEM-512",
        "median cycles (lower is better)",
        "bench, in process · median of 100 timed runs · source: in.csv",
        "kem-core portable",
        "kem-core avx2",
    ] {
        assert!(draws(&svg, text), "{text} missing");
    }
    assert_eq!(
        run.file("ml-kem-512.csv"),
        "operation,implementation,median_cycles\n\
         keygen,kem-core portable,30000\n\
         keygen,kem-core avx2,12000\n\
         encaps,kem-core portable,33000\n"
    );
    assert_eq!(
        run.file("ml-kem-768.csv"),
        "operation,implementation,median_cycles\n\
         keygen,kem-core portable,50000\n\
         decaps,kem-core portable,70000\n\
         decaps,kem-core avx2,20000\n"
    );
}

#[test]
fn comparison_csv_splits_hybrids_by_algorithm() {
    let run = Run::charts("comparison", COMPARISON, &["--title", "openssl speed"]);
    assert_eq!(run.stems(), ["ml-kem-768", "x25519mlkem768"]);
    let svg = run.file("ml-kem-768.svg");
    for text in [
        "openssl speed — ML-KEM-768",
        "ops/s (higher is better)",
        "OpenSSL 3.5.5 · median of 3 rounds · source: in.csv",
    ] {
        assert!(draws(&svg, text), "{text} missing");
    }
    assert_eq!(
        run.file("ml-kem-768.csv"),
        "operation,implementation,ops_per_sec\nkeygen,ours,73553\nkeygen,native,22251\n"
    );
    // The unmeasured hybrid is a gap.
    assert_eq!(
        run.file("x25519mlkem768.csv"),
        "operation,implementation,ops_per_sec\nkeygen,ours,20000\nkeygen,native,\n"
    );
    assert!(draws(&run.file("x25519mlkem768.svg"), "n/a"));
    // One algorithm per parameter set: one chart per parameter_set.
    let pure = "algorithm,parameter_set,operation,implementation,ops_per_sec\n\
                mlkem768,ML-KEM-768,keygen,ours,1\nmlkem512,ML-KEM-512,keygen,ours,2\n";
    let run = Run::charts("pure", pure, &[]);
    assert_eq!(run.stems(), ["ml-kem-768", "ml-kem-512"]);
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
        "parameter_set,implementation,ops_per_sec\n\
         ML-KEM-512,kem-core portable,100000.0\n\
         ML-KEM-512,kem-core avx2,250000.0\n\
         ML-KEM-768,kem-core portable,60000.0\n"
    );
    assert!(draws(&run.file("keygen.svg"), "ops_per_sec"));

    let error = |name: &str, input: &str, args: &[&str]| Run::charts(name, input, args).error();
    assert!(
        error("twice", BENCH, &["--facet", "implementation"]).starts_with(
            "charts: error: in.csv: lines 2 and 5: two values for kem-core portable / keygen / \
         kem-core portable"
        )
    );
    let err = error("no-group", BENCH, &["--group", "nope"]);
    assert!(
        err.starts_with("charts: error: --group: no column \"nope\""),
        "{err}"
    );
    let err = error("no-operation", "a,b\n1,2\n", &[]);
    assert!(
        err.starts_with("charts: error: no \"operation\" column"),
        "{err}"
    );
    let other = "operation,implementation,x\nkeygen,ours,abc\n";
    let err = error("unknown", other, &[]);
    assert!(
        err.starts_with("charts: error: unknown CSV format"),
        "{err}"
    );
    let err = error("not-a-number", other, &["--value", "x"]);
    assert_eq!(
        err,
        "charts: error: in.csv: line 2: column \"x\": not a number: \"abc\""
    );
    let err = error("empty", "operation,implementation,x\n", &[]);
    assert_eq!(err, "charts: error: in.csv: no rows under the header");
}

#[test]
fn single_chart_without_facet_column() {
    let text = "operation,implementation,ops\nkeygen,ours,5\nkeygen,theirs,n/a\n";
    let run = Run::charts("single", text, &["--value", "ops"]);
    assert_eq!(run.stems(), ["in"]);
    assert!(draws(&run.file("in.svg"), "in.csv"));
    assert_eq!(
        run.file("in.csv"),
        "operation,implementation,ops\nkeygen,ours,5\nkeygen,theirs,n/a\n"
    );
    let run = Run::charts(
        "single-prefix",
        text,
        &["--value", "ops", "--prefix", "Run 1"],
    );
    assert_eq!(run.stems(), ["run-1"]);
    let run = Run::charts("slug", text, &["--value", "ops", "--prefix", "  R&D <x> "]);
    assert_eq!(run.stems(), ["r-d-x"]);
}

#[test]
fn slugs_and_unique_stems() {
    let text = "parameter_set,operation,implementation,ops_per_sec,algorithm\n\
                A B,k,x,1,a\nA-B,k,x,1,a\n***,k,x,1,a\n";
    let args = ["--facet", "parameter_set"];
    let run = Run::charts("stems", text, &args);
    assert_eq!(run.stems(), ["a-b", "a-b-2", "chart"]);
    let run = Run::charts(
        "stems-prefix",
        text,
        &[&args[..], &["--prefix", "bench"]].concat(),
    );
    assert_eq!(run.stems(), ["bench-a-b", "bench-a-b-2", "bench"]);
}
