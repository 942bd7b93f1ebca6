//! `bench`: CPU cycles and operations per second of ML-KEM key generation,
//! encapsulation and decapsulation, per parameter set and per kem-core
//! backend, printed as aligned tables and as CSV.
//!
//! With the cargo feature `peers` the same run measures RustCrypto `ml-kem`
//! and `libcrux-ml-kem` the same way, cross-checks their outputs against
//! kem-core byte for byte, and prints each peer's median cycles divided by
//! kem-core's ("ratio vs kem-core": above 1.00 means kem-core is faster).
//!
//! ```text
//! cargo run --release -p test-tools --bin bench -- --quick
//! cargo run --release -p test-tools --features peers --bin bench
//! LIBOQS_DIR=/opt/liboqs cargo run --release -p test-tools \
//!     --features peers-liboqs-system --bin bench
//! ```
//!
//! (`peers-liboqs` adds liboqs 0.13 through the `oqs` crate;
//! `peers-liboqs-system` instead a liboqs installed on this machine, see
//! `test_tools::peers`.)
//!
//! Every operation is timed call by call (`rdtsc` on x86_64, nanoseconds
//! elsewhere) after a warm-up; the median is the headline number. Inputs are
//! fixed: keygen from a fixed seed d ‖ z, encaps with a fixed m.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use kem_core::{with_backend, MlKem1024, MlKem512, MlKem768, ParameterSet};
use test_tools::cli::positive;
use test_tools::cycles::{self, Config, Measurement, Operation};
use test_tools::kem_core_ops::{
    check_kem_core, kem_core_backends, kem_core_benches, kem_core_label, KemCoreAnswer,
};
#[cfg(feature = "peers")]
use test_tools::kem_core_ops::{D, M, Z};
use test_tools::table::{Align, Table};

/// Default timed runs per measurement.
const DEFAULT_ITERATIONS: usize = 10_000;
/// Timed runs per measurement with `--quick`.
const QUICK_ITERATIONS: usize = 100;
/// The timed runs of each measurement are split into chunks, run
/// round-robin across all implementations and operations of a parameter
/// set, so that background load affects them alike: by default this many
/// chunks, and at least 10 runs per chunk (`--rounds` overrides). Finer
/// chunks matter on shared machines whose speed changes at irregular
/// intervals (see the commit that raised it from 20).
const DEFAULT_ROUNDS: usize = 100;

/// The 2x bar: kem-core's portable backend against RustCrypto `ml-kem` on
/// ML-KEM-768.
#[cfg(feature = "peers")]
const BAR_RATIO: f64 = 2.0;

const USAGE: &str = "\
usage: bench [--iterations N] [--rounds N] [--params LIST] [--csv PATH] [--quick]

Measures ML-KEM keygen, encaps and decaps: median/mean CPU cycles (rdtsc on
x86_64, ns elsewhere) and ops/s, per parameter set and implementation.
Build with `--features peers` to measure RustCrypto ml-kem and libcrux-ml-kem
in the same run; `--features peers-liboqs` adds liboqs 0.13 (the oqs crate),
`--features peers-liboqs-system` an installed liboqs (LIBOQS_DIR=/prefix or
pkg-config's liboqs.pc).

options:
  --iterations N   timed runs per measurement (default 10000; 100 with --quick)
  --rounds N       interleaved chunks the timed runs are split into (default
                   100, with at least 10 runs per chunk)
  --params LIST    comma-separated parameter sets: 512,768,1024 (default all;
                   `ML-KEM-768` style names work too)
  --csv PATH       write the CSV to PATH instead of printing it
  --quick          few iterations, for a smoke run
  -h, --help       this text
";

/// The command line.
#[derive(Debug)]
struct Args {
    config: Config,
    rounds: usize,
    sets: Vec<Set>,
    csv: Option<PathBuf>,
}

/// Parses the arguments after the program name. `Ok(None)` means `--help`.
fn parse_args(args: impl IntoIterator<Item = String>) -> Result<Option<Args>, String> {
    let mut iterations = None;
    let mut rounds = None;
    let mut quick = false;
    let mut sets = None;
    let mut csv = None;
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_owned(), Some(v.to_owned())),
            _ => (arg.clone(), None),
        };
        let mut value = |name: &str| {
            inline
                .clone()
                .or_else(|| args.next())
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match flag.as_str() {
            "-h" | "--help" => return Ok(None),
            "--quick" if inline.is_none() => quick = true,
            "--iterations" => iterations = Some(positive("--iterations", &value("--iterations")?)?),
            "--rounds" => rounds = Some(positive("--rounds", &value("--rounds")?)?),
            "--params" => sets = Some(parse_sets(&value("--params")?)?),
            "--csv" => {
                let v = value("--csv")?;
                if v.is_empty() {
                    return Err("--csv needs a path".into());
                }
                csv = Some(PathBuf::from(v));
            }
            _ => return Err(format!("unknown argument {arg:?}")),
        }
    }
    let iterations = iterations.unwrap_or(if quick {
        QUICK_ITERATIONS
    } else {
        DEFAULT_ITERATIONS
    });
    let warmup = if quick {
        10
    } else {
        (iterations / 10).clamp(10, 1000)
    };
    Ok(Some(Args {
        config: Config { warmup, iterations },
        // No more chunks than runs (as `measure_interleaved` would clamp),
        // so that the header reports what runs.
        rounds: rounds.map_or((iterations / 10).clamp(1, DEFAULT_ROUNDS), |n| {
            n.min(iterations)
        }),
        sets: sets.unwrap_or_else(|| Set::ALL.to_vec()),
        csv,
    }))
}

fn parse_sets(list: &str) -> Result<Vec<Set>, String> {
    let mut sets = Vec::new();
    for item in list.split(',').map(str::trim) {
        let set = Set::ALL
            .into_iter()
            .find(|s| item == s.short() || item.eq_ignore_ascii_case(s.name()))
            .ok_or_else(|| format!("--params: unknown parameter set {item:?}"))?;
        if !sets.contains(&set) {
            sets.push(set);
        }
    }
    Ok(sets)
}

/// An ML-KEM parameter set, as selected on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Set {
    MlKem512,
    MlKem768,
    MlKem1024,
}

impl Set {
    const ALL: [Set; 3] = [Set::MlKem512, Set::MlKem768, Set::MlKem1024];

    fn short(self) -> &'static str {
        match self {
            Set::MlKem512 => "512",
            Set::MlKem768 => "768",
            Set::MlKem1024 => "1024",
        }
    }

    fn name(self) -> &'static str {
        match self {
            Set::MlKem512 => MlKem512::NAME,
            Set::MlKem768 => MlKem768::NAME,
            Set::MlKem1024 => MlKem1024::NAME,
        }
    }

    fn run(self, config: Config, rounds: usize) -> SetReport {
        match self {
            Set::MlKem512 => run_set::<MlKem512>(config, rounds),
            Set::MlKem768 => run_set::<MlKem768>(config, rounds),
            Set::MlKem1024 => run_set::<MlKem1024>(config, rounds),
        }
    }
}

/// The results for one parameter set.
struct SetReport {
    name: &'static str,
    /// Sanity-check and cross-check lines, already formatted.
    checks: Vec<String>,
    /// Whether every check passed.
    ok: bool,
    /// Label of the kem-core row that ratios are relative to.
    reference: String,
    measurements: Vec<Measurement>,
}

impl SetReport {
    fn median(&self, implementation: &str, operation: Operation) -> Option<u64> {
        self.measurements
            .iter()
            .find(|m| m.implementation == implementation && m.operation == operation)
            .map(|m| m.stats.median)
    }

    /// This row's median over the kem-core reference row's median for the
    /// same operation.
    fn ratio(&self, m: &Measurement) -> Option<f64> {
        let reference = self.median(&self.reference, m.operation)?;
        (reference > 0).then(|| m.stats.median as f64 / reference as f64)
    }
}

/// Checks and measures every implementation on one parameter set.
fn run_set<P: ParameterSet>(config: Config, rounds: usize) -> SetReport {
    let backends = kem_core_backends();
    let reference = kem_core_label(backends[0]);
    let mut report = SetReport {
        name: P::NAME,
        checks: Vec::new(),
        ok: true,
        reference,
        measurements: Vec::new(),
    };

    // Every backend must pass the sanity check and give the reference's bytes.
    let mut ours: Option<KemCoreAnswer> = None;
    for &backend in &backends {
        let label = kem_core_label(backend);
        let checked = with_backend(backend, check_kem_core::<P>).expect("available backend");
        match (checked, &ours) {
            (Ok(answer), None) => {
                report.checks.push(format!(
                    "{label} sanity check OK: keys round-trip, decaps recovers the secret, \
                     a modified ciphertext is rejected (ek {} B, dk {} B, ct {} B, K = {}...)",
                    answer.ek.len(),
                    answer.dk.len(),
                    answer.ct.len(),
                    answer.ss[..8]
                        .iter()
                        .map(|b| format!("{b:02x}"))
                        .collect::<String>()
                ));
                ours = Some(answer);
            }
            (Ok(answer), Some(reference)) => {
                if answer.same_bytes(reference) {
                    report.checks.push(format!(
                        "{label} sanity check OK, same bytes as {}",
                        report.reference
                    ));
                } else {
                    report.checks.push(format!(
                        "BACKEND MISMATCH: {label} differs from {}",
                        report.reference
                    ));
                    report.ok = false;
                }
            }
            (Err(e), _) => {
                report
                    .checks
                    .push(format!("SANITY CHECK FAILED ({label}): {e}"));
                report.ok = false;
            }
        }
    }
    if !report.ok {
        return report;
    }

    #[cfg(feature = "peers")]
    if let Some(ours) = &ours {
        let inputs = test_tools::peers::Inputs { d: D, z: Z, m: M };
        let ours = test_tools::peers::KnownAnswer {
            ek: ours.ek.clone(),
            dk: ours.dk.clone(),
            ct: ours.ct.clone(),
            ss_encaps: ours.ss,
            ss_decaps: ours.ss,
        };
        for peer in test_tools::peers::Peer::ALL {
            let theirs = peer.known_answer::<P>(&inputs);
            let diff = ours.differences(&theirs);
            if diff.is_empty() {
                report.checks.push(format!(
                    "cross-check OK: {} matches kem-core (ek, dk, ciphertext, shared secret)",
                    peer.label()
                ));
            } else {
                report.ok = false;
                report.checks.push(format!(
                    "CROSS-CHECK MISMATCH: {} differs from kem-core in: {}",
                    peer.label(),
                    diff.join(", ")
                ));
            }
            if theirs.ss_encaps != theirs.ss_decaps {
                report.ok = false;
                report.checks.push(format!(
                    "PEER SELF-CHECK FAILED: {} decaps does not recover its encaps secret",
                    peer.label()
                ));
            }
        }
    }

    if ours.is_none() {
        return report;
    }
    let mut benches = Vec::new();
    for backend in backends {
        benches.extend(kem_core_benches::<P>(backend));
    }
    #[cfg(feature = "peers")]
    {
        let inputs = test_tools::peers::Inputs { d: D, z: Z, m: M };
        for peer in test_tools::peers::Peer::ALL {
            benches.extend(peer.benches::<P>(&inputs));
        }
    }
    report.measurements = cycles::measure_interleaved(config, &mut benches, rounds);
    report
}

/// `1234567` as `1,234,567`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn fmt_ratio(ratio: Option<f64>) -> String {
    ratio.map_or_else(|| "-".to_owned(), |r| format!("{r:.2}"))
}

/// The aligned table of one parameter set, grouped by operation.
fn set_table(report: &SetReport) -> Table {
    let unit = cycles::UNIT;
    let median = format!("median {unit}");
    let mean = format!("mean {unit}");
    let mut table = Table::new(&[
        ("implementation", Align::Left),
        ("operation", Align::Left),
        (&median, Align::Right),
        (&mean, Align::Right),
        ("ops/s", Align::Right),
        ("ratio vs kem-core", Align::Right),
    ]);
    // A blank line between operations, when they have several rows each.
    let grouped = report
        .measurements
        .iter()
        .any(|m| m.implementation != report.reference);
    let mut first = true;
    for operation in Operation::ALL {
        let rows: Vec<&Measurement> = report
            .measurements
            .iter()
            .filter(|m| m.operation == operation)
            .collect();
        if rows.is_empty() {
            continue;
        }
        if grouped && !first {
            table.push(Vec::<String>::new());
        }
        first = false;
        for m in rows {
            table.push([
                m.implementation.clone(),
                operation.label().to_owned(),
                thousands(m.stats.median),
                thousands(m.stats.mean.round() as u64),
                thousands(m.stats.ops_per_sec.round() as u64),
                fmt_ratio(report.ratio(m)),
            ]);
        }
    }
    table
}

/// Every measurement of every set, one CSV row each.
fn csv_table(reports: &[SetReport]) -> Table {
    let unit = cycles::UNIT;
    let (median, mean, min) = (
        format!("median_{unit}"),
        format!("mean_{unit}"),
        format!("min_{unit}"),
    );
    let mut table = Table::new(&[
        ("parameter_set", Align::Left),
        ("implementation", Align::Left),
        ("operation", Align::Left),
        (&median, Align::Right),
        (&mean, Align::Right),
        (&min, Align::Right),
        ("ops_per_sec", Align::Right),
        ("ratio_vs_kem_core", Align::Right),
        ("iterations", Align::Right),
    ]);
    for report in reports {
        for m in &report.measurements {
            table.push([
                report.name.to_owned(),
                m.implementation.clone(),
                m.operation.label().to_owned(),
                m.stats.median.to_string(),
                format!("{:.1}", m.stats.mean),
                m.stats.min.to_string(),
                format!("{:.1}", m.stats.ops_per_sec),
                report
                    .ratio(m)
                    .map_or_else(String::new, |r| format!("{r:.4}")),
                m.stats.iterations.to_string(),
            ]);
        }
    }
    table
}

/// The 2x bar on ML-KEM-768: RustCrypto's median cycles over kem-core's
/// for keygen, encaps and decaps (from serialized keys). `None` when the
/// needed rows were not measured.
#[cfg(feature = "peers")]
fn bar_summary(reports: &[SetReport]) -> Option<(String, bool)> {
    let report = reports.iter().find(|r| r.name == MlKem768::NAME)?;
    let peer = test_tools::peers::Peer::RustCrypto.label();
    let mut text = format!(
        "Bar: {} vs {peer} on {}, peer median {unit} / ours, must be >= {BAR_RATIO:.2}\n",
        report.reference,
        report.name,
        unit = cycles::UNIT,
    );
    let mut pass = true;
    for operation in [Operation::Keygen, Operation::Encaps, Operation::Decaps] {
        let theirs = report.median(&peer, operation)?;
        let ours = report.median(&report.reference, operation)?;
        let ratio = theirs as f64 / ours.max(1) as f64;
        let ok = ratio >= BAR_RATIO;
        pass &= ok;
        let _ = writeln!(
            text,
            "  {:<8} {:>10} vs {:>10}  ratio {ratio:>5.2}  {}",
            operation.label(),
            thousands(theirs),
            thousands(ours),
            if ok { "PASS" } else { "FAIL" }
        );
    }
    let _ = writeln!(text, "  overall: {}", if pass { "PASS" } else { "FAIL" });
    Some((text, pass))
}

/// One line of a bar: `ratio = numerator / denominator`, which must be at
/// least `minimum`.
fn bar_line(text: &mut String, what: &str, numerator: u64, denominator: u64, minimum: f64) -> bool {
    let ratio = numerator as f64 / denominator.max(1) as f64;
    let ok = ratio >= minimum;
    let _ = writeln!(
        text,
        "  {what:<40} {:>10} / {:>10} = {ratio:>5.2} (>= {minimum:.2})  {}",
        thousands(numerator),
        thousands(denominator),
        if ok { "PASS" } else { "FAIL" }
    );
    ok
}

/// The SIMD backend's bars on ML-KEM-768: at most 0.75x libcrux's AVX2
/// cycles (with peers), cached keys at least 1.5x faster than serialized
/// ones, and keygen at least 3x faster than the portable backend. `None`
/// when no SIMD backend was measured.
fn simd_bar_summary(reports: &[SetReport]) -> Option<(String, bool)> {
    let report = reports.iter().find(|r| r.name == MlKem768::NAME)?;
    let simd = "kem-core/avx2";
    let portable = &report.reference;
    report.median(simd, Operation::Keygen)?;
    let median = |implementation: &str, operation| report.median(implementation, operation);
    let mut text = format!("SIMD bars on {} ({simd}):\n", report.name);
    let mut pass = true;
    #[cfg(feature = "peers")]
    {
        let libcrux = test_tools::peers::Peer::LibcruxAuto.label();
        for operation in [Operation::Keygen, Operation::Encaps, Operation::Decaps] {
            if let (Some(theirs), Some(ours)) =
                (median(&libcrux, operation), median(simd, operation))
            {
                // ours <= 0.75 theirs, i.e. theirs / ours >= 1 / 0.75.
                let what = format!("{libcrux} / ours, {}", operation.label());
                pass &= bar_line(&mut text, &what, theirs, ours, 1.0 / 0.75);
            }
        }
    }
    for (serialized, cached) in [
        (Operation::Encaps, Operation::EncapsCached),
        (Operation::Decaps, Operation::DecapsCached),
    ] {
        if let (Some(from_bytes), Some(from_cache)) =
            (median(simd, serialized), median(simd, cached))
        {
            let what = format!("{} / {}", serialized.label(), cached.label());
            pass &= bar_line(&mut text, &what, from_bytes, from_cache, 1.5);
        }
    }
    if let (Some(theirs), Some(ours)) = (
        median(portable, Operation::Keygen),
        median(simd, Operation::Keygen),
    ) {
        pass &= bar_line(&mut text, "portable / avx2, keygen", theirs, ours, 3.0);
    }
    let _ = writeln!(text, "  overall: {}", if pass { "PASS" } else { "FAIL" });
    Some((text, pass))
}

/// The CPU model from /proc/cpuinfo, if there is one.
fn cpu_model() -> Option<String> {
    let info = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    info.lines()
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| {
            let k = k.trim();
            k == "model name" || k == "Model" || k == "cpu model" || k == "uarch"
        })
        .map(|(_, v)| v.trim().to_owned())
}

fn header(args: &Args) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "ML-KEM bench (test-tools)");
    let _ = writeln!(
        out,
        "CPU: {} ({} logical CPUs; not pinned)",
        cpu_model().unwrap_or_else(|| "unknown".into()),
        std::thread::available_parallelism().map_or(0, usize::from)
    );
    let _ = writeln!(
        out,
        "timer: {}; rdtsc used: {}",
        cycles::COUNTER,
        if cycles::USES_RDTSC { "yes" } else { "no" }
    );
    if cycles::USES_RDTSC {
        let hz = cycles::counter_frequency(std::time::Duration::from_millis(100));
        let _ = writeln!(
            out,
            "TSC rate: ~{:.2} GHz (constant rate; 'cycles' below are TSC ticks, \
             ops/s is from wall-clock time)",
            hz / 1e9
        );
    }
    let _ = writeln!(
        out,
        "runs: {} timed (in {} interleaved chunks) + {} warm-up per measurement",
        args.config.iterations, args.rounds, args.config.warmup
    );
    let backends: Vec<String> = kem_core_backends()
        .into_iter()
        .map(kem_core_label)
        .collect();
    let _ = writeln!(
        out,
        "kem-core backends: {} (active: {})",
        backends.join(", "),
        kem_core::active_backend()
    );
    #[cfg(feature = "peers")]
    for peer in test_tools::peers::Peer::ALL {
        let _ = writeln!(out, "peer {}: {}", peer.label(), peer.description());
    }
    #[cfg(not(feature = "peers"))]
    let _ = writeln!(out, "peers: not built (enable the cargo feature `peers`)");
    let _ = writeln!(
        out,
        "operations: keygen = from a 64-byte seed; encaps = parse+check serialized ek, then \
         encapsulate; decaps = parse+check serialized dk and ct, then decapsulate; \
         (cached key) = with an already parsed key"
    );
    out
}

fn main() -> ExitCode {
    let args = match parse_args(std::env::args().skip(1)) {
        Ok(Some(args)) => args,
        Ok(None) => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("bench: {e}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };

    let mut stdout = std::io::stdout();
    print!("{}", header(&args));
    let _ = stdout.flush();

    let mut ok = true;
    let mut reports = Vec::new();
    for set in &args.sets {
        let report = set.run(args.config, args.rounds);
        println!("\n== {} ==", set.name());
        for line in &report.checks {
            println!("{line}");
        }
        if !report.measurements.is_empty() {
            println!();
            print!("{}", set_table(&report).render());
            println!(
                "(ratio = median {} / {} median for the same operation; > 1.00 means \
                 kem-core is faster)",
                cycles::UNIT,
                report.reference
            );
        }
        let _ = stdout.flush();
        ok &= report.ok;
        reports.push(report);
    }

    #[cfg(feature = "peers")]
    if let Some((text, _pass)) = bar_summary(&reports) {
        print!("\n{text}");
    }
    if let Some((text, _pass)) = simd_bar_summary(&reports) {
        print!("\n{text}");
    }

    let csv = csv_table(&reports).to_csv();
    match &args.csv {
        Some(path) => match std::fs::write(path, &csv) {
            Ok(()) => println!("\nCSV written to {}", path.display()),
            Err(e) => {
                eprintln!("bench: cannot write {}: {e}", path.display());
                return ExitCode::FAILURE;
            }
        },
        None => print!("\nCSV:\n{csv}"),
    }

    if ok {
        ExitCode::SUCCESS
    } else {
        eprintln!("bench: some checks FAILED (see above)");
        ExitCode::FAILURE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Option<Args>, String> {
        parse_args(args.iter().map(|s| (*s).to_owned()))
    }

    #[test]
    fn defaults_and_flags() {
        let a = parse(&[]).unwrap().unwrap();
        assert_eq!(a.config.iterations, DEFAULT_ITERATIONS);
        assert_eq!(a.sets, Set::ALL);
        let a = parse(&["--quick", "--params", "768,ML-KEM-512,768", "--csv=x.csv"])
            .unwrap()
            .unwrap();
        assert_eq!(a.config.iterations, QUICK_ITERATIONS);
        assert_eq!(a.sets, [Set::MlKem768, Set::MlKem512]);
        assert_eq!(a.csv, Some(PathBuf::from("x.csv")));
        let a = parse(&["--iterations=7", "--quick"]).unwrap().unwrap();
        assert_eq!(a.config.iterations, 7);
        assert_eq!(a.rounds, 1, "at least 10 runs per chunk");
        let a = parse(&["--quick"]).unwrap().unwrap();
        assert_eq!(a.rounds, 10);
        let a = parse(&[]).unwrap().unwrap();
        assert_eq!(a.rounds, DEFAULT_ROUNDS);
        let a = parse(&["--rounds", "20"]).unwrap().unwrap();
        assert_eq!(a.rounds, 20);
        assert!(parse(&["--help"]).unwrap().is_none());
    }

    #[test]
    fn bad_args() {
        for bad in [
            &["--iterations"][..],
            &["--iterations", "0"],
            &["--iterations", "x"],
            &["--rounds", "0"],
            &["--rounds"],
            &["--params", "999"],
            &["--params", ""],
            &["--csv", ""],
            &["--frobnicate"],
            &["--quick=1"],
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1234567), "1,234,567");
    }
}
