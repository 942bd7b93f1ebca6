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

mod functional;
mod performance;
mod profile;
mod resources;

use std::fmt::Write as _;
use std::fs;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use kem_core::ParameterSet;
use serde_json::{json, Value};
use test_tools::cli::{self, parameter_set, positive, sets_or_all};
use test_tools::kem_core_ops::{kem_core_backends, kem_core_label};
pub use test_tools::nist_kat::KatParams;
use test_tools::table::Table;
use test_tools::{system_info, timer, with_set};

/// Runs a measurement campaign of kem-core's backends and writes
/// DIR/report.md, DIR/evidence.jsonl (one JSON record per measurement) and
/// DIR/performance.csv (the bench tool's columns, for scripts/charts.sh).
#[derive(Parser, Debug)]
#[command(name = "report")]
pub struct Args {
    /// Output folder [default: target/report/<UTC time>]
    #[arg(long, value_name = "DIR", value_parser = cli::path)]
    out: Option<PathBuf>,
    /// Timed trials per measurement [default: 10; 3 with --quick]
    #[arg(long, visible_alias = "rounds", value_name = "T", value_parser = positive)]
    trials: Option<usize>,
    /// Timed calls per trial [default: 1000; 100 with --quick]
    #[arg(long, value_name = "N", value_parser = positive)]
    iterations: Option<usize>,
    /// Parameter sets: 512,768,1024 [default: all]
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = parameter_set)]
    params: Vec<KatParams>,
    /// The provider module for the ELF segment sizes [default:
    /// target/provider/mlkem.so when it exists]
    #[arg(long, value_name = "PATH", value_parser = cli::path)]
    module: Option<PathBuf>,
    /// The test vectors [default: $MLKEM_VECTORS_DIR, else ../shared/vectors
    /// beside the workspace]
    #[arg(long, value_name = "DIR", value_parser = cli::path)]
    vectors: Option<PathBuf>,
    /// An openssl binary whose version the report records
    #[arg(long, value_name = "BIN", value_parser = cli::path)]
    openssl: Option<PathBuf>,
    /// Include an `openssl speed` comparison written by `speed-compare --csv
    /// PATH`
    #[arg(long, value_name = "PATH", value_parser = cli::path)]
    speed_csv: Option<PathBuf>,
    /// Few trials and iterations, for a smoke run
    #[arg(long)]
    quick: bool,
    #[arg(skip)]
    sets: Vec<KatParams>,
}

impl Args {
    /// Fills in the defaults.
    fn resolve(mut self) -> Self {
        let root = cli::workspace_root();
        let stamp = system_info::utc_now().replace(':', "");
        self.out = Some(
            self.out
                .unwrap_or_else(|| root.join("target/report").join(stamp)),
        );
        self.trials = Some(self.trials.unwrap_or(if self.quick { 3 } else { 10 }));
        self.iterations = Some(
            self.iterations
                .unwrap_or(if self.quick { 100 } else { 1000 }),
        );
        self.sets = sets_or_all(&self.params);
        let default_module = root.join("target/provider/mlkem.so");
        self.module = self
            .module
            .or_else(|| default_module.exists().then_some(default_module));
        let vectors = std::env::var_os("MLKEM_VECTORS_DIR").map(PathBuf::from);
        self.vectors = Some(
            self.vectors
                .or(vectors)
                .unwrap_or_else(|| root.join("../shared/vectors")),
        );
        self
    }

    fn out(&self) -> &std::path::Path {
        self.out.as_deref().expect("resolved")
    }

    /// Timed trials per measurement.
    pub fn trials(&self) -> usize {
        self.trials.expect("resolved")
    }

    /// Timed calls per trial.
    pub fn iterations(&self) -> usize {
        self.iterations.expect("resolved")
    }

    /// The test-vector folder.
    pub fn vectors(&self) -> &std::path::Path {
        self.vectors.as_deref().expect("resolved")
    }
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
    let args = Args::parse().resolve();
    let result = run(&args).and_then(|passed| match passed {
        true => Ok(()),
        false => Err("functional testing FAILED; see the report".to_owned()),
    });
    cli::exit("report", result)
}

/// Runs the campaign and writes the files; `Ok(false)` when a KAT failed
/// (the report is still written, without timings).
fn run(args: &Args) -> Result<bool, String> {
    let start = system_info::utc_now();
    fs::create_dir_all(args.out())
        .map_err(|e| format!("cannot create {}: {e}", args.out().display()))?;
    let instances = kem_core_backends();
    let labels: Vec<String> = instances.iter().map(|&b| kem_core_label(b)).collect();
    let facts = system_info::facts();
    let tsc_hz = timer::counter_frequency(std::time::Duration::from_millis(200));
    let openssl_version = args
        .openssl
        .as_ref()
        .and_then(|bin| system_info::first_line_of(&[bin.to_str()?, "version"]));
    let environment = json!({
        "cpu": system_info::cpu_model(),
        "kernel": facts.iter().find(|(l, _)| *l == "kernel").and_then(|(_, v)| v.clone()),
        "rustc": system_info::rustc_version(),
        "counter": timer::UNIT,
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

    let evidence_path = args.out().join("evidence.jsonl");
    let jsonl = evidence.to_jsonl();
    fs::write(&evidence_path, &jsonl)
        .map_err(|e| format!("cannot write {}: {e}", evidence_path.display()))?;
    sections.push(evidence_section(&evidence, &jsonl));
    if let Some(csv) = csv {
        let path = args.out().join("performance.csv");
        cli::write_file(&path, &csv)?;
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
    let report_path = args.out().join("report.md");
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
    let mut table = Table::titled(&["set", "k", "η1", "η2", "du", "dv", "NIST category"]);
    for set in &args.sets {
        let (k, eta1, eta2, du, dv) = with_set!(*set, P => (P::K, P::ETA1, P::ETA2, P::DU, P::DV));
        let category = match set {
            KatParams::MlKem512 => 1,
            KatParams::MlKem768 => 3,
            KatParams::MlKem1024 => 5,
        };
        table.push_text([
            set.name().to_owned(),
            k.to_string(),
            eta1.to_string(),
            eta2.to_string(),
            du.to_string(),
            dv.to_string(),
            category.to_string(),
        ]);
    }
    out.push_str(&table.markdown());
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
    let mut table = Table::titled(&["item", "value"]);
    for (label, value) in facts {
        table.push_text([
            (*label).to_owned(),
            value.clone().unwrap_or_else(|| "not readable".to_owned()),
        ]);
    }
    table.push_text([
        "cores used by the measurements".to_owned(),
        "1 (one thread; not pinned)".to_owned(),
    ]);
    table.push_text([
        "cycle counter".to_owned(),
        format!(
            "{} at {:.3} GHz (measured against the wall clock)",
            timer::UNIT,
            tsc_hz / 1e9
        ),
    ]);
    table.push_text([
        "OpenSSL linked by the tools".to_owned(),
        openssl::version::version().to_owned(),
    ]);
    if let Some(version) = openssl_version {
        table.push_text(["OpenSSL binary given".to_owned(), version]);
    }
    table.push_text(["campaign start (UTC)".to_owned(), start.to_owned()]);
    table.push_text(["campaign end (UTC)".to_owned(), end.to_owned()]);
    out.push_str(&table.markdown());
    out
}

fn sizes(args: &Args) -> String {
    let mut out = String::from(
        "## 6. Sizes\n\nBytes, as FIPS 203 fixes them (checked against kem-core's outputs in \
         section 3).\n\n",
    );
    let mut table = Table::titled(&[
        "set",
        "public key (ek)",
        "secret key (dk)",
        "ciphertext",
        "shared secret",
    ]);
    for set in &args.sets {
        let (ek, dk, ct) = with_set!(*set, P => (P::EK_LEN, P::DK_LEN, P::CT_LEN));
        table.push_text([
            set.name().to_owned(),
            ek.to_string(),
            dk.to_string(),
            ct.to_string(),
            kem_core::SHARED_SECRET_LEN.to_string(),
        ]);
    }
    out.push_str(&table.markdown());
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
    let mut table = Table::titled(&["section", "records", "first id"]);
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
        table.push_text([section.to_owned(), count.to_string(), format!("`{first}`")]);
    }
    out.push_str(&table.markdown());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Args, clap::Error> {
        let args = Args::try_parse_from(std::iter::once("report").chain(args.iter().copied()));
        args.map(Args::resolve)
    }

    #[test]
    fn arguments() {
        let a = parse(&["--quick", "--params", "768,ML-KEM-512", "--out", "x"]).unwrap();
        assert_eq!((a.trials(), a.iterations()), (3, 100));
        assert_eq!(a.sets, [KatParams::MlKem768, KatParams::MlKem512]);
        assert_eq!(a.out(), std::path::Path::new("x"));
        let a = parse(&["--trials", "4", "--iterations", "7"]).unwrap();
        assert_eq!((a.trials(), a.iterations(), a.sets.len()), (4, 7, 3));
        for bad in [
            &["--trials", "0"][..],
            &["--params", "999"],
            &["--out"],
            &["--bogus"],
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }
}
