//! One renderer for every tool's results: a [`Table`] of typed cells under
//! [`Column`]s that say how each is shown, rendered as aligned text, as a
//! Markdown pipe table, as CSV (the `csv` crate) and as JSON objects.

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
    /// Nothing: the column's `missing` text, empty in CSV, `null` in JSON.
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
    /// The style in text and Markdown; `None`: not shown there.
    text: Option<Style>,
    /// The style in CSV; `None`: not in CSV.
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
    pub fn right(mut self) -> Self {
        self.right = true;
        self
    }

    /// Numbers written so in text and Markdown.
    pub fn text(mut self, style: Style) -> Self {
        self.text = Some(style);
        self
    }

    /// Numbers written so in CSV.
    pub fn csv(mut self, style: Style) -> Self {
        self.csv = Some(style);
        self
    }

    /// What an empty cell shows in text.
    pub fn missing(mut self, missing: &'static str) -> Self {
        self.missing = missing;
        self
    }

    /// Only in text and Markdown.
    pub fn text_only(mut self) -> Self {
        (self.csv, self.json) = (None, false);
        self
    }

    /// Only in CSV and JSON.
    pub fn file_only(mut self) -> Self {
        self.text = None;
        self
    }

    /// Only in JSON.
    pub fn json_only(mut self) -> Self {
        (self.text, self.csv) = (None, None);
        self
    }
}

/// Rows of cells under columns, rendered as text, Markdown, CSV or JSON.
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
            ..Table::default()
        }
    }

    /// A table of plain text columns with these titles.
    pub fn titled(titles: &[&str]) -> Self {
        Table::new(titles.iter().map(|t| Column::new(*t, *t)).collect())
    }

    /// Puts the CSV and JSON columns in the order of `keys`.
    pub fn file_order(mut self, keys: &[&'static str]) -> Self {
        self.file_order = Some(keys.to_vec());
        self
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
        self.push(cells.into_iter().map(Value::text).collect());
    }

    /// Appends a blank line (text only), as between groups of rows.
    pub fn blank(&mut self) {
        self.rows.push(None);
    }

    /// The columns `keep` picks with their indices, in text order or (with
    /// `in_file_order`) in file order.
    fn pick(&self, keep: impl Fn(&Column) -> bool, in_file_order: bool) -> Vec<(usize, &Column)> {
        let mut picked: Vec<(usize, &Column)> = self
            .columns
            .iter()
            .enumerate()
            .filter(|(_, c)| keep(c))
            .collect();
        if let (true, Some(order)) = (in_file_order, &self.file_order) {
            picked.sort_by_key(|(_, c)| order.iter().position(|k| *k == c.key));
        }
        picked
    }

    /// The text and Markdown cells.
    fn text_rows(&self) -> TextRows<'_> {
        let shown = self.pick(|c| c.text.is_some() && !c.hidden, false);
        let cells = |row: &Vec<Value>| {
            let cell = |&(i, c): &(usize, &Column)| format_cell(&row[i], c.text, c.missing);
            shown.iter().map(cell).collect()
        };
        let rows = self.rows.iter().map(|r| r.as_ref().map(cells)).collect();
        let columns: Vec<&Column> = shown.into_iter().map(|(_, c)| c).collect();
        let titles = columns.iter().map(|c| c.title.clone()).collect();
        (columns, titles, rows)
    }

    /// The header, a dashed rule and the rows, columns separated by two
    /// spaces, without trailing spaces; every line ends in `\n`.
    pub fn render(&self) -> String {
        let (columns, titles, rows) = self.text_rows();
        let widths: Vec<usize> = (0..titles.len())
            .map(|i| {
                let lines = rows.iter().flatten().chain([&titles]);
                lines.map(|r| r[i].chars().count()).max().unwrap_or(0)
            })
            .collect();
        let rule = widths.iter().map(|&w| "-".repeat(w)).collect();
        let mut out = String::new();
        for row in [Some(titles), Some(rule)].into_iter().chain(rows) {
            let cells = row
                .unwrap_or_default()
                .into_iter()
                .zip(&widths)
                .zip(&columns);
            let line: Vec<String> = cells
                .map(|((cell, &w), c)| match c.right {
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
        let (_, titles, rows) = self.text_rows();
        let rows: Vec<Vec<String>> = rows.into_iter().flatten().collect();
        let numeric = |i: usize| {
            let digits = |c: &String| c.is_empty() || c.starts_with(|c: char| c.is_ascii_digit());
            !rows.is_empty() && rows.iter().all(|r| digits(&r[i]))
        };
        let line = |cells: &[String]| {
            let cells: Vec<String> = cells
                .iter()
                .map(|c| c.replace('|', "\\|").replace('\n', " "))
                .collect();
            format!("| {} |\n", cells.join(" | "))
        };
        let rule: Vec<&str> = (0..titles.len())
            .map(|i| if numeric(i) { "---:" } else { "---" })
            .collect();
        let mut out = line(&titles) + &format!("|{}|\n", rule.join("|"));
        rows.iter().for_each(|r| out.push_str(&line(r)));
        out
    }

    /// The CSV columns' keys and the rows, `\n` line ends, quoted where
    /// needed (RFC 4180).
    pub fn to_csv(&self) -> String {
        let shown = self.pick(|c| c.csv.is_some(), true);
        let mut writer = csv::Writer::from_writer(Vec::new());
        let header = shown.iter().map(|(_, c)| c.key.clone()).collect();
        let records = self.rows.iter().flatten().map(|row| {
            let cell = |&(i, c): &(usize, &Column)| format_cell(&row[i], c.csv, "");
            shown.iter().map(cell).collect::<Vec<_>>()
        });
        for record in std::iter::once(header).chain(records) {
            writer.write_record(record).expect("writing to memory");
        }
        String::from_utf8(writer.into_inner().expect("writing to memory")).expect("UTF-8 cells")
    }

    /// One JSON object per row, keyed by the JSON columns' keys; numbers at
    /// full precision.
    pub fn to_json(&self) -> Vec<Json> {
        let shown = self.pick(|c| c.json, true);
        let json = |value: &Value| match value {
            Value::Text(s) => Json::from(s.as_str()),
            Value::Int(n) => Json::from(*n),
            Value::Num(x) => Json::from(*x),
            Value::Empty => Json::Null,
            Value::Json(j) => j.clone(),
        };
        let object = |row: &Vec<Value>| {
            let fields = shown.iter().map(|&(i, c)| (c.key.clone(), json(&row[i])));
            Json::Object(fields.collect::<Map<String, Json>>())
        };
        self.rows.iter().flatten().map(object).collect()
    }
}

/// The text columns shown, their titles, and each row's text cells (`None`
/// for blank lines).
type TextRows<'a> = (Vec<&'a Column>, Vec<String>, Vec<Option<Vec<String>>>);

fn format_cell(value: &Value, style: Option<Style>, missing: &str) -> String {
    match (value, style.unwrap_or(Style::Plain)) {
        (Value::Text(s), _) => s.clone(),
        (Value::Int(n), Style::Thousands) => thousands(*n as f64),
        (Value::Int(n), _) => n.to_string(),
        (Value::Num(x), Style::Plain) => x.to_string(),
        (Value::Num(x), Style::Thousands) => thousands(*x),
        (Value::Num(x), Style::Fixed(d)) => format!("{x:.d$}"),
        (Value::Num(x), Style::Times(d)) => format!("{x:.d$}x"),
        (Value::Empty, _) => missing.to_owned(),
        (Value::Json(j), _) => j.to_string(),
    }
}

/// `1234567.8` as `1,234,568`; `n/a` for NaN and infinities.
pub fn thousands(value: f64) -> String {
    if !value.is_finite() {
        return "n/a".to_owned();
    }
    let digits = format!("{:.0}", value.abs());
    let mut out = String::new();
    if value < 0.0 && digits != "0" {
        out.push('-');
    }
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
