//! Markdown pipe tables for the report.

/// A Markdown table: a header row and rows of cells. Cells are escaped
/// (`|` and newlines) when rendered.
pub struct MdTable {
    headers: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl MdTable {
    /// A table with these column headers.
    pub fn new(headers: &[&str]) -> Self {
        MdTable {
            headers: headers.iter().map(|h| (*h).to_owned()).collect(),
            rows: Vec::new(),
        }
    }

    /// Adds a row; missing cells render empty, extra cells are an error in
    /// the caller and are dropped.
    pub fn row<I: IntoIterator<Item = String>>(&mut self, cells: I) {
        let mut row: Vec<String> = cells.into_iter().take(self.headers.len()).collect();
        row.resize(self.headers.len(), String::new());
        self.rows.push(row);
    }

    /// The table as Markdown, numbers (cells starting with a digit)
    /// right-aligned by their column's header marker.
    pub fn render(&self) -> String {
        let numeric: Vec<bool> = (0..self.headers.len())
            .map(|c| {
                !self.rows.is_empty()
                    && self.rows.iter().all(|r| {
                        r[c].starts_with(|ch: char| ch.is_ascii_digit()) || r[c].is_empty()
                    })
            })
            .collect();
        let line = |cells: &[String]| {
            let escaped: Vec<String> = cells.iter().map(|c| escape(c)).collect();
            format!("| {} |\n", escaped.join(" | "))
        };
        let mut out = line(&self.headers);
        let rule: Vec<String> = numeric
            .iter()
            .map(|&n| if n { "---:" } else { "---" }.to_owned())
            .collect();
        out.push_str(&format!("|{}|\n", rule.join("|")));
        for row in &self.rows {
            out.push_str(&line(row));
        }
        out
    }
}

fn escape(cell: &str) -> String {
    cell.replace('|', "\\|").replace('\n', " ")
}

/// `1234567.8` as `1,234,568`.
pub fn thousands(value: f64) -> String {
    if !value.is_finite() {
        return "n/a".to_owned();
    }
    let digits = format!("{:.0}", value.abs());
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if value < 0.0 && digits != "0" {
        out.insert(0, '-');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_and_escapes() {
        let mut t = MdTable::new(&["name", "value"]);
        t.row(["a|b".to_owned(), "12".to_owned()]);
        t.row(["c".to_owned()]);
        assert_eq!(
            t.render(),
            "| name | value |\n|---|---:|\n| a\\|b | 12 |\n| c |  |\n"
        );
    }

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(0.4), "0");
        assert_eq!(thousands(999.0), "999");
        assert_eq!(thousands(1234567.8), "1,234,568");
        assert_eq!(thousands(-1500.0), "-1,500");
        assert_eq!(thousands(f64::NAN), "n/a");
    }
}
