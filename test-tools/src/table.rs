//! One renderer for every tool's results: a [`Table`] of typed cells under
//! [`Column`]s that say how each is shown, rendered as aligned text, as a
//! Markdown pipe table, as CSV (the `csv` crate) and as JSON objects.
//!
//! ```
//! use test_tools::table::{Column, Style, Table, Value};
//!
//! let mut t = Table::new(vec![
//!     Column::new("name", "name"),
//!     Column::number("ops/s", "ops_per_sec", Style::Thousands, Style::Fixed(1)),
//! ]);
//! t.push(vec![Value::text("a"), Value::Num(1234.6)]);
//! assert_eq!(t.render(), "name  ops/s\n----  -----\na     1,235\n");
//! assert_eq!(t.to_csv(), "name,ops_per_sec\na,1234.6\n");
//! assert_eq!(t.to_json()[0]["ops_per_sec"], 1234.6);
//! ```

use serde_json::{Map, Value as Json};

/// A cell.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// Text, shown as it is.
    Text(String),
    /// A count.
    Int(u64),
    /// A measured number.
    Num(f64),
    /// Nothing (shown as the column's `missing` text, empty in CSV, `null`
    /// in JSON).
    Empty,
    /// Structured data, for JSON only.
    Json(Json),
}

impl Value {
    /// A text cell.
    pub fn text(text: impl Into<String>) -> Self {
        Value::Text(text.into())
    }

    /// A number, or [`Value::Empty`] for `None`.
    pub fn num(value: Option<f64>) -> Self {
        value.map_or(Value::Empty, Value::Num)
    }
}

/// How a number is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// As Rust prints it.
    Plain,
    /// Rounded, with thousands separators: `1,234,568`.
    Thousands,
    /// With this many decimals.
    Fixed(usize),
    /// A ratio with this many decimals and an `x`: `2.31x`.
    Times(usize),
}

/// A column: its titles and how its cells are shown in each rendering.
#[derive(Clone, Debug, PartialEq)]
pub struct Column {
    title: String,
    key: String,
    right: bool,
    text: Option<Style>,
    csv: Option<Style>,
    json: bool,
    hidden: bool,
    missing: &'static str,
}

impl Column {
    /// A column titled `title` in text and Markdown and `key` in CSV and
    /// JSON, shown everywhere as plain, left-aligned text.
    pub fn new(title: impl Into<String>, key: impl Into<String>) -> Self {
        Column {
            title: title.into(),
            key: key.into(),
            right: false,
            text: Some(Style::Plain),
            csv: Some(Style::Plain),
            json: true,
            hidden: false,
            missing: "",
        }
    }

    /// A right-aligned column of numbers, written in `text` style in text
    /// and Markdown and in `csv` style in CSV.
    pub fn number(
        title: impl Into<String>,
        key: impl Into<String>,
        text: Style,
        csv: Style,
    ) -> Self {
        Column::new(title, key).right().text(text).csv(csv)
    }

    /// Right-aligned in text.
    pub fn right(self) -> Self {
        Column {
            right: true,
            ..self
        }
    }

    /// Numbers written so in text and Markdown.
    pub fn text(self, style: Style) -> Self {
        Column {
            text: Some(style),
            ..self
        }
    }

    /// Numbers written so in CSV.
    pub fn csv(self, style: Style) -> Self {
        Column {
            csv: Some(style),
            ..self
        }
    }

    /// What an empty cell shows in text.
    pub fn missing(self, missing: &'static str) -> Self {
        Column { missing, ..self }
    }

    /// Only in text and Markdown.
    pub fn text_only(self) -> Self {
        Column {
            csv: None,
            json: false,
            ..self
        }
    }

    /// Only in CSV and JSON.
    pub fn file_only(self) -> Self {
        Column { text: None, ..self }
    }

    /// Only in JSON.
    pub fn json_only(self) -> Self {
        Column {
            text: None,
            csv: None,
            ..self
        }
    }
}

/// Rows of cells under columns; see the [module docs](self).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Table {
    columns: Vec<Column>,
    /// `None`: a blank line between groups (text only).
    rows: Vec<Option<Vec<Value>>>,
    /// The keys of the CSV and JSON columns in file order, when it is not
    /// the text order.
    file_order: Option<Vec<&'static str>>,
}

impl Table {
    /// A table with these columns.
    pub fn new(columns: Vec<Column>) -> Self {
        Table {
            columns,
            rows: Vec::new(),
            file_order: None,
        }
    }

    /// Puts the CSV and JSON columns in the order of `keys`.
    pub fn file_order(mut self, keys: &[&'static str]) -> Self {
        self.file_order = Some(keys.to_vec());
        self
    }

    /// The indices of the columns `keep` picks, in file order.
    fn file_columns(&self, keep: impl Fn(&Column) -> bool) -> Vec<(usize, &Column)> {
        let mut shown: Vec<(usize, &Column)> = self
            .columns
            .iter()
            .enumerate()
            .filter(|(_, c)| keep(c))
            .collect();
        if let Some(order) = &self.file_order {
            shown.sort_by_key(|(_, c)| order.iter().position(|k| *k == c.key));
        }
        shown
    }

    /// A table of plain text columns with these titles.
    pub fn titled(titles: &[&str]) -> Self {
        Table::new(titles.iter().map(|t| Column::new(*t, *t)).collect())
    }

    /// Shows only the columns with these keys in text and Markdown (the
    /// files keep theirs).
    pub fn show<K: AsRef<str>>(mut self, keys: &[K]) -> Self {
        for c in &mut self.columns {
            c.hidden = !keys.iter().any(|k| k.as_ref() == c.key);
        }
        self
    }

    /// Appends a row; missing cells are empty, extra cells are dropped.
    pub fn push(&mut self, mut cells: Vec<Value>) {
        cells.resize(self.columns.len(), Value::Empty);
        self.rows.push(Some(cells));
    }

    /// Appends a row of text cells.
    pub fn push_text<S: Into<String>>(&mut self, cells: impl IntoIterator<Item = S>) {
        self.push(cells.into_iter().map(|c| Value::Text(c.into())).collect());
    }

    /// Appends a blank line (text only), as between groups of rows.
    pub fn blank(&mut self) {
        self.rows.push(None);
    }

    /// Number of rows, blank lines not counted.
    pub fn len(&self) -> usize {
        self.rows.iter().flatten().count()
    }

    /// Whether the table has no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The text (and Markdown) cells of every row, `None` for blank lines.
    fn text_rows(&self) -> (Vec<&Column>, Vec<Option<Vec<String>>>) {
        let shown: Vec<(usize, &Column)> = self
            .columns
            .iter()
            .enumerate()
            .filter(|(_, c)| c.text.is_some() && !c.hidden)
            .collect();
        let rows = self
            .rows
            .iter()
            .map(|row| {
                let row = row.as_ref()?;
                Some(
                    shown
                        .iter()
                        .map(|&(i, c)| format_cell(&row[i], c.text, c.missing))
                        .collect(),
                )
            })
            .collect();
        (shown.into_iter().map(|(_, c)| c).collect(), rows)
    }

    /// The header, a dashed rule and the rows, columns separated by two
    /// spaces, without trailing spaces; every line ends in `\n`.
    pub fn render(&self) -> String {
        let (columns, rows) = self.text_rows();
        let headers: Vec<String> = columns.iter().map(|c| c.title.clone()).collect();
        let width = |i: usize| {
            rows.iter()
                .flatten()
                .chain([&headers])
                .map(|r| r[i].chars().count())
                .max()
                .unwrap_or(0)
        };
        let widths: Vec<usize> = (0..columns.len()).map(width).collect();
        let rule: Vec<String> = widths.iter().map(|&w| "-".repeat(w)).collect();
        let mut out = String::new();
        for row in [Some(headers), Some(rule)].into_iter().chain(rows) {
            let cells = row.unwrap_or_default();
            let line: Vec<String> = cells
                .iter()
                .zip(&columns)
                .zip(&widths)
                .map(|((cell, c), &w)| match c.right {
                    true => format!("{cell:>w$}"),
                    false => format!("{cell:<w$}"),
                })
                .collect();
            out.push_str(line.join("  ").trim_end());
            out.push('\n');
        }
        out
    }

    /// The table as Markdown; columns of numbers (every cell starting with a
    /// digit, or empty) are right-aligned; `|` and line breaks are escaped.
    pub fn markdown(&self) -> String {
        let (columns, rows) = self.text_rows();
        let rows: Vec<Vec<String>> = rows.into_iter().flatten().collect();
        let numeric = |i: usize| {
            !rows.is_empty()
                && rows
                    .iter()
                    .all(|r| r[i].is_empty() || r[i].starts_with(|c: char| c.is_ascii_digit()))
        };
        let line = |cells: Vec<String>| {
            let cells: Vec<String> = cells
                .iter()
                .map(|c| c.replace('|', "\\|").replace('\n', " "))
                .collect();
            format!("| {} |\n", cells.join(" | "))
        };
        let rule: Vec<&str> = (0..columns.len())
            .map(|i| if numeric(i) { "---:" } else { "---" })
            .collect();
        let mut out = line(columns.iter().map(|c| c.title.clone()).collect());
        out.push_str(&format!("|{}|\n", rule.join("|")));
        rows.into_iter().for_each(|r| out.push_str(&line(r)));
        out
    }

    /// The CSV columns' keys and the rows, `\n` line ends, quoted where
    /// needed (RFC 4180).
    pub fn to_csv(&self) -> String {
        let shown = self.file_columns(|c| c.csv.is_some());
        let mut writer = csv::Writer::from_writer(Vec::new());
        let records = self.rows.iter().flatten().map(|row| {
            shown
                .iter()
                .map(|&(i, c)| format_cell(&row[i], c.csv, ""))
                .collect::<Vec<_>>()
        });
        let header = shown.iter().map(|(_, c)| c.key.clone()).collect();
        for record in std::iter::once(header).chain(records) {
            writer.write_record(record).expect("writing to memory");
        }
        String::from_utf8(writer.into_inner().expect("writing to memory")).expect("UTF-8 cells")
    }

    /// One JSON object per row, keyed by the JSON columns' keys; numbers at
    /// full precision.
    pub fn to_json(&self) -> Vec<Json> {
        let shown = self.file_columns(|c| c.json);
        let rows = self.rows.iter().flatten();
        rows.map(|row| {
            let object: Map<String, Json> = shown
                .iter()
                .map(|&(i, c)| {
                    let v = &row[i];
                    let json = match v {
                        Value::Text(s) => Json::from(s.as_str()),
                        Value::Int(n) => Json::from(*n),
                        Value::Num(x) => Json::from(*x),
                        Value::Empty => Json::Null,
                        Value::Json(j) => j.clone(),
                    };
                    (c.key.clone(), json)
                })
                .collect();
            Json::Object(object)
        })
        .collect()
    }
}

fn format_cell(value: &Value, style: Option<Style>, missing: &str) -> String {
    let number = |x: f64| match style.unwrap_or(Style::Plain) {
        Style::Plain => x.to_string(),
        Style::Thousands => thousands(x),
        Style::Fixed(d) => format!("{x:.d$}"),
        Style::Times(d) => format!("{x:.d$}x"),
    };
    match value {
        Value::Text(s) => s.clone(),
        Value::Int(n) if style == Some(Style::Thousands) => thousands(*n as f64),
        Value::Int(n) => n.to_string(),
        Value::Num(x) => number(*x),
        Value::Empty => missing.to_owned(),
        Value::Json(j) => j.to_string(),
    }
}

/// `1234567.8` as `1,234,568`; `n/a` for NaN and infinities.
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
