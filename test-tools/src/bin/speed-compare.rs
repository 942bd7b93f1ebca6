//! `speed-compare`: runs `openssl speed` on ML-KEM for several
//! implementations (the mlkem provider, OpenSSL's own ML-KEM, oqsprovider),
//! alternating them round by round, and prints the median ops/s of each
//! side by side, per parameter set, with the ratio to a baseline
//! implementation; `--parse` builds the same tables from saved outputs.
//!
//! ```text
//! cargo run --release -p test-tools --bin speed-compare -- --rounds 3 ML-KEM-768
//! cargo run --release -p test-tools --bin speed-compare -- --parse \
//!     native=default-ossl-3.5.4.txt oqsprovider=oqsprovider-0.10-ossl-3.4.1.txt
//! ```

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use kem_core::BackendKind;
use serde_json::{json, Value};
use test_tools::cli::{self, write_file};
use test_tools::comparison::{Comparison, Implementation, Measurement};
use test_tools::speed_output::{canonical_name, Operation, Source, SpeedRun, PARAMETER_SETS};

const USAGE: &str = "\
usage: speed-compare [--openssl BIN] [--provider-dir DIR] [--oqsprovider MODULE]
                     [--oqs-openssl BIN] [--implementations LIST] [--baseline NAME]
                     [--rounds N] [--seconds S] [--backend NAME] [--csv PATH]
                     [--json PATH] [--raw-dir DIR] [ALGORITHM...]
       speed-compare --parse [--baseline NAME] [--csv PATH] [--json PATH] NAME=FILE...

Runs `openssl speed` on ML-KEM for each implementation, alternating them
(ours, native, oqsprovider, ours, ...) so that all see the same machine
state, and prints per parameter set the median ops/s over the rounds, s/op
(1 / median) and the ratio to the baseline (above 1.00x: faster).

implementations:
  ours         the mlkem provider: BIN speed -provider-path DIR -provider mlkem
               -provider default -propquery provider=mlkem (MLKEM_BACKEND set
               from --backend)
  native       OpenSSL's own ML-KEM: BIN speed (OpenSSL 3.5 or later only)
  oqsprovider  BIN speed -provider-path MODULEDIR -provider oqsprovider
               -provider default, with oqsprovider's names (mlkem768, ...);
               used when --oqsprovider is given or oqsprovider.so is in the
               MODULESDIR of the oqs OpenSSL (`BIN version -m`)

options:
  --openssl BIN          OpenSSL for ours and native (default:
                         ~/.cache/mlkem-provider/openssl/openssl-3.5.5/bin/openssl
                         if present, else `openssl` on PATH)
  --provider-dir DIR     directory holding mlkem.so (default: target/provider
                         of this workspace; scripts/build-provider.sh fills it)
  --oqsprovider MODULE   oqsprovider.so, or the directory holding it
  --oqs-openssl BIN      OpenSSL for oqsprovider (default: --openssl)
  --implementations LIST comma-separated subset of ours,native,oqsprovider
  --baseline NAME        implementation the ratios divide by (default: native
                         when measured, else the first implementation)
  --rounds N             rounds (default 3)
  --seconds S            seconds per operation per round (default 2)
  --backend NAME         kem-core backend of ours: portable, avx2, avx512
                         (default: the one the provider detects)
  --csv PATH             also write one CSV row per algorithm, operation and
                         implementation
  --json PATH            also write the settings, command lines, every
                         round's values and the medians as JSON
  --raw-dir DIR          save each run's stdout as DIR/<impl>-round<k>.txt
                         (and its stderr as DIR/<impl>-round<k>.stderr.txt)
  --parse                read saved outputs instead: NAME=FILE, one round per
                         file (give a NAME several times for several rounds)
  -h, --help             this text

ALGORITHM: ML-KEM-512 ML-KEM-768 ML-KEM-1024 (the default), X25519MLKEM768,
SecP256r1MLKEM768, SecP384r1MLKEM1024 (oqsprovider spellings such as
mlkem768 or p256_mlkem768 are accepted too).
";

const OURS: &str = "ours";
const NATIVE: &str = "native";
const OQSPROVIDER: &str = "oqsprovider";
const IMPLEMENTATIONS: [&str; 3] = [OURS, NATIVE, OQSPROVIDER];

const DEFAULT_ROUNDS: usize = 3;
const DEFAULT_SECONDS: u32 = 2;
const DEFAULT_ALGORITHMS: [&str; 3] = ["ML-KEM-512", "ML-KEM-768", "ML-KEM-1024"];

/// Lines of a failed child's stderr quoted in the error.
const STDERR_TAIL_LINES: usize = 12;

fn main() -> ExitCode {
    cli::main_with(
        "speed-compare",
        USAGE,
        parse_args(std::env::args().skip(1)),
        run,
    )
}

// ------------------------------------------------------------ command line

/// The command line.
struct Args {
    mode: Mode,
    baseline: Option<String>,
    csv: Option<PathBuf>,
    json: Option<PathBuf>,
}

enum Mode {
    Measure(MeasureArgs),
    /// `NAME=FILE` pairs.
    Parse(Vec<(String, PathBuf)>),
}

/// The options of a measuring run.
struct MeasureArgs {
    openssl: Option<PathBuf>,
    provider_dir: Option<PathBuf>,
    oqsprovider: Option<PathBuf>,
    oqs_openssl: Option<PathBuf>,
    implementations: Option<Vec<String>>,
    rounds: usize,
    seconds: u32,
    backend: Option<String>,
    raw_dir: Option<PathBuf>,
    /// Canonical names.
    algorithms: Vec<&'static str>,
}

/// `Ok(None)` for `--help`.
fn parse_args(args: impl IntoIterator<Item = String>) -> Result<Option<Args>, String> {
    let mut parse = false;
    let mut options: BTreeMap<&'static str, String> = BTreeMap::new();
    let mut positional = Vec::new();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_owned(), Some(v.to_owned())),
            _ => (arg.clone(), None),
        };
        const VALUED: [&str; 12] = [
            "--openssl",
            "--provider-dir",
            "--oqsprovider",
            "--oqs-openssl",
            "--implementations",
            "--baseline",
            "--rounds",
            "--seconds",
            "--backend",
            "--csv",
            "--json",
            "--raw-dir",
        ];
        match flag.as_str() {
            "-h" | "--help" => return Ok(None),
            "--parse" if inline.is_none() => parse = true,
            "--parse" => return Err("--parse takes no value".into()),
            "--" => positional.extend(args.by_ref()),
            f if f.starts_with('-') => {
                let name = VALUED
                    .into_iter()
                    .find(|&v| v == f)
                    .ok_or_else(|| format!("unknown option {arg:?}"))?;
                let value = inline
                    .or_else(|| args.next())
                    .filter(|v| !v.is_empty())
                    .ok_or_else(|| format!("{name} needs a value"))?;
                if options.insert(name, value).is_some() {
                    return Err(format!("{name} given twice"));
                }
            }
            _ => positional.push(arg),
        }
    }

    let path = |options: &mut BTreeMap<&str, String>, name| options.remove(name).map(PathBuf::from);
    let baseline = options.remove("--baseline");
    let csv = path(&mut options, "--csv");
    let json = path(&mut options, "--json");

    if parse {
        if let Some(name) = options.keys().next() {
            return Err(format!("{name} cannot be used with --parse"));
        }
        if positional.is_empty() {
            return Err("--parse needs NAME=FILE arguments".into());
        }
        let files = positional
            .iter()
            .map(|p| match p.split_once('=') {
                Some((name, file)) if !name.is_empty() && !file.is_empty() => {
                    Ok((name.to_owned(), PathBuf::from(file)))
                }
                _ => Err(format!("--parse: expected NAME=FILE, got {p:?}")),
            })
            .collect::<Result<_, _>>()?;
        return Ok(Some(Args {
            mode: Mode::Parse(files),
            baseline,
            csv,
            json,
        }));
    }

    let rounds = match options.remove("--rounds") {
        None => DEFAULT_ROUNDS,
        Some(v) => match v.parse::<usize>() {
            Ok(n) if n >= 1 => n,
            _ => return Err(format!("--rounds: expected a whole number >= 1, got {v:?}")),
        },
    };
    let seconds = match options.remove("--seconds") {
        None => DEFAULT_SECONDS,
        Some(v) => match v.parse::<u32>() {
            Ok(n) if n >= 1 => n,
            _ => {
                return Err(format!(
                    "--seconds: expected a whole number >= 1, got {v:?}"
                ))
            }
        },
    };
    let implementations = match options.remove("--implementations") {
        None => None,
        Some(list) => {
            let mut chosen = Vec::new();
            for name in list.split(',').map(str::trim) {
                if !IMPLEMENTATIONS.contains(&name) {
                    return Err(format!(
                        "--implementations: unknown implementation {name:?} (known: {})",
                        IMPLEMENTATIONS.join(", ")
                    ));
                }
                if !chosen.iter().any(|c| c == name) {
                    chosen.push(name.to_owned());
                }
            }
            Some(chosen)
        }
    };
    let mut algorithms = Vec::new();
    for name in &positional {
        let canonical = canonical_name(name).ok_or_else(|| {
            format!(
                "unknown algorithm {name:?} (known: {})",
                PARAMETER_SETS.join(" ")
            )
        })?;
        if !algorithms.contains(&canonical) {
            algorithms.push(canonical);
        }
    }
    if algorithms.is_empty() {
        algorithms = DEFAULT_ALGORITHMS.to_vec();
    }
    Ok(Some(Args {
        mode: Mode::Measure(MeasureArgs {
            openssl: path(&mut options, "--openssl"),
            provider_dir: path(&mut options, "--provider-dir"),
            oqsprovider: path(&mut options, "--oqsprovider"),
            oqs_openssl: path(&mut options, "--oqs-openssl"),
            implementations,
            rounds,
            seconds,
            backend: options.remove("--backend"),
            raw_dir: path(&mut options, "--raw-dir"),
            algorithms,
        }),
        baseline,
        csv,
        json,
    }))
}

// ------------------------------------------------------------------- runs

/// What `run` reports besides the comparison: the header line and the JSON
/// fields of the mode.
struct Report {
    header: String,
    comparison: Comparison,
    json: Value,
}

fn run(args: Args) -> Result<(), String> {
    let report = match args.mode {
        Mode::Measure(measure) => run_measure(measure, args.baseline.as_deref())?,
        Mode::Parse(files) => run_parse(&files, args.baseline.as_deref())?,
    };
    println!("{}", report.header);
    println!();
    print!("{}", report.comparison.render());
    if let Some(path) = &args.csv {
        write_file(path, &report.comparison.to_csv())?;
        eprintln!("wrote {}", path.display());
    }
    if let Some(path) = &args.json {
        let mut json = report.json;
        json["comparison"] = report.comparison.to_json();
        let text = serde_json::to_string_pretty(&json)
            .map_err(|e| format!("cannot encode the JSON: {e}"))?;
        write_file(path, &(text + "\n"))?;
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}

/// The baseline: the one asked for, else `native` when present, else the
/// first implementation.
fn choose_baseline(asked: Option<&str>, implementations: &[Implementation]) -> String {
    match asked {
        Some(name) => name.to_owned(),
        None if implementations.iter().any(|i| i.name == NATIVE) => NATIVE.to_owned(),
        None => implementations
            .first()
            .map_or_else(String::new, |i| i.name.clone()),
    }
}

/// `--parse`: one round per file.
fn run_parse(files: &[(String, PathBuf)], baseline: Option<&str>) -> Result<Report, String> {
    let mut implementations: Vec<Implementation> = Vec::new();
    let mut measurements = Vec::new();
    let mut runs = Vec::new();
    let mut sources = Vec::new();
    for (index, (name, path)) in files.iter().enumerate() {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let speed = SpeedRun::parse(&text);
        if speed.is_empty() {
            return Err(format!(
                "{name}: {} holds no KEM result of `openssl speed`",
                path.display()
            ));
        }
        for problem in speed.inconsistencies() {
            eprintln!("warning: {name} ({}): {problem}", path.display());
        }
        let round = 1 + files[..index].iter().filter(|(n, _)| n == name).count();
        match implementations.iter_mut().find(|i| &i.name == name) {
            Some(existing) => {
                if existing.openssl_version.is_none() {
                    existing.openssl_version = speed.version.clone();
                }
            }
            None => implementations.push(Implementation {
                name: name.clone(),
                openssl_version: speed.version.clone(),
            }),
        }
        sources.push(format!(
            "{name}={} ({})",
            path.display(),
            speed.version.as_deref().map_or_else(
                || "OpenSSL version not given".to_owned(),
                |v| format!("OpenSSL {v}")
            )
        ));
        measurements.extend(round_measurements(name, round, &speed, None));
        runs.push(json!({
            "implementation": name,
            "round": round,
            "file": path.display().to_string(),
            "openssl_version": speed.version,
            "results": results_json(&speed, None),
            "inconsistencies": speed.inconsistencies(),
        }));
    }
    let baseline = choose_baseline(baseline, &implementations);
    let comparison =
        Comparison::new(implementations, &baseline, &measurements).map_err(|e| e.to_string())?;
    Ok(Report {
        header: format!(
            "openssl speed outputs: {}; baseline {baseline}",
            sources.join(", ")
        ),
        comparison,
        json: json!({
            "tool": "speed-compare",
            "mode": "parse",
            "environment": environment_json(),
            "runs": runs,
        }),
    })
}

/// The measurements of one run: every headline, or only those of the
/// (child-named) `algorithms` when given.
fn round_measurements(
    implementation: &str,
    round: usize,
    speed: &SpeedRun,
    algorithms: Option<&[String]>,
) -> Vec<Measurement> {
    speed
        .headlines()
        .into_iter()
        .filter(|h| is_requested(&h.algorithm, algorithms))
        .map(|h| Measurement {
            implementation: implementation.to_owned(),
            round,
            algorithm: h.algorithm,
            operation: h.operation,
            ops_per_sec: h.ops_per_sec,
        })
        .collect()
}

/// Whether a printed algorithm is one of `algorithms` (any spelling of the
/// same parameter set); every algorithm is when `algorithms` is `None`.
fn is_requested(algorithm: &str, algorithms: Option<&[String]>) -> bool {
    match algorithms {
        None => true,
        Some(algs) => canonical_name(algorithm)
            .is_some_and(|c| algs.iter().any(|a| canonical_name(a) == Some(c))),
    }
}

/// Every headline of a run with its progress line's count and time.
fn results_json(speed: &SpeedRun, algorithms: Option<&[String]>) -> Vec<Value> {
    speed
        .headlines()
        .into_iter()
        .filter(|h| is_requested(&h.algorithm, algorithms))
        .map(|h| {
            let doing = speed
                .doing
                .iter()
                .find(|d| d.algorithm == h.algorithm && d.operation == h.operation);
            json!({
                "algorithm": h.algorithm,
                "operation": h.operation.name(),
                "ops_per_sec": h.ops_per_sec,
                "seconds_per_op": h.seconds_per_op,
                "source": match h.source { Source::Table => "table", Source::Doing => "doing" },
                "count": doing.map(|d| d.count),
                "elapsed": doing.map(|d| d.elapsed),
            })
        })
        .collect()
}

/// The host, for the JSON.
fn environment_json() -> Value {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_owned())
        });
    json!({
        "os": std::env::consts::OS,
        "arch": std::env::consts::ARCH,
        "cpu": cpu,
        "logical_cpus": std::thread::available_parallelism().map(|n| n.get()).ok(),
        "unix_time": SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).ok(),
    })
}

// ---------------------------------------------------------- OpenSSL binaries

/// What `BIN version`, `BIN version -m` and `BIN speed -help` say.
#[derive(Clone, Debug)]
struct OpensslBinary {
    path: PathBuf,
    /// `OpenSSL 3.5.5 27 Jan 2026 (Library: ...)`.
    version_line: String,
    /// `3.5.5`.
    version: String,
    /// (major, minor).
    series: (u32, u32),
    modules_dir: Option<PathBuf>,
    /// Whether `openssl speed` benchmarks KEMs (`-kem-algorithms`).
    kem_speed: bool,
}

impl OpensslBinary {
    fn probe(path: &Path) -> Result<Self, String> {
        let version_line = openssl_output(path, &["version"])?
            .lines()
            .next()
            .unwrap_or_default()
            .trim()
            .to_owned();
        let version = version_line
            .split_whitespace()
            .nth(1)
            .filter(|_| version_line.starts_with("OpenSSL "))
            .ok_or_else(|| {
                format!(
                    "{}: `version` printed {version_line:?}, not an OpenSSL version",
                    path.display()
                )
            })?
            .to_owned();
        let mut numbers = version
            .split(|c: char| !c.is_ascii_digit())
            .map(|n| n.parse::<u32>().unwrap_or(0));
        let series = (numbers.next().unwrap_or(0), numbers.next().unwrap_or(0));
        let modules_dir = openssl_output(path, &["version", "-m"])
            .ok()
            .and_then(|out| {
                out.lines().find_map(|l| {
                    let dir = l.strip_prefix("MODULESDIR:")?.trim().trim_matches('"');
                    Some(PathBuf::from(dir))
                })
            });
        // `speed -help` exits with a failure status on some releases, so
        // only its text counts.
        let kem_speed = run_openssl(path, &["speed", "-help"])
            .is_ok_and(|(_, help)| help.contains("-kem-algorithms"));
        Ok(Self {
            path: path.to_owned(),
            version_line,
            version,
            series,
            modules_dir,
            kem_speed,
        })
    }

    /// Whether this OpenSSL has its own ML-KEM (3.5 and later).
    fn has_native_ml_kem(&self) -> bool {
        self.series >= (3, 5)
    }

    fn describe(&self) -> String {
        format!("OpenSSL {} ({})", self.version, self.path.display())
    }

    /// An error unless `openssl speed` can measure KEMs.
    fn require_kem_speed(&self, implementation: &str) -> Result<(), String> {
        if self.kem_speed {
            return Ok(());
        }
        Err(format!(
            "{implementation}: {} is {}, whose `openssl speed` cannot benchmark KEMs \
             (its `speed -help` lists no -kem-algorithms; OpenSSL 3.4 and 3.5 have it), \
             so there is nothing to measure. Pass --openssl with an OpenSSL 3.5 binary, \
             e.g. \"$(bash scripts/build-openssl.sh 3.5 | tail -1)/bin/openssl\".",
            self.path.display(),
            self.version_line
        ))
    }
}

/// Whether `BIN args...` (run with `OPENSSL_CONF=/dev/null`) succeeded,
/// and its stdout followed by its stderr.
fn run_openssl(path: &Path, args: &[&str]) -> Result<(bool, String), String> {
    let out = Command::new(path)
        .args(args)
        .env("OPENSSL_CONF", "/dev/null")
        .output()
        .map_err(|e| format!("cannot run {}: {e}", path.display()))?;
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    Ok((out.status.success(), text))
}

/// The output of `BIN args...`; an error when it fails.
fn openssl_output(path: &Path, args: &[&str]) -> Result<String, String> {
    match run_openssl(path, args)? {
        (true, text) => Ok(text),
        (false, text) => Err(format!(
            "`{} {}` failed: {}",
            path.display(),
            args.join(" "),
            text.trim()
        )),
    }
}

/// `--openssl`, else the cached OpenSSL 3.5.5, else `openssl` on PATH.
fn default_openssl() -> PathBuf {
    if let Some(home) = std::env::var_os("HOME") {
        let cached =
            PathBuf::from(home).join(".cache/mlkem-provider/openssl/openssl-3.5.5/bin/openssl");
        if cached.is_file() {
            return cached;
        }
    }
    PathBuf::from("openssl")
}

// ------------------------------------------------------------ measuring

/// One implementation's `openssl speed` command.
struct Plan {
    name: &'static str,
    binary: OpensslBinary,
    /// Arguments after `speed`, before `-seconds`.
    flags: Vec<String>,
    env: Vec<(String, String)>,
    /// The names given to this implementation's `openssl speed`, in the
    /// order of the requested algorithms.
    algorithms: Vec<String>,
}

impl Plan {
    fn argv(&self, seconds: u32) -> Vec<String> {
        let mut argv = vec![self.binary.path.display().to_string(), "speed".to_owned()];
        argv.extend(self.flags.iter().cloned());
        argv.extend(["-seconds".to_owned(), seconds.to_string()]);
        argv.extend(self.algorithms.iter().cloned());
        argv
    }

    /// The full environment of the child that matters here.
    fn env_pairs(&self) -> Vec<(String, String)> {
        let mut env = vec![("OPENSSL_CONF".to_owned(), "/dev/null".to_owned())];
        env.extend(self.env.iter().cloned());
        env
    }

    /// The command as a shell line.
    fn shell_line(&self, seconds: u32) -> String {
        self.env_pairs()
            .iter()
            .map(|(k, v)| format!("{k}={}", shell_quote(v)))
            .chain(self.argv(seconds).iter().map(|a| shell_quote(a)))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

fn shell_quote(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
    {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// oqsprovider's name for a canonical algorithm: `mlkem768` for the pure
/// sets; the hybrids keep their OpenSSL 3.5 names (oqsprovider 0.8+).
fn oqsprovider_name(canonical: &str) -> String {
    match canonical {
        "ML-KEM-512" => "mlkem512".to_owned(),
        "ML-KEM-768" => "mlkem768".to_owned(),
        "ML-KEM-1024" => "mlkem1024".to_owned(),
        other => other.to_owned(),
    }
}

/// The module file and directory of oqsprovider: `--oqsprovider` (a file
/// or a directory holding oqsprovider.so), else MODULESDIR/oqsprovider.so.
fn find_oqsprovider(
    asked: Option<&Path>,
    oqs: &OpensslBinary,
) -> Result<Option<(PathBuf, String)>, String> {
    match asked {
        Some(path) => {
            let module = if path.is_dir() {
                path.join("oqsprovider.so")
            } else {
                path.to_owned()
            };
            if !module.is_file() {
                return Err(format!("--oqsprovider: {} is not a file", module.display()));
            }
            let dir = module
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
                .unwrap_or(Path::new("."))
                .to_owned();
            let name = module
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| OQSPROVIDER.to_owned());
            Ok(Some((dir, name)))
        }
        None => Ok(oqs
            .modules_dir
            .as_ref()
            .filter(|dir| dir.join("oqsprovider.so").is_file())
            .map(|dir| (dir.clone(), OQSPROVIDER.to_owned()))),
    }
}

/// An error unless kem-core has a backend `name` that this CPU runs (the
/// provider would silently fall back to the fastest one).
fn check_backend(name: &str) -> Result<(), String> {
    let known = || {
        BackendKind::ALL
            .iter()
            .map(|k| k.name())
            .collect::<Vec<_>>()
            .join(", ")
    };
    match BackendKind::from_name(name) {
        None => Err(format!(
            "--backend: unknown backend {name:?} (known: {})",
            known()
        )),
        Some(kind) if !kind.is_available() => Err(format!(
            "--backend: this CPU cannot run the {kind} backend (it can run: {})",
            kem_core::available_backends()
                .iter()
                .map(|k| k.name())
                .collect::<Vec<_>>()
                .join(", ")
        )),
        Some(_) => Ok(()),
    }
}

/// Decides which implementations run and how.
fn plan(args: &MeasureArgs) -> Result<Vec<Plan>, String> {
    if let Some(name) = &args.backend {
        check_backend(name)?;
    }
    let openssl_path = args.openssl.clone().unwrap_or_else(default_openssl);
    let openssl = OpensslBinary::probe(&openssl_path)?;
    let oqs_openssl = match &args.oqs_openssl {
        Some(path) => OpensslBinary::probe(path)?,
        None => openssl.clone(),
    };
    let explicit = args.implementations.is_some();
    let wanted: Vec<String> = args
        .implementations
        .clone()
        .unwrap_or_else(|| IMPLEMENTATIONS.map(str::to_owned).to_vec());
    let canonical: Vec<String> = args.algorithms.iter().map(|a| (*a).to_owned()).collect();

    let mut plans = Vec::new();
    for name in &wanted {
        match name.as_str() {
            OURS => {
                openssl.require_kem_speed(OURS)?;
                let dir = args.provider_dir.clone().unwrap_or_else(|| {
                    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/provider")
                });
                let dir = dir.canonicalize().unwrap_or(dir);
                if !dir.join("mlkem.so").is_file() {
                    return Err(format!(
                        "ours: no mlkem.so in {} (build it with `bash scripts/build-provider.sh`, \
                         or pass --provider-dir)",
                        dir.display()
                    ));
                }
                let mut flags = vec!["-provider-path".to_owned(), dir.display().to_string()];
                flags.extend(
                    [
                        "-provider",
                        "mlkem",
                        "-provider",
                        "default",
                        "-propquery",
                        "provider=mlkem",
                    ]
                    .map(str::to_owned),
                );
                plans.push(Plan {
                    name: OURS,
                    binary: openssl.clone(),
                    flags,
                    env: args
                        .backend
                        .iter()
                        .map(|b| ("MLKEM_BACKEND".to_owned(), b.clone()))
                        .collect(),
                    algorithms: canonical.clone(),
                });
            }
            NATIVE => {
                if !openssl.has_native_ml_kem() {
                    eprintln!(
                        "note: native skipped: {} has no ML-KEM of its own (OpenSSL 3.5 and later do)",
                        openssl.describe()
                    );
                    continue;
                }
                openssl.require_kem_speed(NATIVE)?;
                plans.push(Plan {
                    name: NATIVE,
                    binary: openssl.clone(),
                    flags: Vec::new(),
                    env: Vec::new(),
                    algorithms: canonical.clone(),
                });
            }
            OQSPROVIDER => {
                let Some((dir, module)) =
                    find_oqsprovider(args.oqsprovider.as_deref(), &oqs_openssl)?
                else {
                    if explicit {
                        return Err(format!(
                            "oqsprovider: no oqsprovider.so in the MODULESDIR of {} ({}); \
                             pass --oqsprovider MODULE",
                            oqs_openssl.describe(),
                            oqs_openssl
                                .modules_dir
                                .as_ref()
                                .map_or_else(|| "unknown".to_owned(), |d| d.display().to_string())
                        ));
                    }
                    eprintln!(
                        "note: oqsprovider skipped: no oqsprovider.so in the MODULESDIR of {} \
                         (pass --oqsprovider MODULE to include it)",
                        oqs_openssl.describe()
                    );
                    continue;
                };
                oqs_openssl.require_kem_speed(OQSPROVIDER)?;
                if oqs_openssl.has_native_ml_kem() {
                    eprintln!(
                        "warning: oqsprovider disables its own ML-KEM on OpenSSL 3.5 and later, \
                         where the default provider has it: on {} the oqsprovider rows may \
                         measure OpenSSL's native ML-KEM. Use --oqs-openssl with OpenSSL 3.4 \
                         for oqsprovider's own.",
                        oqs_openssl.describe()
                    );
                }
                let mut flags = vec!["-provider-path".to_owned(), dir.display().to_string()];
                flags.extend([
                    "-provider".to_owned(),
                    module,
                    "-provider".to_owned(),
                    "default".to_owned(),
                ]);
                plans.push(Plan {
                    name: OQSPROVIDER,
                    binary: oqs_openssl.clone(),
                    flags,
                    env: Vec::new(),
                    algorithms: canonical.iter().map(|a| oqsprovider_name(a)).collect(),
                });
            }
            _ => unreachable!("implementation names are checked when parsing arguments"),
        }
    }
    if plans.is_empty() {
        return Err("no implementation left to measure (see the notes above)".into());
    }
    Ok(plans)
}

/// The last `lines` lines of `text`, indented.
fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    if all.is_empty() {
        return "  (empty)".to_owned();
    }
    all[all.len().saturating_sub(lines)..]
        .iter()
        .map(|l| format!("  {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Runs one round of one implementation; returns its parsed output and
/// raw stdout/stderr.
fn run_child(plan: &Plan, seconds: u32) -> Result<(SpeedRun, String, String, f64), String> {
    let argv = plan.argv(seconds);
    let line = plan.shell_line(seconds);
    let started = Instant::now();
    let out = Command::new(&argv[0])
        .args(&argv[1..])
        .envs(plan.env_pairs())
        .output()
        .map_err(|e| format!("{}: cannot run `{line}`: {e}", plan.name))?;
    let wall = started.elapsed().as_secs_f64();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if !out.status.success() {
        return Err(format!(
            "{}: `{line}` failed ({}); its stderr ends:\n{}",
            plan.name,
            out.status,
            tail(&stderr, STDERR_TAIL_LINES)
        ));
    }
    // Progress lines go to stderr, the table to stdout.
    let speed = SpeedRun::parse(&format!("{stderr}\n{stdout}"));
    let mut missing = Vec::new();
    for alg in &plan.algorithms {
        for op in Operation::ALL {
            if speed.headline_for(alg, op).is_none() {
                missing.push(format!("{alg} {op}"));
            }
        }
    }
    if !missing.is_empty() {
        return Err(format!(
            "{}: `{line}` printed no result for {}; its stderr ends:\n{}",
            plan.name,
            missing.join(", "),
            tail(&stderr, STDERR_TAIL_LINES)
        ));
    }
    Ok((speed, stdout, stderr, wall))
}

fn run_measure(args: MeasureArgs, baseline: Option<&str>) -> Result<Report, String> {
    let plans = plan(&args)?;
    let implementations: Vec<Implementation> = plans
        .iter()
        .map(|p| Implementation {
            name: p.name.to_owned(),
            openssl_version: Some(p.binary.version.clone()),
        })
        .collect();
    let baseline = choose_baseline(baseline, &implementations);
    if !implementations.iter().any(|i| i.name == baseline) {
        return Err(format!(
            "--baseline {baseline}: not measured (measuring: {})",
            plans.iter().map(|p| p.name).collect::<Vec<_>>().join(", ")
        ));
    }
    if let Some(dir) = &args.raw_dir {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }

    let mut measurements = Vec::new();
    let mut runs = Vec::new();
    for round in 1..=args.rounds {
        for plan in &plans {
            let estimate = u64::from(args.seconds) * 3 * plan.algorithms.len() as u64;
            eprintln!(
                "[round {round}/{}] {}: openssl speed {} (~{estimate} s)",
                args.rounds,
                plan.name,
                plan.algorithms.join(" ")
            );
            let (speed, stdout, stderr, wall) = run_child(plan, args.seconds)?;
            if let Some(dir) = &args.raw_dir {
                let stem = format!("{}-round{round}", plan.name);
                write_file(&dir.join(format!("{stem}.txt")), &stdout)?;
                write_file(&dir.join(format!("{stem}.stderr.txt")), &stderr)?;
            }
            for problem in speed.inconsistencies() {
                eprintln!("warning: {} round {round}: {problem}", plan.name);
            }
            measurements.extend(round_measurements(
                plan.name,
                round,
                &speed,
                Some(&plan.algorithms),
            ));
            runs.push(json!({
                "implementation": plan.name,
                "round": round,
                "command": plan.argv(args.seconds),
                "wall_seconds": wall,
                "openssl_version": speed.version,
                "results": results_json(&speed, Some(&plan.algorithms)),
                "inconsistencies": speed.inconsistencies(),
            }));
        }
    }

    let comparison =
        Comparison::new(implementations, &baseline, &measurements).map_err(|e| e.to_string())?;

    // `ours, native: OpenSSL 3.5.5 (path); oqsprovider: OpenSSL 3.4.1 (path)`
    let mut binaries: Vec<(String, Vec<&str>)> = Vec::new();
    for p in &plans {
        let described = p.binary.describe();
        match binaries.iter_mut().find(|(d, _)| *d == described) {
            Some((_, names)) => names.push(p.name),
            None => binaries.push((described, vec![p.name])),
        }
    }
    let mut header = String::from("openssl speed: ");
    for (i, (described, names)) in binaries.iter().enumerate() {
        if i > 0 {
            header.push_str("; ");
        }
        let _ = write!(header, "{} on {described}", names.join(", "));
    }
    let _ = write!(
        header,
        "; {} round{} x {} s per operation, alternating; backend of ours: {}; baseline {baseline}",
        args.rounds,
        if args.rounds == 1 { "" } else { "s" },
        args.seconds,
        args.backend.as_deref().unwrap_or("detected")
    );

    let implementations_json: Vec<Value> = plans
        .iter()
        .map(|p| {
            json!({
                "name": p.name,
                "openssl": p.binary.path.display().to_string(),
                "openssl_version": p.binary.version,
                "openssl_version_line": p.binary.version_line,
                "command": p.argv(args.seconds),
                "command_line": p.shell_line(args.seconds),
                "env": p.env_pairs().into_iter().collect::<BTreeMap<_, _>>(),
                "algorithms": p.algorithms,
            })
        })
        .collect();
    Ok(Report {
        header,
        comparison,
        json: json!({
            "tool": "speed-compare",
            "mode": "measure",
            "environment": environment_json(),
            "settings": {
                "rounds": args.rounds,
                "seconds": args.seconds,
                "backend": args.backend,
                "algorithms": args.algorithms,
                "baseline": baseline,
            },
            "implementations": implementations_json,
            "runs": runs,
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Result<Option<Args>, String> {
        parse_args(list.iter().map(|s| (*s).to_owned()))
    }

    #[test]
    fn measure_defaults_and_options() {
        let Some(Args {
            mode: Mode::Measure(m),
            baseline,
            ..
        }) = args(&[]).unwrap()
        else {
            panic!("not a measuring run");
        };
        assert_eq!((m.rounds, m.seconds), (3, 2));
        assert_eq!(m.algorithms, DEFAULT_ALGORITHMS);
        assert_eq!(baseline, None);

        let Some(Args {
            mode: Mode::Measure(m),
            baseline,
            csv,
            ..
        }) = args(&[
            "--rounds=5",
            "--seconds",
            "1",
            "--backend",
            "avx2",
            "--implementations",
            "native,ours,native",
            "--baseline",
            "ours",
            "--csv",
            "out.csv",
            "mlkem768",
            "p256_mlkem768",
            "ML-KEM-768",
        ])
        .unwrap()
        else {
            panic!("not a measuring run");
        };
        assert_eq!((m.rounds, m.seconds), (5, 1));
        assert_eq!(m.backend.as_deref(), Some("avx2"));
        assert_eq!(m.implementations.unwrap(), ["native", "ours"]);
        assert_eq!(m.algorithms, ["ML-KEM-768", "SecP256r1MLKEM768"]);
        assert_eq!(baseline.as_deref(), Some("ours"));
        assert_eq!(csv, Some(PathBuf::from("out.csv")));
    }

    #[test]
    fn parse_mode() {
        let Some(Args {
            mode: Mode::Parse(files),
            ..
        }) = args(&["--parse", "native=a.txt", "oqs=b=c.txt"]).unwrap()
        else {
            panic!("not --parse");
        };
        assert_eq!(
            files,
            [
                ("native".to_owned(), PathBuf::from("a.txt")),
                ("oqs".to_owned(), PathBuf::from("b=c.txt"))
            ]
        );
    }

    #[test]
    fn bad_arguments() {
        for (list, message) in [
            (&["--rounds", "0"][..], "--rounds: expected a whole number >= 1, got \"0\""),
            (&["--seconds"], "--seconds needs a value"),
            (&["--frob"], "unknown option \"--frob\""),
            (&["--implementations", "ours,boring"], "--implementations: unknown implementation \"boring\" (known: ours, native, oqsprovider)"),
            (&["rsa2048"], "unknown algorithm \"rsa2048\" (known: ML-KEM-512 ML-KEM-768 ML-KEM-1024 X25519MLKEM768 SecP256r1MLKEM768 SecP384r1MLKEM1024)"),
            (&["--parse", "--rounds", "2", "a=b"], "--rounds cannot be used with --parse"),
            (&["--parse"], "--parse needs NAME=FILE arguments"),
            (&["--parse", "file.txt"], "--parse: expected NAME=FILE, got \"file.txt\""),
            (&["--csv", "a", "--csv", "b"], "--csv given twice"),
            (&["--parse=yes", "a=b"], "--parse takes no value"),
        ] {
            assert_eq!(args(list).err().as_deref(), Some(message), "{list:?}");
        }
        assert!(args(&["--help"]).unwrap().is_none());
    }

    #[test]
    fn oqsprovider_names_and_quoting() {
        assert_eq!(oqsprovider_name("ML-KEM-768"), "mlkem768");
        assert_eq!(oqsprovider_name("X25519MLKEM768"), "X25519MLKEM768");
        assert_eq!(shell_quote("/usr/bin/openssl"), "/usr/bin/openssl");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote(""), "''");
    }

    #[test]
    fn backends_are_checked() {
        assert_eq!(check_backend("portable"), Ok(()));
        assert_eq!(
            check_backend("neon"),
            Err("--backend: unknown backend \"neon\" (known: portable, avx2, avx512)".to_owned())
        );
    }

    #[test]
    fn stderr_tail_keeps_the_last_lines() {
        assert_eq!(tail("a\n\nb\nc\n", 2), "  b\n  c");
        assert_eq!(tail("", 2), "  (empty)");
    }
}
