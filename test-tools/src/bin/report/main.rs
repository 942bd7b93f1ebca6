//! `report`: an independent-style measurement campaign of kem-core (the
//! ML-KEM library inside the `mlkem` provider), written as one Markdown
//! report plus its raw evidence:
//!
//! 1. basic information (algorithm, instances, parameter sets);
//! 2. the assessment environment (CPU, clocks, memory, OS, toolchain,
//!    OpenSSL, campaign start and end in UTC);
//! 3. functional testing: every instance against the NIST-format KATs
//!    before any timing, with a SHA-256 manifest of the KAT files;
//! 4. performance: mean cycles, mean time, ops/s, median trial and
//!    n = trials × iterations, per instance and operation (the operations
//!    and inputs of the `bench` tool), plus an optional `openssl speed`
//!    comparison from `speed-compare --csv`;
//! 5. resources: the provider module's loadable ELF segments, and baseline
//!    and peak RSS per operation measured in a child process;
//! 6. sizes of keys, ciphertext and shared secret;
//! 7. the share of each operation spent in SHA3/SHAKE and in the RNG, with
//!    calls per operation (kem-core's `profiling` feature);
//! 8. a raw evidence index: one JSON record per measurement.
//!
//! ```text
//! cargo run --release -p test-tools --features profiling --bin report -- --quick
//! ```

/// Runs `$body` with `$p` bound to the parameter-set type of `$set` (a
/// `KatParams`).
macro_rules! with_set {
    ($set:expr, $p:ident => $body:expr) => {
        match $set {
            $crate::KatParams::MlKem512 => {
                type $p = kem_core::MlKem512;
                $body
            }
            $crate::KatParams::MlKem768 => {
                type $p = kem_core::MlKem768;
                $body
            }
            $crate::KatParams::MlKem1024 => {
                type $p = kem_core::MlKem1024;
                $body
            }
        }
    };
}

mod functional;
mod markdown;
mod performance;
mod profile;
mod resources;

use std::fmt::Write as _;
use std::fs;
use std::path::PathBuf;
use std::process::ExitCode;

use kem_core::ParameterSet;
use serde_json::{json, Value};
use test_tools::kem_core_ops::{kem_core_backends, kem_core_label};
pub use test_tools::nist_kat::KatParams;
use test_tools::{cli, system_info};

use markdown::MdTable;

const USAGE: &str = "\
usage: report [--out DIR] [--trials T] [--iterations N] [--quick] [--params LIST]
              [--module PATH] [--vectors DIR] [--openssl BIN] [--speed-csv PATH]

Runs a measurement campaign of kem-core's backends and writes DIR/report.md,
DIR/evidence.jsonl (one JSON record per measurement) and DIR/performance.csv
(the bench tool's columns, for scripts/charts.sh).

options:
  --out DIR         output folder (default target/report/<UTC time>)
  --trials T        timed trials per measurement (default 10; 3 with --quick)
  --iterations N    timed calls per trial (default 1000; 100 with --quick)
  --params LIST     parameter sets: 512,768,1024 (default all)
  --module PATH     the provider module for the ELF segment sizes
                    (default target/provider/mlkem.so when it exists)
  --vectors DIR     the test vectors (default $MLKEM_VECTORS_DIR, else
                    ../shared/vectors beside the workspace)
  --openssl BIN     an openssl binary whose version the report records
  --speed-csv PATH  include an `openssl speed` comparison written by
                    `speed-compare --csv PATH`
  --quick           few trials and iterations, for a smoke run
  -h, --help        this text
";

/// The command line.
#[derive(Debug)]
pub struct Args {
    out: PathBuf,
    trials: usize,
    iterations: usize,
    sets: Vec<KatParams>,
    module: Option<PathBuf>,
    vectors: PathBuf,
    openssl: Option<PathBuf>,
    speed_csv: Option<PathBuf>,
}

fn parse_args(args: &[String]) -> Result<Option<Args>, String> {
    let root = cli::workspace_root();
    let mut quick = false;
    let (mut trials, mut iterations, mut sets) = (None, None, None);
    let (mut out, mut module, mut vectors, mut openssl, mut speed_csv) =
        (None, None, None, None, None);
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        let mut value = |name: &str| {
            rest.next()
                .cloned()
                .filter(|v| !v.is_empty())
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match arg.as_str() {
            "-h" | "--help" => return Ok(None),
            "--quick" => quick = true,
            "--trials" => trials = Some(cli::positive("--trials", &value("--trials")?)?),
            "--iterations" => {
                iterations = Some(cli::positive("--iterations", &value("--iterations")?)?)
            }
            "--params" => {
                let list = value("--params")?;
                let mut chosen = Vec::new();
                for item in list.split(',').map(str::trim) {
                    let set = KatParams::from_name(item)
                        .ok_or_else(|| format!("--params: unknown parameter set {item:?}"))?;
                    if !chosen.contains(&set) {
                        chosen.push(set);
                    }
                }
                sets = Some(chosen);
            }
            "--out" => out = Some(PathBuf::from(value("--out")?)),
            "--module" => module = Some(PathBuf::from(value("--module")?)),
            "--vectors" => vectors = Some(PathBuf::from(value("--vectors")?)),
            "--openssl" => openssl = Some(PathBuf::from(value("--openssl")?)),
            "--speed-csv" => speed_csv = Some(PathBuf::from(value("--speed-csv")?)),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    let default_module = root.join("target/provider/mlkem.so");
    Ok(Some(Args {
        out: out.unwrap_or_else(|| {
            root.join("target/report")
                .join(system_info::utc_now().replace(':', ""))
        }),
        trials: trials.unwrap_or(if quick { 3 } else { 10 }),
        iterations: iterations.unwrap_or(if quick { 100 } else { 1000 }),
        sets: sets.unwrap_or_else(|| KatParams::ALL.to_vec()),
        module: module.or_else(|| default_module.exists().then_some(default_module)),
        vectors: vectors
            .or_else(|| std::env::var_os("MLKEM_VECTORS_DIR").map(PathBuf::from))
            .unwrap_or_else(|| root.join("../shared/vectors")),
        openssl,
        speed_csv,
    }))
}

/// Collects the evidence records of the campaign, each stamped with the
/// command line and a short environment.
pub struct Evidence {
    command: Vec<String>,
    environment: Value,
    records: Vec<Value>,
}

impl Evidence {
    fn new(environment: Value) -> Self {
        Evidence {
            command: std::env::args().collect(),
            environment,
            records: Vec::new(),
        }
    }

    /// Adds one measurement: `id` names it uniquely, `data` holds its
    /// parameters and every trial.
    pub fn push(&mut self, section: &str, id: String, data: Value) -> String {
        self.records.push(json!({
            "id": id,
            "section": section,
            "command": self.command,
            "environment": self.environment,
            "data": data,
        }));
        id
    }

    fn to_jsonl(&self) -> String {
        self.records
            .iter()
            .map(|r| format!("{r}\n"))
            .collect::<String>()
    }
}

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    if argv.first().map(String::as_str) == Some(resources::CHILD_FLAG) {
        return resources::child_main(&argv[1..]);
    }
    cli::main_with("report", USAGE, parse_args(&argv), |args| {
        match run(&args)? {
            true => Ok(()),
            false => Err("functional testing FAILED; see the report".to_owned()),
        }
    })
}

/// Runs the campaign and writes the files; `Ok(false)` when a KAT failed
/// (the report is still written, without timings).
fn run(args: &Args) -> Result<bool, String> {
    let start = system_info::utc_now();
    fs::create_dir_all(&args.out)
        .map_err(|e| format!("cannot create {}: {e}", args.out.display()))?;
    let instances = kem_core_backends();
    let labels: Vec<String> = instances.iter().map(|&b| kem_core_label(b)).collect();
    let facts = system_info::facts();
    let tsc_hz = test_tools::cycles::counter_frequency(std::time::Duration::from_millis(200));
    let openssl_version = args
        .openssl
        .as_ref()
        .and_then(|bin| system_info::first_line_of(&[bin.to_str()?, "version"]));
    let environment = json!({
        "cpu": system_info::cpu_model(),
        "kernel": facts.iter().find(|(l, _)| *l == "kernel").and_then(|(_, v)| v.clone()),
        "rustc": system_info::rustc_version(),
        "counter": test_tools::cycles::UNIT,
        "counter_hz": tsc_hz,
        "linked_openssl": openssl::version::version(),
        "campaign_start": start,
    });
    let mut evidence = Evidence::new(environment);

    eprintln!("report: functional testing (KATs) of {}", labels.join(", "));
    let functional = functional::run(args, &instances, &mut evidence);
    let mut sections = Vec::new();
    sections.push(basic_information(args, &labels));
    let mut body = Vec::new();
    body.push(functional.markdown.clone());
    let passed = functional.passed;
    let mut csv = None;
    if passed {
        // Inputs that can be wrong are read before the long measurements.
        let speed = match &args.speed_csv {
            Some(path) => Some(performance::speed_comparison(path, &mut evidence)?),
            None => None,
        };
        let module = resources::module_section(args, &mut evidence)?;
        let perf = performance::run(args, &instances, tsc_hz, &mut evidence);
        body.push(perf.markdown);
        csv = Some(perf.csv);
        body.extend(speed);
        body.push(resources::run(args, &instances, module, &mut evidence)?);
        body.push(sizes(args));
        body.push(profile::run(args, &instances, tsc_hz, &mut evidence));
    } else {
        body.push(
            "## 4. Performance\n\nNot measured: an instance failed its known-answer tests.\n"
                .to_owned(),
        );
    }
    let end = system_info::utc_now();
    sections.push(environment_section(
        &facts,
        tsc_hz,
        openssl_version,
        &start,
        &end,
    ));
    sections.extend(body);

    let evidence_path = args.out.join("evidence.jsonl");
    let jsonl = evidence.to_jsonl();
    fs::write(&evidence_path, &jsonl)
        .map_err(|e| format!("cannot write {}: {e}", evidence_path.display()))?;
    sections.push(evidence_section(&evidence, &jsonl));
    if let Some(csv) = csv {
        let path = args.out.join("performance.csv");
        fs::write(&path, csv).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    let mut report = String::from(
        "# ML-KEM measurement report: kem-core, the library of the `mlkem` OpenSSL provider\n\n",
    );
    let _ = writeln!(
        report,
        "Campaign {start} to {end} (UTC). Every figure below has a record in `evidence.jsonl`; \
         `performance.csv` holds section 4 in the `bench` tool's columns.\n"
    );
    report.push_str(&sections.join("\n"));
    let report_path = args.out.join("report.md");
    fs::write(&report_path, report)
        .map_err(|e| format!("cannot write {}: {e}", report_path.display()))?;
    println!("{}", report_path.display());
    Ok(passed)
}

fn basic_information(args: &Args, labels: &[String]) -> String {
    let mut out = String::from("## 1. Basic information\n\n");
    out.push_str(
        "- **Algorithm:** ML-KEM, the module-lattice-based key-encapsulation mechanism of \
         FIPS 203 (final, August 2024).\n",
    );
    let _ = writeln!(
        out,
        "- **Implementation:** kem-core {} (the ML-KEM library of the `mlkem` provider). \
         Instances are its backends that this CPU runs, chosen at run time: {}. The \
         portable backend is the reference the others must match byte for byte.",
        env!("CARGO_PKG_VERSION"),
        labels
            .iter()
            .map(|l| format!("`{l}`"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    out.push_str("- **Parameter sets:**\n\n");
    let mut table = MdTable::new(&["set", "k", "η1", "η2", "du", "dv", "NIST category"]);
    for set in &args.sets {
        let (k, eta1, eta2, du, dv) = with_set!(*set, P => (P::K, P::ETA1, P::ETA2, P::DU, P::DV));
        let category = match set {
            KatParams::MlKem512 => 1,
            KatParams::MlKem768 => 3,
            KatParams::MlKem1024 => 5,
        };
        table.row([
            set.name().to_owned(),
            k.to_string(),
            eta1.to_string(),
            eta2.to_string(),
            du.to_string(),
            dv.to_string(),
            category.to_string(),
        ]);
    }
    out.push_str(&table.render());
    out
}

fn environment_section(
    facts: &[system_info::Fact],
    tsc_hz: f64,
    openssl_version: Option<String>,
    start: &str,
    end: &str,
) -> String {
    let mut out = String::from("## 2. Assessment environment\n\n");
    let mut table = MdTable::new(&["item", "value"]);
    for (label, value) in facts {
        table.row([
            (*label).to_owned(),
            value.clone().unwrap_or_else(|| "not readable".to_owned()),
        ]);
    }
    table.row([
        "cores used by the measurements".to_owned(),
        "1 (one thread; not pinned)".to_owned(),
    ]);
    table.row([
        "cycle counter".to_owned(),
        format!(
            "{} at {:.3} GHz (measured against the wall clock)",
            test_tools::cycles::UNIT,
            tsc_hz / 1e9
        ),
    ]);
    table.row([
        "OpenSSL linked by the tools".to_owned(),
        openssl::version::version().to_owned(),
    ]);
    if let Some(version) = openssl_version {
        table.row(["OpenSSL binary given".to_owned(), version]);
    }
    table.row(["campaign start (UTC)".to_owned(), start.to_owned()]);
    table.row(["campaign end (UTC)".to_owned(), end.to_owned()]);
    out.push_str(&table.render());
    out
}

fn sizes(args: &Args) -> String {
    let mut out = String::from(
        "## 6. Sizes\n\nBytes, as FIPS 203 fixes them (checked against kem-core's outputs in \
         section 3).\n\n",
    );
    let mut table = MdTable::new(&[
        "set",
        "public key (ek)",
        "secret key (dk)",
        "ciphertext",
        "shared secret",
    ]);
    for set in &args.sets {
        let (ek, dk, ct) = with_set!(*set, P => (P::EK_LEN, P::DK_LEN, P::CT_LEN));
        table.row([
            set.name().to_owned(),
            ek.to_string(),
            dk.to_string(),
            ct.to_string(),
            kem_core::SHARED_SECRET_LEN.to_string(),
        ]);
    }
    out.push_str(&table.render());
    out.push_str(
        "\nThe secret key is the expanded FIPS 203 form; the provider can also store the \
         64-byte seed d ‖ z instead (`ml-kem.retain_seed`).\n",
    );
    out
}

fn evidence_section(evidence: &Evidence, jsonl: &str) -> String {
    let mut out = String::from("## 8. Raw evidence index\n\n");
    let _ = writeln!(
        out,
        "`evidence.jsonl`: {} records, SHA-256 `{}`. Each record holds its `id`, the \
         `section`, the `command` line of this run, a short `environment` and the `data` \
         (parameters and every trial).\n",
        evidence.records.len(),
        test_tools::nist_kat::sha256_hex(jsonl)
    );
    let mut table = MdTable::new(&["section", "records", "first id"]);
    let mut seen: Vec<(&str, usize, &str)> = Vec::new();
    for record in &evidence.records {
        let section = record["section"].as_str().unwrap_or("?");
        let id = record["id"].as_str().unwrap_or("?");
        match seen.iter_mut().find(|(s, _, _)| *s == section) {
            Some(entry) => entry.1 += 1,
            None => seen.push((section, 1, id)),
        }
    }
    for (section, count, first) in seen {
        table.row([section.to_owned(), count.to_string(), format!("`{first}`")]);
    }
    out.push_str(&table.render());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Option<Args>, String> {
        parse_args(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn arguments() {
        let a = parse(&["--quick", "--params", "768,ML-KEM-512", "--out", "x"])
            .unwrap()
            .unwrap();
        assert_eq!((a.trials, a.iterations), (3, 100));
        assert_eq!(a.sets, [KatParams::MlKem768, KatParams::MlKem512]);
        assert_eq!(a.out, PathBuf::from("x"));
        let a = parse(&["--trials", "4", "--iterations", "7"])
            .unwrap()
            .unwrap();
        assert_eq!((a.trials, a.iterations, a.sets.len()), (4, 7, 3));
        assert!(parse(&["--help"]).unwrap().is_none());
        assert!(parse(&["--trials", "0"]).unwrap_err().contains("above 0"));
        assert!(parse(&["--params", "999"]).unwrap_err().contains("999"));
        assert!(parse(&["--out"]).unwrap_err().contains("needs a value"));
        assert!(parse(&["--bogus"]).unwrap_err().contains("--bogus"));
    }
}
