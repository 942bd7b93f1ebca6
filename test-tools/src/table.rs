//! Plain-text tables with aligned columns, and the same data as CSV
//! (RFC 4180 quoting), for the reports of the test-tools binaries.
//!
//! ```
//! use test_tools::table::{Align, Table};
//!
//! let mut t = Table::new(&[("name", Align::Left), ("value", Align::Right)]);
//! t.push(["a", "1"]);
//! t.push(["bb", "22"]);
//! assert_eq!(t.render(), "name  value\n----  -----\na         1\nbb       22\n");
//! assert_eq!(t.to_csv(), "name,value\na,1\nbb,22\n");
//! ```

use std::fmt::Write as _;

/// How a column's cells are padded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    /// Pad on the right (text).
    Left,
    /// Pad on the left (numbers).
    Right,
}

/// A table: a header row and data rows of string cells.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Table {
    headers: Vec<String>,
    aligns: Vec<Align>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with the given column headers and alignments.
    pub fn new(columns: &[(&str, Align)]) -> Self {
        Self {
            headers: columns.iter().map(|(h, _)| (*h).to_owned()).collect(),
            aligns: columns.iter().map(|(_, a)| *a).collect(),
            rows: Vec::new(),
        }
    }

    /// Appends a row. Missing cells are empty; extra cells are dropped.
    pub fn push<I, S>(&mut self, cells: I)
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut row: Vec<String> = cells
            .into_iter()
            .take(self.headers.len())
            .map(Into::into)
            .collect();
        row.resize(self.headers.len(), String::new());
        self.rows.push(row);
    }

    /// Number of data rows.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether the table has no data rows.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The column headers.
    pub fn headers(&self) -> &[String] {
        &self.headers
    }

    /// The data rows.
    pub fn rows(&self) -> &[Vec<String>] {
        &self.rows
    }

    /// Renders the header, a dashed rule and the rows, columns separated by
    /// two spaces, without trailing spaces; every line ends in `\n`.
    pub fn render(&self) -> String {
        let widths: Vec<usize> = (0..self.headers.len())
            .map(|c| {
                std::iter::once(&self.headers[c])
                    .chain(self.rows.iter().map(|r| &r[c]))
                    .map(|s| s.chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let rule: Vec<String> = widths.iter().map(|&w| "-".repeat(w)).collect();
        let mut out = String::new();
        for row in std::iter::once(&self.headers)
            .chain(std::iter::once(&rule))
            .chain(self.rows.iter())
        {
            let mut line = String::new();
            for (c, cell) in row.iter().enumerate() {
                if c > 0 {
                    line.push_str("  ");
                }
                let pad = widths[c].saturating_sub(cell.chars().count());
                match self.aligns[c] {
                    Align::Left => {
                        line.push_str(cell);
                        line.extend(std::iter::repeat_n(' ', pad));
                    }
                    Align::Right => {
                        line.extend(std::iter::repeat_n(' ', pad));
                        line.push_str(cell);
                    }
                }
            }
            let _ = writeln!(out, "{}", line.trim_end());
        }
        out
    }

    /// The header and rows as CSV, `\n` line ends.
    pub fn to_csv(&self) -> String {
        let mut out = String::new();
        for row in std::iter::once(&self.headers).chain(self.rows.iter()) {
            let line: Vec<String> = row.iter().map(|c| csv_field(c)).collect();
            out.push_str(&line.join(","));
            out.push('\n');
        }
        out
    }
}

/// Quotes a CSV field when it holds a comma, quote or line break.
pub fn csv_field(field: &str) -> String {
    if field.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_aligns_and_pads() {
        let mut t = Table::new(&[("impl", Align::Left), ("n", Align::Right)]);
        t.push(["x", "100"]);
        t.push(vec!["longer".to_owned()]);
        assert_eq!(t.len(), 2);
        assert_eq!(
            t.render(),
            "impl      n\n------  ---\nx       100\nlonger\n"
        );
    }

    #[test]
    fn csv_quotes() {
        let mut t = Table::new(&[("a", Align::Left), ("b", Align::Left)]);
        t.push(["x,y", "say \"hi\""]);
        assert_eq!(t.to_csv(), "a,b\n\"x,y\",\"say \"\"hi\"\"\"\n");
    }
}
