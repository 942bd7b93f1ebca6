//! A small CSV reader (RFC 4180) for the files the test-tools binaries
//! write with [`crate::table::Table::to_csv`]: a header row, then records;
//! fields separated by commas, quoted when they hold commas, quotes or line
//! breaks, with `""` standing for a quote inside a quoted field.
//!
//! ```
//! use test_tools::csv_read::CsvTable;
//!
//! let t = CsvTable::parse("name,note\nours,\"fast, \"\"really\"\"\"\n").unwrap();
//! assert_eq!(t.headers(), ["name", "note"]);
//! assert_eq!(t.records()[0].fields, ["ours", "fast, \"really\""]);
//! assert_eq!(t.column("note"), Some(1));
//! ```

use std::fmt;
use std::iter::Peekable;
use std::str::Chars;

/// A CSV file: the header and the records under it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CsvTable {
    headers: Vec<String>,
    records: Vec<Record>,
}

/// One record (row) of a CSV file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Record {
    /// The line of the file the record starts on, from 1.
    pub line: usize,
    /// The fields, one per header column.
    pub fields: Vec<String>,
}

/// A syntax error in a CSV file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CsvError {
    /// The line of the file, from 1.
    pub line: usize,
    /// What is wrong there.
    pub message: String,
}

impl fmt::Display for CsvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for CsvError {}

impl CsvTable {
    /// Parses CSV text. The first record is the header (names trimmed of
    /// surrounding spaces); every other record must have as many fields.
    /// A leading byte-order mark and empty lines are skipped; lines may end
    /// in `\n` or `\r\n`.
    pub fn parse(text: &str) -> Result<Self, CsvError> {
        let mut records = parse_records(text)?.into_iter();
        let Some(header) = records.next() else {
            return Err(CsvError {
                line: 1,
                message: "empty file: no header row".into(),
            });
        };
        let headers: Vec<String> = header.fields.iter().map(|h| h.trim().to_owned()).collect();
        let records: Vec<Record> = records.collect();
        for record in &records {
            if record.fields.len() != headers.len() {
                return Err(CsvError {
                    line: record.line,
                    message: format!(
                        "{} fields, but the header has {}",
                        record.fields.len(),
                        headers.len()
                    ),
                });
            }
        }
        Ok(Self { headers, records })
    }

    /// The column names.
    pub fn headers(&self) -> &[String] {
        &self.headers
    }

    /// The records under the header.
    pub fn records(&self) -> &[Record] {
        &self.records
    }

    /// The index of the column named `name`, if there is one.
    pub fn column(&self, name: &str) -> Option<usize> {
        self.headers.iter().position(|h| h == name)
    }
}

/// Splits CSV text into records.
fn parse_records(text: &str) -> Result<Vec<Record>, CsvError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut reader = Reader {
        chars: text.chars().peekable(),
        line: 1,
    };
    let mut records = Vec::new();
    while let Some(record) = reader.record()? {
        let blank = record.fields.len() == 1 && record.fields[0].is_empty();
        if !blank {
            records.push(record);
        }
    }
    Ok(records)
}

/// The reading position.
struct Reader<'a> {
    chars: Peekable<Chars<'a>>,
    line: usize,
}

impl Reader<'_> {
    /// The next record, `None` at the end of the text. An empty line is a
    /// record of one empty field (the caller skips those).
    fn record(&mut self) -> Result<Option<Record>, CsvError> {
        if self.chars.peek().is_none() {
            return Ok(None);
        }
        let line = self.line;
        let mut fields = Vec::new();
        loop {
            let field = if self.chars.peek() == Some(&'"') {
                self.chars.next();
                self.quoted(line)?
            } else {
                self.unquoted()?
            };
            fields.push(field);
            match self.chars.next() {
                Some(',') => continue,
                Some('\r') => {
                    if self.chars.peek() == Some(&'\n') {
                        self.chars.next();
                    }
                    self.line += 1;
                    break;
                }
                Some('\n') => {
                    self.line += 1;
                    break;
                }
                None => break,
                Some(c) => {
                    return Err(CsvError {
                        line: self.line,
                        message: format!("unexpected {c:?} after a closing quote"),
                    })
                }
            }
        }
        Ok(Some(Record { line, fields }))
    }

    /// A field without quotes, up to the next comma or line end.
    fn unquoted(&mut self) -> Result<String, CsvError> {
        let mut field = String::new();
        while let Some(&c) = self.chars.peek() {
            match c {
                ',' | '\r' | '\n' => break,
                '"' => {
                    return Err(CsvError {
                        line: self.line,
                        message: format!(
                            "quote inside an unquoted field {field:?}... (quote the whole field \
                             and double the quote)"
                        ),
                    })
                }
                c => {
                    field.push(c);
                    self.chars.next();
                }
            }
        }
        Ok(field)
    }

    /// A quoted field after its opening quote, up to its closing quote.
    fn quoted(&mut self, start: usize) -> Result<String, CsvError> {
        let mut field = String::new();
        loop {
            match self.chars.next() {
                None => {
                    return Err(CsvError {
                        line: start,
                        message: "quoted field is never closed".into(),
                    })
                }
                Some('"') if self.chars.peek() == Some(&'"') => {
                    self.chars.next();
                    field.push('"');
                }
                Some('"') => return Ok(field),
                Some(c) => {
                    if c == '\n' {
                        self.line += 1;
                    }
                    field.push(c);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::{Align, Table};

    fn fields(t: &CsvTable) -> Vec<Vec<&str>> {
        t.records()
            .iter()
            .map(|r| r.fields.iter().map(String::as_str).collect())
            .collect()
    }

    #[test]
    fn reads_bench_csv() {
        let text = "parameter_set,implementation,operation,median_cycles\n\
                    ML-KEM-768,kem-core avx2,keygen,21052\n\
                    ML-KEM-768,kem-core portable,keygen,55120\n";
        let t = CsvTable::parse(text).unwrap();
        assert_eq!(
            t.headers(),
            [
                "parameter_set",
                "implementation",
                "operation",
                "median_cycles"
            ]
        );
        assert_eq!(t.column("median_cycles"), Some(3));
        assert_eq!(t.column("missing"), None);
        assert_eq!(
            fields(&t),
            [
                ["ML-KEM-768", "kem-core avx2", "keygen", "21052"],
                ["ML-KEM-768", "kem-core portable", "keygen", "55120"]
            ]
        );
        assert_eq!(t.records()[1].line, 3);
    }

    #[test]
    fn quoted_fields() {
        let text = "a,b,c\r\n\"x,y\",\"say \"\"hi\"\"\",\"\"\r\n\"two\nlines\",,plain\r\n";
        let t = CsvTable::parse(text).unwrap();
        assert_eq!(
            fields(&t),
            [["x,y", "say \"hi\"", ""], ["two\nlines", "", "plain"]]
        );
        assert_eq!(t.records()[1].line, 3);
    }

    #[test]
    fn round_trips_table_output() {
        let mut table = Table::new(&[("name", Align::Left), ("value", Align::Right)]);
        let rows = [
            ["R&D <x>", "1"],
            ["a,b", "2"],
            ["\"quoted\"", "3"],
            ["multi\nline", ""],
        ];
        for row in rows {
            table.push(row);
        }
        let t = CsvTable::parse(&table.to_csv()).unwrap();
        assert_eq!(t.headers(), ["name", "value"]);
        assert_eq!(fields(&t), rows);
    }

    #[test]
    fn skips_bom_blank_lines_and_missing_final_newline() {
        let t = CsvTable::parse("\u{feff} a , b\n\n1,2\n\n3,4").unwrap();
        assert_eq!(t.headers(), ["a", "b"]);
        assert_eq!(fields(&t), [["1", "2"], ["3", "4"]]);
        assert_eq!(t.records()[1].line, 5);
    }

    #[test]
    fn errors_name_the_line() {
        let err = |text: &str| CsvTable::parse(text).unwrap_err().to_string();
        assert_eq!(err(""), "line 1: empty file: no header row");
        assert_eq!(
            err("a,b\n1,2\n3\n"),
            "line 3: 1 fields, but the header has 2"
        );
        assert_eq!(err("a\n\"open\n"), "line 2: quoted field is never closed");
        assert_eq!(
            err("a,b\n\"x\"y,2\n"),
            "line 2: unexpected 'y' after a closing quote"
        );
        assert!(err("a\nx\"y\n").starts_with("line 2: quote inside an unquoted field \"x\""));
    }
}
