//! Section 4: timings of every instance, operation and parameter set.
//! Each trial runs the `bench` tool's five operations (from
//! `test_tools::kem_core_ops`) for every instance interleaved, call by call
//! with the cycle counter; the report gives the median trial (the median of
//! the trials' median cycles), the mean over all calls, the mean time, and
//! the median of the trials' ops/s.

use std::fmt::Write as _;
use std::fs;
use std::path::Path;

use kem_core::BackendKind;
use serde_json::json;
use test_tools::comparison::median;
use test_tools::csv_read::CsvTable;
use test_tools::cycles::{self, Config, Operation, Stats};
use test_tools::kem_core_ops::{kem_core_benches, kem_core_label};
use test_tools::table::{Align, Table};

use crate::markdown::{thousands, MdTable};
use crate::{Args, Evidence};

/// Chunks per trial, run round-robin over the instances and operations.
const ROUNDS_PER_TRIAL: usize = 10;

/// The outcome of section 4.
pub struct Performance {
    /// The section's Markdown.
    pub markdown: String,
    /// The figures in the `bench` tool's CSV columns.
    pub csv: String,
}

/// The summary of one (instance, operation) over its trials.
struct Summary {
    implementation: String,
    operation: Operation,
    median_trial: u64,
    mean_cycles: f64,
    min_cycles: u64,
    ops_per_sec: f64,
    trials: Vec<Stats>,
}

fn summarise(implementation: String, operation: Operation, trials: Vec<Stats>) -> Summary {
    let medians: Vec<f64> = trials.iter().map(|t| t.median as f64).collect();
    let rates: Vec<f64> = trials.iter().map(|t| t.ops_per_sec).collect();
    let calls: usize = trials.iter().map(|t| t.iterations).sum();
    let mean_cycles = trials
        .iter()
        .map(|t| t.mean * t.iterations as f64)
        .sum::<f64>()
        / calls.max(1) as f64;
    Summary {
        implementation,
        operation,
        median_trial: median(&medians).map_or(0, |m| m.round() as u64),
        mean_cycles,
        min_cycles: trials.iter().map(|t| t.min).min().unwrap_or(0),
        ops_per_sec: median(&rates).unwrap_or(f64::NAN),
        trials,
    }
}

/// Times every instance on every chosen set.
pub fn run(
    args: &Args,
    instances: &[BackendKind],
    counter_hz: f64,
    evidence: &mut Evidence,
) -> Performance {
    let unit = cycles::UNIT;
    let mut out = String::from("## 4. Performance\n\n");
    let _ = writeln!(
        out,
        "n = {} trials × {} iterations per instance and operation. Each trial runs every \
         instance and operation of a set interleaved ({ROUNDS_PER_TRIAL} chunks, round-robin) \
         after a warm-up, timing each call with the {unit} counter \
         ({:.3} GHz). *Median trial*: the median over trials of each trial's median \
         {unit}; *mean*: over all n calls; *mean time* = mean {unit} / counter rate; \
         *ops/s*: the median over trials of calls per wall-clock second. Inputs and \
         operations are those of the `bench` tool: keygen from a seed, encaps from the \
         encapsulation key's bytes, decaps from the decapsulation key's and ciphertext's \
         bytes, and both again with the expanded key cached (the provider's case).\n",
        args.trials,
        args.iterations,
        counter_hz / 1e9
    );
    let mut csv = Table::new(&[
        ("parameter_set", Align::Left),
        ("implementation", Align::Left),
        ("operation", Align::Left),
        (&format!("median_{unit}"), Align::Right),
        (&format!("mean_{unit}"), Align::Right),
        (&format!("min_{unit}"), Align::Right),
        ("ops_per_sec", Align::Right),
        ("ratio_vs_kem_core", Align::Right),
        ("iterations", Align::Right),
    ]);
    let config = Config {
        warmup: (args.iterations / 10).clamp(10, 200),
        iterations: args.iterations,
    };
    for set in &args.sets {
        let mut benches = Vec::new();
        for &backend in instances {
            benches.extend(with_set!(*set, P => kem_core_benches::<P>(backend)));
        }
        let mut trials: Vec<Vec<Stats>> = vec![Vec::new(); benches.len()];
        for trial in 0..args.trials {
            eprintln!(
                "  [performance {}] trial {}/{} ({} instances × 5 operations × {} calls)",
                set.name(),
                trial + 1,
                args.trials,
                instances.len(),
                args.iterations
            );
            let measured = cycles::measure_interleaved(
                config,
                &mut benches,
                ROUNDS_PER_TRIAL.min(args.iterations),
            );
            for (slot, m) in trials.iter_mut().zip(measured) {
                slot.push(m.stats);
            }
        }
        let summaries: Vec<Summary> = benches
            .iter()
            .zip(trials)
            .map(|(b, t)| summarise(b.implementation.clone(), b.operation, t))
            .collect();
        drop(benches);

        let _ = writeln!(out, "### {}\n", set.name());
        let mut table = MdTable::new(&[
            "instance",
            "operation",
            &format!("median trial ({unit})"),
            &format!("mean ({unit})"),
            "mean time (µs)",
            "ops/s",
            "n",
        ]);
        let reference = kem_core_label(instances[0]);
        for operation in Operation::ALL {
            for s in summaries.iter().filter(|s| s.operation == operation) {
                let reference_median = summaries
                    .iter()
                    .find(|r| r.implementation == reference && r.operation == operation)
                    .map_or(0, |r| r.median_trial);
                table.row([
                    format!("`{}`", s.implementation),
                    operation.label().to_owned(),
                    thousands(s.median_trial as f64),
                    thousands(s.mean_cycles),
                    format!("{:.2}", s.mean_cycles / counter_hz * 1e6),
                    thousands(s.ops_per_sec),
                    format!("{} × {}", s.trials.len(), args.iterations),
                ]);
                csv.push([
                    set.name().to_owned(),
                    s.implementation.clone(),
                    operation.label().to_owned(),
                    s.median_trial.to_string(),
                    format!("{:.1}", s.mean_cycles),
                    s.min_cycles.to_string(),
                    format!("{:.1}", s.ops_per_sec),
                    if reference_median > 0 {
                        format!("{:.4}", s.median_trial as f64 / reference_median as f64)
                    } else {
                        String::new()
                    },
                    (s.trials.len() * args.iterations).to_string(),
                ]);
                evidence.push(
                    "performance",
                    format!(
                        "perf/{}/{}/{}",
                        set.name(),
                        s.implementation,
                        operation.label()
                    ),
                    json!({
                        "parameter_set": set.name(),
                        "instance": s.implementation,
                        "operation": operation.label(),
                        "unit": unit,
                        "counter_hz": counter_hz,
                        "trials": args.trials,
                        "iterations": args.iterations,
                        "warmup": config.warmup,
                        "median_trial": s.median_trial,
                        "mean": s.mean_cycles,
                        "mean_time_us": s.mean_cycles / counter_hz * 1e6,
                        "ops_per_sec": s.ops_per_sec,
                        "per_trial": s.trials.iter().map(|t| json!({
                            "median": t.median,
                            "mean": t.mean,
                            "min": t.min,
                            "ops_per_sec": t.ops_per_sec,
                            "iterations": t.iterations,
                        })).collect::<Vec<_>>(),
                    }),
                );
            }
        }
        out.push_str(&table.render());
        out.push('\n');
    }
    Performance {
        markdown: out,
        csv: csv.to_csv(),
    }
}

/// The `openssl speed` comparison of `speed-compare --csv`, as a table.
pub fn speed_comparison(path: &Path, evidence: &mut Evidence) -> Result<String, String> {
    let text =
        fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let csv = CsvTable::parse(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let column = |name: &str| {
        csv.column(name)
            .ok_or_else(|| format!("{}: no column {name:?}", path.display()))
    };
    let (alg, op, implementation, version, rate, ratio, rounds) = (
        column("algorithm")?,
        column("operation")?,
        column("implementation")?,
        column("openssl_version")?,
        column("ops_per_sec")?,
        column("ratio_to_baseline")?,
        column("rounds")?,
    );
    let mut out = String::from("### Through OpenSSL: `openssl speed`, side by side\n\n");
    let _ = writeln!(
        out,
        "From `{}` (written by `speed-compare`: each implementation's `openssl speed` run \
         alternately, median ops/s over rounds, ratio to the baseline implementation).\n",
        path.display()
    );
    let mut table = MdTable::new(&[
        "algorithm",
        "operation",
        "implementation",
        "OpenSSL",
        "ops/s",
        "ratio to baseline",
        "rounds",
    ]);
    for record in csv.records() {
        let get = |i: usize| record.fields.get(i).cloned().unwrap_or_default();
        let ops: f64 = get(rate).parse().unwrap_or(f64::NAN);
        table.row([
            get(alg),
            get(op),
            get(implementation),
            get(version),
            thousands(ops),
            get(ratio)
                .parse::<f64>()
                .map_or_else(|_| String::new(), |r| format!("{r:.2}x")),
            get(rounds),
        ]);
        evidence.push(
            "performance-openssl",
            format!("speed/{}/{}/{}", get(alg), get(implementation), get(op)),
            json!({
                "source": path.display().to_string(),
                "fields": csv.headers().iter().zip(&record.fields)
                    .map(|(h, v)| (h.clone(), json!(v)))
                    .collect::<serde_json::Map<_, _>>(),
            }),
        );
    }
    out.push_str(&table.render());
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(median: u64, mean: f64, iterations: usize, ops: f64) -> Stats {
        Stats {
            median,
            mean,
            min: median / 2,
            ops_per_sec: ops,
            iterations,
        }
    }

    #[test]
    fn summary_of_trials() {
        let s = summarise(
            "x".into(),
            Operation::Keygen,
            vec![
                stats(100, 110.0, 10, 5.0),
                stats(300, 290.0, 30, 1.0),
                stats(200, 200.0, 10, 3.0),
            ],
        );
        assert_eq!(s.median_trial, 200);
        assert_eq!(s.min_cycles, 50);
        // Weighted by calls: (1100 + 8700 + 2000) / 50.
        assert!((s.mean_cycles - 236.0).abs() < 1e-9);
        assert!((s.ops_per_sec - 3.0).abs() < 1e-9);
    }
}
