//! `evp-bench`: KEM keygen, encaps and decaps through OpenSSL's EVP API in
//! process, per provider side by side (`openssl speed` lacks KEMs before 3.5).

use std::hint::black_box;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::Parser;
use serde_json::json;
use test_tools::cli::{self, default_provider_dir, positive, unique, Files, Progress};
use test_tools::comparison::COMPARISON_COLUMNS;
use test_tools::evp_harness::{Kem, Library};
use test_tools::measure::{Measurement, Operation, Trial};
use test_tools::speed_output::parameter_set;
use test_tools::system_info::openssl_version;
use test_tools::table::{Column, Style, Table, Value};
use test_tools::timer;

/// Times KEM keygen, encaps and decaps in process through OpenSSL's EVP API
/// (the linked libcrypto), with the loops of `openssl speed`.
///
/// Each operation runs on one reused context (over one key; decaps over one
/// ciphertext), TRIALS x ITERATIONS times after a warm-up, the trials of the
/// implementations alternating (A 1, B 1, A 2, ...). Each implementation has
/// its own OSSL_LIB_CTX (its provider plus `default`, every fetch with
/// provider=NAME of its provider) and must pass a decaps(encaps) check first.
/// Implementations: `ours` (provider `mlkem` from --provider-dir), `native`
/// (`default`, for what the linked libcrypto has: OpenSSL 3.5+) and any
/// --implementation. Progress goes to stderr, the tables to stdout.
#[derive(Parser, Debug)]
#[command(name = "evp-bench")]
struct Args {
    /// Where mlkem.so is (made by `bash scripts/build-provider.sh`)
    #[arg(long, value_name = "DIR", default_value_os_t = default_provider_dir())]
    provider_dir: PathBuf,
    /// One more implementation: provider PROVIDER from module directory DIR
    /// (empty: OpenSSL's default; DIR cannot hold ':'). NAMES maps our
    /// algorithm names to the provider's: `oqs` (oqsprovider's mlkem768 for
    /// ML-KEM-768) or FROM=TO,FROM=TO; other names are used as they are
    #[arg(long = "implementation", value_name = "NAME=DIR:PROVIDER[:NAMES]", value_parser = Spec::parse)]
    extra: Vec<Spec>,
    /// Timed trials per measurement (3 with --quick)
    #[arg(long, visible_alias = "rounds", value_name = "T", value_parser = positive)]
    #[arg(default_value_t = 10, default_value_if("quick", "true", "3"))]
    trials: usize,
    /// Operations per trial (100 with --quick)
    #[arg(long, value_name = "N", value_parser = positive)]
    #[arg(default_value_t = 2000, default_value_if("quick", "true", "100"))]
    iterations: usize,
    /// 3 trials x 100 iterations, for a smoke run
    #[arg(long)]
    quick: bool,
    #[command(flatten)]
    files: Files,
    /// ML-KEM-512, ML-KEM-768, ML-KEM-1024, X25519MLKEM768,
    /// SecP256r1MLKEM768, SecP384r1MLKEM1024, or any other KEM name the
    /// providers know; mlkem768 / MLKEM768 style names work too
    #[arg(value_name = "ALGORITHM")]
    #[arg(default_values = ["ML-KEM-512", "ML-KEM-768", "ML-KEM-1024", "X25519MLKEM768", "SecP256r1MLKEM768"])]
    algorithms: Vec<String>,
}

impl Args {
    /// The canonical names of the algorithms, each once.
    fn algorithms(&self) -> Vec<String> {
        unique(self.algorithms.iter().map(|a| parameter_set(a)))
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    let mut names = vec!["ours", "native"];
    for spec in &args.extra {
        if names.contains(&spec.name.as_str()) {
            let taken = format!("--implementation: the name {:?} is taken", spec.name);
            cli::usage_error::<Args>(taken);
        }
        names.push(&spec.name);
    }
    cli::exit("evp-bench", run(&args))
}

/// Where an implementation's provider comes from.
#[derive(Clone, Debug)]
struct Spec {
    /// Label in tables and files.
    name: String,
    /// `None` for OpenSSL's default module directory.
    module_dir: Option<PathBuf>,
    provider: String,
    /// (our name, the provider's name) pairs; other names are used as given.
    names: Vec<(String, String)>,
}

impl Spec {
    /// Parses `NAME=DIR:PROVIDER[:NAMES]` (see `--implementation`).
    fn parse(text: &str) -> Result<Spec, String> {
        let bad = || format!("--implementation {text:?}: expected NAME=DIR:PROVIDER[:NAMES]");
        let named = text.split_once('=').filter(|(name, _)| !name.is_empty());
        let (name, rest) = named.ok_or_else(bad)?;
        let mut fields = rest.splitn(3, ':');
        let dir = fields.next().unwrap_or_default();
        let provider = fields.next().filter(|p| !p.is_empty()).ok_or_else(bad)?;
        let names = match fields.next() {
            None => Vec::new(),
            Some(oqs) if oqs.eq_ignore_ascii_case("oqs") => [512, 768, 1024]
                .map(|bits| (format!("ML-KEM-{bits}"), format!("mlkem{bits}")))
                .to_vec(),
            Some(pairs) => pairs
                .split(',')
                .map(|pair| match pair.split_once('=') {
                    Some((from, to)) if !from.is_empty() && !to.is_empty() => {
                        Ok((parameter_set(from), to.to_owned()))
                    }
                    _ => Err(format!(
                        "name map {pairs:?}: expected `oqs` or FROM=TO pairs separated by commas"
                    )),
                })
                .collect::<Result<_, _>>()?,
        };
        Ok(Spec {
            name: name.to_owned(),
            module_dir: (!dir.is_empty()).then(|| PathBuf::from(dir)),
            provider: provider.to_owned(),
            names,
        })
    }

    /// The provider's name for the algorithm `canonical`.
    fn name_for(&self, canonical: &str) -> String {
        let pair = self.names.iter().find(|(from, _)| from == canonical);
        pair.map_or(canonical, |(_, to)| to).to_owned()
    }

    /// Loads the provider into a library context of its own.
    fn load(self) -> Result<(Spec, Library), String> {
        let library = Library::load(self.module_dir.as_deref(), &self.provider)
            .map_err(|e| format!("{}: {e}", self.name))?;
        Ok((self, library))
    }
}

/// One implementation's [`Kem`] for one algorithm, and its decaps ciphertext.
struct Workload<'l> {
    implementation: &'l str,
    /// The implementation's name for the algorithm.
    algorithm: String,
    kem: Kem<'l>,
    ciphertext: Vec<u8>,
}

impl<'l> Workload<'l> {
    /// Sets up the contexts and checks decaps(encaps) twice on them.
    fn new(label: &'l str, library: &'l Library, algorithm: String) -> Result<Self, String> {
        let mut kem = library.kem(&algorithm)?;
        kem.round_trip()?;
        let ciphertext = kem.round_trip()?;
        Ok(Workload {
            implementation: label,
            algorithm,
            kem,
            ciphertext,
        })
    }

    /// Times `n` runs of `operation` (keygen, encaps or decaps).
    fn trial(&mut self, operation: Operation, n: usize) -> Result<Trial, String> {
        let (wall, start) = (Instant::now(), timer::now());
        for _ in 0..n {
            match operation {
                Operation::Keygen => self.kem.keygen()?,
                Operation::Encaps => drop(black_box(self.kem.encapsulate()?)),
                Operation::Decaps => drop(black_box(self.kem.decapsulate(&self.ciphertext)?)),
                other => return Err(format!("evp-bench does not time {other}")),
            };
        }
        let (ticks, seconds) = (timer::now().wrapping_sub(start), wall.elapsed());
        Ok(Trial::timed(n as u64, seconds.as_secs_f64(), Some(ticks)))
    }
}

/// Times `operation` for every workload, the workloads taking turns by trial.
fn time_operation(
    workloads: &mut [Workload<'_>],
    parameter_set: &str,
    operation: Operation,
    args: &Args,
    progress: &Progress,
) -> Result<Vec<Measurement>, String> {
    let mut measurements: Vec<Measurement> = workloads
        .iter()
        .map(|w| Measurement {
            algorithm: w.algorithm.clone(),
            ..Measurement::new(w.implementation, parameter_set, operation)
        })
        .collect();
    let (trials, iterations) = (args.trials, args.iterations);
    // Trial 0 is the warm-up, untimed.
    for trial in 0..=trials {
        for (workload, measurement) in workloads.iter_mut().zip(&mut measurements) {
            let (what, n) = match trial {
                0 => ("warm-up".to_owned(), (iterations / 10).max(1)),
                _ => (format!("trial {trial}/{trials}"), iterations),
            };
            let name = workload.implementation;
            progress.update(&format!("[{name} {parameter_set} {operation}] {what}"));
            let timed = workload.trial(operation, n)?;
            measurement.trials.extend((trial > 0).then_some(timed));
        }
    }
    Ok(measurements)
}

/// The results; the text has the ratio of ops/s to `baseline`'s, JSON every trial.
fn results_table(measurements: &[Measurement], baseline: &str) -> Table {
    let number =
        |title, key, text, file| Column::number(title, key, Style::Fixed(text), Style::Fixed(file));
    let file = |key| Column::new(key, key).file_only();
    let mut table = Table::new(vec![
        file("algorithm"),
        file("parameter_set"),
        Column::new("operation", "operation"),
        Column::new("implementation", "implementation").text_only(),
        file("implementation"),
        file("openssl_version"),
        number("ops/s", "ops_per_sec", 0, 1),
        file("seconds_per_op").csv(Style::Fixed(9)),
        number("median us/op", "median_us", 2, 3),
        number("mean us/op", "mean_us", 2, 3),
        number("mean cycles/op", "mean_cycles", 0, 1),
        Column::new("n", "n").right().text_only(),
        Column::new(format!("ops/s / {baseline}"), "ratio")
            .right()
            .text(Style::Fixed(2))
            .text_only(),
        file("trials"),
        file("iterations"),
        Column::new("raw trials", "raw_trials").json_only(),
    ]);
    let version = openssl_version();
    let median_rate = |m: &Measurement| 1.0 / m.median_seconds_per_op();
    for m in measurements {
        let base = m.counterpart(measurements, baseline);
        let shown = match m.algorithm == m.parameter_set {
            true => m.implementation.clone(),
            false => format!("{} ({})", m.implementation, m.algorithm),
        };
        table.push(vec![
            Value::text(&m.algorithm),
            Value::text(&m.parameter_set),
            Value::text(m.operation.label()),
            Value::Text(shown),
            Value::text(&m.implementation),
            Value::text(&version),
            Value::Num(median_rate(m)),
            Value::Num(m.median_seconds_per_op()),
            Value::Num(m.median_seconds_per_op() * 1e6),
            Value::Num(m.mean_seconds_per_op() * 1e6),
            Value::num(m.mean_ticks()),
            Value::Int(m.operations()),
            Value::num(base.map(|b| median_rate(m) / median_rate(b))),
            Value::Int(m.trials.len() as u64),
            Value::Int(m.trials.first().map_or(0, |t| t.operations)),
            Value::Json(serde_json::to_value(&m.trials).unwrap_or_default()),
        ]);
    }
    let more = ["median_us", "mean_us", "mean_cycles"];
    table.file_order(&[&COMPARISON_COLUMNS[..], &more, &["trials", "iterations"]].concat())
}

fn run(args: &Args) -> Result<(), String> {
    let version = openssl_version();
    let (trials, iterations, algorithms) = (args.trials, args.iterations, args.algorithms());
    cli::require_provider(&args.provider_dir)?;
    let spec = |name: &str, module_dir, provider: &str| Spec {
        name: name.into(),
        module_dir,
        provider: provider.into(),
        names: Vec::new(),
    };
    let ours = spec("ours", Some(args.provider_dir.clone()), "mlkem");
    let builtin = [ours, spec("native", None, "default")];
    let all_specs = builtin.into_iter().chain(args.extra.iter().cloned());
    let mut implementations: Vec<_> = all_specs.map(Spec::load).collect::<Result<_, _>>()?;
    // Native only where the linked libcrypto has some of the algorithms.
    let (has, lacks): (Vec<&str>, Vec<&str>) = algorithms
        .iter()
        .map(String::as_str)
        .partition(|a| implementations[1].1.supports(a));
    if has.is_empty() {
        implementations.remove(1);
    }
    println!(
        "evp-bench: {}; {trials} trials x {iterations} iterations per measurement; counter {}",
        openssl::version::version(),
        timer::COUNTER
    );
    for (spec, library) in &implementations {
        let from = spec.module_dir.as_ref().map(|d| d.display().to_string());
        let from = from.unwrap_or("built in / OpenSSL's module directory".into());
        let (name, provider) = (&spec.name, &spec.provider);
        let propquery = library.propquery().to_string_lossy();
        println!("  {name}: provider {provider} ({from}), propquery {propquery}");
    }
    if !lacks.is_empty() {
        println!(
            "note: native: the linked OpenSSL {version}'s default provider has no {}; skipped \
             there (OpenSSL 3.5+ has ML-KEM)",
            lacks.join(", ")
        );
    }

    let progress = Progress::stderr();
    let baseline = &implementations[0].0.name;
    let (mut skipped, mut all) = (Vec::new(), Vec::new());
    for parameter_set in &algorithms {
        let mut workloads = Vec::new();
        for (spec, library) in &implementations {
            let (label, name) = (&spec.name, spec.name_for(parameter_set));
            if label == "native" && !library.supports(&name) {
                skipped.push(json!({
                    "implementation": "native",
                    "algorithm": parameter_set,
                    "reason": format!("OpenSSL {version}'s default provider has no {name}"),
                }));
                continue;
            }
            let checking = format!("[{label} {parameter_set}] checking decaps(encaps)");
            progress.update(&checking);
            let workload = Workload::new(label, library, name);
            workloads.push(workload.map_err(|e| format!("{label}: {e}"))?);
        }
        let mut measurements = Vec::new();
        for operation in Operation::EVP {
            let timed = time_operation(&mut workloads, parameter_set, operation, args, &progress);
            measurements.extend(timed?);
        }
        progress.finish();
        let table = results_table(&measurements, baseline);
        print!("\n== {parameter_set} ==\n{}", table.render());
        all.extend(measurements);
    }
    let settings = json!({
        "tool": "evp-bench",
        "openssl_version": openssl::version::version(),
        "counter": timer::COUNTER,
        "trials": trials,
        "iterations": iterations,
        "implementations": implementations.iter().map(|(spec, library)| json!({
            "name": spec.name,
            "provider": spec.provider,
            "module_dir": spec.module_dir.as_ref().map(|d| d.display().to_string()),
            "propquery": library.propquery().to_string_lossy(),
        })).collect::<Vec<_>>(),
        "skipped": skipped,
    });
    args.files.write(&results_table(&all, baseline), settings)
}
