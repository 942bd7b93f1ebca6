//! `speed-compare`: `openssl speed` on ML-KEM for several implementations,
//! alternating round by round, median ops/s side by side; `--parse` builds
//! the same tables from saved outputs; see `--help`.
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
use std::time::Instant;

use clap::builder::NonEmptyStringValueParser;
use clap::Parser;
use kem_core::BackendKind;
use serde_json::{json, Value};
use test_tools::cli::{self, positive, write_file, Files};
use test_tools::comparison::{Comparison, Implementation, SpeedResult};
use test_tools::measure::Operation;
use test_tools::speed_output::{canonical_name, Source, SpeedRun, PARAMETER_SETS};
use test_tools::system_info;

const OURS: &str = "ours";
const NATIVE: &str = "native";
const OQSPROVIDER: &str = "oqsprovider";
const IMPLEMENTATIONS: [&str; 3] = [OURS, NATIVE, OQSPROVIDER];

const DEFAULT_ROUNDS: usize = 3;
const DEFAULT_SECONDS: u32 = 2;
const DEFAULT_ALGORITHMS: [&str; 3] = ["ML-KEM-512", "ML-KEM-768", "ML-KEM-1024"];

/// Lines of a failed child's stderr quoted in the error.
const STDERR_TAIL_LINES: usize = 12;

/// Runs `openssl speed` on ML-KEM for each implementation, alternating them
/// (ours, native, oqsprovider, ours, ...) so that all see the same machine
/// state, and prints per parameter set the median ops/s over the rounds, s/op
/// (1 / median) and the ratio to the baseline (above 1.00x: faster).
///
/// Implementations: `ours`, the mlkem provider (BIN speed -provider-path
/// DIR -provider mlkem -provider default -propquery provider=mlkem,
/// MLKEM_BACKEND set from --backend); `native`, OpenSSL's own ML-KEM (BIN
/// speed; OpenSSL 3.5 or later only); `oqsprovider` (BIN speed
/// -provider-path MODULEDIR -provider oqsprovider -provider default, with
/// oqsprovider's names: mlkem768, ...), used when --oqsprovider is given or
/// oqsprovider.so is in the MODULESDIR of the oqs OpenSSL (`BIN version
/// -m`).
///
/// With --parse it reads saved outputs instead: NAME=FILE, one round per
/// file (give a NAME several times for several rounds).
#[derive(Parser, Debug)]
#[command(name = "speed-compare", group = clap::ArgGroup::new("measure").multiple(true))]
struct Args {
    /// OpenSSL for ours and native [default:
    /// ~/.cache/mlkem-provider/openssl/openssl-3.5.5/bin/openssl if present,
    /// else `openssl` on PATH]
    #[arg(long, value_name = "BIN", value_parser = cli::path, group = "measure")]
    openssl: Option<PathBuf>,
    /// Directory holding mlkem.so [default: target/provider of this
    /// workspace; scripts/build-provider.sh fills it]
    #[arg(long, value_name = "DIR", value_parser = cli::path, group = "measure")]
    provider_dir: Option<PathBuf>,
    /// oqsprovider.so, or the directory holding it
    #[arg(long, value_name = "MODULE", value_parser = cli::path, group = "measure")]
    oqsprovider: Option<PathBuf>,
    /// OpenSSL for oqsprovider [default: --openssl]
    #[arg(long, value_name = "BIN", value_parser = cli::path, group = "measure")]
    oqs_openssl: Option<PathBuf>,
    /// Comma-separated subset of ours,native,oqsprovider
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = IMPLEMENTATIONS, group = "measure")]
    implementations: Vec<String>,
    /// Implementation the ratios divide by [default: native when measured,
    /// else the first implementation]
    #[arg(long, value_name = "NAME", value_parser = NonEmptyStringValueParser::new())]
    baseline: Option<String>,
    /// Rounds [default: 3; 1 with --quick]
    #[arg(long, value_name = "N", value_parser = positive, group = "measure")]
    rounds: Option<usize>,
    /// Seconds per operation per round [default: 2; 1 with --quick]
    #[arg(long, value_name = "S", value_parser = clap::value_parser!(u32).range(1..), group = "measure")]
    seconds: Option<u32>,
    /// One round of 1 s per operation, for a smoke run
    #[arg(long, group = "measure")]
    quick: bool,
    /// kem-core backend of ours: portable, avx2, avx512 [default: the one
    /// the provider detects]
    #[arg(long, value_name = "NAME", value_parser = NonEmptyStringValueParser::new(), group = "measure")]
    backend: Option<String>,
    /// Save each run's stdout as DIR/<impl>-round<k>.txt (and its stderr as
    /// DIR/<impl>-round<k>.stderr.txt)
    #[arg(long, value_name = "DIR", value_parser = cli::path, group = "measure")]
    raw_dir: Option<PathBuf>,
    /// Read saved outputs instead of measuring: NAME=FILE arguments
    #[arg(long, conflicts_with = "measure")]
    parse: bool,
    #[command(flatten)]
    files: Files,
    /// ML-KEM-512 ML-KEM-768 ML-KEM-1024 (the default), X25519MLKEM768,
    /// SecP256r1MLKEM768, SecP384r1MLKEM1024 (oqsprovider spellings such as
    /// mlkem768 or p256_mlkem768 are accepted too); NAME=FILE with --parse
    #[arg(value_name = "ALGORITHM")]
    positional: Vec<String>,
}

impl Args {
    fn rounds(&self) -> usize {
        self.rounds
            .unwrap_or(if self.quick { 1 } else { DEFAULT_ROUNDS })
    }

    fn seconds(&self) -> u32 {
        self.seconds
            .unwrap_or(if self.quick { 1 } else { DEFAULT_SECONDS })
    }

    /// The implementations asked for, each once; `None` for all.
    fn implementations(&self) -> Option<Vec<String>> {
        let mut chosen: Vec<String> = Vec::new();
        for name in &self.implementations {
            if !chosen.contains(name) {
                chosen.push(name.clone());
            }
        }
        (!chosen.is_empty()).then_some(chosen)
    }

    /// The canonical names of the algorithms asked for, each once.
    fn algorithms(&self) -> Result<Vec<&'static str>, String> {
        let mut algorithms = Vec::new();
        for name in &self.positional {
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
        Ok(if algorithms.is_empty() {
            DEFAULT_ALGORITHMS.to_vec()
        } else {
            algorithms
        })
    }

    /// `--parse`'s NAME=FILE pairs.
    fn files(&self) -> Result<Vec<(String, PathBuf)>, String> {
        if self.positional.is_empty() {
            return Err("--parse needs NAME=FILE arguments".into());
        }
        self.positional
            .iter()
            .map(|p| match p.split_once('=') {
                Some((name, file)) if !name.is_empty() && !file.is_empty() => {
                    Ok((name.to_owned(), PathBuf::from(file)))
                }
                _ => Err(format!("--parse: expected NAME=FILE, got {p:?}")),
            })
            .collect()
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    let checked = match args.parse {
        true => args.files().map(|_| ()),
        false => args.algorithms().map(|_| ()),
    };
    if let Err(e) = checked {
        cli::usage_error::<Args>(e);
    }
    cli::exit("speed-compare", run(args))
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
    let baseline = args.baseline.as_deref();
    let report = match args.parse {
        false => run_measure(&args, baseline)?,
        true => run_parse(&args.files()?, baseline)?,
    };
    println!("{}\n", report.header);
    print!("{}", report.comparison.render());
    let mut json = report.json;
    json["comparison"] = report.comparison.to_json();
    args.files.write(&report.comparison.table(None), json)
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
    let comparison = Comparison::new(implementations, &baseline, &measurements)?;
    Ok(Report {
        header: format!(
            "openssl speed outputs: {}; baseline {baseline}",
            sources.join(", ")
        ),
        comparison,
        json: json!({
            "tool": "speed-compare",
            "mode": "parse",
            "environment": system_info::environment_json(),
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
) -> Vec<SpeedResult> {
    speed
        .headlines()
        .into_iter()
        .filter(|h| is_requested(&h.algorithm, algorithms))
        .map(|h| SpeedResult {
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
                "operation": h.operation.label(),
                "ops_per_sec": h.ops_per_sec,
                "seconds_per_op": h.seconds_per_op,
                "source": match h.source { Source::Table => "table", Source::Doing => "doing" },
                "count": doing.map(|d| d.count),
                "elapsed": doing.map(|d| d.elapsed),
            })
        })
        .collect()
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

/// `LD_LIBRARY_PATH` for an `openssl` installed as PREFIX/bin/openssl whose
/// libcrypto sits in PREFIX/lib64 or PREFIX/lib: a build without an rpath
/// does not find it there by itself. The directory goes before any
/// `LD_LIBRARY_PATH` already set; `None` when neither holds a libcrypto
/// (or `BIN` is a bare name found on `PATH`).
fn library_path_env(binary: &Path) -> Option<(String, String)> {
    let prefix = binary.parent()?.parent()?;
    let holds_libcrypto = |dir: &Path| {
        std::fs::read_dir(dir).is_ok_and(|entries| {
            entries
                .flatten()
                .any(|e| e.file_name().to_string_lossy().starts_with("libcrypto.so"))
        })
    };
    let dir = ["lib64", "lib"]
        .iter()
        .map(|name| prefix.join(name))
        .find(|dir| holds_libcrypto(dir))?;
    let mut value = dir.display().to_string();
    if let Some(old) = std::env::var_os("LD_LIBRARY_PATH").filter(|old| !old.is_empty()) {
        value.push(':');
        value.push_str(&old.to_string_lossy());
    }
    Some(("LD_LIBRARY_PATH".to_owned(), value))
}

/// Whether `BIN args...` (run with `OPENSSL_CONF=/dev/null`) succeeded,
/// and its stdout followed by its stderr.
fn run_openssl(path: &Path, args: &[&str]) -> Result<(bool, String), String> {
    let out = Command::new(path)
        .args(args)
        .env("OPENSSL_CONF", "/dev/null")
        .envs(library_path_env(path))
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
        env.extend(library_path_env(&self.binary.path));
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
fn plan(args: &Args) -> Result<Vec<Plan>, String> {
    if let Some(name) = &args.backend {
        check_backend(name)?;
    }
    let openssl_path = args.openssl.clone().unwrap_or_else(default_openssl);
    let openssl = OpensslBinary::probe(&openssl_path)?;
    let oqs_openssl = match &args.oqs_openssl {
        Some(path) => OpensslBinary::probe(path)?,
        None => openssl.clone(),
    };
    let explicit = args.implementations().is_some();
    let wanted: Vec<String> = args
        .implementations()
        .unwrap_or_else(|| IMPLEMENTATIONS.map(str::to_owned).to_vec());
    let canonical: Vec<String> = args.algorithms()?.iter().map(|a| (*a).to_owned()).collect();

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
        for op in Operation::EVP {
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

fn run_measure(args: &Args, baseline: Option<&str>) -> Result<Report, String> {
    let plans = plan(args)?;
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
    for round in 1..=args.rounds() {
        for plan in &plans {
            let estimate = u64::from(args.seconds()) * 3 * plan.algorithms.len() as u64;
            eprintln!(
                "[round {round}/{}] {}: openssl speed {} (~{estimate} s)",
                args.rounds(),
                plan.name,
                plan.algorithms.join(" ")
            );
            let (speed, stdout, stderr, wall) = run_child(plan, args.seconds())?;
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
                "command": plan.argv(args.seconds()),
                "wall_seconds": wall,
                "openssl_version": speed.version,
                "results": results_json(&speed, Some(&plan.algorithms)),
                "inconsistencies": speed.inconsistencies(),
            }));
        }
    }

    let comparison = Comparison::new(implementations, &baseline, &measurements)?;

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
        args.rounds(),
        if args.rounds() == 1 { "" } else { "s" },
        args.seconds(),
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
                "command": p.argv(args.seconds()),
                "command_line": p.shell_line(args.seconds()),
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
            "environment": system_info::environment_json(),
            "settings": {
                "rounds": args.rounds(),
                "seconds": args.seconds(),
                "backend": args.backend,
                "algorithms": args.algorithms()?,
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
    use test_tools::cli::try_parse;

    #[test]
    fn libraries_beside_the_binary_go_on_the_loader_path() {
        let root = std::env::temp_dir().join(format!("speed-compare-lib-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("bin")).unwrap();
        let binary = root.join("bin/openssl");
        // No libcrypto beside it, or a bare name: nothing to add.
        assert_eq!(library_path_env(&binary), None);
        assert_eq!(library_path_env(Path::new("openssl")), None);
        std::fs::create_dir_all(root.join("lib64")).unwrap();
        std::fs::write(root.join("lib64/libcrypto.so.3"), b"").unwrap();
        let (name, value) = library_path_env(&binary).expect("lib64 holds libcrypto");
        assert_eq!(name, "LD_LIBRARY_PATH");
        assert!(
            value.starts_with(&root.join("lib64").display().to_string()),
            "{value}"
        );
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn measure_defaults_and_options() {
        let a = try_parse::<Args>(&[]).unwrap();
        assert_eq!((a.rounds(), a.seconds(), a.baseline.clone()), (3, 2, None));
        assert_eq!(a.algorithms().unwrap(), DEFAULT_ALGORITHMS);
        let a = try_parse::<Args>(&[
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
        .unwrap();
        assert_eq!((a.rounds(), a.seconds()), (5, 1));
        assert_eq!(a.backend.as_deref(), Some("avx2"));
        assert_eq!(a.files.csv, Some(PathBuf::from("out.csv")));
        assert_eq!(a.implementations().unwrap(), ["native", "ours"]);
        assert_eq!(a.algorithms().unwrap(), ["ML-KEM-768", "SecP256r1MLKEM768"]);
        assert_eq!(a.baseline.as_deref(), Some("ours"));
        assert_eq!(
            (
                try_parse::<Args>(&["--quick"]).unwrap().rounds(),
                try_parse::<Args>(&["--quick"]).unwrap().seconds()
            ),
            (1, 1)
        );
    }

    #[test]
    fn parse_mode() {
        let a = try_parse::<Args>(&["--parse", "native=a.txt", "oqs=b=c.txt"]).unwrap();
        assert!(a.parse);
        let expected = [
            ("native".to_owned(), PathBuf::from("a.txt")),
            ("oqs".to_owned(), PathBuf::from("b=c.txt")),
        ];
        assert_eq!(a.files().unwrap(), expected);
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
