//! Section 4: timings of every instance, operation and parameter set by the
//! `bench` tool's measuring (`kem_core_ops::measure_kem_core`), and the
//! `openssl speed` comparison of `speed-compare --csv`.

use std::fmt::Write as _;
use std::path::Path;

use kem_core::BackendKind;
use serde_json::json;
use test_tools::kem_core_ops::{
    kem_core_label, measure_kem_core, measurement_table, shown_columns,
};
use test_tools::measure::Config;
use test_tools::table::{thousands, Table};
use test_tools::{timer, with_set};

use crate::{Args, Evidence};

/// Chunks per trial, run round-robin over the instances and operations.
const ROUNDS_PER_TRIAL: usize = 10;

/// Times every instance on every chosen set: the section's Markdown and
/// the figures in the `bench` tool's CSV columns.
pub fn run(
    args: &Args,
    instances: &[BackendKind],
    counter_hz: f64,
    evidence: &mut Evidence,
) -> (String, String) {
    let unit = timer::UNIT;
    let (trials, iterations) = (args.trials, args.iterations);
    let mut out = String::from("## 4. Performance\n\n");
    let _ = writeln!(
        out,
        "n = {trials} trials × {iterations} iterations per instance and operation. Each trial \
         runs every instance and operation of a set interleaved ({ROUNDS_PER_TRIAL} chunks, \
         round-robin) after a warm-up, timing each call with the {unit} counter ({:.3} GHz). \
         *Median*: the median over trials of each trial's median {unit}; *mean*: over all n \
         calls; *mean time* = mean {unit} / counter rate; *ops/s*: the median over trials of \
         calls per wall-clock second. Inputs and operations are those of the `bench` tool: \
         keygen from a seed, encaps from the encapsulation key's bytes, decaps from the \
         decapsulation key's and ciphertext's bytes, and both again with the expanded key \
         cached (the provider's case).\n",
        counter_hz / 1e9
    );
    let config = Config {
        warmup: (iterations / 10).clamp(10, 200),
        iterations,
    };
    let reference = kem_core_label(instances[0]);
    let mut all = Vec::new();
    for set in args.sets() {
        let progress = |trial| {
            let what = format!(
                "{} instances × 5 operations × {iterations} calls",
                instances.len()
            );
            eprintln!(
                "  [performance {}] trial {trial}/{trials} ({what})",
                set.name()
            );
        };
        let rounds = (ROUNDS_PER_TRIAL.min(iterations), trials);
        let measured = with_set!(set, P => measure_kem_core::<P>(instances, Vec::new(), config, rounds, progress));
        let table = measurement_table(&measured, &reference, counter_hz, true);
        let table = table.show(&shown_columns(true)).markdown();
        let _ = writeln!(out, "### {}\n\n{table}", set.name());
        all.extend(measured);
    }
    let table = measurement_table(&all, &reference, counter_hz, true);
    for row in table.to_json() {
        let id = format!(
            "perf/{}/{}/{}",
            row["parameter_set"], row["implementation"], row["operation"]
        );
        let data = json!({ "unit": unit, "counter_hz": counter_hz, "warmup": config.warmup, "result": row });
        evidence.push("performance", id.replace('"', ""), data);
    }
    (out, table.to_csv())
}

/// The `openssl speed` comparison of `speed-compare --csv`, as a table.
pub fn speed_comparison(path: &Path, evidence: &mut Evidence) -> Result<String, String> {
    let fail = |e: csv::Error| format!("{}: {e}", path.display());
    let mut reader =
        csv::Reader::from_path(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let headers = reader.headers().map_err(fail)?.clone();
    let columns = [
        ("algorithm", "algorithm"),
        ("operation", "operation"),
        ("implementation", "implementation"),
        ("openssl_version", "OpenSSL"),
        ("ops_per_sec", "ops/s"),
        ("ratio_to_baseline", "ratio to baseline"),
        ("rounds", "rounds"),
    ];
    let index = columns.map(|(name, _)| {
        let missing = || format!("{}: no column {name:?}", path.display());
        headers.iter().position(|h| h == name).ok_or_else(missing)
    });
    let index = index.into_iter().collect::<Result<Vec<_>, _>>()?;
    let mut out = String::from("### Through OpenSSL: `openssl speed`, side by side\n\n");
    let _ = writeln!(
        out,
        "From `{}` (written by `speed-compare`: each implementation's `openssl speed` run \
         alternately, median ops/s over rounds, ratio to the baseline implementation).\n",
        path.display()
    );
    let mut table = Table::titled(&columns.map(|(_, title)| title));
    for record in reader.records() {
        let record = record.map_err(fail)?;
        let cell = |&i: &usize| record.get(i).unwrap_or_default().to_owned();
        let mut cells: Vec<String> = index.iter().map(cell).collect();
        cells[4] = thousands(cells[4].parse().unwrap_or(f64::NAN));
        cells[5] = cells[5]
            .parse::<f64>()
            .map_or(String::new(), |r| format!("{r:.2}x"));
        let fields: serde_json::Map<_, _> = headers
            .iter()
            .zip(&record)
            .map(|(h, v)| (h.to_owned(), json!(v)))
            .collect();
        let id = format!("speed/{}/{}/{}", cells[0], cells[2], cells[1]);
        let data = json!({ "source": path.display().to_string(), "fields": fields });
        evidence.push("performance-openssl", id, data);
        table.push_text(cells);
    }
    out.push_str(&table.markdown());
    Ok(out)
}
