//! `openssl speed` results of several implementations side by side: per
//! implementation, parameter set and operation a [`Measurement`] with one
//! trial per round, its median ops/s and its ratio to a baseline, as tables
//! (one per parameter set), CSV and JSON.

use serde::Serialize;
use serde_json::{json, Value as Json};

use crate::measure::{Measurement, Operation, Trial};
use crate::speed_output::{parameter_set, PARAMETER_SETS};
use crate::table::{Column, Style, Table, Value};

/// The leading CSV columns of every comparison of implementations
/// (`speed-compare`, `evp-bench`), by which `charts` knows the format.
pub const COMPARISON_COLUMNS: [&str; 7] = [
    "algorithm",
    "parameter_set",
    "operation",
    "implementation",
    "openssl_version",
    "ops_per_sec",
    "seconds_per_op",
];

/// One implementation's speed for one algorithm and operation in one round.
#[derive(Clone, Debug, PartialEq)]
pub struct SpeedResult {
    /// The implementation's name (`ours`, `native`, ...).
    pub implementation: String,
    /// The round, from 1.
    pub round: usize,
    /// The algorithm as the implementation's `openssl speed` printed it.
    pub algorithm: String,
    /// The operation.
    pub operation: Operation,
    /// Operations per second.
    pub ops_per_sec: f64,
}

/// An implementation in a comparison, and what its tool runs it with
/// (`tls-bench`: a loaded library context; nothing here).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Implementation<T = ()> {
    /// Its name, as [`SpeedResult::implementation`] gives it.
    pub name: String,
    /// The version of the OpenSSL that ran it (`3.5.5`), when known.
    pub openssl_version: Option<String>,
    /// What runs it; not serialized.
    #[serde(skip)]
    pub run: T,
}

impl Implementation {
    /// An implementation with a name and an optional OpenSSL version.
    pub fn new(name: &str, openssl_version: Option<&str>) -> Self {
        Self {
            name: name.to_owned(),
            openssl_version: openssl_version.map(str::to_owned),
            run: (),
        }
    }
}

/// Measurements of several implementations and their ratios to a baseline.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    implementations: Vec<Implementation>,
    baseline: String,
    /// By parameter set (known sets in [`PARAMETER_SETS`] order, then others
    /// as first seen), operation, implementation; trials in round order.
    measurements: Vec<Measurement>,
}

impl Comparison {
    /// Groups `results` by implementation, parameter set and operation (the
    /// algorithm is the first round's spelling). Fails on an unknown
    /// baseline or implementation, a speed that is not a positive number, or
    /// two results of one group in one round.
    pub fn new(
        implementations: Vec<Implementation>,
        baseline: &str,
        results: &[SpeedResult],
    ) -> Result<Self, String> {
        let names: Vec<&str> = implementations.iter().map(|i| i.name.as_str()).collect();
        if !names.contains(&baseline) {
            return Err(format!(
                "baseline {baseline:?} is not one of the implementations ({})",
                names.join(", ")
            ));
        }
        // Known sets first, then others as first seen.
        let mut sets: Vec<String> = PARAMETER_SETS.map(str::to_owned).to_vec();
        let mut keyed = Vec::new();
        for r in results {
            let Some(implementation) = names.iter().position(|n| *n == r.implementation) else {
                let name = &r.implementation;
                return Err(format!(
                    "measurement of an unlisted implementation {name:?}"
                ));
            };
            if !(r.ops_per_sec.is_finite() && r.ops_per_sec > 0.0) {
                return Err(format!(
                    "{}: {} {} speed {} ops/s is not a positive number",
                    r.implementation, r.algorithm, r.operation, r.ops_per_sec
                ));
            }
            let set = parameter_set(&r.algorithm);
            if !sets.contains(&set) {
                sets.push(set.clone());
            }
            let rank = sets.iter().position(|s| *s == set);
            keyed.push((((rank, r.operation, implementation), r.round), set, r));
        }
        keyed.sort_by_key(|(key, ..)| *key);
        let mut measurements: Vec<Measurement> = Vec::new();
        let mut last = None;
        for ((group, round), set, r) in keyed {
            if last == Some((group, round)) {
                let (name, op) = (&r.implementation, r.operation);
                return Err(format!(
                    "{name} has two {set} {op} results in round {round}"
                ));
            }
            if last.is_none_or(|(previous, _)| previous != group) {
                let mut m = Measurement::new(&r.implementation, &set, r.operation);
                m.algorithm = r.algorithm.clone();
                measurements.push(m);
            }
            let trials = &mut measurements.last_mut().expect("pushed above").trials;
            trials.push(Trial::rate(r.ops_per_sec));
            last = Some((group, round));
        }
        Ok(Self {
            implementations,
            baseline: baseline.to_owned(),
            measurements,
        })
    }

    /// The measurements, by parameter set, operation, implementation.
    pub fn measurements(&self) -> &[Measurement] {
        &self.measurements
    }

    /// The parameter sets with results, in report order.
    pub fn parameter_sets(&self) -> Vec<&str> {
        let sets = self.measurements.iter().map(|m| m.parameter_set.as_str());
        let mut sets: Vec<&str> = sets.collect();
        sets.dedup();
        sets
    }

    /// The rows of `parameter_set` (all when `None`): s/op (1 / the median
    /// ops/s), ops/s, rounds and the ratio to the baseline (`3.31x`); a blank
    /// line between operations when some operation has several rows.
    pub fn table(&self, parameter_set: Option<&str>) -> Table {
        let ratio = format!("vs {}", self.baseline);
        let mut table = Table::new(vec![
            Column::new("operation", "operation"),
            Column::new("implementation", "implementation"),
            Column::new("algorithm", "algorithm"),
            Column::new("parameter_set", "parameter_set").file_only(),
            Column::new("openssl_version", "openssl_version").file_only(),
            Column::number("s/op", "seconds_per_op", Style::Fixed(9), Style::Fixed(12)),
            Column::number("ops/s", "ops_per_sec", Style::Fixed(1), Style::Fixed(2)),
            Column::new("rounds", "rounds").right(),
            Column::number(ratio, "ratio_to_baseline", Style::Times(2), Style::Fixed(4))
                .missing("-"),
            Column::new("", "ops_per_sec_per_round").json_only(),
        ])
        .file_order(&[&COMPARISON_COLUMNS[..], &["ratio_to_baseline", "rounds"]].concat());
        let rows = self.measurements.iter();
        let rows: Vec<&Measurement> = rows
            .filter(|m| parameter_set.is_none_or(|set| m.parameter_set == set))
            .collect();
        let grouped = rows.windows(2).any(|w| w[0].operation == w[1].operation);
        for (i, m) in rows.iter().enumerate() {
            if grouped && i > 0 && rows[i - 1].operation != m.operation {
                table.blank();
            }
            let mut implementations = self.implementations.iter();
            let implementation = implementations.find(|i| i.name == m.implementation);
            let version = implementation.and_then(|i| i.openssl_version.clone());
            let per_round: Vec<f64> = m.trials.iter().map(|t| t.ops_per_sec).collect();
            table.push(vec![
                Value::text(m.operation.label()),
                Value::text(&m.implementation),
                Value::text(&m.algorithm),
                Value::text(&m.parameter_set),
                version.map_or(Value::Empty, Value::Text),
                Value::Num(1.0 / m.ops_per_sec()),
                Value::Num(m.ops_per_sec()),
                Value::Int(m.trials.len() as u64),
                Value::num(m.ratio_to(m.counterpart(&self.measurements, &self.baseline))),
                Value::Json(json!(per_round)),
            ]);
        }
        table
    }

    /// Every parameter set's table under its name, separated by blank
    /// lines.
    pub fn render(&self) -> String {
        let sets = self.parameter_sets().into_iter();
        let tables = sets.map(|set| format!("{set}\n{}", self.table(Some(set)).render()));
        tables.collect::<Vec<_>>().join("\n")
    }

    /// The comparison as JSON: the baseline, the implementations and one
    /// object per measurement with its per-round values, median and ratio.
    pub fn to_json(&self) -> Json {
        json!({
            "baseline": self.baseline,
            "implementations": self.implementations,
            "results": self.table(None).to_json(),
        })
    }
}
