//! Side-by-side comparison of `openssl speed` results of several
//! implementations: the median ops/s over rounds of each implementation,
//! parameter set and operation, its ratio to a baseline implementation, and
//! the same as aligned tables (one per parameter set), CSV and JSON.
//!
//! ```
//! use test_tools::comparison::{Comparison, Implementation, Measurement};
//! use test_tools::speed_output::Operation;
//!
//! let m = |implementation: &str, round, algorithm: &str, ops_per_sec| Measurement {
//!     implementation: implementation.into(),
//!     round,
//!     algorithm: algorithm.into(),
//!     operation: Operation::Keygen,
//!     ops_per_sec,
//! };
//! let comparison = Comparison::new(
//!     vec![Implementation::new("native", Some("3.5.4")), Implementation::new("oqs", None)],
//!     "native",
//!     &[m("native", 1, "ML-KEM-768", 20000.0), m("oqs", 1, "mlkem768", 50000.0)],
//! )
//! .unwrap();
//! let oqs = &comparison.summaries()[1];
//! assert_eq!(oqs.parameter_set, "ML-KEM-768");
//! assert_eq!(comparison.ratio_to_baseline(oqs), Some(2.5));
//! ```

use std::fmt;

use serde_json::{json, Value};

use crate::speed_output::{parameter_set, Operation, PARAMETER_SETS};
use crate::table::{Align, Table};

/// The CSV columns, in order (other tools chart them by these names).
pub const CSV_COLUMNS: [&str; 9] = [
    "algorithm",
    "parameter_set",
    "operation",
    "implementation",
    "openssl_version",
    "ops_per_sec",
    "seconds_per_op",
    "ratio_to_baseline",
    "rounds",
];

/// One implementation's speed for one algorithm and operation in one round.
#[derive(Clone, Debug, PartialEq)]
pub struct Measurement {
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
    /// Its name, as [`Measurement::implementation`] gives it.
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

/// The rounds of one implementation, parameter set and operation.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    /// The implementation's name.
    pub implementation: String,
    /// The algorithm as printed (first round's spelling).
    pub algorithm: String,
    /// The canonical parameter set ([`parameter_set`]).
    pub parameter_set: String,
    /// The operation.
    pub operation: Operation,
    /// Ops/s of each round, in round order.
    pub per_round: Vec<f64>,
    /// The median of `per_round`.
    pub ops_per_sec: f64,
}

impl Summary {
    /// Seconds per operation: `1 / ops_per_sec`.
    pub fn seconds_per_op(&self) -> f64 {
        1.0 / self.ops_per_sec
    }
}

/// Why measurements cannot be compared.
#[derive(Clone, Debug, PartialEq)]
pub enum Error {
    /// The baseline is not one of the implementations.
    UnknownBaseline {
        /// The baseline asked for.
        baseline: String,
        /// The implementations there are.
        implementations: Vec<String>,
    },
    /// A measurement names an implementation that is not listed.
    UnknownImplementation(String),
    /// Two measurements of one implementation, round, parameter set and
    /// operation.
    Duplicate {
        /// The implementation.
        implementation: String,
        /// The round.
        round: usize,
        /// The parameter set.
        parameter_set: String,
        /// The operation.
        operation: Operation,
    },
    /// A speed that is not a positive, finite number.
    BadSpeed {
        /// The implementation.
        implementation: String,
        /// The algorithm as printed.
        algorithm: String,
        /// The operation.
        operation: Operation,
        /// The value.
        ops_per_sec: f64,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::UnknownBaseline {
                baseline,
                implementations,
            } => write!(
                f,
                "baseline {baseline:?} is not one of the implementations ({})",
                implementations.join(", ")
            ),
            Error::UnknownImplementation(name) => {
                write!(f, "measurement of an unlisted implementation {name:?}")
            }
            Error::Duplicate {
                implementation,
                round,
                parameter_set,
                operation,
            } => write!(
                f,
                "{implementation} has two {parameter_set} {operation} results in round {round}"
            ),
            Error::BadSpeed {
                implementation,
                algorithm,
                operation,
                ops_per_sec,
            } => write!(
                f,
                "{implementation}: {algorithm} {operation} speed {ops_per_sec} ops/s \
                 is not a positive number"
            ),
        }
    }
}

impl std::error::Error for Error {}

/// Medians of several implementations, and their ratios to a baseline.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    implementations: Vec<Implementation>,
    baseline: String,
    /// By parameter set (known sets first, in [`PARAMETER_SETS`] order,
    /// then others as first measured), operation, implementation.
    summaries: Vec<Summary>,
}

impl Comparison {
    /// Groups `measurements` by implementation, parameter set and
    /// operation and takes the median of each group's rounds.
    pub fn new(
        implementations: Vec<Implementation>,
        baseline: &str,
        measurements: &[Measurement],
    ) -> Result<Self, Error> {
        if !implementations.iter().any(|i| i.name == baseline) {
            return Err(Error::UnknownBaseline {
                baseline: baseline.to_owned(),
                implementations: implementations.iter().map(|i| i.name.clone()).collect(),
            });
        }
        let mut sets: Vec<String> = Vec::new();
        // (summary, round of each per_round value)
        let mut groups: Vec<(Summary, Vec<usize>)> = Vec::new();
        for m in measurements {
            if !implementations.iter().any(|i| i.name == m.implementation) {
                return Err(Error::UnknownImplementation(m.implementation.clone()));
            }
            if !(m.ops_per_sec.is_finite() && m.ops_per_sec > 0.0) {
                return Err(Error::BadSpeed {
                    implementation: m.implementation.clone(),
                    algorithm: m.algorithm.clone(),
                    operation: m.operation,
                    ops_per_sec: m.ops_per_sec,
                });
            }
            let set = parameter_set(&m.algorithm);
            if !sets.contains(&set) {
                sets.push(set.clone());
            }
            let group = groups.iter_mut().find(|(s, _)| {
                s.implementation == m.implementation
                    && s.parameter_set == set
                    && s.operation == m.operation
            });
            match group {
                Some((_, rounds)) if rounds.contains(&m.round) => {
                    return Err(Error::Duplicate {
                        implementation: m.implementation.clone(),
                        round: m.round,
                        parameter_set: set,
                        operation: m.operation,
                    });
                }
                Some((summary, rounds)) => {
                    summary.per_round.push(m.ops_per_sec);
                    rounds.push(m.round);
                }
                None => groups.push((
                    Summary {
                        implementation: m.implementation.clone(),
                        algorithm: m.algorithm.clone(),
                        parameter_set: set,
                        operation: m.operation,
                        per_round: vec![m.ops_per_sec],
                        ops_per_sec: 0.0,
                    },
                    vec![m.round],
                )),
            }
        }

        let set_rank = |set: &str| {
            PARAMETER_SETS
                .iter()
                .position(|&s| s == set)
                .unwrap_or(PARAMETER_SETS.len() + sets.iter().position(|s| s == set).unwrap_or(0))
        };
        let impl_rank = |name: &str| implementations.iter().position(|i| i.name == name);
        let mut summaries: Vec<Summary> = groups
            .into_iter()
            .map(|(mut summary, rounds)| {
                let mut by_round: Vec<(usize, f64)> =
                    rounds.into_iter().zip(summary.per_round).collect();
                by_round.sort_by_key(|&(round, _)| round);
                summary.per_round = by_round.into_iter().map(|(_, v)| v).collect();
                // Not empty: every group has at least one round.
                summary.ops_per_sec = median(&summary.per_round).unwrap_or(f64::NAN);
                summary
            })
            .collect();
        summaries.sort_by_key(|s| {
            (
                set_rank(&s.parameter_set),
                s.operation,
                impl_rank(&s.implementation),
            )
        });
        Ok(Self {
            implementations,
            baseline: baseline.to_owned(),
            summaries,
        })
    }

    /// The implementations, in the order given.
    pub fn implementations(&self) -> &[Implementation] {
        &self.implementations
    }

    /// The baseline implementation's name.
    pub fn baseline(&self) -> &str {
        &self.baseline
    }

    /// The medians, by parameter set, operation, implementation.
    pub fn summaries(&self) -> &[Summary] {
        &self.summaries
    }

    /// The parameter sets with results, in report order.
    pub fn parameter_sets(&self) -> Vec<&str> {
        let mut sets: Vec<&str> = Vec::new();
        for s in &self.summaries {
            if !sets.contains(&s.parameter_set.as_str()) {
                sets.push(&s.parameter_set);
            }
        }
        sets
    }

    /// `summary`'s median ops/s over the baseline's for the same parameter
    /// set and operation (above 1 means faster than the baseline); `None`
    /// when the baseline has no such result.
    pub fn ratio_to_baseline(&self, summary: &Summary) -> Option<f64> {
        let baseline = self.summaries.iter().find(|s| {
            s.implementation == self.baseline
                && s.parameter_set == summary.parameter_set
                && s.operation == summary.operation
        })?;
        Some(summary.ops_per_sec / baseline.ops_per_sec)
    }

    /// The aligned table of one parameter set: a row per operation and
    /// implementation with s/op, ops/s, the number of rounds and the ratio
    /// to the baseline (`3.31x`); a blank row between operations when some
    /// operation has several rows.
    pub fn table(&self, parameter_set: &str) -> Table {
        let ratio_header = format!("vs {}", self.baseline);
        let mut table = Table::new(&[
            ("operation", Align::Left),
            ("implementation", Align::Left),
            ("algorithm", Align::Left),
            ("s/op", Align::Right),
            ("ops/s", Align::Right),
            ("rounds", Align::Right),
            (&ratio_header, Align::Right),
        ]);
        let rows: Vec<&Summary> = self
            .summaries
            .iter()
            .filter(|s| s.parameter_set == parameter_set)
            .collect();
        // Blank rows between operations only when they group several rows.
        let grouped = rows
            .windows(2)
            .any(|pair| pair[0].operation == pair[1].operation);
        let mut previous = None;
        for s in rows {
            if grouped && previous.is_some_and(|op| op != s.operation) {
                table.push(Vec::<String>::new());
            }
            previous = Some(s.operation);
            table.push([
                s.operation.name().to_owned(),
                s.implementation.clone(),
                s.algorithm.clone(),
                format!("{:.9}", s.seconds_per_op()),
                format!("{:.1}", s.ops_per_sec),
                s.per_round.len().to_string(),
                self.ratio_to_baseline(s)
                    .map_or_else(|| "-".to_owned(), |r| format!("{r:.2}x")),
            ]);
        }
        table
    }

    /// Every parameter set's table under its name, separated by blank
    /// lines.
    pub fn render(&self) -> String {
        self.parameter_sets()
            .into_iter()
            .map(|set| format!("{set}\n{}", self.table(set).render()))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// One CSV row per parameter set, operation and implementation, with
    /// the [`CSV_COLUMNS`]. `ratio_to_baseline` is empty where the baseline
    /// has no result; `openssl_version` where it is not known.
    pub fn to_csv(&self) -> String {
        let columns: Vec<(&str, Align)> = CSV_COLUMNS.iter().map(|&c| (c, Align::Left)).collect();
        let mut table = Table::new(&columns);
        for s in &self.summaries {
            table.push([
                s.algorithm.clone(),
                s.parameter_set.clone(),
                s.operation.name().to_owned(),
                s.implementation.clone(),
                self.openssl_version(&s.implementation)
                    .unwrap_or_default()
                    .to_owned(),
                format!("{:.2}", s.ops_per_sec),
                format!("{:.12}", s.seconds_per_op()),
                self.ratio_to_baseline(s)
                    .map_or_else(String::new, |r| format!("{r:.4}")),
                s.per_round.len().to_string(),
            ]);
        }
        table.to_csv()
    }

    /// The comparison as JSON: the baseline, the implementations and one
    /// object per summary with its per-round values, median and ratio.
    pub fn to_json(&self) -> Value {
        let implementations: Vec<Value> = self
            .implementations
            .iter()
            .map(|i| json!({ "name": i.name, "openssl_version": i.openssl_version }))
            .collect();
        let results: Vec<Value> = self
            .summaries
            .iter()
            .map(|s| {
                json!({
                    "algorithm": s.algorithm,
                    "parameter_set": s.parameter_set,
                    "operation": s.operation.name(),
                    "implementation": s.implementation,
                    "openssl_version": self.openssl_version(&s.implementation),
                    "ops_per_sec": s.ops_per_sec,
                    "seconds_per_op": s.seconds_per_op(),
                    "ratio_to_baseline": self.ratio_to_baseline(s),
                    "rounds": s.per_round.len(),
                    "ops_per_sec_per_round": s.per_round,
                })
            })
            .collect();
        json!({
            "baseline": self.baseline,
            "implementations": implementations,
            "results": results,
        })
    }

    fn openssl_version(&self, implementation: &str) -> Option<&str> {
        self.implementations
            .iter()
            .find(|i| i.name == implementation)?
            .openssl_version
            .as_deref()
    }
}

/// The median of `values` (the mean of the middle two for an even count);
/// `None` when empty.
pub fn median(values: &[f64]) -> Option<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2]),
        _ => Some((sorted[n / 2 - 1] + sorted[n / 2]) / 2.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(implementation: &str, round: usize, alg: &str, op: Operation, ops: f64) -> Measurement {
        Measurement {
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
        let measurements = [
            m("ours", 1, "ML-KEM-768", Keygen, 80000.0),
            m("native", 1, "ML-KEM-768", Keygen, 24000.0),
            m("ours", 2, "ML-KEM-768", Keygen, 70000.0),
            m("native", 2, "ML-KEM-768", Keygen, 25000.0),
            m("ours", 3, "ML-KEM-768", Keygen, 75000.0),
            m("native", 3, "ML-KEM-768", Keygen, 20000.0),
            m("native", 1, "ML-KEM-768", Decaps, 23207.0),
            m("oqsprovider", 1, "mlkem512", Encaps, 79507.7),
            m("native", 1, "X25519MLKEM768", Keygen, 11238.7),
        ];
        Comparison::new(implementations(), "native", &measurements).unwrap()
    }

    #[test]
    fn medians_and_ratios() {
        let c = sample();
        let order: Vec<(&str, Operation, &str)> = c
            .summaries()
            .iter()
            .map(|s| {
                (
                    s.parameter_set.as_str(),
                    s.operation,
                    s.implementation.as_str(),
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
        let ours = &c.summaries()[1];
        assert_eq!(ours.per_round, [80000.0, 70000.0, 75000.0]);
        assert_eq!(ours.ops_per_sec, 75000.0);
        assert_eq!(ours.seconds_per_op(), 1.0 / 75000.0);
        assert_eq!(c.summaries()[2].ops_per_sec, 24000.0);
        assert_eq!(c.ratio_to_baseline(ours), Some(75000.0 / 24000.0));
        assert_eq!(c.ratio_to_baseline(&c.summaries()[2]), Some(1.0));
        // No native ML-KEM-512 result: no ratio.
        assert_eq!(c.ratio_to_baseline(&c.summaries()[0]), None);
        assert_eq!(
            c.parameter_sets(),
            ["ML-KEM-512", "ML-KEM-768", "X25519MLKEM768"]
        );
    }

    #[test]
    fn rounds_are_ordered_by_round_number() {
        let c = Comparison::new(
            implementations(),
            "ours",
            &[
                m("ours", 3, "ML-KEM-512", Operation::Keygen, 3.0),
                m("ours", 1, "ML-KEM-512", Operation::Keygen, 1.0),
                m("ours", 2, "mlkem512", Operation::Keygen, 2.0),
                m("ours", 4, "ML-KEM-512", Operation::Keygen, 10.0),
            ],
        )
        .unwrap();
        let s = &c.summaries()[0];
        assert_eq!(s.per_round, [1.0, 2.0, 3.0, 10.0]);
        assert_eq!(s.ops_per_sec, 2.5);
        assert_eq!(s.algorithm, "ML-KEM-512");
    }

    #[test]
    fn table_shows_every_implementation_with_its_ratio() {
        let c = sample();
        assert_eq!(
            c.table("ML-KEM-768").render(),
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
        assert!(all.ends_with("      1.00x\n"), "{all}");
    }

    #[test]
    fn csv_rows() {
        let csv = sample().to_csv();
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(
            lines[0],
            "algorithm,parameter_set,operation,implementation,openssl_version,\
             ops_per_sec,seconds_per_op,ratio_to_baseline,rounds"
        );
        assert_eq!(
            lines[1],
            "mlkem512,ML-KEM-512,encaps,oqsprovider,3.4.1,79507.70,0.000012577398,,1"
        );
        assert_eq!(
            lines[2],
            "ML-KEM-768,ML-KEM-768,keygen,ours,3.5.5,75000.00,0.000013333333,3.1250,3"
        );
        assert_eq!(lines.len(), 6);
    }

    #[test]
    fn json_holds_rounds_and_medians() {
        let json = sample().to_json();
        assert_eq!(json["baseline"], "native");
        assert_eq!(json["implementations"][2]["openssl_version"], "3.4.1");
        let ours = &json["results"][1];
        assert_eq!(ours["implementation"], "ours");
        assert_eq!(ours["ops_per_sec"], 75000.0);
        assert_eq!(ours["ratio_to_baseline"], 3.125);
        assert_eq!(
            ours["ops_per_sec_per_round"],
            json!([80000.0, 70000.0, 75000.0])
        );
        assert_eq!(json["results"][0]["ratio_to_baseline"], Value::Null);
    }

    #[test]
    fn errors() {
        let keygen = |imp: &str, round, ops| m(imp, round, "ML-KEM-768", Operation::Keygen, ops);
        let err = Comparison::new(implementations(), "liboqs", &[]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "baseline \"liboqs\" is not one of the implementations (ours, native, oqsprovider)"
        );
        let err = Comparison::new(implementations(), "ours", &[keygen("x", 1, 1.0)]).unwrap_err();
        assert_eq!(err, Error::UnknownImplementation("x".into()));
        let err = Comparison::new(
            implementations(),
            "ours",
            &[
                keygen("ours", 1, 1.0),
                m("ours", 1, "mlkem768", Operation::Keygen, 2.0),
            ],
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "ours has two ML-KEM-768 keygen results in round 1"
        );
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let err = Comparison::new(implementations(), "ours", &[keygen("ours", 1, bad)]);
            assert!(matches!(err, Err(Error::BadSpeed { .. })), "{bad}");
        }
    }

    #[test]
    fn median_of_odd_even_and_empty() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[7.5]), Some(7.5));
        assert_eq!(median(&[]), None);
    }
}
