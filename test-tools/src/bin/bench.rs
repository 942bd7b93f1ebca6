//! `bench`: CPU cycles (TSC ticks) and ops/s of ML-KEM keygen, encaps and
//! decaps per parameter set and kem-core backend, and (feature `peers`) of
//! the peer implementations, cross-checked against kem-core byte for byte
//! (see `--help`). The bars printed at the end fail the run only with
//! `--check-bars`.

use std::fmt::Write as _;
use std::io::Write as _;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use kem_core::{with_backend, ParameterSet};
use serde_json::json;
use test_tools::cli::{parameter_set, positive, sets_or_all, Files};
use test_tools::kem_core_ops::{
    check_kem_core, kem_core_label, measure_kem_core, measurement_table, shown_columns, KnownAnswer,
};
use test_tools::measure::{Config, Measurement, Operation};
use test_tools::nist_kat::{hex_upper, KatParams};
use test_tools::table::thousands;
use test_tools::{system_info, timer, with_set};

/// The 2x bar: kem-core's portable backend against RustCrypto `ml-kem` on
/// ML-KEM-768.
#[cfg(feature = "peers")]
const BAR_RATIO: f64 = 2.0;

/// Measures ML-KEM keygen, encaps and decaps: median/mean CPU cycles (TSC
/// ticks with rdtsc on x86_64, ns elsewhere) and ops/s, per parameter set
/// and implementation.
///
/// Build with `--features peers` to measure RustCrypto ml-kem and
/// libcrux-ml-kem in the same run; `--features peers-liboqs` adds liboqs 0.13
/// (the oqs crate), `--features peers-liboqs-system` an installed liboqs
/// (LIBOQS_DIR=/prefix or pkg-config's liboqs.pc). Without --csv the CSV
/// is printed after the tables.
#[derive(Parser, Debug)]
#[command(name = "bench")]
struct Args {
    /// Timed runs per measurement [default: 10000; 100 with --quick]
    #[arg(long, value_name = "N", value_parser = positive)]
    iterations: Option<usize>,
    /// Interleaved chunks the timed runs are split into [default: 100, with
    /// at least 10 runs per chunk]. Finer chunks matter on shared machines
    /// whose speed changes at irregular intervals
    #[arg(long, value_name = "N", value_parser = positive)]
    rounds: Option<usize>,
    /// Comma-separated parameter sets: 512,768,1024 [default: all;
    /// `ML-KEM-768` style names work too]
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = parameter_set)]
    params: Vec<KatParams>,
    /// Few iterations, for a smoke run
    #[arg(long)]
    quick: bool,
    /// Exit with failure when a bar printed at the end (ML-KEM-768 speed
    /// ratios) reads FAIL, or when no bar could be measured
    #[arg(long)]
    check_bars: bool,
    #[command(flatten)]
    files: Files,
}

impl Args {
    fn config(&self) -> Config {
        let default = if self.quick { 100 } else { 10_000 };
        let iterations = self.iterations.unwrap_or(default);
        let warmup = if self.quick {
            10
        } else {
            (iterations / 10).clamp(10, 1000)
        };
        Config { warmup, iterations }
    }

    /// No more chunks than runs, at least 10 runs per chunk by default.
    fn rounds(&self) -> usize {
        let n = self.config().iterations;
        self.rounds.map_or((n / 10).clamp(1, 100), |r| r.min(n))
    }
}

/// The results for one parameter set.
struct SetReport {
    name: &'static str,
    /// Sanity-check and cross-check lines, already formatted.
    checks: Vec<String>,
    /// Whether every check passed.
    ok: bool,
    measurements: Vec<Measurement>,
}

impl SetReport {
    fn median(&self, implementation: &str, operation: Operation) -> Option<u64> {
        let same =
            |m: &&Measurement| m.implementation == implementation && m.operation == operation;
        self.measurements.iter().find(same)?.median_ticks()
    }

    /// Records a check's line and outcome.
    fn check(&mut self, ok: bool, line: String) {
        self.ok &= ok;
        self.checks.push(line);
    }
}

/// The kem-core row that ratios are relative to: the portable backend.
fn reference() -> String {
    kem_core_label(kem_core::available_backends()[0])
}

/// Every backend must pass the sanity check and give the reference's bytes.
fn check_backends<P: ParameterSet>(report: &mut SetReport) -> Option<KnownAnswer> {
    let mut ours: Option<KnownAnswer> = None;
    for backend in kem_core::available_backends() {
        let label = kem_core_label(backend);
        let answer = with_backend(backend, check_kem_core::<P>).expect("available backend");
        let (ok, line) = match (answer, &ours) {
            (Ok(answer), None) => {
                let ss = hex_upper(&answer.ss_encaps[..8]).to_ascii_lowercase();
                let (ek, dk, ct) = (answer.ek.len(), answer.dk.len(), answer.ct.len());
                ours = Some(answer);
                let line = format!(
                    "{label} sanity check OK: keys round-trip, decaps recovers the secret, a \
                     modified ciphertext is rejected (ek {ek} B, dk {dk} B, ct {ct} B, K = {ss}...)"
                );
                (true, line)
            }
            (Ok(answer), Some(first)) if answer == *first => (
                true,
                format!("{label} sanity check OK, same bytes as {}", reference()),
            ),
            (Ok(_), Some(_)) => (
                false,
                format!("BACKEND MISMATCH: {label} differs from {}", reference()),
            ),
            (Err(e), _) => (false, format!("SANITY CHECK FAILED ({label}): {e}")),
        };
        report.check(ok, line);
    }
    ours
}

/// Each peer must give kem-core's bytes and recover its own secret.
#[cfg(feature = "peers")]
fn check_peers<P: ParameterSet>(report: &mut SetReport, ours: &KnownAnswer) {
    use test_tools::peers::Peer;
    for peer in Peer::ALL {
        let theirs = peer.known_answer::<P>();
        let (diff, label) = (ours.differences(&theirs), peer.label());
        let line = match diff.is_empty() {
            true => format!(
                "cross-check OK: {label} matches kem-core (ek, dk, ciphertext, shared secret)"
            ),
            false => format!(
                "CROSS-CHECK MISMATCH: {label} differs from kem-core in: {}",
                diff.join(", ")
            ),
        };
        report.check(diff.is_empty(), line);
        if theirs.ss_encaps != theirs.ss_decaps {
            let line = format!(
                "PEER SELF-CHECK FAILED: {label} decaps does not recover its encaps secret"
            );
            report.check(false, line);
        }
    }
}

/// Checks and measures every implementation on one parameter set.
fn run_set<P: ParameterSet>(args: &Args) -> SetReport {
    let mut report = SetReport {
        name: P::NAME,
        checks: Vec::new(),
        ok: true,
        measurements: Vec::new(),
    };
    let ours = check_backends::<P>(&mut report);
    #[cfg(feature = "peers")]
    if let (Some(ours), true) = (&ours, report.ok) {
        check_peers::<P>(&mut report, ours);
    }
    if !report.ok || ours.is_none() {
        return report;
    }
    #[cfg(feature = "peers")]
    let peers = test_tools::peers::Peer::ALL
        .into_iter()
        .flat_map(|peer| peer.benches::<P>())
        .collect();
    #[cfg(not(feature = "peers"))]
    let peers = Vec::new();
    let (config, rounds) = (args.config(), args.rounds());
    report.measurements = measure_kem_core::<P>(
        &kem_core::available_backends(),
        peers,
        config,
        (rounds, 1),
        |_| {},
    );
    report
}

/// A bar: what it says, the rows (implementation, operation) of the median
/// over which the first row's median must reach the minimum ratio.
type Bar = (String, (String, Operation), (String, Operation), f64);

/// The bars on `report` under `title`, one line each with PASS or FAIL, then
/// an overall line, and whether every bar passed. Bars whose rows were not
/// measured are left out, or with `all_needed` give `None`.
fn bars(
    report: &SetReport,
    title: String,
    wanted: Vec<Bar>,
    all_needed: bool,
) -> Option<(String, bool)> {
    let (mut text, mut pass) = (title + "\n", true);
    for (what, (i, o), (j, p), minimum) in wanted {
        let (Some(numerator), Some(denominator)) = (report.median(&i, o), report.median(&j, p))
        else {
            match all_needed {
                true => return None,
                false => continue,
            }
        };
        let ratio = numerator as f64 / denominator.max(1) as f64;
        pass &= ratio >= minimum;
        let (n, d) = (thousands(numerator as f64), thousands(denominator as f64));
        let verdict = verdict(ratio >= minimum);
        let _ = writeln!(
            text,
            "  {what:<40} {n:>10} / {d:>10} = {ratio:>5.2} (>= {minimum:.2})  {verdict}"
        );
    }
    let _ = writeln!(text, "  overall: {}", verdict(pass));
    Some((text, pass))
}

fn verdict(pass: bool) -> &'static str {
    if pass {
        "PASS"
    } else {
        "FAIL"
    }
}

/// The 2x bar on ML-KEM-768: RustCrypto's median cycles over kem-core's
/// for keygen, encaps and decaps (from serialized keys). `None` when the
/// needed rows were not measured.
#[cfg(feature = "peers")]
fn bar_summary(report: &SetReport) -> Option<(String, bool)> {
    let peer = test_tools::peers::Peer::RustCrypto.label();
    let (reference, unit) = (reference(), timer::UNIT);
    let title = format!(
        "Bar: {reference} vs {peer} on {}, peer median {unit} / ours, must be >= {BAR_RATIO:.2}",
        report.name
    );
    let bar = |op: Operation| {
        (
            op.label().into(),
            (peer.clone(), op),
            (reference.clone(), op),
            BAR_RATIO,
        )
    };
    bars(report, title, Operation::EVP.map(bar).into(), true)
}

/// The SIMD backend's bars on ML-KEM-768: at most 0.75x libcrux's AVX2
/// cycles (with peers), cached keys at least 1.5x faster than serialized
/// ones, and keygen at least 3x faster than the portable backend. `None`
/// when no SIMD backend was measured.
fn simd_bar_summary(report: &SetReport) -> Option<(String, bool)> {
    let simd = "kem-core/avx2";
    report.median(simd, Operation::Keygen)?;
    let row = |operation| (simd.to_owned(), operation);
    let mut wanted: Vec<Bar> = Vec::new();
    #[cfg(feature = "peers")]
    for operation in Operation::EVP {
        // ours <= 0.75 theirs, i.e. theirs / ours >= 1 / 0.75.
        let libcrux = test_tools::peers::Peer::LibcruxAuto.label();
        let what = format!("{libcrux} / ours, {}", operation.label());
        wanted.push((what, (libcrux, operation), row(operation), 1.0 / 0.75));
    }
    for (serialized, cached) in [
        (Operation::Encaps, Operation::EncapsCached),
        (Operation::Decaps, Operation::DecapsCached),
    ] {
        let what = format!("{} / {}", serialized.label(), cached.label());
        wanted.push((what, row(serialized), row(cached), 1.5));
    }
    let keygen = Operation::Keygen;
    wanted.push((
        "portable / avx2, keygen".into(),
        (reference(), keygen),
        row(keygen),
        3.0,
    ));
    let title = format!("SIMD bars on {} ({simd}):", report.name);
    bars(report, title, wanted, false)
}

fn header(args: &Args, counter_hz: f64) -> String {
    let cpu = system_info::cpu_model().unwrap_or_else(|| "unknown".into());
    let cpus = std::thread::available_parallelism().map_or(0, usize::from);
    let rdtsc = if timer::USES_RDTSC { "yes" } else { "no" };
    let mut out = format!(
        "ML-KEM bench (test-tools)\nCPU: {cpu} ({cpus} logical CPUs; not pinned)\n\
         timer: {}; rdtsc used: {rdtsc}\n",
        timer::COUNTER
    );
    if timer::USES_RDTSC {
        let ghz = counter_hz / 1e9;
        let _ = writeln!(
            out,
            "TSC rate: ~{ghz:.2} GHz (constant rate; 'cycles' below are TSC ticks, \
             ops/s is from wall-clock time)"
        );
    }
    let (Config { warmup, iterations }, rounds) = (args.config(), args.rounds());
    let backends: Vec<String> = kem_core::available_backends()
        .into_iter()
        .map(kem_core_label)
        .collect();
    let (backends, active) = (backends.join(", "), kem_core::active_backend());
    let _ = writeln!(
        out,
        "runs: {iterations} timed (in {rounds} interleaved chunks) + {warmup} warm-up per \
         measurement\nkem-core backends: {backends} (active: {active})"
    );
    #[cfg(feature = "peers")]
    for peer in test_tools::peers::Peer::ALL {
        let _ = writeln!(out, "peer {}: {}", peer.label(), peer.description());
    }
    #[cfg(not(feature = "peers"))]
    out.push_str("peers: not built (enable the cargo feature `peers`)\n");
    out + "operations: keygen = from a 64-byte seed; encaps = parse+check serialized ek, then \
           encapsulate; decaps = parse+check serialized dk and ct, then decapsulate; \
           (cached key) = with an already parsed key\n"
}

fn main() -> ExitCode {
    let args = Args::parse();
    let counter_hz = timer::counter_frequency(Duration::from_millis(100));
    print!("{}", header(&args, counter_hz));
    let _ = std::io::stdout().flush();
    let shown = shown_columns(false);

    let mut reports = Vec::new();
    for set in sets_or_all(&args.params) {
        let report = with_set!(set, P => run_set::<P>(&args));
        println!("\n== {} ==", report.name);
        report.checks.iter().for_each(|line| println!("{line}"));
        if !report.measurements.is_empty() {
            let table = measurement_table(&report.measurements, &reference(), counter_hz, true);
            print!("\n{}", table.show(&shown).render());
            println!(
                "(ratio = median {} / {} median for the same operation; > 1.00 means \
                 kem-core is faster)",
                timer::UNIT,
                reference()
            );
        }
        let _ = std::io::stdout().flush();
        reports.push(report);
    }
    let ml_kem_768 = reports.iter().find(|r| r.name == kem_core::MlKem768::NAME);
    #[cfg(feature = "peers")]
    let peer_bars = ml_kem_768.and_then(bar_summary);
    #[cfg(not(feature = "peers"))]
    let peer_bars = None;
    let bars = [peer_bars, ml_kem_768.and_then(simd_bar_summary)];
    let bars: Vec<(String, bool)> = bars.into_iter().flatten().collect();
    bars.iter().for_each(|(text, _)| print!("\n{text}"));
    let mut ok = reports.iter().all(|r| r.ok);

    let all: Vec<Measurement> = reports.into_iter().flat_map(|r| r.measurements).collect();
    let table = measurement_table(&all, &reference(), counter_hz, false);
    let Config { warmup, iterations } = args.config();
    let settings = json!({
        "tool": "bench",
        "counter": timer::COUNTER,
        "counter_hz": counter_hz,
        "iterations": iterations,
        "warmup": warmup,
        "rounds": args.rounds(),
    });
    if let Err(e) = args.files.write(&table, settings) {
        eprintln!("bench: {e}");
        return ExitCode::FAILURE;
    }
    match &args.files.csv {
        Some(path) => println!("\nCSV written to {}", path.display()),
        None => print!("\nCSV:\n{}", table.to_csv()),
    }
    if !ok {
        eprintln!("bench: some checks FAILED (see above)");
    }
    if args.check_bars && bars.is_empty() {
        eprintln!(
            "bench: --check-bars: no bar was measured (the bars need ML-KEM-768, with the \
             avx2 backend or the `peers` feature)"
        );
        ok = false;
    } else if args.check_bars && !bars.iter().all(|(_, pass)| *pass) {
        eprintln!("bench: --check-bars: a bar FAILED (see above)");
        ok = false;
    }
    match ok {
        true => ExitCode::SUCCESS,
        false => ExitCode::FAILURE,
    }
}
