//! A parser for the KEM results of `openssl speed`.
//!
//! Two parts of the output carry numbers:
//!
//! * the progress lines (on stderr), one per algorithm and operation:
//!   `Doing ML-KEM-512 keygen ops for 2s: 69943 ML-KEM-512 KEM keygen ops in 1.92s`
//!   (OpenSSL 3.2+), or the shorter forms of other speed drivers,
//!   `Doing ML-KEM-512 genkey ops for 10s: 1298900 ops in 10.00s` and
//!   `Doing 6144 bits ML-KEM-512 decap ops for 10s: 993998 ops in 10.00s`;
//! * the final table (on stdout), under the header
//!   `keygen encaps decaps keygens/s encaps/s decaps/s` with rows such as
//!   `ML-KEM-512 0.000027s 0.000019s 0.000028s 36428.6 51479.6 35973.0`, or
//!   under `s/genkey s/encap s/decap genkey/s encap/s decap/s` (values
//!   without the `s` suffix).
//!
//! Everything else (other algorithms' progress lines, RSA and signature
//! tables, build information) is skipped. The `version: 3.5.4` line is kept.
//!
//! ```
//! use test_tools::measure::Operation;
//! use test_tools::speed_output::SpeedRun;
//!
//! let run = SpeedRun::parse(
//!     "Doing ML-KEM-512 keygen ops for 2s: 69943 ML-KEM-512 KEM keygen ops in 1.92s\n\
//!      version: 3.5.4\n\
//!      \x20     keygen    encaps    decaps keygens/s  encaps/s  decaps/s\n\
//!      \x20ML-KEM-512 0.000027s 0.000019s 0.000028s   36428.6   51479.6   35973.0\n",
//! );
//! assert_eq!(run.version.as_deref(), Some("3.5.4"));
//! assert_eq!(run.doing[0].count, 69943);
//! let keygen = run.headline_for("ML-KEM-512", Operation::Keygen).unwrap();
//! assert_eq!(keygen.ops_per_sec, 36428.6);
//! assert!(run.inconsistencies().is_empty());
//! ```

use crate::measure::Operation;

/// One progress line: `Doing <alg> <op> ops for <N>s: <count> ... ops in <T>s`.
#[derive(Clone, Debug, PartialEq)]
pub struct DoingLine {
    /// The algorithm as printed (`ML-KEM-512`, `mlkem768`, ...).
    pub algorithm: String,
    /// The operation measured.
    pub operation: Operation,
    /// The run time asked for (`-seconds`).
    pub seconds_requested: u32,
    /// Operations completed.
    pub count: u64,
    /// Time they took, in seconds, as printed (two decimals).
    pub elapsed: f64,
}

impl DoingLine {
    /// `count / elapsed`, or `None` when no time was recorded.
    pub fn ops_per_sec(&self) -> Option<f64> {
        (self.elapsed > 0.0).then(|| self.count as f64 / self.elapsed)
    }
}

/// One operation's numbers in a final-table row.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OpTiming {
    /// Seconds per operation, as printed (six decimals).
    pub seconds_per_op: f64,
    /// Operations per second, as printed (one decimal).
    pub ops_per_sec: f64,
}

/// One row of a final KEM table.
#[derive(Clone, Debug, PartialEq)]
pub struct TableRow {
    /// The algorithm as printed.
    pub algorithm: String,
    /// Key generation.
    pub keygen: OpTiming,
    /// Encapsulation.
    pub encaps: OpTiming,
    /// Decapsulation.
    pub decaps: OpTiming,
}

impl TableRow {
    /// The numbers of one operation (NaN for those speed tables lack).
    pub fn get(&self, operation: Operation) -> OpTiming {
        match operation {
            Operation::Keygen => self.keygen,
            Operation::Encaps => self.encaps,
            Operation::Decaps => self.decaps,
            _ => OpTiming {
                seconds_per_op: f64::NAN,
                ops_per_sec: f64::NAN,
            },
        }
    }
}

/// Where a headline number comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// The final table.
    Table,
    /// A progress line's count / elapsed.
    Doing,
}

/// The headline result of one algorithm and operation.
#[derive(Clone, Debug, PartialEq)]
pub struct Headline {
    /// The algorithm as printed.
    pub algorithm: String,
    /// The operation.
    pub operation: Operation,
    /// Operations per second.
    pub ops_per_sec: f64,
    /// Seconds per operation (the table's value, else `1 / ops_per_sec`).
    pub seconds_per_op: f64,
    /// Where the numbers come from.
    pub source: Source,
}

/// The KEM results of one `openssl speed` run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SpeedRun {
    /// The `version:` line's value (`3.5.4`), when present.
    pub version: Option<String>,
    /// The KEM progress lines, in order.
    pub doing: Vec<DoingLine>,
    /// The rows of all final KEM tables, in order.
    pub table: Vec<TableRow>,
}

impl SpeedRun {
    /// Parses speed output (stdout, stderr, or both concatenated). Lines
    /// that are not KEM results are skipped, so this cannot fail; an output
    /// without KEM results gives an empty run.
    pub fn parse(text: &str) -> Self {
        let mut run = SpeedRun::default();
        // The column layout of the KEM table being read, if any.
        let mut columns: Option<[Column; 6]> = None;
        for line in text.lines() {
            let line = line.trim();
            if line.is_empty() {
                columns = None;
            } else if let Some(version) = line.strip_prefix("version:") {
                if run.version.is_none() {
                    run.version = Some(version.trim().to_owned());
                }
            } else if line.starts_with("Doing ") {
                run.doing.extend(parse_doing(line));
            } else if let Some(header) = parse_header(line) {
                columns = Some(header);
            } else if let Some(layout) = &columns {
                match parse_row(line, layout) {
                    Some(row) => run.table.push(row),
                    // Another table (signatures, RSA) or other text.
                    None => columns = None,
                }
            }
        }
        run
    }

    /// Whether the run holds no KEM result at all.
    pub fn is_empty(&self) -> bool {
        self.doing.is_empty() && self.table.is_empty()
    }

    /// The algorithms with results, as printed, in order of first
    /// appearance (progress lines first, as `openssl speed` prints them).
    pub fn algorithms(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        let printed = self
            .doing
            .iter()
            .map(|d| d.algorithm.as_str())
            .chain(self.table.iter().map(|r| r.algorithm.as_str()));
        for name in printed {
            if !names.contains(&name) {
                names.push(name);
            }
        }
        names
    }

    /// The headline of one algorithm (as printed, or any name with the same
    /// [`canonical_name`]) and operation: the final table's numbers when the
    /// table has the algorithm, else the first progress line's count /
    /// elapsed.
    pub fn headline_for(&self, algorithm: &str, operation: Operation) -> Option<Headline> {
        if let Some(row) = self
            .table
            .iter()
            .find(|r| same_algorithm(&r.algorithm, algorithm))
        {
            let timing = row.get(operation);
            return Some(Headline {
                algorithm: row.algorithm.clone(),
                operation,
                ops_per_sec: timing.ops_per_sec,
                seconds_per_op: timing.seconds_per_op,
                source: Source::Table,
            });
        }
        self.doing
            .iter()
            .filter(|d| d.operation == operation && same_algorithm(&d.algorithm, algorithm))
            .find_map(|d| {
                let ops_per_sec = d.ops_per_sec()?;
                Some(Headline {
                    algorithm: d.algorithm.clone(),
                    operation,
                    ops_per_sec,
                    seconds_per_op: 1.0 / ops_per_sec,
                    source: Source::Doing,
                })
            })
    }

    /// The headlines of every algorithm and operation with a result, by
    /// algorithm (in [`SpeedRun::algorithms`] order), then operation.
    pub fn headlines(&self) -> Vec<Headline> {
        self.algorithms()
            .into_iter()
            .flat_map(|alg| Operation::EVP.map(|op| self.headline_for(alg, op)))
            .flatten()
            .collect()
    }

    /// Disagreements within the run, one message each: a table row whose
    /// s/op and ops/s are not reciprocal within their printed precision, or
    /// whose ops/s is not the progress line's count / elapsed within the
    /// rounding of the printed elapsed time (two decimals) and ops/s (one).
    pub fn inconsistencies(&self) -> Vec<String> {
        let mut found = Vec::new();
        for row in &self.table {
            for op in Operation::EVP {
                let timing = row.get(op);
                let alg = &row.algorithm;
                if timing.ops_per_sec > 0.0
                    && (timing.seconds_per_op - 1.0 / timing.ops_per_sec).abs() > 5.0e-7 + 1e-12
                {
                    found.push(format!(
                        "{alg} {op}: table has {}s/op but {} ops/s",
                        timing.seconds_per_op, timing.ops_per_sec
                    ));
                }
                let doing = self
                    .doing
                    .iter()
                    .find(|d| d.operation == op && same_algorithm(&d.algorithm, alg));
                if let Some(d) = doing {
                    let count = d.count as f64;
                    let fastest = count / (d.elapsed - 0.005).max(f64::MIN_POSITIVE) + 0.05;
                    let slowest = count / (d.elapsed + 0.005) - 0.05;
                    if !(slowest..=fastest).contains(&timing.ops_per_sec) {
                        found.push(format!(
                            "{alg} {op}: table has {} ops/s but the progress line has \
                             {} ops in {:.2}s ({:.1} ops/s)",
                            timing.ops_per_sec,
                            d.count,
                            d.elapsed,
                            count / d.elapsed
                        ));
                    }
                }
            }
        }
        found
    }
}

/// The canonical parameter-set name of an algorithm name from speed output
/// or a command line: `ML-KEM-768`, `mlkem768` and `MLKEM768` are all
/// `ML-KEM-768`; the hybrids take their OpenSSL 3.5 names
/// (`X25519MLKEM768`, `SecP256r1MLKEM768`, `SecP384r1MLKEM1024`), also from
/// oqsprovider's `x25519_mlkem768`, `p256_mlkem768` and `p384_mlkem1024`.
/// Case, `-` and `_` do not matter. `None` for other algorithms.
pub fn canonical_name(name: &str) -> Option<&'static str> {
    let key: String = name
        .chars()
        .filter(|c| !matches!(c, '-' | '_'))
        .map(|c| c.to_ascii_lowercase())
        .collect();
    Some(match key.as_str() {
        "mlkem512" => "ML-KEM-512",
        "mlkem768" => "ML-KEM-768",
        "mlkem1024" => "ML-KEM-1024",
        "x25519mlkem768" => "X25519MLKEM768",
        "secp256r1mlkem768" | "p256mlkem768" => "SecP256r1MLKEM768",
        "secp384r1mlkem1024" | "p384mlkem1024" => "SecP384r1MLKEM1024",
        _ => return None,
    })
}

/// The canonical names [`canonical_name`] returns, in the order reports
/// list them.
pub const PARAMETER_SETS: [&str; 6] = [
    "ML-KEM-512",
    "ML-KEM-768",
    "ML-KEM-1024",
    "X25519MLKEM768",
    "SecP256r1MLKEM768",
    "SecP384r1MLKEM1024",
];

/// The parameter set a printed algorithm name belongs to: its
/// [`canonical_name`], or the name itself for other algorithms.
pub fn parameter_set(algorithm: &str) -> String {
    canonical_name(algorithm).map_or_else(|| algorithm.to_owned(), str::to_owned)
}

/// Whether two printed names are the same algorithm: equal, or with the
/// same canonical name.
fn same_algorithm(a: &str, b: &str) -> bool {
    a == b || matches!((canonical_name(a), canonical_name(b)), (Some(x), Some(y)) if x == y)
}

/// What a column of a KEM table holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Column {
    operation: Operation,
    /// Seconds per operation (else operations per second).
    seconds: bool,
}

/// Parses a KEM table header: six columns, seconds and rates of each of
/// the three operations (`keygen`/`s/genkey` are seconds, `keygens/s` and
/// `genkey/s` are rates).
fn parse_header(line: &str) -> Option<[Column; 6]> {
    let words: Vec<&str> = line.split_whitespace().collect();
    if words.len() != 6 {
        return None;
    }
    let mut columns = [Column {
        operation: Operation::Keygen,
        seconds: true,
    }; 6];
    for (column, word) in columns.iter_mut().zip(&words) {
        *column = if let Some(op) = word.strip_prefix("s/") {
            Column {
                operation: Operation::from_word(op)?,
                seconds: true,
            }
        } else if let Some(op) = word.strip_suffix("/s") {
            Column {
                operation: Operation::from_word(op)?,
                seconds: false,
            }
        } else {
            Column {
                operation: Operation::from_word(word)?,
                seconds: true,
            }
        };
    }
    // Each (operation, kind) exactly once.
    let complete = Operation::EVP.iter().all(|&op| {
        [true, false].iter().all(|&seconds| {
            columns
                .iter()
                .filter(|c| c.operation == op && c.seconds == seconds)
                .count()
                == 1
        })
    });
    complete.then_some(columns)
}

/// Parses a KEM table row: the algorithm, then six numbers laid out as the
/// header says (seconds may carry an `s` suffix).
fn parse_row(line: &str, columns: &[Column; 6]) -> Option<TableRow> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let split = words.len().checked_sub(6).filter(|&n| n > 0)?;
    let algorithm = words[..split].join(" ");
    let unset = OpTiming {
        seconds_per_op: f64::NAN,
        ops_per_sec: f64::NAN,
    };
    let mut timings = [unset; 3];
    for (column, word) in columns.iter().zip(&words[split..]) {
        let text = if column.seconds {
            word.strip_suffix('s').unwrap_or(word)
        } else {
            word
        };
        let value = parse_number(text)?;
        let timing = &mut timings[column.operation as usize];
        if column.seconds {
            timing.seconds_per_op = value;
        } else {
            timing.ops_per_sec = value;
        }
    }
    let [keygen, encaps, decaps] = timings;
    Some(TableRow {
        algorithm,
        keygen,
        encaps,
        decaps,
    })
}

/// Parses one `Doing` progress line of a KEM operation; `None` for other
/// progress lines (RSA, signatures) and malformed ones.
fn parse_doing(line: &str) -> Option<DoingLine> {
    let rest = line.strip_prefix("Doing ")?;
    let (what, rest) = rest.split_once(" ops for ")?;
    let (requested, result) = rest.split_once(": ")?;
    let seconds_requested = requested.strip_suffix('s')?.parse().ok()?;

    // `<alg> <op>`, or `<n> bits <alg> <op>`.
    let mut words: Vec<&str> = what.split_whitespace().collect();
    if words.len() > 2 && words[1] == "bits" && words[0].parse::<u64>().is_ok() {
        words.drain(..2);
    }
    let (op_word, alg_words) = words.split_last()?;
    let operation = Operation::from_word(op_word)?;
    if alg_words.is_empty() {
        return None;
    }
    let algorithm = alg_words.join(" ");

    // `<count> ops in <T>s`, or `<count> <alg> KEM <op> ops in <T>s`.
    let (count, result) = result.split_once(' ')?;
    let count = count.parse().ok()?;
    let (middle, elapsed) = match result.strip_prefix("ops in ") {
        Some(elapsed) => ("", elapsed),
        None => result.rsplit_once(" ops in ")?,
    };
    if !middle.is_empty() {
        let middle: Vec<&str> = middle.split_whitespace().collect();
        let [.., kind, op] = middle.as_slice() else {
            return None;
        };
        if *kind != "KEM" || Operation::from_word(op) != Some(operation) {
            return None;
        }
    }
    let elapsed = parse_number(elapsed.trim().strip_suffix('s')?)?;
    Some(DoingLine {
        algorithm,
        operation,
        seconds_requested,
        count,
        elapsed,
    })
}

/// A finite, non-negative decimal number.
fn parse_number(text: &str) -> Option<f64> {
    text.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v >= 0.0)
}
