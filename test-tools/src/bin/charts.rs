//! `charts`: SVG bar charts (drawn with `plotters`) from a CSV of
//! measurements, one per parameter set or other facet, each with the CSV of
//! the numbers it shows; see `--help`.
//!
//! ```text
//! cargo run --release -p test-tools --bin charts -- --csv bench.csv --out charts
//! ```

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use test_tools::cli;
use test_tools::table::{Column, Table};

/// Draws one grouped bar chart per facet value (e.g. per parameter set) from
/// a CSV with a header row, and writes DIR/<facet>.svg plus DIR/<facet>.csv
/// (the group, series and value behind the chart). Prints the paths it
/// wrote.
///
/// Known formats (the defaults follow from the header): bench
/// (parameter_set,implementation,operation,median_cycles,...: groups =
/// operation, series = implementation, value = median_cycles, "median cycles
/// (lower is better)"), and comparison
/// (algorithm,parameter_set,operation,implementation,ops_per_sec,... of
/// speed-compare and evp-bench: value = ops_per_sec, "ops/s (higher is
/// better)").
///
/// Groups and series keep the order they first appear in. Empty cells and
/// n/a are drawn as gaps; a (facet, group, series) that appears twice is an
/// error.
#[derive(Parser)]
#[command(name = "charts")]
struct Args {
    /// The input CSV
    #[arg(long, value_name = "FILE", value_parser = cli::path)]
    csv: PathBuf,
    /// Output folder, created if missing
    #[arg(long, value_name = "DIR", default_value = "charts", value_parser = cli::path)]
    out: PathBuf,
    /// Start every file name with NAME- (lowercased, runs of other characters
    /// than a-z and 0-9 as one -)
    #[arg(long, value_name = "NAME", value_parser = text)]
    prefix: Option<String>,
    /// One chart per value of COL [default: parameter_set if present, else
    /// algorithm; when a parameter set holds several algorithms, e.g.
    /// hybrids, algorithm]
    #[arg(long, value_name = "COL", value_parser = text)]
    facet: Option<String>,
    /// X-axis categories [default: operation]
    #[arg(long, value_name = "COL", value_parser = text)]
    group: Option<String>,
    /// Bars in each group, one colour each [default: implementation]
    #[arg(long, value_name = "COL", value_parser = text)]
    series: Option<String>,
    /// Bar heights [default: by format, see above]
    #[arg(long, value_name = "COL", value_parser = text)]
    value: Option<String>,
    /// Chart title; the facet value is appended
    #[arg(long, value_name = "TEXT", value_parser = text)]
    title: Option<String>,
    /// Y-axis title
    #[arg(long, value_name = "TEXT", value_parser = text)]
    value_label: Option<String>,
}

fn text(value: &str) -> Result<String, String> {
    match value.is_empty() {
        true => Err("needs a non-empty value".to_owned()),
        false => Ok(value.to_owned()),
    }
}

/// A CSV file read with the `csv` crate: the header and the records under
/// it, each with the line it starts on.
struct CsvTable {
    headers: Vec<String>,
    records: Vec<Record>,
}

/// One record of a CSV file.
struct Record {
    line: usize,
    fields: Vec<String>,
}

impl CsvTable {
    /// Parses CSV text; every record must have the header's fields.
    fn parse(text: &str) -> Result<Self, String> {
        let mut reader = csv::ReaderBuilder::new().from_reader(text.as_bytes());
        let headers = reader.headers().map_err(|e| e.to_string())?;
        let headers: Vec<String> = headers.iter().map(|h| h.trim().to_owned()).collect();
        let mut records = Vec::new();
        for record in reader.records() {
            let record = record.map_err(|e| e.to_string())?;
            let line = record.position().map_or(0, |p| p.line() as usize);
            records.push(Record {
                line,
                fields: record.iter().map(str::to_owned).collect(),
            });
        }
        Ok(CsvTable { headers, records })
    }

    fn column(&self, name: &str) -> Option<usize> {
        self.headers.iter().position(|h| h == name)
    }
}

/// The Okabe-Ito palette (colour-blind safe), ordered so that the first
/// colours contrast well on white; yellow comes late. Series beyond the
/// eighth reuse the colours in order.
const PALETTE: [RGBColor; 8] = [
    RGBColor(0x00, 0x72, 0xB2),
    RGBColor(0xE6, 0x9F, 0x00),
    RGBColor(0x00, 0x9E, 0x73),
    RGBColor(0xD5, 0x5E, 0x00),
    RGBColor(0x56, 0xB4, 0xE9),
    RGBColor(0xCC, 0x79, 0xA7),
    RGBColor(0xF0, 0xE4, 0x42),
    RGBColor(0x00, 0x00, 0x00),
];

/// A grouped bar chart: `values[s][g]` is the bar of series `s` in group `g`
/// (at least one of each: every facet has a row).
struct BarChart {
    /// Headline above the chart.
    title: String,
    /// Smaller line under the title (source, settings).
    subtitle: String,
    /// Title of the y axis, e.g. "median cycles (lower is better)".
    value_label: String,
    /// The x-axis categories, left to right.
    groups: Vec<String>,
    /// The bar series, one colour each, in legend order.
    series: Vec<String>,
    /// One row per series, one entry per group; `None` = not measured.
    values: Vec<Vec<Option<f64>>>,
}

impl BarChart {
    /// The value drawn for series `s` in group `g`: finite and not
    /// negative, else `None` (a gap labelled "n/a").
    fn bar(&self, s: usize, g: usize) -> Option<f64> {
        self.values[s][g].filter(|v| v.is_finite() && *v >= 0.0)
    }

    /// The chart as a standalone SVG document: title, subtitle and legend
    /// above the plot; every bar labelled with its value (`73.6k`), gaps
    /// with `n/a`; the y axis from 0.
    fn to_svg(&self) -> Result<String, String> {
        let (groups, series) = (self.groups.len().max(1), self.series.len().max(1));
        let width = (groups * (series * 44 + 28) + 120).max(800) as u32;
        let legend_rows = legend_layout(&self.series, width)
            .last()
            .map_or(1, |&(_, _, row)| row + 1);
        let height = 450 + 22 * (legend_rows as u32 - 1);
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (width, height)).into_drawing_area();
            self.draw(&root, width, legend_rows)
                .map_err(|e| e.to_string())?;
            root.present().map_err(|e| e.to_string())?;
        }
        Ok(svg)
    }

    fn draw(
        &self,
        root: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
        width: u32,
        legend_rows: usize,
    ) -> Result<(), Box<dyn std::error::Error>> {
        root.fill(&WHITE)?;
        let grey = RGBColor(0x55, 0x55, 0x55);
        root.draw(&Text::new(
            self.title.as_str(),
            (20, 16),
            font(20).style(FontStyle::Bold),
        ))?;
        root.draw(&Text::new(
            self.subtitle.as_str(),
            (20, 44),
            font(13).color(&grey),
        ))?;
        for (s, (x, y, _)) in legend_layout(&self.series, width).into_iter().enumerate() {
            let colour = PALETTE[s % PALETTE.len()];
            root.draw(&Rectangle::new([(x, y), (x + 13, y + 13)], colour.filled()))?;
            root.draw(&Text::new(self.series[s].as_str(), (x + 19, y), font(13)))?;
        }
        let top = 70 + 22 * legend_rows as u32;
        let plot = root.margin(top, 20, 20, 20);
        let max = (0..self.series.len())
            .flat_map(|s| (0..self.groups.len()).map(move |g| (s, g)))
            .filter_map(|(s, g)| self.bar(s, g))
            .fold(0.0, f64::max);
        let top_value = if max > 0.0 { max * 1.08 } else { 1.0 };
        let mut chart = ChartBuilder::on(&plot)
            .x_label_area_size(30)
            .y_label_area_size(60)
            .build_cartesian_2d(0f64..self.groups.len() as f64, 0f64..top_value)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .disable_x_axis()
            .y_labels(8)
            .y_desc(self.value_label.as_str())
            .y_label_formatter(&|v| tick(*v))
            .label_style(font(12))
            .axis_desc_style(font(13))
            .light_line_style(WHITE)
            .bold_line_style(RGBColor(0xe5, 0xe5, 0xe5))
            .draw()?;
        // Each bar's slot: 84% of a group shared out, at most 80 pixels wide.
        let n = self.series.len() as f64;
        let group_pixels = f64::from(width - 120) / self.groups.len() as f64;
        let slot = (0.84 / n).min(80.0 / group_pixels);
        let above = Pos::new(HPos::Center, VPos::Bottom);
        let below = Pos::new(HPos::Center, VPos::Top);
        for g in 0..self.groups.len() {
            let label = Text::new(
                self.groups[g].clone(),
                (0, 8),
                TextStyle::from(font(14)).pos(below),
            );
            chart.draw_series([EmptyElement::at((g as f64 + 0.5, 0.0)) + label])?;
            for s in 0..self.series.len() {
                let left = g as f64 + (1.0 - slot * n) / 2.0 + slot * s as f64;
                let (x0, x1, centre) = (left + slot * 0.1, left + slot * 0.9, left + slot / 2.0);
                let colour = PALETTE[s % PALETTE.len()];
                let (value, text, colour) = match self.bar(s, g) {
                    Some(v) => (v, compact(v), colour),
                    None => (0.0, "n/a".to_owned(), grey),
                };
                if value > 0.0 {
                    chart
                        .draw_series([Rectangle::new([(x0, 0.0), (x1, value)], colour.filled())])?;
                }
                let text = Text::new(
                    text,
                    (0, -3),
                    font(11).color(&RGBColor(0x22, 0x22, 0x22)).pos(above),
                );
                chart.draw_series([EmptyElement::at((centre, value)) + text])?;
            }
        }
        let axis = [(0.0, 0.0), (self.groups.len() as f64, 0.0)];
        chart.draw_series([PathElement::new(axis, RGBColor(0x33, 0x33, 0x33))])?;
        Ok(())
    }
}

/// A sans-serif font of `size` pixels (plotters' SVG backend writes sizes
/// as 1/1.24 of what it is given).
fn font(size: u32) -> FontDesc<'static> {
    ("sans-serif", f64::from(size) * 1.24).into_font()
}

/// A y-axis tick: [`compact`] without trailing zeros (`50k`, `2.5M`).
fn tick(v: f64) -> String {
    let text = compact(v);
    let split = text
        .find(|c: char| c.is_ascii_alphabetic())
        .unwrap_or(text.len());
    let (number, suffix) = text.split_at(split);
    match number.contains('.') {
        true => format!(
            "{}{suffix}",
            number.trim_end_matches('0').trim_end_matches('.')
        ),
        false => text,
    }
}

/// Where each legend entry goes: (x, y, row), wrapping at `width`.
fn legend_layout(series: &[String], width: u32) -> Vec<(i32, i32, usize)> {
    let (mut x, mut row) = (20i32, 0usize);
    let mut out = Vec::new();
    for name in series {
        let entry = 19 + name.chars().count() as i32 * 7 + 24;
        if x > 20 && x + entry > width as i32 - 20 {
            (x, row) = (20, row + 1);
        }
        out.push((x, 68 + 22 * row as i32, row));
        x += entry;
    }
    out
}

/// `73553` as `73.6k`: three significant digits with k, M or G; small
/// whole numbers as they are.
fn compact(v: f64) -> String {
    if !v.is_finite() {
        return "n/a".to_owned();
    }
    let a = v.abs();
    if a < 1000.0 && a.fract() == 0.0 {
        return format!("{v}");
    }
    // Three significant digits first, so that 999.7 becomes 1.00k.
    let magnitude = a.log10().floor() as i32;
    let scale = 10f64.powi(magnitude - 2);
    let rounded = (a / scale).round() * scale;
    let (div, suffix) = [(1e9, "G"), (1e6, "M"), (1e3, "k")]
        .into_iter()
        .find(|&(d, _)| rounded >= d)
        .unwrap_or((1.0, ""));
    let scaled = rounded / div;
    let decimals = match scaled {
        s if s >= 100.0 => 0,
        s if s >= 10.0 => 1,
        s if s >= 1.0 => 2,
        _ => (2 - magnitude).clamp(0, 15) as usize,
    };
    let sign = if v < 0.0 { "-" } else { "" };
    format!("{sign}{scaled:.decimals$}{suffix}")
}

/// What the CSV's header says about where it came from.
enum Format {
    /// `bench`: median time per operation in this unit column.
    Bench { median_column: String },
    /// `speed-compare` / `evp-bench`: ops/s per operation.
    Comparison,
    /// Anything else.
    Other,
}

impl Format {
    fn detect(csv: &CsvTable) -> Self {
        let has = |c: &str| csv.column(c).is_some();
        if has("algorithm") && has("ops_per_sec") {
            return Self::Comparison;
        }
        let median = csv.headers.iter().find(|h| h.starts_with("median_"));
        match median {
            Some(m) if has("implementation") && has("operation") => Self::Bench {
                median_column: m.clone(),
            },
            _ => Self::Other,
        }
    }

    /// The default value column and its axis title.
    fn value(&self) -> Option<(String, String)> {
        match self {
            Self::Bench { median_column } => {
                let unit = median_column.trim_start_matches("median_");
                Some((
                    median_column.clone(),
                    format!("median {unit} (lower is better)"),
                ))
            }
            Self::Comparison => Some(("ops_per_sec".into(), "ops/s (higher is better)".into())),
            Self::Other => None,
        }
    }
}

/// The columns a chart is drawn from.
struct Columns {
    facet: Option<usize>,
    group: usize,
    series: usize,
    value: usize,
    value_label: String,
}

/// Resolves the columns from the command line and the header.
fn choose_columns(args: &Args, csv: &CsvTable, format: &Format) -> Result<Columns, String> {
    let find = |name: &str, flag: &str| {
        csv.column(name).ok_or_else(|| {
            format!(
                "{flag}: no column {name:?} (columns: {})",
                csv.headers.join(", ")
            )
        })
    };
    let default_of = |name: &str, flag: &str| {
        csv.column(name).ok_or_else(|| {
            format!(
                "no {name:?} column, name one with {flag} (columns: {})",
                csv.headers.join(", ")
            )
        })
    };
    let group = match &args.group {
        Some(name) => find(name, "--group")?,
        None => default_of("operation", "--group")?,
    };
    let series = match &args.series {
        Some(name) => find(name, "--series")?,
        None => default_of("implementation", "--series")?,
    };
    let (value, default_label) = match (&args.value, format.value()) {
        (Some(name), known) => {
            let label = match known {
                Some((column, label)) if &column == name => label,
                _ => name.clone(),
            };
            (find(name, "--value")?, label)
        }
        (None, Some((column, label))) => (find(&column, "--value")?, label),
        (None, None) => {
            return Err(format!(
                "unknown CSV format, name the value column with --value (columns: {})",
                csv.headers.join(", ")
            ))
        }
    };
    let facet = match &args.facet {
        Some(name) => Some(find(name, "--facet")?),
        None => default_facet(csv),
    };
    Ok(Columns {
        facet,
        group,
        series,
        value,
        value_label: args.value_label.clone().unwrap_or(default_label),
    })
}

/// `parameter_set` if present, else `algorithm`; but `algorithm` when some
/// parameter set holds several algorithms (ML-KEM-768 and its hybrids).
fn default_facet(csv: &CsvTable) -> Option<usize> {
    let set = csv.column("parameter_set");
    let algorithm = csv.column("algorithm");
    match (set, algorithm) {
        (Some(s), Some(a)) => {
            let mut first: HashMap<&str, &str> = HashMap::new();
            let shared = csv.records.iter().any(|r| {
                let alg = first.entry(&r.fields[s]).or_insert(&r.fields[a]);
                *alg != r.fields[a]
            });
            Some(if shared { a } else { s })
        }
        (Some(s), None) => Some(s),
        (None, a) => a,
    }
}

/// One chart and the rows behind it.
struct Facet {
    /// The facet value; `None` when the CSV is not split.
    name: Option<String>,
    chart: BarChart,
    /// group, series, value: what the chart shows.
    data: Table,
}

/// Parses a value cell: empty and `n/a` are gaps.
fn parse_value(cell: &str, line: usize, column: &str) -> Result<Option<f64>, String> {
    let cell = cell.trim();
    if cell.is_empty() || ["n/a", "na", "-"].contains(&cell.to_ascii_lowercase().as_str()) {
        return Ok(None);
    }
    cell.parse::<f64>()
        .map(Some)
        .map_err(|_| format!("line {line}: column {column:?}: not a number: {cell:?}"))
}

/// The values of `column` over `records` if they are all the same.
fn common_value<'a>(records: &[&'a Record], column: Option<usize>) -> Option<&'a str> {
    let c = column?;
    let first = records.first()?.fields[c].as_str();
    (!first.is_empty() && records.iter().all(|r| r.fields[c] == first)).then_some(first)
}

/// Splits the CSV by facet and builds one chart per facet value.
fn build_facets(
    csv: &CsvTable,
    cols: &Columns,
    format: &Format,
    source: &str,
    title: Option<&str>,
) -> Result<Vec<Facet>, String> {
    let headers = &csv.headers;
    let mut order: Vec<Option<String>> = Vec::new();
    let mut by_facet: HashMap<Option<String>, Vec<&Record>> = HashMap::new();
    for record in &csv.records {
        let key = cols.facet.map(|f| record.fields[f].clone());
        if !by_facet.contains_key(&key) {
            order.push(key.clone());
        }
        by_facet.entry(key).or_default().push(record);
    }

    let mut facets = Vec::new();
    for name in order {
        let records = &by_facet[&name];
        let mut groups: Vec<String> = Vec::new();
        let mut series: Vec<String> = Vec::new();
        let mut cells: HashMap<(usize, usize), (Option<f64>, usize)> = HashMap::new();
        let column = |c: usize| Column::new(&headers[c], &headers[c]);
        let mut data = Table::new(vec![
            column(cols.group),
            column(cols.series),
            column(cols.value),
        ]);
        for record in records {
            let f = &record.fields;
            let g = index_of(&mut groups, &f[cols.group]);
            let s = index_of(&mut series, &f[cols.series]);
            let value = parse_value(&f[cols.value], record.line, &headers[cols.value])?;
            if let Some((_, earlier)) = cells.insert((s, g), (value, record.line)) {
                return Err(format!(
                    "lines {earlier} and {}: two values for {}{} / {}; choose --facet, \
                     --group or --series so that each bar has one row",
                    record.line,
                    name.as_ref().map(|n| format!("{n} / ")).unwrap_or_default(),
                    f[cols.group],
                    f[cols.series]
                ));
            }
            data.push_text([
                f[cols.group].as_str(),
                &f[cols.series],
                f[cols.value].trim(),
            ]);
        }
        let values = (0..series.len())
            .map(|s| {
                (0..groups.len())
                    .map(|g| cells.get(&(s, g)).and_then(|(v, _)| *v))
                    .collect()
            })
            .collect();
        let chart = BarChart {
            title: chart_title(title, name.as_deref(), source),
            subtitle: subtitle(records, csv, format, source),
            value_label: cols.value_label.clone(),
            groups,
            series,
            values,
        };
        facets.push(Facet { name, chart, data });
    }
    Ok(facets)
}

/// The position of `name` in `names`, appending it if new.
fn index_of(names: &mut Vec<String>, name: &str) -> usize {
    match names.iter().position(|n| n == name) {
        Some(i) => i,
        None => {
            names.push(name.to_owned());
            names.len() - 1
        }
    }
}

fn chart_title(title: Option<&str>, facet: Option<&str>, source: &str) -> String {
    match (title, facet) {
        (Some(t), Some(f)) => format!("{t} — {f}"),
        (Some(t), None) => t.to_owned(),
        (None, Some(f)) => f.to_owned(),
        (None, None) => source.to_owned(),
    }
}

/// Source file and the settings all rows of the facet share.
fn subtitle(records: &[&Record], csv: &CsvTable, format: &Format, source: &str) -> String {
    let mut parts = Vec::new();
    match format {
        Format::Bench { .. } => {
            parts.push("bench, in process".to_owned());
            if let Some(n) = common_value(records, csv.column("iterations")) {
                parts.push(format!("median of {n} timed runs"));
            }
        }
        Format::Comparison => {
            if let Some(v) = common_value(records, csv.column("openssl_version")) {
                parts.push(if v.starts_with("OpenSSL") {
                    v.to_owned()
                } else {
                    format!("OpenSSL {v}")
                });
            }
            if let Some(n) = common_value(records, csv.column("rounds")) {
                let plural = if n == "1" { "round" } else { "rounds" };
                parts.push(format!("median of {n} {plural}"));
            }
            if let Some(n) = common_value(records, csv.column("trials")) {
                parts.push(format!("median of {n} trials"));
            }
        }
        Format::Other => {}
    }
    parts.push(format!("source: {source}"));
    parts.join(" · ")
}

/// A file-name-safe form of `text`: lowercase letters and digits, other
/// runs as one `-` ("ML-KEM-768" → "ml-kem-768").
fn slug(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    while out.ends_with('-') {
        out.pop();
    }
    out
}

/// File stems for the facets: `[prefix-]slug`, unique (`-2`, `-3` on
/// clashes), `chart` for a facet without a usable name.
fn file_stems(facets: &[Facet], prefix: Option<&str>, source_stem: &str) -> Vec<String> {
    let prefix = prefix.map(slug).filter(|p| !p.is_empty());
    let mut used: Vec<String> = Vec::new();
    facets
        .iter()
        .map(|facet| {
            let base = match (&facet.name, &prefix) {
                (Some(n), _) => slug(n),
                (None, Some(_)) => String::new(),
                (None, None) => slug(source_stem),
            };
            let joined = match (&prefix, base.is_empty()) {
                (Some(p), true) => p.clone(),
                (Some(p), false) => format!("{p}-{base}"),
                (None, true) => "chart".to_owned(),
                (None, false) => base,
            };
            let mut stem = joined.clone();
            let mut k = 2;
            while used.contains(&stem) {
                stem = format!("{joined}-{k}");
                k += 1;
            }
            used.push(stem.clone());
            stem
        })
        .collect()
}

fn run(args: &Args) -> Result<Vec<PathBuf>, String> {
    let text = std::fs::read_to_string(&args.csv)
        .map_err(|e| format!("cannot read {}: {e}", args.csv.display()))?;
    let csv = CsvTable::parse(&text).map_err(|e| format!("{}: {e}", args.csv.display()))?;
    if csv.records.is_empty() {
        return Err(format!("{}: no rows under the header", args.csv.display()));
    }
    let format = Format::detect(&csv);
    let cols = choose_columns(args, &csv, &format)?;
    let source = args.csv.file_name().map_or_else(
        || args.csv.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let facets = build_facets(&csv, &cols, &format, &source, args.title.as_deref())
        .map_err(|e| format!("{}: {e}", args.csv.display()))?;
    let source_stem = Path::new(&source)
        .file_stem()
        .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
    let stems = file_stems(&facets, args.prefix.as_deref(), &source_stem);

    std::fs::create_dir_all(&args.out)
        .map_err(|e| format!("cannot create {}: {e}", args.out.display()))?;
    let mut written = Vec::new();
    for (facet, stem) in facets.iter().zip(&stems) {
        let svg = facet.chart.to_svg().map_err(|e| format!("{stem}: {e}"))?;
        for (ext, body) in [("svg", svg), ("csv", facet.data.to_csv())] {
            let path = args.out.join(format!("{stem}.{ext}"));
            cli::write_file(&path, &body)?;
            written.push(path);
        }
    }
    Ok(written)
}

fn main() -> ExitCode {
    let args = Args::parse();
    let result = run(&args).map(|written| written.iter().for_each(|p| println!("{}", p.display())));
    cli::exit("charts", result)
}
