//! Section 4: timings of every instance, operation and parameter set, by
//! the `bench` tool's measuring (`kem_core_ops::measure_kem_core`): each
//! trial runs the five operations for every instance interleaved, call by
//! call with the cycle counter; the report gives the median trial (the
//! median of the trials' median cycles), the mean over all calls, the mean
//! time, and the median of the trials' ops/s.

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

/// The outcome of section 4.
pub struct Performance {
    /// The section's Markdown.
    pub markdown: String,
    /// The figures in the `bench` tool's CSV columns.
    pub csv: String,
}

/// Times every instance on every chosen set.
pub fn run(
    args: &Args,
    instances: &[BackendKind],
    counter_hz: f64,
    evidence: &mut Evidence,
) -> Performance {
    let unit = timer::UNIT;
    let (trials, iterations) = (args.trials(), args.iterations());
    let mut out = String::from("## 4. Performance\n\n");
    let _ = writeln!(
        out,
        "n = {trials} trials × {iterations} iterations per instance and operation. Each trial runs every \
         instance and operation of a set interleaved ({ROUNDS_PER_TRIAL} chunks, round-robin) \
         after a warm-up, timing each call with the {unit} counter \
         ({:.3} GHz). *Median*: the median over trials of each trial's median \
         {unit}; *mean*: over all n calls; *mean time* = mean {unit} / counter rate; \
         *ops/s*: the median over trials of calls per wall-clock second. Inputs and \
         operations are those of the `bench` tool: keygen from a seed, encaps from the \
         encapsulation key's bytes, decaps from the decapsulation key's and ciphertext's \
         bytes, and both again with the expanded key cached (the provider's case).\n",
        counter_hz / 1e9
    );
    let config = Config {
        warmup: (iterations / 10).clamp(10, 200),
        iterations,
    };
    let reference = kem_core_label(instances[0]);
    let shown = shown_columns(true);
    let mut all = Vec::new();
    for set in &args.sets {
        let progress = |trial| {
            eprintln!(
                "  [performance {}] trial {trial}/{trials} ({} instances × 5 operations × {iterations} calls)",
                set.name(),
                instances.len(),
            )
        };
        let rounds = ROUNDS_PER_TRIAL.min(iterations);
        let measured = with_set!(*set, P => measure_kem_core::<P>(instances, Vec::new(), config, (rounds, trials), progress));
        let table = measurement_table(&measured, &reference, counter_hz, true);
        let _ = writeln!(
            out,
            "### {}\n\n{}",
            set.name(),
            table.show(&shown).markdown()
        );
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
    Performance {
        markdown: out,
        csv: table.to_csv(),
    }
}

/// The `openssl speed` comparison of `speed-compare --csv`, as a table.
pub fn speed_comparison(path: &Path, evidence: &mut Evidence) -> Result<String, String> {
    let mut reader =
        csv::Reader::from_path(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let headers = reader
        .headers()
        .map_err(|e| format!("{}: {e}", path.display()))?
        .clone();
    let columns = [
        "algorithm",
        "operation",
        "implementation",
        "openssl_version",
        "ops_per_sec",
        "ratio_to_baseline",
        "rounds",
    ];
    let index: Vec<usize> = columns
        .iter()
        .map(|name| {
            headers
                .iter()
                .position(|h| h == *name)
                .ok_or_else(|| format!("{}: no column {name:?}", path.display()))
        })
        .collect::<Result<_, _>>()?;
    let mut out = String::from("### Through OpenSSL: `openssl speed`, side by side\n\n");
    let _ = writeln!(
        out,
        "From `{}` (written by `speed-compare`: each implementation's `openssl speed` run \
         alternately, median ops/s over rounds, ratio to the baseline implementation).\n",
        path.display()
    );
    let mut table = Table::titled(&[
        "algorithm",
        "operation",
        "implementation",
        "OpenSSL",
        "ops/s",
        "ratio to baseline",
        "rounds",
    ]);
    for record in reader.records() {
        let record = record.map_err(|e| format!("{}: {e}", path.display()))?;
        let get = |i: usize| record.get(index[i]).unwrap_or_default().to_owned();
        let ratio = get(5)
            .parse::<f64>()
            .map_or_else(|_| String::new(), |r| format!("{r:.2}x"));
        table.push_text([
            get(0),
            get(1),
            get(2),
            get(3),
            thousands(get(4).parse().unwrap_or(f64::NAN)),
            ratio,
            get(6),
        ]);
        let fields: serde_json::Map<String, serde_json::Value> = headers
            .iter()
            .zip(record.iter())
            .map(|(h, v)| (h.to_owned(), json!(v)))
            .collect();
        let data = json!({ "source": path.display().to_string(), "fields": fields });
        evidence.push(
            "performance-openssl",
            format!("speed/{}/{}/{}", get(0), get(2), get(1)),
            data,
        );
    }
    out.push_str(&table.markdown());
    Ok(out)
}
