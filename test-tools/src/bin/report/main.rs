//! `report`: a measurement campaign of kem-core (the ML-KEM library inside
//! the `mlkem` provider), written as one Markdown report (basic information,
//! environment, KATs before any timing, performance, resources, sizes, the
//! SHA3/SHAKE and RNG share, an evidence index) plus its raw evidence.
//!
//! ```text
//! cargo run --release -p test-tools --features profiling --bin report -- --quick
//! ```

mod functional;
mod performance;
mod profile;
mod resources;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use kem_core::{BackendKind, ParameterSet};
use serde_json::{json, Value};
use test_tools::cli::{self, parameter_set, positive, sets_or_all};
use test_tools::kem_core_ops::{check_kem_core, kem_core_label, KnownAnswer};
use test_tools::nist_kat::KatParams;
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
    /// Timed trials per measurement (3 with --quick)
    #[arg(long, visible_alias = "rounds", value_name = "T", value_parser = positive)]
    #[arg(default_value_t = 10, default_value_if("quick", "true", "3"))]
    pub trials: usize,
    /// Timed calls per trial (100 with --quick)
    #[arg(long, value_name = "N", value_parser = positive)]
    #[arg(default_value_t = 1000, default_value_if("quick", "true", "100"))]
    pub iterations: usize,
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
}

impl Args {
    /// The chosen parameter sets, each once.
    pub fn sets(&self) -> Vec<KatParams> {
        sets_or_all(&self.params)
    }

    /// The test-vector folder.
    pub fn vectors(&self) -> PathBuf {
        let from_env = std::env::var_os("MLKEM_VECTORS_DIR").map(PathBuf::from);
        let beside = || cli::workspace_root().join("../shared/vectors");
        self.vectors.clone().or(from_env).unwrap_or_else(beside)
    }

    /// The provider module, given or built.
    pub fn module(&self) -> Option<PathBuf> {
        let built = cli::workspace_root().join("target/provider/mlkem.so");
        self.module.clone().or(built.exists().then_some(built))
    }
}

/// Every (instance, label, set) of the campaign, instances outermost.
pub fn cases(args: &Args, instances: &[BackendKind]) -> Vec<(BackendKind, String, KatParams)> {
    let sets = args.sets();
    let each = |&b: &BackendKind| sets.iter().map(move |&set| (b, kem_core_label(b), set));
    instances.iter().flat_map(each).collect()
}

/// `f` on `backend`, its errors as text.
pub fn on_backend<T>(
    backend: BackendKind,
    f: impl FnOnce() -> Result<T, String>,
) -> Result<T, String> {
    kem_core::with_backend(backend, f).map_err(|e| e.to_string())?
}

/// kem-core's sanity check ([`check_kem_core`]) of `set` on `backend`.
pub fn sanity_check(backend: BackendKind, set: KatParams) -> Result<KnownAnswer, String> {
    on_backend(backend, || with_set!(set, P => check_kem_core::<P>()))
}

/// A table of one row per (instance, set, operation): those three, then
/// the cells `measure` gives or its error in bold. Before each row,
/// `[<section> <instance> <set> <operation>] <doing>` goes to stderr.
pub fn operation_table(
    args: &Args,
    instances: &[BackendKind],
    titles: &[&str],
    (section, doing): (&str, &str),
    mut measure: impl FnMut(BackendKind, &str, KatParams, &str) -> Result<Vec<String>, String>,
) -> Table {
    let mut table = Table::titled(&[&["instance", "set", "operation"], titles].concat());
    for (backend, label, set) in cases(args, instances) {
        for operation in ["keygen", "encaps", "decaps"] {
            eprintln!("  [{section} {label} {} {operation}] {doing}", set.name());
            let mut row = vec![format!("`{label}`")];
            row.extend([set.name(), operation].map(str::to_owned));
            let cells = measure(backend, &label, set, operation);
            row.extend(cells.unwrap_or_else(|e| vec![format!("**{e}**")]));
            table.push_text(row);
        }
    }
    table
}

/// The evidence records of the campaign, each stamped with the command line
/// and a short environment.
pub struct Evidence {
    stamp: Value,
    records: Vec<Value>,
}

impl Evidence {
    /// Adds one measurement: `id` names it uniquely, `data` holds its
    /// parameters and every trial.
    pub fn push(&mut self, section: &str, id: String, data: Value) {
        let mut record = self.stamp.clone();
        (record["id"], record["section"], record["data"]) = (json!(id), json!(section), data);
        self.records.push(record);
    }
}

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    if argv.first().map(String::as_str) == Some(resources::CHILD_FLAG) {
        return resources::child_main(&argv[1..]);
    }
    let result = run(&Args::parse()).and_then(|passed| match passed {
        true => Ok(()),
        false => Err("functional testing FAILED; see the report".to_owned()),
    });
    cli::exit("report", result)
}

/// Runs the campaign and writes the files; `Ok(false)` when a KAT failed
/// (the report is still written, without timings).
fn run(args: &Args) -> Result<bool, String> {
    let start = system_info::utc_now();
    let stamp = start.replace(':', "");
    let out = (args.out.clone())
        .unwrap_or_else(|| cli::workspace_root().join("target/report").join(stamp));
    std::fs::create_dir_all(&out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let instances = kem_core::available_backends();
    let labels: Vec<String> = instances.iter().map(|&b| kem_core_label(b)).collect();
    let facts = system_info::facts();
    let tsc_hz = timer::counter_frequency(std::time::Duration::from_millis(200));
    let kernel = facts
        .iter()
        .find(|(l, _)| *l == "kernel")
        .and_then(|(_, v)| v.clone());
    let mut evidence = Evidence {
        stamp: json!({
            "command": std::env::args().collect::<Vec<_>>(),
            "environment": {
                "cpu": system_info::cpu_model(),
                "kernel": kernel,
                "rustc": system_info::rustc_version(),
                "counter": timer::UNIT,
                "counter_hz": tsc_hz,
                "linked_openssl": openssl::version::version(),
                "campaign_start": start,
            },
        }),
        records: Vec::new(),
    };

    eprintln!("report: functional testing (KATs) of {}", labels.join(", "));
    let (functional, passed) = functional::run(args, &instances, &mut evidence);
    let mut body = vec![functional];
    let mut csv = None;
    if passed {
        // Inputs that can be wrong are read before the long measurements.
        let speed = args
            .speed_csv
            .as_deref()
            .map(|p| performance::speed_comparison(p, &mut evidence))
            .transpose()?;
        let module = resources::module_section(args, &mut evidence)?;
        let (markdown, table) = performance::run(args, &instances, tsc_hz, &mut evidence);
        body.push(markdown);
        csv = Some(table);
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
    let mut sections = vec![
        basic_information(args, &labels),
        environment_section(args, &facts, tsc_hz, [&start, &end]),
    ];
    sections.extend(body);
    let jsonl: String = evidence.records.iter().map(|r| format!("{r}\n")).collect();
    cli::write_file(&out.join("evidence.jsonl"), &jsonl)?;
    sections.push(evidence_section(&evidence, &jsonl));
    if let Some(csv) = csv {
        cli::write_file(&out.join("performance.csv"), &csv)?;
    }
    let report = format!(
        "# ML-KEM measurement report: kem-core, the library of the `mlkem` OpenSSL provider\n\n\
         Campaign {start} to {end} (UTC). Every figure below has a record in `evidence.jsonl`; \
         `performance.csv` holds section 4 in the `bench` tool's columns.\n\n{}",
        sections.join("\n")
    );
    let report_path = out.join("report.md");
    cli::write_file(&report_path, &report)?;
    println!("{}", report_path.display());
    Ok(passed)
}

fn basic_information(args: &Args, labels: &[String]) -> String {
    let mut out = format!(
        "## 1. Basic information\n\n\
         - **Algorithm:** ML-KEM, the module-lattice-based key-encapsulation mechanism of \
         FIPS 203 (final, August 2024).\n\
         - **Implementation:** kem-core {} (the ML-KEM library of the `mlkem` provider). \
         Instances are its backends that this CPU runs, chosen at run time: `{}`. The \
         portable backend is the reference the others must match byte for byte.\n\
         - **Parameter sets:**\n\n",
        env!("CARGO_PKG_VERSION"),
        labels.join("`, `")
    );
    // NIST categories 1, 3 and 5 are the sets of rank k = 2, 3 and 4.
    let titles = ["set", "k", "η1", "η2", "du", "dv", "NIST category"];
    out.push_str(&set_table(
        args,
        &titles,
        |set| with_set!(set, P => [P::K, P::ETA1, P::ETA2, P::DU, P::DV, 2 * P::K - 3]),
    ));
    out
}

/// A Markdown table of one row per chosen set: its name, then `numbers`.
fn set_table<const N: usize>(
    args: &Args,
    titles: &[&str],
    numbers: impl Fn(KatParams) -> [usize; N],
) -> String {
    let mut table = Table::titled(titles);
    for set in args.sets() {
        let cells = numbers(set).map(|n| n.to_string());
        table.push_text([set.name().to_owned()].into_iter().chain(cells));
    }
    table.markdown()
}

fn environment_section(
    args: &Args,
    facts: &[system_info::Fact],
    tsc_hz: f64,
    [start, end]: [&str; 2],
) -> String {
    let mut table = Table::titled(&["item", "value"]);
    for (label, value) in facts {
        table.push_text([*label, value.as_deref().unwrap_or("not readable")]);
    }
    let counter = format!(
        "{} at {:.3} GHz (measured against the wall clock)",
        timer::UNIT,
        tsc_hz / 1e9
    );
    let binary = args
        .openssl
        .as_ref()
        .and_then(|bin| system_info::first_line_of(&[bin.to_str()?, "version"]));
    table.push_text([
        "cores used by the measurements",
        "1 (one thread; not pinned)",
    ]);
    table.push_text(["cycle counter", &counter]);
    table.push_text(["OpenSSL linked by the tools", openssl::version::version()]);
    if let Some(version) = binary {
        table.push_text(["OpenSSL binary given", &version]);
    }
    table.push_text(["campaign start (UTC)", start]);
    table.push_text(["campaign end (UTC)", end]);
    format!("## 2. Assessment environment\n\n{}", table.markdown())
}

fn sizes(args: &Args) -> String {
    let titles = [
        "set",
        "public key (ek)",
        "secret key (dk)",
        "ciphertext",
        "shared secret",
    ];
    let table = set_table(
        args,
        &titles,
        |set| with_set!(set, P => [P::EK_LEN, P::DK_LEN, P::CT_LEN, kem_core::SHARED_SECRET_LEN]),
    );
    format!(
        "## 6. Sizes\n\nBytes, as FIPS 203 fixes them (checked against kem-core's outputs in \
         section 3).\n\n{table}\nThe secret key is the expanded FIPS 203 form; the provider can \
         also store the 64-byte seed d ‖ z instead (`ml-kem.retain_seed`).\n"
    )
}

fn evidence_section(evidence: &Evidence, jsonl: &str) -> String {
    let mut out = format!(
        "## 8. Raw evidence index\n\n`evidence.jsonl`: {} records, SHA-256 `{}`. Each record \
         holds its `id`, the `section`, the `command` line of this run, a short `environment` \
         and the `data` (parameters and every trial).\n\n",
        evidence.records.len(),
        test_tools::nist_kat::sha256_hex(jsonl)
    );
    let mut seen: Vec<(&str, usize, &str)> = Vec::new();
    for record in &evidence.records {
        let [section, id] = [&record["section"], &record["id"]].map(|v| v.as_str().unwrap_or("?"));
        match seen.iter_mut().find(|(s, _, _)| *s == section) {
            Some(entry) => entry.1 += 1,
            None => seen.push((section, 1, id)),
        }
    }
    let mut table = Table::titled(&["section", "records", "first id"]);
    for (section, count, first) in seen {
        table.push_text([section.to_owned(), count.to_string(), format!("`{first}`")]);
    }
    out.push_str(&table.markdown());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments() {
        let parse = |args: &[&str]| Args::try_parse_from([&["report"], args].concat());
        let a = parse(&["--quick", "--params", "768,ML-KEM-512,768"]).unwrap();
        assert_eq!((a.trials, a.iterations), (3, 100));
        assert_eq!(a.sets(), [KatParams::MlKem768, KatParams::MlKem512]);
        let a = parse(&["--rounds", "4", "--iterations", "7"]).unwrap();
        assert_eq!((a.trials, a.iterations, a.sets().len()), (4, 7, 3));
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
