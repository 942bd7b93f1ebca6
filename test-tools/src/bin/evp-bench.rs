//! `evp-bench`: ML-KEM and hybrid KEM keygen, encaps and decaps through
//! OpenSSL's EVP API in process, with the loops of `openssl speed` (which
//! has no KEMs before OpenSSL 3.5), per provider side by side; see `--help`.
//!
//! ```text
//! bash scripts/build-provider.sh
//! cargo run --release -p test-tools --bin evp-bench -- --quick
//! ```

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::Parser;
use serde_json::json;
use test_tools::cli::{self, default_provider_dir, positive, Files, Progress};
use test_tools::comparison::COMPARISON_COLUMNS;
use test_tools::evp_harness::{Decapsulator, Encapsulator, Key, KeyGenerator, Library};
use test_tools::measure::{Measurement, Operation, Trial};
use test_tools::speed_output::parameter_set;
use test_tools::system_info::openssl_version;
use test_tools::table::{Column, Style, Table, Value};
use test_tools::timer;

/// The algorithms measured when none is named.
const DEFAULT_ALGORITHMS: [&str; 5] = [
    "ML-KEM-512",
    "ML-KEM-768",
    "ML-KEM-1024",
    "X25519MLKEM768",
    "SecP256r1MLKEM768",
];

/// Times KEM keygen, encaps and decaps in process through OpenSSL's EVP API
/// (the linked libcrypto), with the loops of `openssl speed`.
///
/// Keygen = EVP_PKEY_keygen on one reused context (each key freed), encaps =
/// EVP_PKEY_encapsulate on one reused context over one key, decaps =
/// EVP_PKEY_decapsulate on one reused context over one ciphertext. Each
/// implementation lives in its own OSSL_LIB_CTX (its provider plus
/// `default`, every fetch with the property query provider=<its provider>),
/// and its decaps(encaps) secrets are checked to match before anything is
/// timed.
///
/// Each operation runs TRIALS x ITERATIONS times after a short warm-up; the
/// trials of the implementations alternate (A 1, B 1, A 2, ...) so that they
/// share the machine's state. Per implementation, algorithm and operation it
/// reports the median trial (us/op), mean us/op, mean cycles/op (rdtsc),
/// ops/s (from the median trial) and the ratio of its ops/s to the first
/// implementation's.
///
/// Implementations: `ours` is provider `mlkem` from --provider-dir; `native`
/// the `default` provider, for the algorithms the linked libcrypto has
/// (OpenSSL 3.5+; skipped with a note on 3.0-3.4); --implementation adds
/// more. Progress goes to stderr, the tables to stdout.
#[derive(Parser, Debug, PartialEq)]
#[command(name = "evp-bench")]
struct Args {
    /// Where mlkem.so is (made by `bash scripts/build-provider.sh`)
    #[arg(long, value_name = "DIR", default_value_os_t = default_provider_dir())]
    provider_dir: PathBuf,
    /// One more implementation: provider PROVIDER from module directory DIR
    /// (empty: OpenSSL's default module directory; DIR cannot hold ':').
    /// NAMES maps our algorithm names to the provider's: `oqs`
    /// (oqsprovider: ML-KEM-768 is mlkem768, the hybrids keep OpenSSL 3.5's
    /// names) or a list FROM=TO,FROM=TO (e.g. ML-KEM-768=mlkem768); unmapped
    /// names are used as they are
    #[arg(long = "implementation", value_name = "NAME=DIR:PROVIDER[:NAMES]", value_parser = ImplementationSpec::parse)]
    extra: Vec<ImplementationSpec>,
    /// Timed trials per measurement [default: 10; 3 with --quick]
    #[arg(long, visible_alias = "rounds", value_name = "T", value_parser = positive)]
    trials: Option<usize>,
    /// Operations per trial [default: 2000; 100 with --quick]
    #[arg(long, value_name = "N", value_parser = positive)]
    iterations: Option<usize>,
    /// 3 trials x 100 iterations, for a smoke run
    #[arg(long)]
    quick: bool,
    #[command(flatten)]
    files: Files,
    /// ML-KEM-512, ML-KEM-768, ML-KEM-1024, X25519MLKEM768,
    /// SecP256r1MLKEM768 (the default: these five), SecP384r1MLKEM1024, or
    /// any other KEM name the providers know; mlkem768 / MLKEM768 style names
    /// work too
    #[arg(value_name = "ALGORITHM")]
    algorithms: Vec<String>,
}

impl Args {
    fn trials(&self) -> usize {
        self.trials.unwrap_or(if self.quick { 3 } else { 10 })
    }

    fn iterations(&self) -> usize {
        self.iterations
            .unwrap_or(if self.quick { 100 } else { 2000 })
    }

    /// The canonical names of the algorithms, each once.
    fn algorithms(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        let given = self.algorithms.iter().map(String::as_str);
        let given: Vec<&str> = if self.algorithms.is_empty() {
            DEFAULT_ALGORITHMS.to_vec()
        } else {
            given.collect()
        };
        for name in given.into_iter().map(parameter_set) {
            if !names.contains(&name) {
                names.push(name);
            }
        }
        names
    }

    /// Extra implementations must not take the names `ours`, `native` or
    /// each other's.
    fn check(self) -> Self {
        for (i, spec) in self.extra.iter().enumerate() {
            if ["ours", "native"].contains(&spec.name.as_str())
                || self.extra[..i].iter().any(|s| s.name == spec.name)
            {
                cli::usage_error::<Args>(format!(
                    "--implementation: the name {:?} is taken",
                    spec.name
                ));
            }
        }
        self
    }
}

fn main() -> ExitCode {
    cli::exit("evp-bench", run(&Args::parse().check()))
}

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

/// Times `operation` for every workload: a warm-up, then `trials` rounds in
/// which each workload runs one trial of `iterations` operations in turn.
fn time_operation(
    runners: &mut [Runner<'_>],
    parameter_set: &str,
    operation: Operation,
    (trials, iterations): (usize, usize),
    progress: &Progress,
) -> Result<Vec<Measurement>, String> {
    let mut measurements: Vec<Measurement> = runners
        .iter()
        .map(|runner| Measurement {
            algorithm: runner.algorithm.clone(),
            ..Measurement::new(runner.implementation, parameter_set, operation)
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
            let start = timer::now();
            runner.workload.run(operation, iterations)?;
            let ticks = timer::now().wrapping_sub(start);
            let seconds = wall.elapsed().as_secs_f64();
            measurement
                .trials
                .push(Trial::timed(iterations as u64, seconds, Some(ticks)));
        }
    }
    Ok(measurements)
}

/// The results: per algorithm, operation and implementation the ops/s of
/// the median trial, median and mean us/op, mean cycles/op, n and (text)
/// the ratio of its ops/s to `baseline`'s; in JSON every trial.
fn results_table(measurements: &[Measurement], baseline: &str) -> Table {
    let mut table = Table::new(vec![
        Column::new("algorithm", "algorithm").file_only(),
        Column::new("parameter_set", "parameter_set").file_only(),
        Column::new("operation", "operation"),
        Column::new("implementation", "implementation").text_only(),
        Column::new("implementation", "implementation").file_only(),
        Column::new("openssl_version", "openssl_version").file_only(),
        Column::number("ops/s", "ops_per_sec", Style::Fixed(0), Style::Fixed(1)),
        Column::new("s/op", "seconds_per_op")
            .csv(Style::Fixed(9))
            .file_only(),
        Column::number(
            "median us/op",
            "median_us",
            Style::Fixed(2),
            Style::Fixed(3),
        ),
        Column::number("mean us/op", "mean_us", Style::Fixed(2), Style::Fixed(3)),
        Column::number(
            "mean cycles/op",
            "mean_cycles",
            Style::Fixed(0),
            Style::Fixed(1),
        ),
        Column::new("n", "n").right().text_only(),
        Column::new(format!("ops/s / {baseline}"), "ratio")
            .right()
            .text(Style::Fixed(2))
            .text_only(),
        Column::new("trials", "trials").file_only(),
        Column::new("iterations", "iterations").file_only(),
        Column::new("raw trials", "raw_trials").json_only(),
    ]);
    let version = openssl_version();
    // ops/s of the median trial.
    let rate = |m: &Measurement| 1.0 / m.median_seconds_per_op();
    for m in measurements {
        let base = measurements.iter().find(|b| {
            b.operation == m.operation
                && b.parameter_set == m.parameter_set
                && b.implementation == baseline
        });
        let shown = match m.algorithm == m.parameter_set {
            true => m.implementation.clone(),
            false => format!("{} ({})", m.implementation, m.algorithm),
        };
        let iterations = m.trials.first().map_or(0, |t| t.operations);
        table.push(vec![
            Value::text(&m.algorithm),
            Value::text(&m.parameter_set),
            Value::text(m.operation.label()),
            Value::Text(shown),
            Value::text(&m.implementation),
            Value::text(&version),
            Value::Num(rate(m)),
            Value::Num(m.median_seconds_per_op()),
            Value::Num(m.median_seconds_per_op() * 1e6),
            Value::Num(m.mean_seconds_per_op() * 1e6),
            Value::num(m.mean_ticks()),
            Value::Int(m.operations()),
            Value::num(base.map(|b| rate(m) / rate(b))),
            Value::Int(m.trials.len() as u64),
            Value::Int(iterations),
            Value::Json(serde_json::to_value(&m.trials).unwrap_or_default()),
        ]);
    }
    let more = [
        "median_us",
        "mean_us",
        "mean_cycles",
        "trials",
        "iterations",
    ];
    table.file_order(&[&COMPARISON_COLUMNS[..], &more].concat())
}

/// Loads the implementations: ours, native (when the linked libcrypto has
/// any of the algorithms), then the extra ones.
fn load_implementations(
    args: &Args,
    notes: &mut Vec<String>,
) -> Result<Vec<Implementation>, String> {
    cli::require_provider(&args.provider_dir)?;
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
    let algorithms = args.algorithms();
    let (has, lacks): (Vec<&String>, Vec<&String>) =
        algorithms.iter().partition(|a| native.library.supports(a));
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
        args.trials(),
        args.iterations(),
        timer::COUNTER
    );
    implementations
        .iter()
        .for_each(|i| println!("  {}", i.describe()));
    notes.iter().for_each(|note| println!("note: {note}"));

    let progress = Progress::new();
    let mut skipped = Vec::new();
    let mut all = Vec::new();
    for parameter_set in &args.algorithms() {
        let mut runners = Vec::new();
        for implementation in &implementations {
            let name = implementation.spec.names.name_for(parameter_set);
            if implementation.spec.name == "native" && !implementation.library.supports(&name) {
                skipped.push(json!({
                    "implementation": "native",
                    "algorithm": parameter_set,
                    "reason": format!("OpenSSL {version}'s default provider has no {name}"),
                }));
                continue;
            }
            let label = &implementation.spec.name;
            progress.update(&format!(
                "[{label} {parameter_set}] checking decaps(encaps)"
            ));
            let workload = Workload::new(&implementation.library, &name)
                .map_err(|e| format!("{label}: {e}"))?;
            runners.push(Runner {
                implementation: label,
                algorithm: name,
                workload,
            });
        }
        let mut measurements = Vec::new();
        for operation in Operation::EVP {
            let counts = (args.trials(), args.iterations());
            measurements.extend(time_operation(
                &mut runners,
                parameter_set,
                operation,
                counts,
                &progress,
            )?);
        }
        progress.finish();
        let table = results_table(&measurements, &implementations[0].spec.name);
        print!("\n== {parameter_set} ==\n{}", table.render());
        all.extend(measurements);
    }
    let settings = json!({
        "tool": "evp-bench",
        "openssl_version": openssl::version::version(),
        "counter": timer::COUNTER,
        "trials": args.trials(),
        "iterations": args.iterations(),
        "implementations": implementations.iter().map(|i| json!({
            "name": i.spec.name,
            "provider": i.spec.provider,
            "module_dir": i.spec.module_dir.as_ref().map(|d| d.display().to_string()),
            "propquery": i.library.propquery().to_string_lossy(),
        })).collect::<Vec<_>>(),
        "skipped": skipped,
    });
    args.files.write(
        &results_table(&all, &implementations[0].spec.name),
        settings,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use test_tools::cli::try_parse;

    #[test]
    fn parses_the_command_line() {
        let a = try_parse::<Args>(&[]).unwrap();
        assert_eq!((a.trials(), a.iterations()), (10, 2000));
        assert_eq!(
            a.algorithms(),
            DEFAULT_ALGORITHMS.map(str::to_owned).to_vec()
        );
        assert!(a.provider_dir.ends_with("target/provider"));
        let a = try_parse::<Args>(&[
            "--quick",
            "--iterations=7",
            "mlkem768",
            "ML-KEM-768",
            "p256_mlkem768",
        ])
        .unwrap();
        assert_eq!((a.trials(), a.iterations()), (3, 7));
        assert_eq!(a.algorithms(), ["ML-KEM-768", "SecP256r1MLKEM768"]);
        assert_eq!(try_parse::<Args>(&["--rounds", "4"]).unwrap().trials(), 4);
        let a = try_parse::<Args>(&[
            "--implementation",
            "oqs=/opt/oqs/lib:oqsprovider:oqs",
            "--implementation=x=:prov:ML-KEM-512=k512,mlkem768=k768",
            "--csv",
            "o.csv",
            "--json",
            "o.json",
        ])
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
        assert_eq!(a.files.csv, Some(PathBuf::from("o.csv")));
        for bad in [
            &["--trials", "0"][..],
            &["--iterations", "x"],
            &["--csv"],
            &["--implementation", "a=/d"],
            &["--implementation", "a=/d:p:nonsense"],
            &["--bogus"],
        ] {
            assert!(try_parse::<Args>(bad).is_err(), "{bad:?} was accepted");
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

    fn measurement(implementation: &str, seconds: &[f64]) -> Measurement {
        let mut m = Measurement::new(implementation, "ML-KEM-768", Operation::Keygen);
        m.algorithm = "mlkem768".to_owned();
        let trial = |&s: &f64| Trial::timed(1000, s, Some((s * 3e9) as u64));
        m.trials = seconds.iter().map(trial).collect();
        m
    }

    #[test]
    fn summarises_trials() {
        let m = measurement("ours", &[0.020, 0.010, 0.012]);
        assert!((m.median_seconds_per_op() - 12e-6).abs() < 1e-15);
        assert!((m.mean_seconds_per_op() - 14e-6).abs() < 1e-15);
        assert!((m.mean_ticks().unwrap() - 42_000.0).abs() < 1e-6);
        let even = measurement("ours", &[0.010, 0.020]);
        assert!((even.median_seconds_per_op() - 15e-6).abs() < 1e-15);

        let all = [m, measurement("oqs", &[0.024, 0.024, 0.024])];
        let table = results_table(&all, "ours");
        let text = table.render();
        assert!(
            text.contains("keygen     oqs (mlkem768)   41667         24.00       24.00           72000  3000          0.50"),
            "{text}"
        );
        let csv = table.to_csv();
        let version = openssl_version();
        assert!(csv.starts_with(&format!(
            "algorithm,parameter_set,operation,implementation,openssl_version,ops_per_sec,\
             seconds_per_op,median_us,mean_us,mean_cycles,trials,iterations\n\
             mlkem768,ML-KEM-768,keygen,ours,{version},83333.3,0.000012000,12.000,14.000,42000.0,3,1000\n"
        )), "{csv}");
    }

    #[test]
    fn workloads_run_every_operation() {
        let dir = default_provider_dir();
        cli::require_provider(&dir).unwrap_or_else(|e| panic!("{e}"));
        let library = Library::load(Some(&dir), "mlkem").unwrap();
        let mut workload = Workload::new(&library, "ML-KEM-512").unwrap();
        assert_eq!(workload.ciphertext.len(), 768);
        for operation in Operation::EVP {
            workload.run(operation, 3).unwrap();
        }
        assert!(workload.run(Operation::EncapsCached, 1).is_err());
        let err = Workload::new(&library, "ML-KEM-2048").err().unwrap();
        assert!(err.starts_with("ML-KEM-2048: "), "{err}");
    }
}
