//! A parser for the KEM results of `openssl speed`: the progress lines on
//! stderr (`Doing ML-KEM-512 keygen ops for 2s: 69943 ML-KEM-512 KEM keygen
//! ops in 1.92s`, or other drivers' `Doing ML-KEM-512 genkey ops for 10s:
//! 1298900 ops in 10.00s` and `Doing 6144 bits ML-KEM-512 decap ops ...`)
//! and the final table on stdout (header `keygen encaps decaps keygens/s
//! encaps/s decaps/s` or `s/genkey s/encap s/decap genkey/s encap/s
//! decap/s`, one row per algorithm). Other algorithms and tables are
//! skipped; the `version: 3.5.4` line is kept.

use serde::Serialize;

use crate::cli::unique;
use crate::measure::Operation;

/// One progress line: `Doing <alg> <op> ops for <N>s: <count> ... ops in <T>s`.
#[derive(Clone, Debug, PartialEq)]
pub struct DoingLine {
    /// The algorithm as printed (`ML-KEM-512`, `mlkem768`, ...).
    pub algorithm: String,
    /// The operation the line times.
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

/// One operation's numbers in a final-table row, as printed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OpTiming {
    /// Seconds per operation (six decimals).
    pub seconds_per_op: f64,
    /// Operations per second (one decimal).
    pub ops_per_sec: f64,
}

/// One row of a final KEM table.
#[derive(Clone, Debug, PartialEq)]
pub struct TableRow {
    /// The algorithm as printed.
    pub algorithm: String,
    /// Keygen, encaps and decaps, as [`Operation::EVP`] lists them.
    pub timings: [OpTiming; 3],
}

/// Where a headline number comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// The final table.
    Table,
    /// A progress line's count / elapsed.
    Doing,
}

/// The headline result of one algorithm and operation, with the count and
/// time of its progress line when there is one.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Headline {
    /// The algorithm as printed.
    pub algorithm: String,
    /// The operation.
    pub operation: Operation,
    /// Operations per second, as printed or derived.
    pub ops_per_sec: f64,
    /// Seconds per operation (the table's value, else `1 / ops_per_sec`).
    pub seconds_per_op: f64,
    /// Which part of the output the figure came from.
    pub source: Source,
    /// The progress line's operation count.
    pub count: Option<u64>,
    /// The progress line's time, in seconds.
    pub elapsed: Option<f64>,
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
    /// Parses speed output (stdout, stderr, or both concatenated); what is
    /// not a KEM result is skipped, so this cannot fail.
    pub fn parse(text: &str) -> Self {
        let mut run = SpeedRun::default();
        // The column layout of the KEM table being read, if any.
        let mut columns: Option<Vec<Column>> = None;
        for line in text.lines().map(str::trim) {
            if line.is_empty() {
                columns = None;
            } else if let Some(version) = line.strip_prefix("version:") {
                run.version.get_or_insert_with(|| version.trim().to_owned());
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
    /// appearance (progress lines first).
    pub fn algorithms(&self) -> Vec<&str> {
        let doing = self.doing.iter().map(|d| d.algorithm.as_str());
        unique(doing.chain(self.table.iter().map(|r| r.algorithm.as_str())))
    }

    /// The headline of one algorithm (any spelling of its
    /// [`canonical_name`]) and operation: the final table's numbers when it
    /// has the algorithm, else the first progress line's count / elapsed.
    pub fn headline_for(&self, algorithm: &str, operation: Operation) -> Option<Headline> {
        let same = |printed: &str| same_algorithm(printed, algorithm);
        let (algorithm, ops_per_sec, seconds_per_op, source) =
            match self.table.iter().find(|r| same(&r.algorithm)) {
                Some(row) => {
                    let t = row.timings.get(operation as usize)?;
                    (
                        &row.algorithm,
                        t.ops_per_sec,
                        t.seconds_per_op,
                        Source::Table,
                    )
                }
                None => self
                    .doing
                    .iter()
                    .filter(|d| d.operation == operation && same(&d.algorithm))
                    .find_map(|d| Some((&d.algorithm, d.ops_per_sec()?, Source::Doing)))
                    .map(|(alg, ops, source)| (alg, ops, 1.0 / ops, source))?,
            };
        let mut progress = self.doing.iter();
        let progress = progress.find(|d| d.algorithm == *algorithm && d.operation == operation);
        Some(Headline {
            algorithm: algorithm.clone(),
            operation,
            ops_per_sec,
            seconds_per_op,
            source,
            count: progress.map(|d| d.count),
            elapsed: progress.map(|d| d.elapsed),
        })
    }

    /// The headlines of every algorithm and operation with a result, by
    /// algorithm (in [`SpeedRun::algorithms`] order), then operation.
    pub fn headlines(&self) -> Vec<Headline> {
        let algorithms = self.algorithms().into_iter();
        let all = algorithms.flat_map(|alg| Operation::EVP.map(|op| self.headline_for(alg, op)));
        all.flatten().collect()
    }

    /// Disagreements within the run, one message each: a table row whose
    /// s/op and ops/s are not reciprocal within their printed precision, or
    /// whose ops/s is not the progress line's count / elapsed within the
    /// rounding of the printed elapsed time (two decimals) and ops/s (one).
    pub fn inconsistencies(&self) -> Vec<String> {
        let mut found = Vec::new();
        for row in &self.table {
            let alg = &row.algorithm;
            for (op, t) in Operation::EVP.into_iter().zip(row.timings) {
                if t.ops_per_sec > 0.0
                    && (t.seconds_per_op - 1.0 / t.ops_per_sec).abs() > 5.0e-7 + 1e-12
                {
                    found.push(format!(
                        "{alg} {op}: table has {}s/op but {} ops/s",
                        t.seconds_per_op, t.ops_per_sec
                    ));
                }
                let same = |d: &&DoingLine| d.operation == op && same_algorithm(&d.algorithm, alg);
                let Some(d) = self.doing.iter().find(same) else {
                    continue;
                };
                let count = d.count as f64;
                let fastest = count / (d.elapsed - 0.005).max(f64::MIN_POSITIVE) + 0.05;
                let slowest = count / (d.elapsed + 0.005) - 0.05;
                if !(slowest..=fastest).contains(&t.ops_per_sec) {
                    found.push(format!(
                        "{alg} {op}: table has {} ops/s but the progress line has \
                         {} ops in {:.2}s ({:.1} ops/s)",
                        t.ops_per_sec,
                        d.count,
                        d.elapsed,
                        count / d.elapsed
                    ));
                }
            }
        }
        found
    }
}

/// The canonical parameter-set name of an algorithm name from speed output
/// or a command line: `ML-KEM-768`, `mlkem768` and `MLKEM768` are all
/// `ML-KEM-768`; the hybrids take their OpenSSL 3.5 names, also from
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

/// The canonical names [`canonical_name`] returns, in report order.
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
    a == b || canonical_name(a).is_some_and(|x| canonical_name(b) == Some(x))
}

/// A KEM table column: an operation, and whether it holds seconds per
/// operation (else operations per second).
type Column = (Operation, bool);

/// Parses a KEM table header: seconds and rates of each of the three
/// operations once (`keygen`/`s/genkey` are seconds, `keygens/s` and
/// `genkey/s` are rates).
fn parse_header(line: &str) -> Option<Vec<Column>> {
    let column = |word: &str| match (word.strip_prefix("s/"), word.strip_suffix("/s")) {
        (Some(op), _) => Some((Operation::from_word(op)?, true)),
        (None, Some(op)) => Some((Operation::from_word(op)?, false)),
        (None, None) => Some((Operation::from_word(word)?, true)),
    };
    let columns: Vec<Column> = line.split_whitespace().map(column).collect::<Option<_>>()?;
    let complete = Operation::EVP
        .iter()
        .all(|&op| columns.contains(&(op, true)) && columns.contains(&(op, false)));
    (columns.len() == 6 && complete).then_some(columns)
}

/// Parses a KEM table row: the algorithm, then six numbers laid out as the
/// header says (seconds may carry an `s` suffix).
fn parse_row(line: &str, columns: &[Column]) -> Option<TableRow> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let split = words.len().checked_sub(6).filter(|&n| n > 0)?;
    let unset = OpTiming {
        seconds_per_op: f64::NAN,
        ops_per_sec: f64::NAN,
    };
    let mut timings = [unset; 3];
    for (&(operation, seconds), word) in columns.iter().zip(&words[split..]) {
        let timing = &mut timings[operation as usize];
        match seconds {
            true => timing.seconds_per_op = parse_number(word.strip_suffix('s').unwrap_or(word))?,
            false => timing.ops_per_sec = parse_number(word)?,
        }
    }
    let algorithm = words[..split].join(" ");
    Some(TableRow { algorithm, timings })
}

/// Parses one `Doing` progress line of a KEM operation; `None` for other
/// progress lines (RSA, signatures) and malformed ones.
fn parse_doing(line: &str) -> Option<DoingLine> {
    let (what, rest) = line.strip_prefix("Doing ")?.split_once(" ops for ")?;
    let (requested, result) = rest.split_once("s: ")?;
    // `<alg> <op>`, or `<n> bits <alg> <op>`.
    let mut words: Vec<&str> = what.split_whitespace().collect();
    if words.len() > 2 && words[1] == "bits" && words[0].parse::<u64>().is_ok() {
        words.drain(..2);
    }
    let (op_word, algorithm) = words.split_last().filter(|(_, alg)| !alg.is_empty())?;
    let operation = Operation::from_word(op_word)?;
    // `<count> ops in <T>s`, or `<count> <alg> KEM <op> ops in <T>s`.
    let (counted, elapsed) = result.rsplit_once(" ops in ")?;
    let counted: Vec<&str> = counted.split_whitespace().collect();
    let kem = match counted.as_slice() {
        [_] => true,
        [_, .., kind, op] => *kind == "KEM" && Operation::from_word(op) == Some(operation),
        _ => false,
    };
    kem.then_some(())?;
    Some(DoingLine {
        algorithm: algorithm.join(" "),
        operation,
        seconds_requested: requested.parse().ok()?,
        count: counted[0].parse().ok()?,
        elapsed: parse_number(elapsed.trim().strip_suffix('s')?)?,
    })
}

/// A finite, non-negative decimal number.
fn parse_number(text: &str) -> Option<f64> {
    let value = text.parse::<f64>().ok()?;
    (value.is_finite() && value >= 0.0).then_some(value)
}
