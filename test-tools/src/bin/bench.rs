//! `bench`: CPU cycles (TSC ticks) and ops/s of ML-KEM keygen, encaps and
//! decaps per parameter set and kem-core backend, and (feature `peers`) of
//! the peer implementations, cross-checked against kem-core byte for byte;
//! see `--help`. The bars printed at the end fail the run only with
//! `--check-bars`.
//!
//! ```text
//! cargo run --release -p test-tools --bin bench -- --quick
//! cargo run --release -p test-tools --features peers --bin bench
//! LIBOQS_DIR=/opt/liboqs cargo run --release -p test-tools \
//!     --features peers-liboqs-system --bin bench
//! ```

use std::fmt::Write as _;
use std::io::Write as _;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use kem_core::{with_backend, ParameterSet};
use serde_json::json;
use test_tools::cli::{parameter_set, positive, sets_or_all, Files};
use test_tools::kem_core_ops::{
    check_kem_core, kem_core_backends, kem_core_label, measure_kem_core, measurement_table,
    shown_columns, KemCoreAnswer,
};
use test_tools::measure::{Config, Measurement, Operation};
use test_tools::nist_kat::KatParams;
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
        let iterations = self
            .iterations
            .unwrap_or(if self.quick { 100 } else { 10_000 });
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
        let m = self
            .measurements
            .iter()
            .find(|m| m.implementation == implementation && m.operation == operation);
        m?.median_ticks()
    }
}

/// The kem-core row that ratios are relative to: the portable backend.
fn reference() -> String {
    kem_core_label(kem_core_backends()[0])
}

/// Every backend must pass the sanity check and give the reference's bytes.
fn check_backends<P: ParameterSet>(report: &mut SetReport) -> Option<KemCoreAnswer> {
    let mut ours: Option<KemCoreAnswer> = None;
    for backend in kem_core_backends() {
        let label = kem_core_label(backend);
        let line =
            match (
                with_backend(backend, check_kem_core::<P>).expect("available backend"),
                &ours,
            ) {
                (Ok(answer), None) => {
                    let line =
                        format!(
                    "{label} sanity check OK: keys round-trip, decaps recovers the secret, \
                     a modified ciphertext is rejected (ek {} B, dk {} B, ct {} B, K = {}...)",
                    answer.ek.len(),
                    answer.dk.len(),
                    answer.ct.len(),
                    answer.ss[..8].iter().map(|b| format!("{b:02x}")).collect::<String>()
                );
                    ours = Some(answer);
                    line
                }
                (Ok(answer), Some(first)) if answer.same_bytes(first) => {
                    format!("{label} sanity check OK, same bytes as {}", reference())
                }
                (Ok(_), Some(_)) => {
                    report.ok = false;
                    format!("BACKEND MISMATCH: {label} differs from {}", reference())
                }
                (Err(e), _) => {
                    report.ok = false;
                    format!("SANITY CHECK FAILED ({label}): {e}")
                }
            };
        report.checks.push(line);
    }
    ours
}

/// Each peer must give kem-core's bytes and recover its own secret.
#[cfg(feature = "peers")]
fn check_peers<P: ParameterSet>(report: &mut SetReport, ours: &KemCoreAnswer) {
    use test_tools::kem_core_ops::{D, M, Z};
    use test_tools::peers::{Inputs, KnownAnswer, Peer};
    let ours = KnownAnswer {
        ek: ours.ek.clone(),
        dk: ours.dk.clone(),
        ct: ours.ct.clone(),
        ss_encaps: ours.ss,
        ss_decaps: ours.ss,
    };
    for peer in Peer::ALL {
        let theirs = peer.known_answer::<P>(&Inputs { d: D, z: Z, m: M });
        let diff = ours.differences(&theirs);
        let label = peer.label();
        report.checks.push(match diff.is_empty() {
            true => format!(
                "cross-check OK: {label} matches kem-core (ek, dk, ciphertext, shared secret)"
            ),
            false => format!(
                "CROSS-CHECK MISMATCH: {label} differs from kem-core in: {}",
                diff.join(", ")
            ),
        });
        report.ok &= diff.is_empty();
        if theirs.ss_encaps != theirs.ss_decaps {
            report.ok = false;
            report.checks.push(format!(
                "PEER SELF-CHECK FAILED: {label} decaps does not recover its encaps secret"
            ));
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
    if let Some(ours) = &ours {
        if report.ok {
            check_peers::<P>(&mut report, ours);
        }
    }
    if !report.ok || ours.is_none() {
        return report;
    }
    #[cfg(feature = "peers")]
    let peers = {
        use test_tools::kem_core_ops::{D, M, Z};
        let inputs = test_tools::peers::Inputs { d: D, z: Z, m: M };
        let all = test_tools::peers::Peer::ALL;
        all.into_iter()
            .flat_map(|peer| peer.benches::<P>(&inputs))
            .collect()
    };
    #[cfg(not(feature = "peers"))]
    let peers = Vec::new();
    let (config, rounds) = (args.config(), args.rounds());
    report.measurements =
        measure_kem_core::<P>(&kem_core_backends(), peers, config, (rounds, 1), |_| {});
    report
}

/// Bars being checked: each `ratio = numerator / denominator` must be at
/// least its minimum; printed one line per bar, with PASS or FAIL.
struct Bars {
    text: String,
    pass: bool,
}

impl Bars {
    fn new(title: String) -> Self {
        Bars {
            text: title + "\n",
            pass: true,
        }
    }

    fn line(&mut self, what: &str, numerator: u64, denominator: u64, minimum: f64) {
        let ratio = numerator as f64 / denominator.max(1) as f64;
        self.pass &= ratio >= minimum;
        let _ = writeln!(
            self.text,
            "  {what:<40} {:>10} / {:>10} = {ratio:>5.2} (>= {minimum:.2})  {}",
            thousands(numerator as f64),
            thousands(denominator as f64),
            verdict(ratio >= minimum)
        );
    }

    /// The text with its overall line, and whether every bar passed.
    fn finish(mut self) -> (String, bool) {
        let _ = writeln!(self.text, "  overall: {}", verdict(self.pass));
        (self.text, self.pass)
    }
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
    let mut bars = Bars::new(format!(
        "Bar: {reference} vs {peer} on {}, peer median {unit} / ours, must be >= {BAR_RATIO:.2}",
        report.name
    ));
    for operation in Operation::EVP {
        let (theirs, ours) = (
            report.median(&peer, operation)?,
            report.median(&reference, operation)?,
        );
        bars.line(operation.label(), theirs, ours, BAR_RATIO);
    }
    Some(bars.finish())
}

/// The SIMD backend's bars on ML-KEM-768: at most 0.75x libcrux's AVX2
/// cycles (with peers), cached keys at least 1.5x faster than serialized
/// ones, and keygen at least 3x faster than the portable backend. `None`
/// when no SIMD backend was measured.
fn simd_bar_summary(report: &SetReport) -> Option<(String, bool)> {
    let simd = "kem-core/avx2";
    report.median(simd, Operation::Keygen)?;
    let median = |implementation: &str, operation| report.median(implementation, operation);
    let mut bars = Bars::new(format!("SIMD bars on {} ({simd}):", report.name));
    #[cfg(feature = "peers")]
    {
        let libcrux = test_tools::peers::Peer::LibcruxAuto.label();
        for operation in Operation::EVP {
            if let (Some(theirs), Some(ours)) =
                (median(&libcrux, operation), median(simd, operation))
            {
                // ours <= 0.75 theirs, i.e. theirs / ours >= 1 / 0.75.
                let what = format!("{libcrux} / ours, {}", operation.label());
                bars.line(&what, theirs, ours, 1.0 / 0.75);
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
            bars.line(&what, from_bytes, from_cache, 1.5);
        }
    }
    if let (Some(theirs), Some(ours)) = (
        median(&reference(), Operation::Keygen),
        median(simd, Operation::Keygen),
    ) {
        bars.line("portable / avx2, keygen", theirs, ours, 3.0);
    }
    Some(bars.finish())
}

fn header(args: &Args, counter_hz: f64) -> String {
    let mut out = String::from("ML-KEM bench (test-tools)\n");
    let _ = writeln!(
        out,
        "CPU: {} ({} logical CPUs; not pinned)",
        system_info::cpu_model().unwrap_or_else(|| "unknown".into()),
        std::thread::available_parallelism().map_or(0, usize::from)
    );
    let rdtsc = if timer::USES_RDTSC { "yes" } else { "no" };
    let _ = writeln!(out, "timer: {}; rdtsc used: {rdtsc}", timer::COUNTER);
    if timer::USES_RDTSC {
        let _ = writeln!(
            out,
            "TSC rate: ~{:.2} GHz (constant rate; 'cycles' below are TSC ticks, \
             ops/s is from wall-clock time)",
            counter_hz / 1e9
        );
    }
    let config = args.config();
    let _ = writeln!(
        out,
        "runs: {} timed (in {} interleaved chunks) + {} warm-up per measurement",
        config.iterations,
        args.rounds(),
        config.warmup
    );
    let backends: Vec<String> = kem_core_backends()
        .into_iter()
        .map(kem_core_label)
        .collect();
    let active = kem_core::active_backend();
    let _ = writeln!(
        out,
        "kem-core backends: {} (active: {active})",
        backends.join(", ")
    );
    #[cfg(feature = "peers")]
    for peer in test_tools::peers::Peer::ALL {
        let _ = writeln!(out, "peer {}: {}", peer.label(), peer.description());
    }
    #[cfg(not(feature = "peers"))]
    out.push_str("peers: not built (enable the cargo feature `peers`)\n");
    out.push_str(
        "operations: keygen = from a 64-byte seed; encaps = parse+check serialized ek, then \
         encapsulate; decaps = parse+check serialized dk and ct, then decapsulate; \
         (cached key) = with an already parsed key\n",
    );
    out
}

fn main() -> ExitCode {
    let args = Args::parse();
    let counter_hz = timer::counter_frequency(Duration::from_millis(100));
    print!("{}", header(&args, counter_hz));
    let _ = std::io::stdout().flush();
    let unit = timer::UNIT;
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
                "(ratio = median {unit} / {} median for the same operation; > 1.00 means \
                 kem-core is faster)",
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

    let all: Vec<Measurement> = reports
        .iter()
        .flat_map(|r| r.measurements.clone())
        .collect();
    let table = measurement_table(&all, &reference(), counter_hz, false);
    let settings = json!({
        "tool": "bench",
        "counter": timer::COUNTER,
        "counter_hz": counter_hz,
        "iterations": args.config().iterations,
        "warmup": args.config().warmup,
        "rounds": args.rounds(),
    });
    let written = args.files.write(&table, settings);
    match (&args.files.csv, written) {
        (_, Err(e)) => {
            eprintln!("bench: {e}");
            return ExitCode::FAILURE;
        }
        (Some(path), Ok(())) => println!("\nCSV written to {}", path.display()),
        (None, Ok(())) => print!("\nCSV:\n{}", table.to_csv()),
    }
    let mut ok = reports.iter().all(|r| r.ok);
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
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
