//! `charts`: SVG bar charts (drawn with `plotters`) from a CSV of
//! measurements, one per facet, each with the CSV of the numbers it shows.
//!
//! ```text
//! cargo run --release -p test-tools --bin charts -- --csv bench.csv --out charts
//! ```

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::builder::NonEmptyStringValueParser as NonEmpty;
use clap::Parser;
use csv::StringRecord;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use test_tools::cli;
use test_tools::table::{Column, Table};

/// Draws one grouped bar chart per facet value (e.g. per parameter set) from
/// a CSV with a header row, and writes DIR/FACET.svg plus DIR/FACET.csv
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
    #[arg(long, value_name = "NAME", value_parser = NonEmpty::new())]
    prefix: Option<String>,
    /// One chart per value of COL [default: parameter_set if present, else
    /// algorithm; when a parameter set holds several algorithms, e.g.
    /// hybrids, algorithm]
    #[arg(long, value_name = "COL", value_parser = NonEmpty::new())]
    facet: Option<String>,
    /// X-axis categories [default: operation]
    #[arg(long, value_name = "COL", value_parser = NonEmpty::new())]
    group: Option<String>,
    /// Bars in each group, one colour each [default: implementation]
    #[arg(long, value_name = "COL", value_parser = NonEmpty::new())]
    series: Option<String>,
    /// Bar heights [default: by format, see above]
    #[arg(long, value_name = "COL", value_parser = NonEmpty::new())]
    value: Option<String>,
    /// Chart title; the facet value is appended
    #[arg(long, value_name = "TEXT", value_parser = NonEmpty::new())]
    title: Option<String>,
    /// Y-axis title
    #[arg(long, value_name = "TEXT", value_parser = NonEmpty::new())]
    value_label: Option<String>,
}

/// The Okabe-Ito palette (colour-blind safe), yellow late for contrast on
/// white; series beyond the eighth reuse it.
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
const GREY: RGBColor = RGBColor(0x55, 0x55, 0x55);

/// A grouped bar chart: at least one group and one series.
struct BarChart {
    title: String,
    /// Smaller line under the title (source, settings).
    subtitle: String,
    value_label: String,
    groups: Vec<String>,
    series: Vec<String>,
    /// The drawable (finite, not negative) bar of (series, group); the
    /// others are gaps labelled "n/a".
    bars: HashMap<(usize, usize), f64>,
}

impl BarChart {
    /// The chart as an SVG document: title, subtitle and legend above the
    /// plot, every bar labelled with its value (`73.6k`), the y axis from 0.
    fn to_svg(&self) -> Result<String, String> {
        // Each group as wide as its bars or as its label (about 9 pixels a
        // character at 14), so long group names (SecP384r1MLKEM1024) stay apart.
        let longest = self
            .groups
            .iter()
            .map(|g| g.chars().count())
            .max()
            .unwrap_or(0);
        let per_group = (self.series.len() * 44 + 28).max(longest * 9 + 16);
        let width = (self.groups.len() * per_group + 120).max(800) as u32;
        let legend = legend_layout(&self.series, width);
        let legend_rows = legend.last().map_or(1, |&(_, _, row)| row + 1);
        let mut svg = String::new();
        {
            let size = (width, 450 + 22 * (legend_rows as u32 - 1));
            let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
            let layout = (width, legend, legend_rows);
            self.draw(&root, layout).map_err(|e| e.to_string())?;
            root.present().map_err(|e| e.to_string())?;
        }
        Ok(svg)
    }

    fn draw(
        &self,
        root: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
        (width, legend, legend_rows): (u32, Vec<(i32, i32, usize)>, usize),
    ) -> Result<(), Box<dyn std::error::Error>> {
        let (groups, series) = (self.groups.len(), self.series.len());
        root.fill(&WHITE)?;
        let bold = font(20).style(FontStyle::Bold);
        root.draw(&Text::new(self.title.as_str(), (20, 16), bold))?;
        let subtitle = font(13).color(&GREY);
        root.draw(&Text::new(self.subtitle.as_str(), (20, 44), subtitle))?;
        for (s, (x, y, _)) in legend.into_iter().enumerate() {
            let colour = PALETTE[s % PALETTE.len()].filled();
            root.draw(&Rectangle::new([(x, y), (x + 13, y + 13)], colour))?;
            root.draw(&Text::new(self.series[s].as_str(), (x + 19, y), font(13)))?;
        }
        let plot = root.margin(70 + 22 * legend_rows as u32, 20, 20, 20);
        let max = self.bars.values().copied().fold(0.0, f64::max);
        let top_value = if max > 0.0 { max * 1.08 } else { 1.0 };
        let mut chart = ChartBuilder::on(&plot)
            .x_label_area_size(30)
            .y_label_area_size(60)
            .build_cartesian_2d(0f64..groups as f64, 0f64..top_value)?;
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
        let n = series as f64;
        let slot = (0.84 / n).min(80.0 * groups as f64 / f64::from(width - 120));
        let label_style = font(11).color(&RGBColor(0x22, 0x22, 0x22));
        for (g, group) in self.groups.iter().enumerate() {
            let below = TextStyle::from(font(14)).pos(Pos::new(HPos::Center, VPos::Top));
            let label = Text::new(group.clone(), (0, 8), below);
            chart.draw_series([EmptyElement::at((g as f64 + 0.5, 0.0)) + label])?;
            for s in 0..series {
                let left = g as f64 + (1.0 - slot * n) / 2.0 + slot * s as f64;
                let (value, text, colour) = match self.bars.get(&(s, g)) {
                    Some(&v) => (v, compact(v), PALETTE[s % PALETTE.len()]),
                    None => (0.0, "n/a".to_owned(), GREY),
                };
                if value > 0.0 {
                    let corners = [(left + slot * 0.1, 0.0), (left + slot * 0.9, value)];
                    chart.draw_series([Rectangle::new(corners, colour.filled())])?;
                }
                let above = label_style.pos(Pos::new(HPos::Center, VPos::Bottom));
                let text = Text::new(text, (0, -3), above);
                chart.draw_series([EmptyElement::at((left + slot / 2.0, value)) + text])?;
            }
        }
        let axis = [(0.0, 0.0), (groups as f64, 0.0)];
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
    let split = text.find(char::is_alphabetic).unwrap_or(text.len());
    match text.split_at(split) {
        (number, suffix) if number.contains('.') => {
            let number = number.trim_end_matches('0').trim_end_matches('.');
            format!("{number}{suffix}")
        }
        _ => text,
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

/// A format the header gives away: the default value column and its axis
/// title, from `bench` or else from `speed-compare` / `evp-bench`.
struct Known {
    bench: bool,
    value: String,
    label: String,
}

/// A CSV file: its (trimmed) header and the records under it.
struct Csv {
    headers: Vec<String>,
    records: Vec<StringRecord>,
}

impl Csv {
    fn parse(path: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let mut reader = csv::ReaderBuilder::new()
            .trim(csv::Trim::Headers)
            .from_reader(text.as_bytes());
        let fail = |e: csv::Error| format!("{}: {e}", path.display());
        let headers = reader.headers().map_err(fail)?.iter().map(String::from);
        let headers = headers.collect();
        let records = reader.records().collect::<Result<_, _>>().map_err(fail)?;
        Ok(Csv { headers, records })
    }

    fn column(&self, name: &str) -> Option<usize> {
        self.headers.iter().position(|h| h == name)
    }

    fn known(&self) -> Option<Known> {
        let has = |c: &str| self.column(c).is_some();
        let median = self.headers.iter().find(|h| h.starts_with("median_"));
        match median {
            _ if has("algorithm") && has("ops_per_sec") => Some(Known {
                bench: false,
                value: "ops_per_sec".into(),
                label: "ops/s (higher is better)".into(),
            }),
            Some(m) if has("implementation") && has("operation") => Some(Known {
                bench: true,
                value: m.clone(),
                label: format!("median {} (lower is better)", &m["median_".len()..]),
            }),
            _ => None,
        }
    }

    /// `parameter_set` if present, else `algorithm`; but `algorithm` when some
    /// parameter set holds several algorithms (ML-KEM-768 and its hybrids).
    fn default_facet(&self) -> Option<usize> {
        match (self.column("parameter_set"), self.column("algorithm")) {
            (Some(s), Some(a)) => {
                let mut first: HashMap<&str, &str> = HashMap::new();
                let shared = self.records.iter().any(|r| {
                    let alg = first.entry(&r[s]).or_insert(&r[a]);
                    *alg != &r[a]
                });
                Some(if shared { a } else { s })
            }
            (set, algorithm) => set.or(algorithm),
        }
    }
}

/// The line a record starts on.
fn line(record: &StringRecord) -> u64 {
    record.position().map_or(0, |p| p.line())
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
fn parse_value(cell: &str, line: u64, column: &str) -> Result<Option<f64>, String> {
    let cell = cell.trim();
    if ["", "n/a", "na", "-"].contains(&cell.to_ascii_lowercase().as_str()) {
        return Ok(None);
    }
    let error = || format!("line {line}: column {column:?}: not a number: {cell:?}");
    cell.parse().map(Some).map_err(|_| error())
}

/// The position of `name` in `names`, appending it if new.
fn index_of(names: &mut Vec<String>, name: &str) -> usize {
    names.iter().position(|n| n == name).unwrap_or_else(|| {
        names.push(name.to_owned());
        names.len() - 1
    })
}

/// Splits the CSV by facet and builds one chart per facet value, with the
/// columns chosen on the command line or by the header.
fn build_facets(args: &Args, csv: &Csv, source: &str) -> Result<Vec<Facet>, String> {
    let columns = csv.headers.join(", ");
    let find = |name: &str, flag: &str| {
        let error = format!("{flag}: no column {name:?} (columns: {columns})");
        csv.column(name).ok_or(error)
    };
    let pick = |chosen: &Option<String>, default: &str, flag: &str| match chosen {
        Some(name) => find(name, flag),
        None => csv.column(default).ok_or_else(|| {
            format!("no {default:?} column, name one with {flag} (columns: {columns})")
        }),
    };
    let group = pick(&args.group, "operation", "--group")?;
    let series_column = pick(&args.series, "implementation", "--series")?;
    let known = csv.known();
    let (value, label) = match (&args.value, &known) {
        (Some(name), known) => {
            let known = known.as_ref().filter(|k| &k.value == name);
            (find(name, "--value")?, known.map_or(name, |k| &k.label))
        }
        (None, Some(known)) => (find(&known.value, "--value")?, &known.label),
        (None, None) => {
            let hint = "name the value column with --value";
            return Err(format!("unknown CSV format, {hint} (columns: {columns})"));
        }
    };
    let facet = match &args.facet {
        Some(name) => Some(find(name, "--facet")?),
        None => csv.default_facet(),
    };
    let value_label = args.value_label.as_ref().unwrap_or(label);
    let in_file = |e: String| format!("{}: {e}", args.csv.display());
    let mut split: Vec<(Option<&str>, Vec<&StringRecord>)> = Vec::new();
    for record in &csv.records {
        let key = facet.map(|f| &record[f]);
        match split.iter_mut().find(|(k, _)| *k == key) {
            Some((_, records)) => records.push(record),
            None => split.push((key, vec![record])),
        }
    }
    let header = |c: usize| Column::new(&csv.headers[c], &csv.headers[c]);
    let mut facets = Vec::new();
    for (name, records) in split {
        let (mut groups, mut series) = (Vec::new(), Vec::new());
        let (mut lines, mut bars) = (HashMap::new(), HashMap::new());
        let mut data = Table::new(vec![header(group), header(series_column), header(value)]);
        for &r in &records {
            let key = (
                index_of(&mut series, &r[series_column]),
                index_of(&mut groups, &r[group]),
            );
            let cell = parse_value(&r[value], line(r), &csv.headers[value]).map_err(in_file)?;
            if let Some(earlier) = lines.insert(key, line(r)) {
                let facet = name.map(|n| format!("{n} / ")).unwrap_or_default();
                return Err(in_file(format!(
                    "lines {earlier} and {}: two values for {facet}{} / {}; choose --facet, \
                     --group or --series so that each bar has one row",
                    line(r),
                    &r[group],
                    &r[series_column]
                )));
            }
            if let Some(v) = cell.filter(|v| v.is_finite() && *v >= 0.0) {
                bars.insert(key, v);
            }
            data.push_text([&r[group], &r[series_column], r[value].trim()]);
        }
        let title = match (args.title.as_deref(), name) {
            (Some(t), Some(f)) => format!("{t} — {f}"),
            (t, f) => t.or(f).unwrap_or(source).to_owned(),
        };
        let chart = BarChart {
            title,
            subtitle: subtitle(&records, csv, known.as_ref(), source),
            value_label: value_label.clone(),
            groups,
            series,
            bars,
        };
        let name = name.map(str::to_owned);
        facets.push(Facet { name, chart, data });
    }
    Ok(facets)
}

/// Source file and the settings all rows of the facet share.
fn subtitle(records: &[&StringRecord], csv: &Csv, known: Option<&Known>, source: &str) -> String {
    let common = |column: &str| {
        let c = csv.column(column)?;
        let first = &records.first()?[c];
        (!first.is_empty() && records.iter().all(|r| &r[c] == first)).then_some(first)
    };
    let mut parts: Vec<String> = match known.map(|k| k.bench) {
        Some(true) => [
            Some("bench, in process".to_owned()),
            common("iterations").map(|n| format!("median of {n} timed runs")),
        ]
        .into(),
        Some(false) => [
            common("openssl_version").map(|v| match v.starts_with("OpenSSL") {
                true => v.to_owned(),
                false => format!("OpenSSL {v}"),
            }),
            common("rounds").map(|n| match n {
                "1" => "median of 1 round".to_owned(),
                n => format!("median of {n} rounds"),
            }),
            common("trials").map(|n| format!("median of {n} trials")),
        ]
        .into(),
        None => Vec::new(),
    }
    .into_iter()
    .flatten()
    .collect();
    parts.push(format!("source: {source}"));
    parts.join(" · ")
}

/// A file-name-safe form of `text`: lowercase letters and digits, other
/// runs as one `-` ("ML-KEM-768" → "ml-kem-768").
fn slug(text: &str) -> String {
    let words = text.split(|c: char| !c.is_ascii_alphanumeric());
    let words: Vec<&str> = words.filter(|w| !w.is_empty()).collect();
    words.join("-").to_ascii_lowercase()
}

/// File stems for the facets: `[prefix-]slug`, unique (`-2`, `-3` on
/// clashes), `chart` for a facet without a usable name.
fn file_stems(facets: &[Facet], prefix: Option<&str>, source_stem: &str) -> Vec<String> {
    let prefix = prefix.map(slug).filter(|p| !p.is_empty());
    let mut used: Vec<String> = Vec::new();
    for facet in facets {
        let base = match &facet.name {
            Some(name) => slug(name),
            None if prefix.is_some() => String::new(),
            None => slug(source_stem),
        };
        let parts = [prefix.clone(), Some(base)].into_iter().flatten();
        let joined = parts
            .filter(|p| !p.is_empty())
            .collect::<Vec<_>>()
            .join("-");
        let joined = match joined.is_empty() {
            true => "chart".to_owned(),
            false => joined,
        };
        let numbered = (2..).map(|k| format!("{joined}-{k}"));
        let mut stems = std::iter::once(joined.clone()).chain(numbered);
        let stem = stems.find(|stem| !used.contains(stem));
        used.push(stem.expect("an unused number"));
    }
    used
}

fn run(args: &Args) -> Result<(), String> {
    let csv = Csv::parse(&args.csv)?;
    let shown = args.csv.display();
    if csv.records.is_empty() {
        return Err(format!("{shown}: no rows under the header"));
    }
    let source = args
        .csv
        .file_name()
        .map_or_else(|| shown.to_string(), |n| n.to_string_lossy().into_owned());
    let facets = build_facets(args, &csv, &source)?;
    let source_stem = Path::new(&source).file_stem().unwrap_or_default();
    let stems = file_stems(
        &facets,
        args.prefix.as_deref(),
        &source_stem.to_string_lossy(),
    );
    std::fs::create_dir_all(&args.out)
        .map_err(|e| format!("cannot create {}: {e}", args.out.display()))?;
    let mut written = Vec::new();
    for (facet, stem) in facets.iter().zip(&stems) {
        let svg = facet.chart.to_svg().map_err(|e| format!("{stem}: {e}"))?;
        for (ext, body) in [("svg", svg), ("csv", facet.data.to_csv())] {
            let path = args.out.join(format!("{stem}.{ext}"));
            cli::write_file(&path, &body)?;
            written.push(path.display().to_string());
        }
    }
    println!("{}", written.join("\n"));
    Ok(())
}

fn main() -> ExitCode {
    cli::exit("charts", run(&Args::parse()))
}
