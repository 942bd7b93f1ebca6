//! `speed-compare`: `openssl speed` on ML-KEM for several implementations,
//! alternating round by round, median ops/s side by side; `--parse` builds
//! the same tables from saved outputs; see `--help`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

use clap::builder::NonEmptyStringValueParser;
use clap::Parser;
use kem_core::BackendKind;
use serde_json::{json, Value};
use test_tools::cli::{self, positive, unique, write_file, Files};
use test_tools::comparison::{Comparison, Implementation, SpeedResult};
use test_tools::measure::Operation;
use test_tools::openssl_cache;
use test_tools::speed_output::{canonical_name, SpeedRun, PARAMETER_SETS};
use test_tools::system_info;

const OURS: &str = "ours";
const NATIVE: &str = "native";
const OQSPROVIDER: &str = "oqsprovider";
const IMPLEMENTATIONS: [&str; 3] = [OURS, NATIVE, OQSPROVIDER];
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
    /// OpenSSL for ours and native [default: the newest 3.5 that
    /// scripts/build-openssl.sh cached ($MLKEM_OPENSSL_CACHE, else
    /// ~/.cache/mlkem-provider/openssl) if present, else `openssl` on PATH]
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
    /// Rounds (1 with --quick)
    #[arg(long, value_name = "N", value_parser = positive, group = "measure")]
    #[arg(default_value_t = 3, default_value_if("quick", "true", "1"))]
    rounds: usize,
    /// Seconds per operation per round (1 with --quick)
    #[arg(long, value_name = "S", value_parser = clap::value_parser!(u32).range(1..), group = "measure")]
    #[arg(default_value_t = 2, default_value_if("quick", "true", "1"))]
    seconds: u32,
    /// One round of 1 s per operation, for a smoke run
    #[arg(long, group = "measure")]
    quick: bool,
    /// kem-core backend of ours: portable, avx2, avx512-keccak, avx512
    /// [default: the one the provider detects]
    #[arg(long, value_name = "NAME", value_parser = NonEmptyStringValueParser::new(), group = "measure")]
    backend: Option<String>,
    /// Save each run's stdout as DIR/IMPL-roundK.txt (and its stderr as
    /// DIR/IMPL-roundK.stderr.txt)
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
    /// The implementations asked for, each once (all when none is).
    fn implementations(&self) -> Vec<&'static str> {
        let known = |name: &String| IMPLEMENTATIONS.into_iter().find(|known| known == name);
        match self.implementations.is_empty() {
            true => IMPLEMENTATIONS.to_vec(),
            false => unique(self.implementations.iter().filter_map(known)),
        }
    }

    /// The canonical names of the algorithms asked for, each once.
    fn algorithms(&self) -> Result<Vec<&'static str>, String> {
        let canonical = self.positional.iter().map(|name| {
            canonical_name(name).ok_or_else(|| {
                let known = PARAMETER_SETS.join(" ");
                format!("unknown algorithm {name:?} (known: {known})")
            })
        });
        let algorithms = unique(canonical.collect::<Result<Vec<_>, _>>()?);
        Ok(match algorithms.is_empty() {
            true => DEFAULT_ALGORITHMS.to_vec(),
            false => algorithms,
        })
    }

    /// `--parse`'s NAME=FILE pairs.
    fn files(&self) -> Result<Vec<(String, PathBuf)>, String> {
        if self.positional.is_empty() {
            return Err("--parse needs NAME=FILE arguments".into());
        }
        let pair = |p: &String| match p.split_once('=') {
            Some((name, file)) if !name.is_empty() && !file.is_empty() => {
                Ok((name.to_owned(), PathBuf::from(file)))
            }
            _ => Err(format!("--parse: expected NAME=FILE, got {p:?}")),
        };
        self.positional.iter().map(pair).collect()
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    let checked = match args.parse {
        true => args.files().map(drop),
        false => args.algorithms().map(drop),
    };
    if let Err(e) = checked {
        cli::usage_error::<Args>(e);
    }
    cli::exit("speed-compare", run(args))
}

/// What a mode reports: the header line, the comparison and the JSON
/// fields of the mode.
type Report = (String, Comparison, Value);

fn run(args: Args) -> Result<(), String> {
    let (header, comparison, mut json) = match args.parse {
        false => run_measure(&args)?,
        true => run_parse(&args.files()?, args.baseline.as_deref())?,
    };
    println!("{header}\n");
    print!("{}", comparison.render());
    json["comparison"] = comparison.to_json();
    args.files.write(&comparison.table(None), json)
}

/// The baseline: the one asked for, else `native` when present, else the
/// first implementation.
fn choose_baseline(asked: Option<&str>, implementations: &[Implementation]) -> String {
    let native = implementations.iter().find(|i| i.name == NATIVE);
    let chosen = asked.or(native.or(implementations.first()).map(|i| i.name.as_str()));
    chosen.unwrap_or_default().to_owned()
}

/// The results of every `openssl speed` run, and each run's JSON record.
#[derive(Default)]
struct Runs {
    results: Vec<SpeedResult>,
    records: Vec<Value>,
}

impl Runs {
    /// Adds one round of `implementation`: every headline, or those of the
    /// parameter sets `only`; warns of its inconsistencies as
    /// `warning: <label>: ...`; `record` gets the results.
    fn add(
        &mut self,
        implementation: &str,
        round: usize,
        speed: &SpeedRun,
        label: &str,
        only: Option<&[&str]>,
        mut record: Value,
    ) {
        let mut headlines = speed.headlines();
        let requested =
            |set: Option<&str>| only.is_none_or(|only| set.is_some_and(|s| only.contains(&s)));
        headlines.retain(|h| requested(canonical_name(&h.algorithm)));
        let mut results = Vec::new();
        for h in headlines {
            results.push(json!(h));
            self.results.push(SpeedResult {
                implementation: implementation.to_owned(),
                round,
                algorithm: h.algorithm,
                operation: h.operation,
                ops_per_sec: h.ops_per_sec,
            });
        }
        let inconsistencies = speed.inconsistencies();
        for problem in &inconsistencies {
            eprintln!("warning: {label}: {problem}");
        }
        record["implementation"] = implementation.into();
        record["round"] = round.into();
        record["openssl_version"] = json!(speed.version);
        record["results"] = results.into();
        record["inconsistencies"] = json!(inconsistencies);
        self.records.push(record);
    }
}

/// `--parse`: one round per file.
fn run_parse(files: &[(String, PathBuf)], baseline: Option<&str>) -> Result<Report, String> {
    let mut implementations: Vec<Implementation> = Vec::new();
    let mut runs = Runs::default();
    let mut sources = Vec::new();
    for (index, (name, path)) in files.iter().enumerate() {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let speed = SpeedRun::parse(&text);
        if speed.is_empty() {
            let path = path.display();
            return Err(format!(
                "{name}: {path} holds no KEM result of `openssl speed`"
            ));
        }
        match implementations.iter_mut().find(|i| &i.name == name) {
            Some(known) => {
                known.openssl_version = known.openssl_version.take().or(speed.version.clone())
            }
            None => implementations.push(Implementation::new(name, speed.version.as_deref())),
        }
        let version = speed.version.as_deref().map(|v| format!("OpenSSL {v}"));
        let version = version.unwrap_or_else(|| "OpenSSL version not given".to_owned());
        sources.push(format!("{name}={} ({version})", path.display()));
        let round = 1 + files[..index].iter().filter(|(n, _)| n == name).count();
        let label = format!("{name} ({})", path.display());
        let record = json!({ "file": path.display().to_string() });
        runs.add(name, round, &speed, &label, None, record);
    }
    let baseline = choose_baseline(baseline, &implementations);
    let comparison = Comparison::new(implementations, &baseline, &runs.results)?;
    let sources = sources.join(", ");
    let json = json!({
        "tool": "speed-compare",
        "mode": "parse",
        "environment": system_info::environment_json(),
        "runs": runs.records,
    });
    let header = format!("openssl speed outputs: {sources}; baseline {baseline}");
    Ok((header, comparison, json))
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
    /// Whether it has its own ML-KEM (3.5 and later).
    native_ml_kem: bool,
    modules_dir: Option<PathBuf>,
    /// Whether `openssl speed` benchmarks KEMs (`-kem-algorithms`).
    kem_speed: bool,
}

impl OpensslBinary {
    fn probe(path: &Path) -> Result<Self, String> {
        let (ok, out) = run_openssl(path, &["version"])?;
        let failed = || format!("`{} version` failed: {}", path.display(), out.trim());
        if !ok {
            return Err(failed());
        }
        let version_line = out.lines().next().unwrap_or_default().trim().to_owned();
        let Some(version) = version_line
            .strip_prefix("OpenSSL ")
            .and_then(|v| v.split_whitespace().next())
        else {
            let path = path.display();
            return Err(format!(
                "{path}: `version` printed {version_line:?}, not an OpenSSL version"
            ));
        };
        let mut numbers = version.split('.').map(|n| n.parse().unwrap_or(0));
        let series: (u32, u32) = (numbers.next().unwrap_or(0), numbers.next().unwrap_or(0));
        let modules = run_openssl(path, &["version", "-m"]).unwrap_or_default().1;
        let modules_dir = modules.lines().find_map(|l| {
            let dir = l.strip_prefix("MODULESDIR:")?.trim().trim_matches('"');
            Some(PathBuf::from(dir))
        });
        // `speed -help` exits with a failure status on some releases, so
        // only its text counts.
        let help = run_openssl(path, &["speed", "-help"]);
        Ok(Self {
            path: path.to_owned(),
            version: version.to_owned(),
            version_line,
            native_ml_kem: series >= (3, 5),
            modules_dir,
            kem_speed: help.is_ok_and(|(_, help)| help.contains("-kem-algorithms")),
        })
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
/// libcrypto sits in PREFIX/lib64 or PREFIX/lib (a build without an rpath
/// does not find it there), before any `LD_LIBRARY_PATH` already set;
/// `None` when neither holds a libcrypto or `BIN` is a bare name.
fn library_path_env(binary: &Path) -> Option<(String, String)> {
    let prefix = binary.parent()?.parent()?;
    let holds_libcrypto = |dir: &PathBuf| {
        let mut entries = std::fs::read_dir(dir).into_iter().flatten().flatten();
        entries.any(|e| e.file_name().to_string_lossy().starts_with("libcrypto.so"))
    };
    let dir = ["lib64", "lib"].map(|name| prefix.join(name));
    let mut value = dir
        .iter()
        .find(|dir| holds_libcrypto(dir))?
        .display()
        .to_string();
    if let Some(old) = std::env::var_os("LD_LIBRARY_PATH").filter(|old| !old.is_empty()) {
        value = format!("{value}:{}", old.to_string_lossy());
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
    let text = String::from_utf8_lossy(&[out.stdout, out.stderr].concat()).into_owned();
    Ok((out.status.success(), text))
}

/// The cached OpenSSL 3.5 (scripts/build-openssl.sh's) if present, else
/// `openssl` on PATH.
fn default_openssl() -> PathBuf {
    openssl_cache::cached("3.5")
        .map(|prefix| prefix.join("bin/openssl"))
        .unwrap_or_else(|| "openssl".into())
}

// ------------------------------------------------------------ measuring

/// One implementation's `openssl speed` command.
struct Plan {
    name: &'static str,
    binary: OpensslBinary,
    /// The names given to this implementation's `openssl speed`, in the
    /// order of the requested algorithms.
    algorithms: Vec<String>,
    /// `BIN speed FLAGS... -seconds S ALGORITHM...`.
    argv: Vec<String>,
    /// The child's environment, as far as it matters here.
    env: Vec<(String, String)>,
}

impl Plan {
    /// The command as a shell line.
    fn shell_line(&self) -> String {
        let env = self
            .env
            .iter()
            .map(|(k, v)| format!("{k}={}", shell_quote(v)));
        let argv = self.argv.iter().map(|a| shell_quote(a));
        env.chain(argv).collect::<Vec<_>>().join(" ")
    }
}

/// `-provider-path DIR -provider MODULE -provider default`, then `extra`.
fn provider_flags(dir: &Path, module: &str, extra: &[&str]) -> Vec<String> {
    let dir = dir.display().to_string();
    let load = ["-provider", module, "-provider", "default"];
    let flags = ["-provider-path", &dir]
        .into_iter()
        .chain(load)
        .chain(extra.iter().copied());
    flags.map(str::to_owned).collect()
}

fn shell_quote(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c);
    match !word.is_empty() && word.chars().all(plain) {
        true => word.to_owned(),
        false => format!("'{}'", word.replace('\'', r"'\''")),
    }
}

/// oqsprovider's name for a canonical algorithm: `mlkem768` for the pure
/// sets; the hybrids keep their OpenSSL 3.5 names (oqsprovider 0.8+).
fn oqsprovider_name(canonical: &str) -> String {
    match canonical.strip_prefix("ML-KEM-") {
        Some(bits) => format!("mlkem{bits}"),
        None => canonical.to_owned(),
    }
}

/// The directory and module name of oqsprovider: `--oqsprovider` (a file
/// or a directory holding oqsprovider.so), else MODULESDIR/oqsprovider.so.
fn find_oqsprovider(
    asked: Option<&Path>,
    oqs: &OpensslBinary,
) -> Result<Option<(PathBuf, String)>, String> {
    let Some(path) = asked else {
        let dir = oqs.modules_dir.as_ref();
        let dir = dir.filter(|dir| dir.join("oqsprovider.so").is_file());
        return Ok(dir.map(|dir| (dir.clone(), OQSPROVIDER.to_owned())));
    };
    let module = match path.is_dir() {
        true => path.join("oqsprovider.so"),
        false => path.to_owned(),
    };
    if !module.is_file() {
        return Err(format!("--oqsprovider: {} is not a file", module.display()));
    }
    let dir = module.parent().filter(|d| !d.as_os_str().is_empty());
    let name = module.file_stem().map(|s| s.to_string_lossy().into_owned());
    let dir = dir.unwrap_or(Path::new(".")).to_owned();
    Ok(Some((dir, name.unwrap_or_else(|| OQSPROVIDER.to_owned()))))
}

/// An error unless kem-core has a backend `name` that this CPU runs (the
/// provider would silently fall back to the fastest one).
fn check_backend(name: &str) -> Result<(), String> {
    let names = |kinds: &[BackendKind]| kinds.iter().map(|k| k.name()).collect::<Vec<_>>();
    match BackendKind::from_name(name) {
        None => Err(format!(
            "--backend: unknown backend {name:?} (known: {})",
            names(BackendKind::ALL).join(", ")
        )),
        Some(kind) if !kind.is_available() => Err(format!(
            "--backend: this CPU cannot run the {kind} backend (it can run: {})",
            names(&kem_core::available_backends()).join(", ")
        )),
        Some(_) => Ok(()),
    }
}

/// Decides which implementations run and how.
fn plan(args: &Args) -> Result<Vec<Plan>, String> {
    if let Some(name) = &args.backend {
        check_backend(name)?;
    }
    let openssl = OpensslBinary::probe(&args.openssl.clone().unwrap_or_else(default_openssl))?;
    let oqs_openssl = match &args.oqs_openssl {
        Some(path) => OpensslBinary::probe(path)?,
        None => openssl.clone(),
    };
    let canonical: Vec<String> = args.algorithms()?.iter().map(|a| a.to_string()).collect();
    let mut plans = Vec::new();
    for name in args.implementations() {
        // The binary, the flags before -seconds, the algorithms' names for
        // it, and ours' MLKEM_BACKEND.
        let (binary, flags, algorithms, backend) = match name {
            OURS => {
                openssl.require_kem_speed(OURS)?;
                let dir = args.provider_dir.clone();
                let dir = dir.unwrap_or_else(cli::default_provider_dir);
                let dir = dir.canonicalize().unwrap_or(dir);
                cli::require_provider(&dir).map_err(|e| format!("ours: {e}"))?;
                let query = ["-propquery", "provider=mlkem"];
                let flags = provider_flags(&dir, "mlkem", &query);
                (&openssl, flags, canonical.clone(), args.backend.clone())
            }
            NATIVE if !openssl.native_ml_kem => {
                eprintln!(
                    "note: native skipped: {} has no ML-KEM of its own (OpenSSL 3.5 and later do)",
                    openssl.describe()
                );
                continue;
            }
            NATIVE => {
                openssl.require_kem_speed(NATIVE)?;
                (&openssl, Vec::new(), canonical.clone(), None)
            }
            _ => {
                let oqs = &oqs_openssl;
                let Some((dir, module)) = find_oqsprovider(args.oqsprovider.as_deref(), oqs)?
                else {
                    let modules = oqs.modules_dir.as_ref().map(|d| d.display().to_string());
                    let modules = modules.unwrap_or_else(|| "unknown".to_owned());
                    let describe = oqs.describe();
                    if !args.implementations.is_empty() {
                        return Err(format!(
                            "oqsprovider: no oqsprovider.so in the MODULESDIR of {describe} ({modules}); \
                             pass --oqsprovider MODULE"
                        ));
                    }
                    eprintln!(
                        "note: oqsprovider skipped: no oqsprovider.so in the MODULESDIR of {describe} \
                         (pass --oqsprovider MODULE to include it)"
                    );
                    continue;
                };
                oqs.require_kem_speed(OQSPROVIDER)?;
                if oqs.native_ml_kem {
                    eprintln!(
                        "warning: oqsprovider disables its own ML-KEM on OpenSSL 3.5 and later, \
                         where the default provider has it: on {} the oqsprovider rows may \
                         measure OpenSSL's native ML-KEM. Use --oqs-openssl with OpenSSL 3.4 \
                         for oqsprovider's own.",
                        oqs.describe()
                    );
                }
                let names = canonical.iter().map(|a| oqsprovider_name(a)).collect();
                (oqs, provider_flags(&dir, &module, &[]), names, None)
            }
        };
        let command = [binary.path.display().to_string(), "speed".to_owned()];
        let seconds = ["-seconds".to_owned(), args.seconds.to_string()];
        let argv = [&command[..], &flags, &seconds, &algorithms].concat();
        let conf = ("OPENSSL_CONF".to_owned(), "/dev/null".to_owned());
        let backend = backend.map(|b| ("MLKEM_BACKEND".to_owned(), b));
        let env = std::iter::once(conf)
            .chain(library_path_env(&binary.path))
            .chain(backend)
            .collect();
        let binary = binary.clone();
        plans.push(Plan {
            name,
            binary,
            algorithms,
            argv,
            env,
        });
    }
    if plans.is_empty() {
        return Err("no implementation left to measure (see the notes above)".into());
    }
    Ok(plans)
}

/// The last `lines` non-blank lines of `text`, indented.
fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let last = all[all.len().saturating_sub(lines)..].iter();
    let tail: Vec<String> = last.map(|l| format!("  {l}")).collect();
    match tail.is_empty() {
        true => "  (empty)".to_owned(),
        false => tail.join("\n"),
    }
}

/// Runs one round of one implementation; returns its parsed output, raw
/// stdout and stderr, and wall time in seconds.
fn run_child(plan: &Plan) -> Result<(SpeedRun, String, String, f64), String> {
    let (argv, line) = (&plan.argv, plan.shell_line());
    let started = Instant::now();
    let out = Command::new(&argv[0])
        .args(&argv[1..])
        .envs(plan.env.iter().cloned())
        .output()
        .map_err(|e| format!("{}: cannot run `{line}`: {e}", plan.name))?;
    let wall = started.elapsed().as_secs_f64();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let failure = |what: String| {
        let name = plan.name;
        let tail = tail(&stderr, STDERR_TAIL_LINES);
        format!("{name}: `{line}` {what}; its stderr ends:\n{tail}")
    };
    if !out.status.success() {
        return Err(failure(format!("failed ({})", out.status)));
    }
    // Progress lines go to stderr, the table to stdout.
    let speed = SpeedRun::parse(&format!("{stderr}\n{stdout}"));
    let all = plan.algorithms.iter();
    let all = all.flat_map(|alg| Operation::EVP.map(|op| (alg, op)));
    let missing = all.filter(|(alg, op)| speed.headline_for(alg, *op).is_none());
    let missing: Vec<String> = missing.map(|(alg, op)| format!("{alg} {op}")).collect();
    if !missing.is_empty() {
        return Err(failure(format!(
            "printed no result for {}",
            missing.join(", ")
        )));
    }
    Ok((speed, stdout, stderr, wall))
}

fn run_measure(args: &Args) -> Result<Report, String> {
    let plans = plan(args)?;
    let implementations: Vec<Implementation> = plans
        .iter()
        .map(|p| Implementation::new(p.name, Some(&p.binary.version)))
        .collect();
    let baseline = choose_baseline(args.baseline.as_deref(), &implementations);
    if !implementations.iter().any(|i| i.name == baseline) {
        let measured = plans.iter().map(|p| p.name).collect::<Vec<_>>().join(", ");
        return Err(format!(
            "--baseline {baseline}: not measured (measuring: {measured})"
        ));
    }
    if let Some(dir) = &args.raw_dir {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let (rounds, seconds, canonical) = (args.rounds, args.seconds, args.algorithms()?);
    let mut runs = Runs::default();
    for round in 1..=rounds {
        for plan in &plans {
            let estimate = u64::from(seconds) * 3 * plan.algorithms.len() as u64;
            let algorithms = plan.algorithms.join(" ");
            let name = plan.name;
            eprintln!(
                "[round {round}/{rounds}] {name}: openssl speed {algorithms} (~{estimate} s)"
            );
            let (speed, stdout, stderr, wall) = run_child(plan)?;
            if let Some(dir) = &args.raw_dir {
                for (suffix, text) in [("", &stdout), (".stderr", &stderr)] {
                    write_file(&dir.join(format!("{name}-round{round}{suffix}.txt")), text)?;
                }
            }
            let label = format!("{name} round {round}");
            let record = json!({ "command": plan.argv, "wall_seconds": wall });
            runs.add(name, round, &speed, &label, Some(&canonical), record);
        }
    }
    let comparison = Comparison::new(implementations, &baseline, &runs.results)?;

    // `ours, native on OpenSSL 3.5.5 (path); oqsprovider on OpenSSL 3.4.1 (path)`
    let binaries = unique(plans.iter().map(|p| p.binary.describe())).into_iter();
    let binaries = binaries.map(|described| {
        let on = plans.iter().filter(|p| p.binary.describe() == described);
        format!(
            "{} on {described}",
            on.map(|p| p.name).collect::<Vec<_>>().join(", ")
        )
    });
    let header = format!(
        "openssl speed: {}; {rounds} round{} x {seconds} s per operation, alternating; \
         backend of ours: {}; baseline {baseline}",
        binaries.collect::<Vec<_>>().join("; "),
        if rounds == 1 { "" } else { "s" },
        args.backend.as_deref().unwrap_or("detected")
    );
    let implementations: Vec<Value> = plans
        .iter()
        .map(|p| {
            json!({
                "name": p.name,
                "openssl": p.binary.path.display().to_string(),
                "openssl_version": p.binary.version,
                "openssl_version_line": p.binary.version_line,
                "command": p.argv,
                "command_line": p.shell_line(),
                "env": p.env.iter().cloned().collect::<BTreeMap<_, _>>(),
                "algorithms": p.algorithms,
            })
        })
        .collect();
    let settings = json!({
        "rounds": rounds,
        "seconds": seconds,
        "backend": args.backend,
        "algorithms": canonical,
        "baseline": baseline,
    });
    let json = json!({
        "tool": "speed-compare",
        "mode": "measure",
        "environment": system_info::environment_json(),
        "settings": settings,
        "implementations": implementations,
        "runs": runs.records,
    });
    Ok((header, comparison, json))
}
