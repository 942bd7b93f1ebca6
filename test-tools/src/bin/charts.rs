//! `charts`: turns a CSV of measurements into SVG bar charts, one per
//! parameter set (or any other facet column), each with the CSV of the
//! numbers it shows.
//!
//! ```text
//! cargo run --release -p test-tools --bin charts -- --csv bench.csv --out charts
//! ```
//!
//! It knows the CSV of `bench` (median cycles per operation and
//! implementation) and the comparison CSV of `speed-compare` / `evp-bench`
//! (ops/s per operation and implementation); other CSVs work with
//! `--group`, `--series` and `--value`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use test_tools::cli;
use test_tools::csv_read::{CsvTable, Record};
use test_tools::svg_chart::BarChart;
use test_tools::table::{Align, Table};

const USAGE: &str = "\
usage: charts --csv FILE [--out DIR] [--prefix NAME] [--facet COL] [--group COL]
              [--series COL] [--value COL] [--title TEXT] [--value-label TEXT]

Draws one grouped bar chart per facet value (e.g. per parameter set) from a
CSV with a header row, and writes DIR/<facet>.svg plus DIR/<facet>.csv (the
group, series and value behind the chart). Prints the paths it wrote.

Known formats (the defaults follow from the header):
  bench:       parameter_set,implementation,operation,median_cycles,...
               groups = operation, series = implementation,
               value = median_cycles (\"median cycles (lower is better)\")
  comparison:  algorithm,parameter_set,operation,implementation,ops_per_sec,...
               (speed-compare, evp-bench): value = ops_per_sec
               (\"ops/s (higher is better)\")

options:
  --csv FILE          the input CSV (required)
  --out DIR           output folder, created if missing (default: charts)
  --prefix NAME       start every file name with NAME- (lowercased, runs of
                      other characters than a-z and 0-9 as one -)
  --facet COL         one chart per value of COL (default: parameter_set if
                      present, else algorithm; when a parameter set holds
                      several algorithms, e.g. hybrids, algorithm)
  --group COL         x-axis categories (default: operation)
  --series COL        bars in each group, one colour each (default:
                      implementation)
  --value COL         bar heights (default: by format, see above)
  --title TEXT        chart title; the facet value is appended
  --value-label TEXT  y-axis title
  -h, --help          this text

Groups and series keep the order they first appear in. Empty cells and n/a
are drawn as gaps; a (facet, group, series) that appears twice is an error.
";

/// The command line.
#[derive(Debug, Default, PartialEq, Eq)]
struct Args {
    csv: PathBuf,
    out: PathBuf,
    prefix: Option<String>,
    facet: Option<String>,
    group: Option<String>,
    series: Option<String>,
    value: Option<String>,
    title: Option<String>,
    value_label: Option<String>,
}

/// Parses the arguments after the program name. `Ok(None)` means `--help`.
fn parse_args(args: impl IntoIterator<Item = String>) -> Result<Option<Args>, String> {
    let mut parsed = Args {
        out: PathBuf::from("charts"),
        ..Args::default()
    };
    let mut csv = None;
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_owned(), Some(v.to_owned())),
            _ => (arg.clone(), None),
        };
        if matches!(flag.as_str(), "-h" | "--help") {
            return Ok(None);
        }
        let value = inline
            .or_else(|| args.next())
            .ok_or_else(|| format!("{flag} needs a value"))?;
        if value.is_empty() {
            return Err(format!("{flag} needs a non-empty value"));
        }
        let slot = match flag.as_str() {
            "--csv" => {
                csv = Some(PathBuf::from(value));
                continue;
            }
            "--out" => {
                parsed.out = PathBuf::from(value);
                continue;
            }
            "--prefix" => &mut parsed.prefix,
            "--facet" => &mut parsed.facet,
            "--group" => &mut parsed.group,
            "--series" => &mut parsed.series,
            "--value" => &mut parsed.value,
            "--title" => &mut parsed.title,
            "--value-label" => &mut parsed.value_label,
            _ => return Err(format!("unknown argument {arg:?}")),
        };
        *slot = Some(value);
    }
    parsed.csv = csv.ok_or("--csv FILE is required")?;
    Ok(Some(parsed))
}

/// What the CSV's header says about where it came from.
#[derive(Debug, PartialEq, Eq)]
enum Format {
    /// `bench`: median time per operation in this unit column.
    Bench { median_column: String },
    /// `speed-compare` / `evp-bench`: ops/s per operation.
    Comparison,
    /// Anything else.
    Other,
}

impl Format {
    fn detect(csv: &CsvTable) -> Self {
        let has = |c: &str| csv.column(c).is_some();
        if has("algorithm") && has("ops_per_sec") {
            return Self::Comparison;
        }
        let median = csv.headers().iter().find(|h| h.starts_with("median_"));
        match median {
            Some(m) if has("implementation") && has("operation") => Self::Bench {
                median_column: m.clone(),
            },
            _ => Self::Other,
        }
    }

    /// The default value column and its axis title.
    fn value(&self) -> Option<(String, String)> {
        match self {
            Self::Bench { median_column } => {
                let unit = median_column.trim_start_matches("median_");
                Some((
                    median_column.clone(),
                    format!("median {unit} (lower is better)"),
                ))
            }
            Self::Comparison => Some(("ops_per_sec".into(), "ops/s (higher is better)".into())),
            Self::Other => None,
        }
    }
}

/// The columns a chart is drawn from.
#[derive(Debug)]
struct Columns {
    facet: Option<usize>,
    group: usize,
    series: usize,
    value: usize,
    value_label: String,
}

/// Resolves the columns from the command line and the header.
fn choose_columns(args: &Args, csv: &CsvTable, format: &Format) -> Result<Columns, String> {
    let find = |name: &str, flag: &str| {
        csv.column(name).ok_or_else(|| {
            format!(
                "{flag}: no column {name:?} (columns: {})",
                csv.headers().join(", ")
            )
        })
    };
    let default_of = |name: &str, flag: &str| {
        csv.column(name).ok_or_else(|| {
            format!(
                "no {name:?} column, name one with {flag} (columns: {})",
                csv.headers().join(", ")
            )
        })
    };
    let group = match &args.group {
        Some(name) => find(name, "--group")?,
        None => default_of("operation", "--group")?,
    };
    let series = match &args.series {
        Some(name) => find(name, "--series")?,
        None => default_of("implementation", "--series")?,
    };
    let (value, default_label) = match (&args.value, format.value()) {
        (Some(name), known) => {
            let label = match known {
                Some((column, label)) if &column == name => label,
                _ => name.clone(),
            };
            (find(name, "--value")?, label)
        }
        (None, Some((column, label))) => (find(&column, "--value")?, label),
        (None, None) => {
            return Err(format!(
                "unknown CSV format, name the value column with --value (columns: {})",
                csv.headers().join(", ")
            ))
        }
    };
    let facet = match &args.facet {
        Some(name) => Some(find(name, "--facet")?),
        None => default_facet(csv),
    };
    Ok(Columns {
        facet,
        group,
        series,
        value,
        value_label: args.value_label.clone().unwrap_or(default_label),
    })
}

/// `parameter_set` if present, else `algorithm`; but `algorithm` when some
/// parameter set holds several algorithms (ML-KEM-768 and its hybrids).
fn default_facet(csv: &CsvTable) -> Option<usize> {
    let set = csv.column("parameter_set");
    let algorithm = csv.column("algorithm");
    match (set, algorithm) {
        (Some(s), Some(a)) => {
            let mut first: HashMap<&str, &str> = HashMap::new();
            let shared = csv.records().iter().any(|r| {
                let alg = first.entry(&r.fields[s]).or_insert(&r.fields[a]);
                *alg != r.fields[a]
            });
            Some(if shared { a } else { s })
        }
        (Some(s), None) => Some(s),
        (None, a) => a,
    }
}

/// One chart and the rows behind it.
#[derive(Debug)]
struct Facet {
    /// The facet value; `None` when the CSV is not split.
    name: Option<String>,
    chart: BarChart,
    /// group, series, value: what the chart shows.
    data: Table,
}

/// Parses a value cell: empty and `n/a` are gaps.
fn parse_value(cell: &str, line: usize, column: &str) -> Result<Option<f64>, String> {
    let cell = cell.trim();
    if cell.is_empty() || ["n/a", "na", "-"].contains(&cell.to_ascii_lowercase().as_str()) {
        return Ok(None);
    }
    cell.parse::<f64>()
        .map(Some)
        .map_err(|_| format!("line {line}: column {column:?}: not a number: {cell:?}"))
}

/// The values of `column` over `records` if they are all the same.
fn common_value<'a>(records: &[&'a Record], column: Option<usize>) -> Option<&'a str> {
    let c = column?;
    let first = records.first()?.fields[c].as_str();
    (!first.is_empty() && records.iter().all(|r| r.fields[c] == first)).then_some(first)
}

/// Splits the CSV by facet and builds one chart per facet value.
fn build_facets(
    csv: &CsvTable,
    cols: &Columns,
    format: &Format,
    source: &str,
    title: Option<&str>,
) -> Result<Vec<Facet>, String> {
    let headers = csv.headers();
    let mut order: Vec<Option<String>> = Vec::new();
    let mut by_facet: HashMap<Option<String>, Vec<&Record>> = HashMap::new();
    for record in csv.records() {
        let key = cols.facet.map(|f| record.fields[f].clone());
        if !by_facet.contains_key(&key) {
            order.push(key.clone());
        }
        by_facet.entry(key).or_default().push(record);
    }

    let mut facets = Vec::new();
    for name in order {
        let records = &by_facet[&name];
        let mut groups: Vec<String> = Vec::new();
        let mut series: Vec<String> = Vec::new();
        let mut cells: HashMap<(usize, usize), (Option<f64>, usize)> = HashMap::new();
        let mut data = Table::new(&[
            (&headers[cols.group], Align::Left),
            (&headers[cols.series], Align::Left),
            (&headers[cols.value], Align::Right),
        ]);
        for record in records {
            let f = &record.fields;
            let g = index_of(&mut groups, &f[cols.group]);
            let s = index_of(&mut series, &f[cols.series]);
            let value = parse_value(&f[cols.value], record.line, &headers[cols.value])?;
            if let Some((_, earlier)) = cells.insert((s, g), (value, record.line)) {
                return Err(format!(
                    "lines {earlier} and {}: two values for {}{} / {}; choose --facet, \
                     --group or --series so that each bar has one row",
                    record.line,
                    name.as_ref().map(|n| format!("{n} / ")).unwrap_or_default(),
                    f[cols.group],
                    f[cols.series]
                ));
            }
            data.push([
                f[cols.group].clone(),
                f[cols.series].clone(),
                f[cols.value].trim().to_owned(),
            ]);
        }
        let values = (0..series.len())
            .map(|s| {
                (0..groups.len())
                    .map(|g| cells.get(&(s, g)).and_then(|(v, _)| *v))
                    .collect()
            })
            .collect();
        let chart = BarChart {
            title: chart_title(title, name.as_deref(), source),
            subtitle: subtitle(records, csv, format, source),
            value_label: cols.value_label.clone(),
            groups,
            series,
            values,
        };
        facets.push(Facet { name, chart, data });
    }
    Ok(facets)
}

/// The position of `name` in `names`, appending it if new.
fn index_of(names: &mut Vec<String>, name: &str) -> usize {
    match names.iter().position(|n| n == name) {
        Some(i) => i,
        None => {
            names.push(name.to_owned());
            names.len() - 1
        }
    }
}

fn chart_title(title: Option<&str>, facet: Option<&str>, source: &str) -> String {
    match (title, facet) {
        (Some(t), Some(f)) => format!("{t} — {f}"),
        (Some(t), None) => t.to_owned(),
        (None, Some(f)) => f.to_owned(),
        (None, None) => source.to_owned(),
    }
}

/// Source file and the settings all rows of the facet share.
fn subtitle(records: &[&Record], csv: &CsvTable, format: &Format, source: &str) -> String {
    let mut parts = Vec::new();
    match format {
        Format::Bench { .. } => {
            parts.push("bench, in process".to_owned());
            if let Some(n) = common_value(records, csv.column("iterations")) {
                parts.push(format!("median of {n} timed runs"));
            }
        }
        Format::Comparison => {
            if let Some(v) = common_value(records, csv.column("openssl_version")) {
                parts.push(if v.starts_with("OpenSSL") {
                    v.to_owned()
                } else {
                    format!("OpenSSL {v}")
                });
            }
            if let Some(n) = common_value(records, csv.column("rounds")) {
                let plural = if n == "1" { "round" } else { "rounds" };
                parts.push(format!("median of {n} {plural}"));
            }
            if let Some(n) = common_value(records, csv.column("trials")) {
                parts.push(format!("median of {n} trials"));
            }
        }
        Format::Other => {}
    }
    parts.push(format!("source: {source}"));
    parts.join(" · ")
}

/// A file-name-safe form of `text`: lowercase letters and digits, other
/// runs as one `-` ("ML-KEM-768" → "ml-kem-768").
fn slug(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    while out.ends_with('-') {
        out.pop();
    }
    out
}

/// File stems for the facets: `[prefix-]slug`, unique (`-2`, `-3` on
/// clashes), `chart` for a facet without a usable name.
fn file_stems(facets: &[Facet], prefix: Option<&str>, source_stem: &str) -> Vec<String> {
    let prefix = prefix.map(slug).filter(|p| !p.is_empty());
    let mut used: Vec<String> = Vec::new();
    facets
        .iter()
        .map(|facet| {
            let base = match (&facet.name, &prefix) {
                (Some(n), _) => slug(n),
                (None, Some(_)) => String::new(),
                (None, None) => slug(source_stem),
            };
            let joined = match (&prefix, base.is_empty()) {
                (Some(p), true) => p.clone(),
                (Some(p), false) => format!("{p}-{base}"),
                (None, true) => "chart".to_owned(),
                (None, false) => base,
            };
            let mut stem = joined.clone();
            let mut k = 2;
            while used.contains(&stem) {
                stem = format!("{joined}-{k}");
                k += 1;
            }
            used.push(stem.clone());
            stem
        })
        .collect()
}

fn run(args: &Args) -> Result<Vec<PathBuf>, String> {
    let text = std::fs::read_to_string(&args.csv)
        .map_err(|e| format!("cannot read {}: {e}", args.csv.display()))?;
    let csv = CsvTable::parse(&text).map_err(|e| format!("{}: {e}", args.csv.display()))?;
    if csv.records().is_empty() {
        return Err(format!("{}: no rows under the header", args.csv.display()));
    }
    let format = Format::detect(&csv);
    let cols = choose_columns(args, &csv, &format)?;
    let source = args.csv.file_name().map_or_else(
        || args.csv.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let facets = build_facets(&csv, &cols, &format, &source, args.title.as_deref())
        .map_err(|e| format!("{}: {e}", args.csv.display()))?;
    let source_stem = Path::new(&source)
        .file_stem()
        .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
    let stems = file_stems(&facets, args.prefix.as_deref(), &source_stem);

    std::fs::create_dir_all(&args.out)
        .map_err(|e| format!("cannot create {}: {e}", args.out.display()))?;
    let mut written = Vec::new();
    for (facet, stem) in facets.iter().zip(&stems) {
        let svg = facet.chart.to_svg().map_err(|e| format!("{stem}: {e}"))?;
        for (ext, body) in [("svg", svg), ("csv", facet.data.to_csv())] {
            let path = args.out.join(format!("{stem}.{ext}"));
            cli::write_file(&path, &body)?;
            written.push(path);
        }
    }
    Ok(written)
}

fn main() -> ExitCode {
    cli::main_with(
        "charts",
        USAGE,
        parse_args(std::env::args().skip(1)),
        |args| {
            for path in run(&args)? {
                println!("{}", path.display());
            }
            Ok::<(), String>(())
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

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

    fn args(list: &[&str]) -> Result<Option<Args>, String> {
        parse_args(list.iter().map(|s| (*s).to_owned()))
    }

    fn facets_of(text: &str, extra: &[&str]) -> Result<Vec<Facet>, String> {
        let mut list = vec!["--csv", "in.csv"];
        list.extend_from_slice(extra);
        let a = args(&list)?.unwrap();
        let csv = CsvTable::parse(text).map_err(|e| e.to_string())?;
        let format = Format::detect(&csv);
        let cols = choose_columns(&a, &csv, &format)?;
        build_facets(&csv, &cols, &format, "in.csv", a.title.as_deref())
    }

    #[test]
    fn parses_arguments() {
        let a = args(&[
            "--csv", "b.csv", "--out=o", "--prefix", "bench", "--value", "x",
        ])
        .unwrap()
        .unwrap();
        assert_eq!(a.csv, PathBuf::from("b.csv"));
        assert_eq!(a.out, PathBuf::from("o"));
        assert_eq!(a.prefix.as_deref(), Some("bench"));
        assert_eq!(a.value.as_deref(), Some("x"));
        assert_eq!(a.facet, None);
        assert!(args(&["--csv", "b.csv", "-h"]).unwrap().is_none());
        assert_eq!(args(&["--out", "o"]).unwrap_err(), "--csv FILE is required");
        assert_eq!(args(&["--csv"]).unwrap_err(), "--csv needs a value");
        assert_eq!(
            args(&["--csv", "a", "--bogus", "1"]).unwrap_err(),
            "unknown argument \"--bogus\""
        );
        assert_eq!(
            args(&["--csv="]).unwrap_err(),
            "--csv needs a non-empty value"
        );
    }

    #[test]
    fn bench_csv_one_chart_per_parameter_set() {
        let facets = facets_of(BENCH, &[]).unwrap();
        assert_eq!(facets.len(), 2);
        let f = &facets[0];
        assert_eq!(f.name.as_deref(), Some("ML-KEM-512"));
        assert_eq!(f.chart.title, "ML-KEM-512");
        assert_eq!(f.chart.value_label, "median cycles (lower is better)");
        assert_eq!(f.chart.groups, ["keygen", "encaps"]);
        assert_eq!(f.chart.series, ["kem-core portable", "kem-core avx2"]);
        assert_eq!(
            f.chart.values,
            [
                vec![Some(30000.0), Some(33000.0)],
                vec![Some(12000.0), None]
            ]
        );
        assert_eq!(
            f.chart.subtitle,
            "bench, in process · median of 100 timed runs · source: in.csv"
        );
        assert_eq!(
            f.data.to_csv(),
            "operation,implementation,median_cycles\n\
             keygen,kem-core portable,30000\n\
             keygen,kem-core avx2,12000\n\
             encaps,kem-core portable,33000\n"
        );
        assert_eq!(facets[1].chart.groups, ["keygen", "decaps"]);
    }

    #[test]
    fn comparison_csv_splits_hybrids_by_algorithm() {
        let facets = facets_of(COMPARISON, &["--title", "openssl speed"]).unwrap();
        let names: Vec<_> = facets.iter().map(|f| f.name.as_deref().unwrap()).collect();
        assert_eq!(names, ["ML-KEM-768", "X25519MLKEM768"]);
        let f = &facets[0];
        assert_eq!(f.chart.title, "openssl speed — ML-KEM-768");
        assert_eq!(f.chart.value_label, "ops/s (higher is better)");
        assert_eq!(f.chart.series, ["ours", "native"]);
        assert_eq!(f.chart.values, [vec![Some(73553.0)], vec![Some(22251.0)]]);
        assert_eq!(
            f.chart.subtitle,
            "OpenSSL 3.5.5 · median of 3 rounds · source: in.csv"
        );
        // The unmeasured hybrid is a gap.
        assert_eq!(facets[1].chart.values, [vec![Some(20000.0)], vec![None]]);
        // Pure parameter sets only: one chart per parameter_set.
        let pure: String = COMPARISON
            .lines()
            .take(3)
            .map(|l| format!("{l}\n"))
            .collect();
        let csv = CsvTable::parse(&pure).unwrap();
        assert_eq!(default_facet(&csv), csv.column("parameter_set"));
    }

    #[test]
    fn explicit_columns_and_errors() {
        let facets = facets_of(
            BENCH,
            &[
                "--facet",
                "operation",
                "--group",
                "parameter_set",
                "--value",
                "ops_per_sec",
            ],
        )
        .unwrap();
        assert_eq!(facets.len(), 3);
        assert_eq!(facets[0].chart.groups, ["ML-KEM-512", "ML-KEM-768"]);
        assert_eq!(facets[0].chart.value_label, "ops_per_sec");

        let err = facets_of(BENCH, &["--facet", "implementation"]).unwrap_err();
        assert!(
            err.starts_with(
                "lines 2 and 5: two values for kem-core portable / keygen / kem-core portable"
            ),
            "{err}"
        );
        let err = facets_of(BENCH, &["--group", "nope"]).unwrap_err();
        assert!(err.starts_with("--group: no column \"nope\""), "{err}");
        let err = facets_of("a,b\n1,2\n", &[]).unwrap_err();
        assert!(err.starts_with("no \"operation\" column"), "{err}");
        let other = "operation,implementation,x\nkeygen,ours,abc\n";
        let err = facets_of(other, &[]).unwrap_err();
        assert!(err.starts_with("unknown CSV format"), "{err}");
        let err = facets_of(other, &["--value", "x"]).unwrap_err();
        assert_eq!(err, "line 2: column \"x\": not a number: \"abc\"");
    }

    #[test]
    fn single_chart_without_facet_column() {
        let text = "operation,implementation,ops\nkeygen,ours,5\nkeygen,theirs,n/a\n";
        let facets = facets_of(text, &["--value", "ops"]).unwrap();
        assert_eq!(facets.len(), 1);
        assert_eq!(facets[0].name, None);
        assert_eq!(facets[0].chart.title, "in.csv");
        assert_eq!(facets[0].chart.values, [vec![Some(5.0)], vec![None]]);
        assert_eq!(file_stems(&facets, None, "in"), ["in"]);
        assert_eq!(file_stems(&facets, Some("Run 1"), "in"), ["run-1"]);
    }

    #[test]
    fn slugs_and_unique_stems() {
        assert_eq!(slug("ML-KEM-768"), "ml-kem-768");
        assert_eq!(slug("  R&D <x> "), "r-d-x");
        assert_eq!(slug("***"), "");
        let text = "parameter_set,operation,implementation,ops_per_sec,algorithm\n\
                    A B,k,x,1,a\nA-B,k,x,1,a\n***,k,x,1,a\n";
        let facets = facets_of(text, &["--facet", "parameter_set"]).unwrap();
        assert_eq!(
            file_stems(&facets, Some("bench"), "in"),
            ["bench-a-b", "bench-a-b-2", "bench"]
        );
        assert_eq!(file_stems(&facets, None, "in"), ["a-b", "a-b-2", "chart"]);
    }
}
