//! Side-by-side comparison of `openssl speed` results of several
//! implementations: per implementation, parameter set and operation a
//! [`Measurement`] with one trial per round, its median ops/s and its ratio
//! to a baseline implementation, as aligned tables (one per parameter set),
//! CSV and JSON.
//!
//! ```
//! use test_tools::comparison::{Comparison, Implementation, SpeedResult};
//! use test_tools::measure::Operation;
//!
//! let r = |implementation: &str, algorithm: &str, ops_per_sec| SpeedResult {
//!     implementation: implementation.into(),
//!     round: 1,
//!     algorithm: algorithm.into(),
//!     operation: Operation::Keygen,
//!     ops_per_sec,
//! };
//! let comparison = Comparison::new(
//!     vec![Implementation::new("native", Some("3.5.4")), Implementation::new("oqs", None)],
//!     "native",
//!     &[r("native", "ML-KEM-768", 20000.0), r("oqs", "mlkem768", 50000.0)],
//! )
//! .unwrap();
//! let oqs = &comparison.measurements()[1];
//! assert_eq!(oqs.parameter_set, "ML-KEM-768");
//! assert_eq!(comparison.ratio_to_baseline(oqs), Some(2.5));
//! ```

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

/// An implementation in the comparison.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Implementation {
    /// Its name, as [`SpeedResult::implementation`] gives it.
    pub name: String,
    /// The version of the OpenSSL that ran it (`3.5.5`), when known.
    pub openssl_version: Option<String>,
}

impl Implementation {
    /// An implementation with a name and an optional OpenSSL version.
    pub fn new(name: &str, openssl_version: Option<&str>) -> Self {
        Self {
            name: name.to_owned(),
            openssl_version: openssl_version.map(str::to_owned),
        }
    }
}

/// Measurements of several implementations and their ratios to a baseline.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    implementations: Vec<Implementation>,
    baseline: String,
    /// By parameter set (known sets first, in [`PARAMETER_SETS`] order,
    /// then others as first measured), operation, implementation; trials in
    /// round order.
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
        let mut sets: Vec<String> = Vec::new();
        let mut groups: Vec<(Measurement, Vec<usize>)> = Vec::new();
        for r in results {
            if !names.contains(&r.implementation.as_str()) {
                return Err(format!(
                    "measurement of an unlisted implementation {:?}",
                    r.implementation
                ));
            }
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
            let found = groups.iter_mut().find(|(m, _)| {
                m.implementation == r.implementation
                    && m.parameter_set == set
                    && m.operation == r.operation
            });
            let (measurement, rounds) = match found {
                Some(group) => group,
                None => {
                    let mut m = Measurement::new(&r.implementation, &set, r.operation);
                    m.algorithm = r.algorithm.clone();
                    groups.push((m, Vec::new()));
                    groups.last_mut().expect("just pushed")
                }
            };
            if rounds.contains(&r.round) {
                return Err(format!(
                    "{} has two {set} {} results in round {}",
                    r.implementation, r.operation, r.round
                ));
            }
            // Keep the trials in round order.
            let at = rounds.partition_point(|&k| k < r.round);
            rounds.insert(at, r.round);
            measurement.trials.insert(at, Trial::rate(r.ops_per_sec));
        }
        let set_rank = |set: &str| {
            PARAMETER_SETS
                .iter()
                .position(|&s| s == set)
                .unwrap_or(PARAMETER_SETS.len() + sets.iter().position(|s| s == set).unwrap_or(0))
        };
        let mut measurements: Vec<Measurement> = groups.into_iter().map(|(m, _)| m).collect();
        measurements.sort_by_key(|m| {
            let implementation = names.iter().position(|n| *n == m.implementation);
            (set_rank(&m.parameter_set), m.operation, implementation)
        });
        Ok(Self {
            implementations,
            baseline: baseline.to_owned(),
            measurements,
        })
    }

    /// The baseline implementation's name.
    pub fn baseline(&self) -> &str {
        &self.baseline
    }

    /// The measurements, by parameter set, operation, implementation.
    pub fn measurements(&self) -> &[Measurement] {
        &self.measurements
    }

    /// The parameter sets with results, in report order.
    pub fn parameter_sets(&self) -> Vec<&str> {
        let mut sets: Vec<&str> = Vec::new();
        for m in &self.measurements {
            if !sets.contains(&m.parameter_set.as_str()) {
                sets.push(&m.parameter_set);
            }
        }
        sets
    }

    /// `m`'s median ops/s over the baseline's for the same parameter set and
    /// operation (above 1: faster than the baseline); `None` when the
    /// baseline has no such result.
    pub fn ratio_to_baseline(&self, m: &Measurement) -> Option<f64> {
        let baseline = self.measurements.iter().find(|b| {
            b.implementation == self.baseline
                && b.parameter_set == m.parameter_set
                && b.operation == m.operation
        })?;
        Some(m.ops_per_sec() / baseline.ops_per_sec())
    }

    /// The rows of `parameter_set` (all when `None`): s/op (1 / the median
    /// ops/s), ops/s, rounds and the ratio to the baseline (`3.31x`); a blank
    /// line between operations when some operation has several rows.
    pub fn table(&self, parameter_set: Option<&str>) -> Table {
        let mut table = Table::new(vec![
            Column::new("operation", "operation"),
            Column::new("implementation", "implementation"),
            Column::new("algorithm", "algorithm"),
            Column::new("parameter_set", "parameter_set").file_only(),
            Column::new("openssl_version", "openssl_version").file_only(),
            Column::number("s/op", "seconds_per_op", Style::Fixed(9), Style::Fixed(12)),
            Column::number("ops/s", "ops_per_sec", Style::Fixed(1), Style::Fixed(2)),
            Column::new("rounds", "rounds").right(),
            Column::number(
                format!("vs {}", self.baseline),
                "ratio_to_baseline",
                Style::Times(2),
                Style::Fixed(4),
            )
            .missing("-"),
            Column::new("", "ops_per_sec_per_round").json_only(),
        ])
        .file_order(&[&COMPARISON_COLUMNS[..], &["ratio_to_baseline", "rounds"]].concat());
        let rows: Vec<&Measurement> = self
            .measurements
            .iter()
            .filter(|m| parameter_set.is_none_or(|set| m.parameter_set == set))
            .collect();
        let grouped = rows
            .windows(2)
            .any(|pair| pair[0].operation == pair[1].operation);
        for (i, m) in rows.iter().enumerate() {
            if grouped && i > 0 && rows[i - 1].operation != m.operation {
                table.blank();
            }
            let version = self
                .implementations
                .iter()
                .find(|i| i.name == m.implementation);
            let per_round: Vec<f64> = m.trials.iter().map(|t| t.ops_per_sec).collect();
            table.push(vec![
                Value::text(m.operation.label()),
                Value::text(&m.implementation),
                Value::text(&m.algorithm),
                Value::text(&m.parameter_set),
                version
                    .and_then(|v| v.openssl_version.clone())
                    .map_or(Value::Empty, Value::Text),
                Value::Num(1.0 / m.ops_per_sec()),
                Value::Num(m.ops_per_sec()),
                Value::Int(m.trials.len() as u64),
                Value::num(self.ratio_to_baseline(m)),
                Value::Json(json!(per_round)),
            ]);
        }
        table
    }

    /// Every parameter set's table under its name, separated by blank
    /// lines.
    pub fn render(&self) -> String {
        let tables = self.parameter_sets().into_iter();
        let tables = tables.map(|set| format!("{set}\n{}", self.table(Some(set)).render()));
        tables.collect::<Vec<_>>().join("\n")
    }

    /// The comparison as JSON: the baseline, the implementations and one
    /// object per measurement with its per-round values, median and ratio.
    pub fn to_json(&self) -> Json {
        let implementations: Vec<Json> = self
            .implementations
            .iter()
            .map(|i| json!({ "name": i.name, "openssl_version": i.openssl_version }))
            .collect();
        json!({
            "baseline": self.baseline,
            "implementations": implementations,
            "results": self.table(None).to_json(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(implementation: &str, round: usize, alg: &str, op: Operation, ops: f64) -> SpeedResult {
        SpeedResult {
            implementation: implementation.into(),
            round,
            algorithm: alg.into(),
            operation: op,
            ops_per_sec: ops,
        }
    }

    fn implementations() -> Vec<Implementation> {
        vec![
            Implementation::new("ours", Some("3.5.5")),
            Implementation::new("native", Some("3.5.5")),
            Implementation::new("oqsprovider", Some("3.4.1")),
        ]
    }

    /// Three rounds of ours and native on ML-KEM-768 keygen, one round of
    /// native decaps, oqsprovider on ML-KEM-512 only, native on a hybrid.
    fn sample() -> Comparison {
        use Operation::*;
        let results = [
            r("ours", 1, "ML-KEM-768", Keygen, 80000.0),
            r("native", 1, "ML-KEM-768", Keygen, 24000.0),
            r("ours", 2, "ML-KEM-768", Keygen, 70000.0),
            r("native", 2, "ML-KEM-768", Keygen, 25000.0),
            r("ours", 3, "ML-KEM-768", Keygen, 75000.0),
            r("native", 3, "ML-KEM-768", Keygen, 20000.0),
            r("native", 1, "ML-KEM-768", Decaps, 23207.0),
            r("oqsprovider", 1, "mlkem512", Encaps, 79507.7),
            r("native", 1, "X25519MLKEM768", Keygen, 11238.7),
        ];
        Comparison::new(implementations(), "native", &results).unwrap()
    }

    #[test]
    fn medians_and_ratios() {
        let c = sample();
        let order: Vec<(&str, Operation, &str)> = c
            .measurements()
            .iter()
            .map(|m| {
                (
                    m.parameter_set.as_str(),
                    m.operation,
                    m.implementation.as_str(),
                )
            })
            .collect();
        assert_eq!(
            order,
            [
                ("ML-KEM-512", Operation::Encaps, "oqsprovider"),
                ("ML-KEM-768", Operation::Keygen, "ours"),
                ("ML-KEM-768", Operation::Keygen, "native"),
                ("ML-KEM-768", Operation::Decaps, "native"),
                ("X25519MLKEM768", Operation::Keygen, "native"),
            ]
        );
        let ours = &c.measurements()[1];
        assert_eq!(ours.ops_per_sec(), 75000.0);
        assert_eq!(c.ratio_to_baseline(ours), Some(75000.0 / 24000.0));
        assert_eq!(c.ratio_to_baseline(&c.measurements()[0]), None);
        assert_eq!(
            c.parameter_sets(),
            ["ML-KEM-512", "ML-KEM-768", "X25519MLKEM768"]
        );
        let json = c.to_json();
        assert_eq!(
            json["results"][1]["ops_per_sec_per_round"],
            json!([80000.0, 70000.0, 75000.0])
        );
        assert_eq!(json["results"][1]["ratio_to_baseline"], 3.125);
        assert_eq!(json["results"][0]["ratio_to_baseline"], Json::Null);
        assert_eq!(json["implementations"][2]["openssl_version"], "3.4.1");
    }

    #[test]
    fn rounds_are_ordered_by_round_number() {
        let c = Comparison::new(
            implementations(),
            "ours",
            &[
                r("ours", 3, "ML-KEM-512", Operation::Keygen, 3.0),
                r("ours", 1, "ML-KEM-512", Operation::Keygen, 1.0),
                r("ours", 2, "mlkem512", Operation::Keygen, 2.0),
                r("ours", 4, "ML-KEM-512", Operation::Keygen, 10.0),
            ],
        )
        .unwrap();
        let m = &c.measurements()[0];
        let rounds: Vec<f64> = m.trials.iter().map(|t| t.ops_per_sec).collect();
        assert_eq!((rounds, m.ops_per_sec()), (vec![1.0, 2.0, 3.0, 10.0], 2.5));
        assert_eq!(m.algorithm, "ML-KEM-512");
    }

    #[test]
    fn tables_and_csv() {
        let c = sample();
        assert_eq!(
            c.table(Some("ML-KEM-768")).render(),
            "\
operation  implementation  algorithm          s/op    ops/s  rounds  vs native
---------  --------------  ----------  -----------  -------  ------  ---------
keygen     ours            ML-KEM-768  0.000013333  75000.0       3      3.12x
keygen     native          ML-KEM-768  0.000041667  24000.0       3      1.00x

decaps     native          ML-KEM-768  0.000043090  23207.0       1      1.00x
"
        );
        let all = c.render();
        assert!(all.starts_with("ML-KEM-512\noperation"), "{all}");
        assert!(
            all.contains("encaps     oqsprovider     mlkem512   0.000012577  79507.7       1          -\n\nML-KEM-768\n"),
            "{all}"
        );
        let csv = c.table(None).to_csv();
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(
            lines[..3],
            [
                "algorithm,parameter_set,operation,implementation,openssl_version,\
                 ops_per_sec,seconds_per_op,ratio_to_baseline,rounds",
                "mlkem512,ML-KEM-512,encaps,oqsprovider,3.4.1,79507.70,0.000012577398,,1",
                "ML-KEM-768,ML-KEM-768,keygen,ours,3.5.5,75000.00,0.000013333333,3.1250,3",
            ]
        );
        assert_eq!(lines.len(), 6);
    }

    #[test]
    fn errors() {
        let keygen = |imp: &str, round, ops| r(imp, round, "ML-KEM-768", Operation::Keygen, ops);
        let err = Comparison::new(implementations(), "liboqs", &[]).unwrap_err();
        assert_eq!(
            err,
            "baseline \"liboqs\" is not one of the implementations (ours, native, oqsprovider)"
        );
        let err = Comparison::new(implementations(), "ours", &[keygen("x", 1, 1.0)]).unwrap_err();
        assert!(err.contains("unlisted implementation \"x\""), "{err}");
        let twice = [
            keygen("ours", 1, 1.0),
            r("ours", 1, "mlkem768", Operation::Keygen, 2.0),
        ];
        let err = Comparison::new(implementations(), "ours", &twice).unwrap_err();
        assert_eq!(err, "ours has two ML-KEM-768 keygen results in round 1");
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let err = Comparison::new(implementations(), "ours", &[keygen("ours", 1, bad)]);
            assert!(err.unwrap_err().contains("not a positive number"), "{bad}");
        }
    }
}
