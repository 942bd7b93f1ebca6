//! `evp-bench`: ML-KEM and hybrid KEM key generation, encapsulation and
//! decapsulation through OpenSSL's EVP API, in process, for each provider
//! implementation side by side.
//!
//! OpenSSL 3.0 and 3.1's `openssl speed` has no KEMs; this runs the same
//! loops (apps/speed.c of 3.5: keygen on one reused keygen context, encaps on
//! one reused context over one key, decaps on one reused context over one
//! ciphertext) against the linked libcrypto, with each implementation in its
//! own library context.
//!
//! ```text
//! bash scripts/build-provider.sh
//! cargo run --release -p test-tools --bin evp-bench -- --quick
//! ```

use std::io::{IsTerminal as _, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use serde_json::{json, Value};
use test_tools::cli::{self, default_provider_dir, positive, write_file};
use test_tools::comparison::median;
use test_tools::cycles::{self, Operation};
use test_tools::evp_harness::{Decapsulator, Encapsulator, Key, KeyGenerator, Library};
use test_tools::speed_output::parameter_set;
use test_tools::table::{Align, Table};

/// Trials per (implementation, algorithm, operation) by default.
const DEFAULT_TRIALS: usize = 10;
/// Operations per trial by default.
const DEFAULT_ITERATIONS: usize = 2000;
/// Trials and iterations with `--quick`.
const QUICK: (usize, usize) = (3, 100);
/// The algorithms measured when none is named.
const DEFAULT_ALGORITHMS: [&str; 5] = [
    "ML-KEM-512",
    "ML-KEM-768",
    "ML-KEM-1024",
    "X25519MLKEM768",
    "SecP256r1MLKEM768",
];
/// The operations measured, in report order.
const OPERATIONS: [Operation; 3] = [Operation::Keygen, Operation::Encaps, Operation::Decaps];

const USAGE: &str = "\
usage: evp-bench [--provider-dir DIR] [--implementation NAME=DIR:PROVIDER[:NAMES]]...
                 [--trials T] [--iterations N] [--quick] [--csv PATH] [--json PATH]
                 [ALGORITHM...]

Times KEM keygen, encaps and decaps in process through OpenSSL's EVP API
(the linked libcrypto), with the loops of `openssl speed` (apps/speed.c):
keygen = EVP_PKEY_keygen on one reused context (each key freed), encaps =
EVP_PKEY_encapsulate on one reused context over one key, decaps =
EVP_PKEY_decapsulate on one reused context over one ciphertext. Each
implementation lives in its own OSSL_LIB_CTX (its provider plus `default`,
every fetch with the property query provider=<its provider>), and its
decaps(encaps) secrets are checked to match before anything is timed.

Each operation runs TRIALS x ITERATIONS times after a short warm-up; the
trials of the implementations alternate (A 1, B 1, A 2, ...) so that they
share the machine's state. Per implementation, algorithm and operation it
reports the median trial (us/op), mean us/op, mean cycles/op (rdtsc),
ops/s (from the median trial) and the ratio of its ops/s to the first
implementation's.

implementations:
  ours     provider `mlkem` from --provider-dir
  native   the `default` provider, for the algorithms the linked libcrypto
           has (OpenSSL 3.5+; skipped with a note on 3.0-3.4)
  --implementation NAME=DIR:PROVIDER[:NAMES] adds one more: provider
           PROVIDER from module directory DIR (empty: OpenSSL's default
           module directory; DIR cannot hold ':'). NAMES maps our algorithm
           names to the provider's: `oqs` (oqsprovider: ML-KEM-768 is
           mlkem768, the hybrids keep OpenSSL 3.5's names) or a list
           FROM=TO,FROM=TO (e.g. ML-KEM-768=mlkem768); unmapped names are
           used as they are.

options:
  --provider-dir DIR  where mlkem.so is (default: <workspace>/target/provider,
                      made by `bash scripts/build-provider.sh`)
  --trials T          timed trials per measurement (default 10)
  --iterations N      operations per trial (default 2000)
  --quick             3 trials x 100 iterations, for a smoke run
  --csv PATH          write one CSV row per algorithm, operation and
                      implementation to PATH
  --json PATH         write every trial's raw numbers as JSON to PATH
  -h, --help          this text

ALGORITHM: ML-KEM-512, ML-KEM-768, ML-KEM-1024, X25519MLKEM768,
SecP256r1MLKEM768 (the default: all five), SecP384r1MLKEM1024, or any other
KEM name the providers know. mlkem768 / MLKEM768 style names work too.
Progress goes to stderr, the tables to stdout.
";

/// How an implementation names the algorithms.
#[derive(Clone, Debug, PartialEq, Eq)]
enum NameMap {
    /// OpenSSL 3.5's names, as given.
    Same,
    /// oqsprovider's: `mlkem768` for ML-KEM-768; hybrids as given.
    Oqs,
    /// Explicit (our name, the provider's name) pairs; others as given.
    Pairs(Vec<(String, String)>),
}

impl NameMap {
    fn parse(text: &str) -> Result<NameMap, String> {
        if text.eq_ignore_ascii_case("oqs") {
            return Ok(NameMap::Oqs);
        }
        text.split(',')
            .map(|pair| match pair.split_once('=') {
                Some((from, to)) if !from.is_empty() && !to.is_empty() => {
                    Ok((parameter_set(from), to.to_owned()))
                }
                _ => Err(format!(
                    "name map {text:?}: expected `oqs` or FROM=TO pairs separated by commas"
                )),
            })
            .collect::<Result<_, _>>()
            .map(NameMap::Pairs)
    }

    /// The provider's name for the algorithm `canonical`.
    fn name_for(&self, canonical: &str) -> String {
        match self {
            NameMap::Same => canonical.to_owned(),
            NameMap::Oqs => canonical
                .strip_prefix("ML-KEM-")
                .map_or_else(|| canonical.to_owned(), |bits| format!("mlkem{bits}")),
            NameMap::Pairs(pairs) => pairs
                .iter()
                .find(|(from, _)| from == canonical)
                .map_or_else(|| canonical.to_owned(), |(_, to)| to.clone()),
        }
    }
}

/// Where an implementation's provider comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
struct ImplementationSpec {
    /// Label in tables and files.
    name: String,
    /// Module directory; `None` for OpenSSL's default.
    module_dir: Option<PathBuf>,
    /// Provider name.
    provider: String,
    /// Its algorithm names.
    names: NameMap,
}

impl ImplementationSpec {
    /// Parses `NAME=DIR:PROVIDER[:NAMES]`.
    fn parse(text: &str) -> Result<ImplementationSpec, String> {
        let bad = || format!("--implementation {text:?}: expected NAME=DIR:PROVIDER[:NAMES]");
        let (name, rest) = text.split_once('=').ok_or_else(bad)?;
        let mut fields = rest.splitn(3, ':');
        let (dir, provider) = (
            fields.next().ok_or_else(bad)?,
            fields.next().ok_or_else(bad)?,
        );
        if name.is_empty() || provider.is_empty() {
            return Err(bad());
        }
        Ok(ImplementationSpec {
            name: name.to_owned(),
            module_dir: (!dir.is_empty()).then(|| PathBuf::from(dir)),
            provider: provider.to_owned(),
            names: fields.next().map_or(Ok(NameMap::Same), NameMap::parse)?,
        })
    }
}

/// The command line.
#[derive(Debug, PartialEq)]
struct Args {
    provider_dir: PathBuf,
    extra: Vec<ImplementationSpec>,
    trials: usize,
    iterations: usize,
    csv: Option<PathBuf>,
    json: Option<PathBuf>,
    algorithms: Vec<String>,
}

/// Parses the arguments after the program name. `Ok(None)` means `--help`.
fn parse_args(args: impl IntoIterator<Item = String>) -> Result<Option<Args>, String> {
    let mut args = args.into_iter();
    let (mut trials, mut iterations, mut quick) = (None, None, false);
    let (mut provider_dir, mut csv, mut json) = (None, None, None);
    let (mut extra, mut algorithms) = (Vec::<ImplementationSpec>::new(), Vec::new());
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_owned(), Some(v.to_owned())),
            _ => (arg.clone(), None),
        };
        let mut value = |name: &str| {
            inline
                .clone()
                .or_else(|| args.next())
                .filter(|v| !v.is_empty())
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match flag.as_str() {
            "-h" | "--help" => return Ok(None),
            "--quick" if inline.is_none() => quick = true,
            "--trials" => trials = Some(positive("--trials", &value("--trials")?)?),
            "--iterations" => {
                iterations = Some(positive("--iterations", &value("--iterations")?)?);
            }
            "--provider-dir" => provider_dir = Some(PathBuf::from(value("--provider-dir")?)),
            "--csv" => csv = Some(PathBuf::from(value("--csv")?)),
            "--json" => json = Some(PathBuf::from(value("--json")?)),
            "--implementation" => {
                let spec = ImplementationSpec::parse(&value("--implementation")?)?;
                if ["ours", "native"].contains(&spec.name.as_str())
                    || extra.iter().any(|s| s.name == spec.name)
                {
                    return Err(format!(
                        "--implementation: the name {:?} is taken",
                        spec.name
                    ));
                }
                extra.push(spec);
            }
            _ if arg.starts_with('-') => return Err(format!("unknown option {arg:?}")),
            _ => {
                let name = parameter_set(&arg);
                if !algorithms.contains(&name) {
                    algorithms.push(name);
                }
            }
        }
    }
    let (quick_trials, quick_iterations) = if quick {
        QUICK
    } else {
        (DEFAULT_TRIALS, DEFAULT_ITERATIONS)
    };
    if algorithms.is_empty() {
        algorithms = DEFAULT_ALGORITHMS.map(str::to_owned).to_vec();
    }
    Ok(Some(Args {
        provider_dir: provider_dir.unwrap_or_else(default_provider_dir),
        extra,
        trials: trials.unwrap_or(quick_trials),
        iterations: iterations.unwrap_or(quick_iterations),
        csv,
        json,
        algorithms,
    }))
}

/// An implementation: its spec and its loaded library context.
struct Implementation {
    spec: ImplementationSpec,
    library: Library,
}

impl Implementation {
    fn load(spec: ImplementationSpec) -> Result<Implementation, String> {
        let library = Library::load(spec.module_dir.as_deref(), &spec.provider)
            .map_err(|e| format!("{}: {e}", spec.name))?;
        Ok(Implementation { spec, library })
    }

    fn describe(&self) -> String {
        let from = self.spec.module_dir.as_ref().map_or_else(
            || "built in / OpenSSL's module directory".to_owned(),
            |d| d.display().to_string(),
        );
        format!(
            "{}: provider {} ({from}), propquery {}",
            self.spec.name,
            self.spec.provider,
            self.library.propquery().to_string_lossy()
        )
    }
}

/// Everything one implementation needs to time one algorithm: the reused
/// contexts and buffers of apps/speed.c.
struct Workload<'l> {
    keygen: KeyGenerator<'l>,
    encapsulator: Encapsulator<'l>,
    decapsulator: Decapsulator<'l>,
    /// The ciphertext every decapsulation takes.
    ciphertext: Vec<u8>,
    /// Output buffers of the timed encapsulations and decapsulations.
    ciphertext_out: Vec<u8>,
    secret_out: Vec<u8>,
    /// The key the contexts hold (they hold references of their own).
    _key: Key<'l>,
}

impl<'l> Workload<'l> {
    /// Sets up the contexts and checks that decaps(encaps) gives the
    /// encapsulated secret, twice, on the reused contexts.
    fn new(library: &'l Library, algorithm: &str) -> Result<Workload<'l>, String> {
        let mut keygen = library.key_generator(algorithm)?;
        let key = keygen.generate()?;
        let mut encapsulator = key.encapsulator()?;
        let mut decapsulator = key.decapsulator()?;
        let mut ciphertext = Vec::new();
        for _ in 0..2 {
            let (sent_ciphertext, sent) = encapsulator.encapsulate_to_vec()?;
            let received = decapsulator.decapsulate_to_vec(&sent_ciphertext)?;
            if sent != received || sent.is_empty() {
                return Err(format!(
                    "{algorithm}: decaps(encaps) gave a different secret ({} vs {} bytes)",
                    received.len(),
                    sent.len()
                ));
            }
            ciphertext = sent_ciphertext;
        }
        Ok(Workload {
            ciphertext_out: vec![0; encapsulator.ciphertext_len()],
            secret_out: vec![0; encapsulator.secret_len()],
            keygen,
            encapsulator,
            decapsulator,
            ciphertext,
            _key: key,
        })
    }

    /// Runs `operation` `n` times.
    fn run(&mut self, operation: Operation, n: usize) -> Result<(), String> {
        match operation {
            Operation::Keygen => {
                for _ in 0..n {
                    drop(std::hint::black_box(self.keygen.generate()?));
                }
            }
            Operation::Encaps => {
                for _ in 0..n {
                    self.encapsulator
                        .encapsulate(&mut self.ciphertext_out, &mut self.secret_out)?;
                }
            }
            Operation::Decaps => {
                for _ in 0..n {
                    self.decapsulator
                        .decapsulate(&self.ciphertext, &mut self.secret_out)?;
                }
            }
            other => return Err(format!("evp-bench does not time {other}")),
        }
        std::hint::black_box(&self.secret_out);
        Ok(())
    }
}

/// One implementation's workload for the algorithm being measured.
struct Runner<'l> {
    implementation: &'l str,
    /// The implementation's name for the algorithm.
    algorithm: String,
    workload: Workload<'l>,
}

/// One timed trial.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Trial {
    seconds: f64,
    cycles: u64,
}

/// The trials of one (implementation, algorithm, operation).
#[derive(Clone, Debug, PartialEq)]
struct Measurement {
    implementation: String,
    /// The implementation's name for the algorithm.
    algorithm: String,
    /// OpenSSL 3.5's name for it.
    parameter_set: String,
    operation: Operation,
    iterations: usize,
    trials: Vec<Trial>,
}

impl Measurement {
    /// The median trial's microseconds per operation.
    fn median_us(&self) -> f64 {
        let us: Vec<f64> = self
            .trials
            .iter()
            .map(|t| t.seconds * 1e6 / self.iterations as f64)
            .collect();
        median(&us).unwrap_or(f64::NAN)
    }

    /// Operations over all trials.
    fn operations(&self) -> f64 {
        (self.trials.len() * self.iterations) as f64
    }

    fn mean_us(&self) -> f64 {
        self.trials.iter().map(|t| t.seconds).sum::<f64>() * 1e6 / self.operations()
    }

    fn mean_cycles(&self) -> f64 {
        self.trials.iter().map(|t| t.cycles as f64).sum::<f64>() / self.operations()
    }

    /// Operations per second of the median trial.
    fn ops_per_sec(&self) -> f64 {
        1e6 / self.median_us()
    }
}

/// The `3.0.19` of `OpenSSL 3.0.19 27 Jan 2026`.
fn openssl_version() -> String {
    let full = openssl::version::version();
    full.split_whitespace().nth(1).unwrap_or(full).to_owned()
}

/// Prints progress on stderr: overwriting one line on a terminal, a line
/// per update otherwise.
struct Progress {
    terminal: bool,
}

impl Progress {
    fn new() -> Progress {
        Progress {
            terminal: std::io::stderr().is_terminal(),
        }
    }

    fn update(&self, text: &str) {
        let mut err = std::io::stderr().lock();
        if self.terminal {
            let _ = write!(err, "\r\x1b[2K{text}");
        } else {
            let _ = writeln!(err, "{text}");
        }
        let _ = err.flush();
    }

    fn finish(&self) {
        if self.terminal {
            eprint!("\r\x1b[2K");
        }
    }
}

/// Times `operation` for every workload: a warm-up, then `trials` rounds in
/// which each workload runs one trial of `iterations` operations in turn.
fn time_operation(
    runners: &mut [Runner<'_>],
    parameter_set: &str,
    operation: Operation,
    trials: usize,
    iterations: usize,
    progress: &Progress,
) -> Result<Vec<Measurement>, String> {
    let mut measurements: Vec<Measurement> = runners
        .iter()
        .map(|runner| Measurement {
            implementation: runner.implementation.to_owned(),
            algorithm: runner.algorithm.clone(),
            parameter_set: parameter_set.to_owned(),
            operation,
            iterations,
            trials: Vec::with_capacity(trials),
        })
        .collect();
    for runner in runners.iter_mut() {
        progress.update(&format!(
            "[{} {parameter_set} {operation}] warm-up",
            runner.implementation
        ));
        runner.workload.run(operation, (iterations / 10).max(1))?;
    }
    for trial in 1..=trials {
        for (runner, measurement) in runners.iter_mut().zip(&mut measurements) {
            progress.update(&format!(
                "[{} {parameter_set} {operation}] trial {trial}/{trials}",
                runner.implementation
            ));
            let wall = Instant::now();
            let start = cycles::now();
            runner.workload.run(operation, iterations)?;
            let end = cycles::now();
            measurement.trials.push(Trial {
                seconds: wall.elapsed().as_secs_f64(),
                cycles: end.wrapping_sub(start),
            });
        }
    }
    Ok(measurements)
}

/// The table of one algorithm.
fn algorithm_table(measurements: &[Measurement], baseline: &str) -> Table {
    let ratio = format!("ops/s / {baseline}");
    let mut table = Table::new(&[
        ("operation", Align::Left),
        ("implementation", Align::Left),
        ("ops/s", Align::Right),
        ("median us/op", Align::Right),
        ("mean us/op", Align::Right),
        ("mean cycles/op", Align::Right),
        ("n", Align::Right),
        (&ratio, Align::Right),
    ]);
    for m in measurements {
        let base = measurements
            .iter()
            .find(|b| b.operation == m.operation && b.implementation == baseline);
        let implementation = if m.algorithm == m.parameter_set {
            m.implementation.clone()
        } else {
            format!("{} ({})", m.implementation, m.algorithm)
        };
        table.push([
            m.operation.label().to_owned(),
            implementation,
            format!("{:.0}", m.ops_per_sec()),
            format!("{:.2}", m.median_us()),
            format!("{:.2}", m.mean_us()),
            format!("{:.0}", m.mean_cycles()),
            format!("{}", m.trials.len() * m.iterations),
            base.map_or_else(String::new, |b| {
                format!("{:.2}", m.ops_per_sec() / b.ops_per_sec())
            }),
        ]);
    }
    table
}

/// Every measurement as one CSV row.
fn csv_table(measurements: &[Measurement], version: &str) -> Table {
    let mut table = Table::new(
        &[
            "algorithm",
            "parameter_set",
            "operation",
            "implementation",
            "openssl_version",
            "ops_per_sec",
            "seconds_per_op",
            "median_us",
            "mean_us",
            "mean_cycles",
            "trials",
            "iterations",
        ]
        .map(|h| (h, Align::Left)),
    );
    for m in measurements {
        table.push([
            m.algorithm.clone(),
            m.parameter_set.clone(),
            m.operation.label().to_owned(),
            m.implementation.clone(),
            version.to_owned(),
            format!("{:.1}", m.ops_per_sec()),
            format!("{:.9}", m.median_us() / 1e6),
            format!("{:.3}", m.median_us()),
            format!("{:.3}", m.mean_us()),
            format!("{:.1}", m.mean_cycles()),
            m.trials.len().to_string(),
            m.iterations.to_string(),
        ]);
    }
    table
}

/// The whole run as JSON, with every trial's raw numbers.
fn json_report(
    args: &Args,
    implementations: &[Implementation],
    skipped: &[(String, String, String)],
    measurements: &[Measurement],
) -> Value {
    json!({
        "tool": "evp-bench",
        "openssl_version": openssl::version::version(),
        "counter": cycles::COUNTER,
        "trials": args.trials,
        "iterations": args.iterations,
        "implementations": implementations.iter().map(|i| json!({
            "name": i.spec.name,
            "provider": i.spec.provider,
            "module_dir": i.spec.module_dir.as_ref().map(|d| d.display().to_string()),
            "propquery": i.library.propquery().to_string_lossy(),
        })).collect::<Vec<_>>(),
        "skipped": skipped.iter().map(|(implementation, algorithm, reason)| json!({
            "implementation": implementation,
            "algorithm": algorithm,
            "reason": reason,
        })).collect::<Vec<_>>(),
        "results": measurements.iter().map(|m| json!({
            "implementation": m.implementation,
            "algorithm": m.algorithm,
            "parameter_set": m.parameter_set,
            "operation": m.operation.label(),
            "ops_per_sec": m.ops_per_sec(),
            "median_us": m.median_us(),
            "mean_us": m.mean_us(),
            "mean_cycles": m.mean_cycles(),
            "iterations": m.iterations,
            "trials": m.trials.iter().map(|t| json!({
                "seconds": t.seconds,
                "cycles": t.cycles,
                "us_per_op": t.seconds * 1e6 / m.iterations as f64,
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}

/// Loads the implementations: ours, native (when the linked libcrypto has
/// any of the algorithms), then the extra ones.
fn load_implementations(
    args: &Args,
    notes: &mut Vec<String>,
) -> Result<Vec<Implementation>, String> {
    if !args.provider_dir.join("mlkem.so").is_file() {
        return Err(format!(
            "{}/mlkem.so is missing: run `bash scripts/build-provider.sh` first \
             (or pass --provider-dir)",
            args.provider_dir.display()
        ));
    }
    let mut implementations = vec![Implementation::load(ImplementationSpec {
        name: "ours".into(),
        module_dir: Some(args.provider_dir.clone()),
        provider: "mlkem".into(),
        names: NameMap::Same,
    })?];
    let native = Implementation::load(ImplementationSpec {
        name: "native".into(),
        module_dir: None,
        provider: "default".into(),
        names: NameMap::Same,
    })?;
    let (has, lacks): (Vec<&String>, Vec<&String>) = args
        .algorithms
        .iter()
        .partition(|a| native.library.supports(a));
    if !lacks.is_empty() {
        let lacks: Vec<&str> = lacks.iter().map(|s| s.as_str()).collect();
        notes.push(format!(
            "native: the linked OpenSSL {}'s default provider has no {}; skipped there \
             (OpenSSL 3.5+ has ML-KEM)",
            openssl_version(),
            lacks.join(", ")
        ));
    }
    if !has.is_empty() {
        implementations.push(native);
    }
    for spec in &args.extra {
        implementations.push(Implementation::load(spec.clone())?);
    }
    Ok(implementations)
}

fn run(args: &Args) -> Result<(), String> {
    let version = openssl_version();
    let mut notes = Vec::new();
    let implementations = load_implementations(args, &mut notes)?;
    println!(
        "evp-bench: {}; {} trials x {} iterations per measurement; counter {}",
        openssl::version::version(),
        args.trials,
        args.iterations,
        cycles::COUNTER
    );
    for implementation in &implementations {
        println!("  {}", implementation.describe());
    }
    for note in &notes {
        println!("note: {note}");
    }
    let _ = std::io::stdout().flush();

    let progress = Progress::new();
    let mut skipped = Vec::new();
    let mut all = Vec::new();
    for parameter_set in &args.algorithms {
        let mut runners = Vec::new();
        for implementation in &implementations {
            let name = implementation.spec.names.name_for(parameter_set);
            if implementation.spec.name == "native" && !implementation.library.supports(&name) {
                skipped.push((
                    "native".to_owned(),
                    parameter_set.clone(),
                    format!("OpenSSL {version}'s default provider has no {name}"),
                ));
                continue;
            }
            progress.update(&format!(
                "[{} {parameter_set}] checking decaps(encaps)",
                implementation.spec.name
            ));
            let workload = Workload::new(&implementation.library, &name)
                .map_err(|e| format!("{}: {e}", implementation.spec.name))?;
            runners.push(Runner {
                implementation: &implementation.spec.name,
                algorithm: name,
                workload,
            });
        }
        let mut measurements = Vec::new();
        for operation in OPERATIONS {
            measurements.extend(time_operation(
                &mut runners,
                parameter_set,
                operation,
                args.trials,
                args.iterations,
                &progress,
            )?);
        }
        progress.finish();
        println!("\n== {parameter_set} ==");
        print!(
            "{}",
            algorithm_table(&measurements, &implementations[0].spec.name).render()
        );
        let _ = std::io::stdout().flush();
        all.extend(measurements);
    }
    if let Some(path) = &args.csv {
        write_file(path, &csv_table(&all, &version).to_csv())?;
        eprintln!("wrote {}", path.display());
    }
    if let Some(path) = &args.json {
        let report = json_report(args, &implementations, &skipped, &all);
        let text = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
        write_file(path, &(text + "\n"))?;
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}

fn main() -> ExitCode {
    cli::main_with(
        "evp-bench",
        USAGE,
        parse_args(std::env::args().skip(1)),
        |args| run(&args),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Result<Option<Args>, String> {
        parse_args(list.iter().map(|s| (*s).to_owned()))
    }

    #[test]
    fn parses_the_command_line() {
        let a = args(&[]).unwrap().unwrap();
        assert_eq!((a.trials, a.iterations), (10, 2000));
        assert_eq!(a.algorithms, DEFAULT_ALGORITHMS.map(str::to_owned).to_vec());
        assert!(a.provider_dir.ends_with("target/provider"));
        let a = args(&[
            "--quick",
            "--iterations=7",
            "mlkem768",
            "ML-KEM-768",
            "p256_mlkem768",
        ])
        .unwrap()
        .unwrap();
        assert_eq!((a.trials, a.iterations), (3, 7));
        assert_eq!(a.algorithms, ["ML-KEM-768", "SecP256r1MLKEM768"]);
        let a = args(&[
            "--implementation",
            "oqs=/opt/oqs/lib:oqsprovider:oqs",
            "--implementation=x=:prov:ML-KEM-512=k512,mlkem768=k768",
            "--csv",
            "o.csv",
            "--json",
            "o.json",
        ])
        .unwrap()
        .unwrap();
        assert_eq!(
            a.extra[0],
            ImplementationSpec {
                name: "oqs".into(),
                module_dir: Some(PathBuf::from("/opt/oqs/lib")),
                provider: "oqsprovider".into(),
                names: NameMap::Oqs,
            }
        );
        assert_eq!(a.extra[1].module_dir, None);
        assert_eq!(a.extra[1].names.name_for("ML-KEM-768"), "k768");
        assert_eq!(a.extra[1].names.name_for("ML-KEM-1024"), "ML-KEM-1024");
        assert_eq!(
            (a.csv.unwrap(), a.json.unwrap()),
            (PathBuf::from("o.csv"), PathBuf::from("o.json"))
        );
        assert!(args(&["-h"]).unwrap().is_none());
        for bad in [
            &["--trials", "0"][..],
            &["--iterations", "x"],
            &["--csv"],
            &["--implementation", "ours=/d:mlkem"],
            &["--implementation", "a=/d:p", "--implementation", "a=/e:q"],
            &["--implementation", "a=/d"],
            &["--implementation", "a=/d:p:nonsense"],
            &["--bogus"],
        ] {
            assert!(args(bad).is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn names_map_to_each_provider() {
        assert_eq!(parameter_set("MLKEM1024"), "ML-KEM-1024");
        assert_eq!(parameter_set("x25519_mlkem768"), "X25519MLKEM768");
        assert_eq!(parameter_set("p384_mlkem1024"), "SecP384r1MLKEM1024");
        assert_eq!(parameter_set("FrodoKEM-640"), "FrodoKEM-640");
        assert_eq!(NameMap::Oqs.name_for("ML-KEM-768"), "mlkem768");
        assert_eq!(NameMap::Oqs.name_for("X25519MLKEM768"), "X25519MLKEM768");
        assert_eq!(NameMap::Same.name_for("ML-KEM-512"), "ML-KEM-512");
    }

    fn measurement(implementation: &str, operation: Operation, seconds: &[f64]) -> Measurement {
        Measurement {
            implementation: implementation.to_owned(),
            algorithm: "mlkem768".to_owned(),
            parameter_set: "ML-KEM-768".to_owned(),
            operation,
            iterations: 1000,
            trials: seconds
                .iter()
                .map(|&seconds| Trial {
                    seconds,
                    cycles: (seconds * 3e9) as u64,
                })
                .collect(),
        }
    }

    #[test]
    fn summarises_trials() {
        let m = measurement("ours", Operation::Keygen, &[0.020, 0.010, 0.012]);
        assert!((m.median_us() - 12.0).abs() < 1e-9);
        assert!((m.ops_per_sec() - 1e6 / 12.0).abs() < 1e-6);
        assert!((m.mean_us() - 14.0).abs() < 1e-9);
        assert!((m.mean_cycles() - 42_000.0).abs() < 1e-6);
        let even = measurement("ours", Operation::Keygen, &[0.010, 0.020]);
        assert!((even.median_us() - 15.0).abs() < 1e-9);

        let all = [
            m,
            measurement("oqs", Operation::Keygen, &[0.024, 0.024, 0.024]),
        ];
        let table = algorithm_table(&all, "ours").render();
        assert!(
            table.contains("keygen     oqs (mlkem768)   41667         24.00       24.00           72000  3000          0.50"),
            "{table}"
        );
        let csv = csv_table(&all, "3.0.19").to_csv();
        assert!(csv.starts_with(
            "algorithm,parameter_set,operation,implementation,openssl_version,ops_per_sec,\
             seconds_per_op,median_us,mean_us,mean_cycles,trials,iterations\n\
             mlkem768,ML-KEM-768,keygen,ours,3.0.19,83333.3,0.000012000,12.000,14.000,42000.0,3,1000\n"
        ), "{csv}");
    }

    #[test]
    fn workloads_run_every_operation() {
        let dir = default_provider_dir();
        assert!(
            dir.join("mlkem.so").is_file(),
            "{}/mlkem.so is missing: run `bash scripts/build-provider.sh` first",
            dir.display()
        );
        let library = Library::load(Some(&dir), "mlkem").unwrap();
        let mut workload = Workload::new(&library, "ML-KEM-512").unwrap();
        assert_eq!(workload.ciphertext.len(), 768);
        for operation in OPERATIONS {
            workload.run(operation, 3).unwrap();
        }
        assert!(workload.run(Operation::EncapsCached, 1).is_err());
        let err = Workload::new(&library, "ML-KEM-2048").err().unwrap();
        assert!(err.starts_with("ML-KEM-2048: "), "{err}");
    }
}
