//! Grouped bar charts as standalone SVG 1.1, with no dependencies: for
//! putting benchmark numbers into reports.
//!
//! A [`BarChart`] has groups along the x axis (e.g. keygen, encaps, decaps)
//! and one coloured bar per series in each group (e.g. implementations).
//! The y axis starts at 0 and has "nice" 1-2-5 ticks; every bar carries its
//! value in compact form (`73.6k`) and the legend names the series.
//!
//! ```
//! use test_tools::svg_chart::BarChart;
//!
//! let chart = BarChart {
//!     title: "ML-KEM-768".into(),
//!     subtitle: "openssl speed".into(),
//!     value_label: "ops/s (higher is better)".into(),
//!     groups: vec!["keygen".into(), "encaps".into()],
//!     series: vec!["ours".into(), "native".into()],
//!     values: vec![vec![Some(73553.0), Some(161804.0)], vec![Some(22251.0), None]],
//! };
//! let svg = chart.to_svg().unwrap();
//! assert!(svg.contains(">73.6k</text>"));
//! assert!(svg.contains(">n/a</text>"));
//! ```
//!
//! Values that cannot be drawn as a bar from 0 (`None`, NaN, infinities and
//! negative numbers) are drawn as gaps labelled "n/a".

use std::fmt::{self, Write as _};

/// The Okabe-Ito palette (colour-blind safe), ordered so that the first
/// colours contrast well on white; yellow comes late. Series beyond the
/// eighth reuse the colours in order.
pub const PALETTE: [&str; 8] = [
    "#0072B2", // blue
    "#E69F00", // orange
    "#009E73", // bluish green
    "#D55E00", // vermillion
    "#56B4E9", // sky blue
    "#CC79A7", // reddish purple
    "#F0E442", // yellow
    "#000000", // black
];

/// Smallest chart width in pixels.
const MIN_WIDTH: f64 = 800.0;
/// Smallest chart height in pixels.
const MIN_HEIGHT: f64 = 450.0;
/// Smallest height of the plot area.
const MIN_PLOT_HEIGHT: f64 = 260.0;
/// Outer margin on every side.
const PAD: f64 = 20.0;
/// Space between the bar clusters of neighbouring groups.
const GROUP_GAP: f64 = 28.0;
/// Narrowest and widest horizontal slot of one bar (bar plus spacing).
const MIN_SLOT: f64 = 30.0;
const MAX_SLOT: f64 = 80.0;
/// Share of a slot that the bar fills.
const BAR_FILL: f64 = 0.8;
/// Upper bound on the number of y-axis intervals.
const MAX_TICK_INTERVALS: f64 = 8.0;

/// Font sizes, in pixels.
const TITLE_SIZE: f64 = 20.0;
const SUBTITLE_SIZE: f64 = 13.0;
const LEGEND_SIZE: f64 = 13.0;
const AXIS_TITLE_SIZE: f64 = 13.0;
const TICK_SIZE: f64 = 12.0;
const GROUP_SIZE: f64 = 14.0;
const VALUE_SIZE: f64 = 11.0;

/// Legend swatch side, gap to its text, and space after each entry.
const SWATCH: f64 = 13.0;
const SWATCH_GAP: f64 = 6.0;
const LEGEND_ENTRY_GAP: f64 = 22.0;
const LEGEND_ROW: f64 = 22.0;

/// The label drawn where a value is missing.
const NOT_AVAILABLE: &str = "n/a";

/// A grouped bar chart: `values[s][g]` is the bar of series `s` in group `g`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BarChart {
    /// Headline above the chart.
    pub title: String,
    /// Smaller line under the title (source, settings); empty for none.
    pub subtitle: String,
    /// Title of the y axis, e.g. "median cycles (lower is better)".
    pub value_label: String,
    /// The x-axis categories, left to right.
    pub groups: Vec<String>,
    /// The bar series, one colour each, in legend order.
    pub series: Vec<String>,
    /// One row per series, one entry per group; `None` = not measured.
    pub values: Vec<Vec<Option<f64>>>,
}

/// Why a chart cannot be drawn.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChartError {
    /// `values` does not have one row per series.
    SeriesCount {
        /// Number of series names.
        series: usize,
        /// Number of value rows.
        rows: usize,
    },
    /// A row of `values` does not have one entry per group.
    GroupCount {
        /// The series whose row is wrong.
        series: String,
        /// Number of groups.
        groups: usize,
        /// Number of entries in that row.
        values: usize,
    },
}

impl fmt::Display for ChartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::SeriesCount { series, rows } => write!(
                f,
                "chart has {series} series but {rows} rows of values (need one row per series)"
            ),
            Self::GroupCount {
                series,
                groups,
                values,
            } => write!(
                f,
                "series {series:?} has {values} values but the chart has {groups} groups"
            ),
        }
    }
}

impl std::error::Error for ChartError {}

impl BarChart {
    /// Checks that `values` has one row per series and one entry per group.
    pub fn validate(&self) -> Result<(), ChartError> {
        if self.values.len() != self.series.len() {
            return Err(ChartError::SeriesCount {
                series: self.series.len(),
                rows: self.values.len(),
            });
        }
        for (name, row) in self.series.iter().zip(&self.values) {
            if row.len() != self.groups.len() {
                return Err(ChartError::GroupCount {
                    series: name.clone(),
                    groups: self.groups.len(),
                    values: row.len(),
                });
            }
        }
        Ok(())
    }

    /// The value drawn for series `s` in group `g`: finite and not negative,
    /// else `None` (a gap labelled "n/a").
    fn bar_value(&self, s: usize, g: usize) -> Option<f64> {
        self.values[s][g].filter(|v| v.is_finite() && *v >= 0.0)
    }

    /// Renders the chart as a standalone SVG 1.1 document.
    ///
    /// A chart without groups or series renders as titles and a "no data"
    /// note. Fails only when `values` does not match the groups and series.
    pub fn to_svg(&self) -> Result<String, ChartError> {
        self.validate()?;
        let layout = Layout::new(self);
        let mut svg = String::new();
        let (w, h) = (layout.width, layout.height);
        let _ = writeln!(svg, r#"<?xml version="1.0" encoding="UTF-8"?>"#);
        let _ = writeln!(
            svg,
            r#"<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif">"#
        );
        let _ = writeln!(svg, "<title>{}</title>", escape(&self.title));
        if !self.subtitle.is_empty() {
            let _ = writeln!(svg, "<desc>{}</desc>", escape(&self.subtitle));
        }
        let _ = writeln!(
            svg,
            r##"<rect class="background" x="0" y="0" width="{w}" height="{h}" fill="#ffffff"/>"##
        );
        self.write_titles(&mut svg, &layout);
        if self.groups.is_empty() || self.series.is_empty() {
            let _ = writeln!(
                svg,
                r##"<text x="{}" y="{}" font-size="{GROUP_SIZE}" fill="#555555" text-anchor="middle">no data</text>"##,
                px(w / 2.0),
                px(layout.plot_top + layout.plot_height / 2.0)
            );
        } else {
            self.write_legend(&mut svg, &layout);
            self.write_axis(&mut svg, &layout);
            self.write_bars(&mut svg, &layout);
            self.write_group_labels(&mut svg, &layout);
        }
        svg.push_str("</svg>\n");
        Ok(svg)
    }

    fn write_titles(&self, svg: &mut String, layout: &Layout) {
        let _ = writeln!(
            svg,
            r##"<text x="{PAD}" y="{}" font-size="{TITLE_SIZE}" font-weight="bold" fill="#111111">{}</text>"##,
            px(layout.title_y),
            escape(&self.title)
        );
        if !self.subtitle.is_empty() {
            let _ = writeln!(
                svg,
                r##"<text x="{PAD}" y="{}" font-size="{SUBTITLE_SIZE}" fill="#555555">{}</text>"##,
                px(layout.subtitle_y),
                escape(&self.subtitle)
            );
        }
    }

    fn write_legend(&self, svg: &mut String, layout: &Layout) {
        svg.push_str("<g class=\"legend\">\n");
        for (s, name) in self.series.iter().enumerate() {
            let (x, y) = layout.legend[s];
            let _ = writeln!(
                svg,
                r##"<rect class="swatch" x="{}" y="{}" width="{SWATCH}" height="{SWATCH}" fill="{}"/>"##,
                px(x),
                px(y - SWATCH + 2.0),
                colour(s)
            );
            let _ = writeln!(
                svg,
                r##"<text x="{}" y="{}" font-size="{LEGEND_SIZE}" fill="#222222">{}</text>"##,
                px(x + SWATCH + SWATCH_GAP),
                px(y),
                escape(name)
            );
        }
        svg.push_str("</g>\n");
    }

    fn write_axis(&self, svg: &mut String, layout: &Layout) {
        let left = layout.plot_left;
        let right = left + layout.plot_width;
        svg.push_str("<g class=\"y-axis\">\n");
        for &tick in &layout.ticks {
            let y = layout.y_of(tick);
            if tick > 0.0 {
                let _ = writeln!(
                    svg,
                    r##"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#dddddd" stroke-width="1"/>"##,
                    px(left),
                    px(y),
                    px(right),
                    px(y)
                );
            }
            let _ = writeln!(
                svg,
                r##"<text x="{}" y="{}" font-size="{TICK_SIZE}" fill="#444444" text-anchor="end">{}</text>"##,
                px(left - 8.0),
                px(y + TICK_SIZE * 0.35),
                escape(&tick_label(tick, layout.tick_step))
            );
        }
        let mid = layout.plot_top + layout.plot_height / 2.0;
        let x = PAD + AXIS_TITLE_SIZE * 0.8;
        let _ = writeln!(
            svg,
            r##"<text x="{}" y="{}" font-size="{AXIS_TITLE_SIZE}" fill="#333333" text-anchor="middle" transform="rotate(-90 {} {})">{}</text>"##,
            px(x),
            px(mid),
            px(x),
            px(mid),
            escape(&self.value_label)
        );
        svg.push_str("</g>\n");
    }

    fn write_bars(&self, svg: &mut String, layout: &Layout) {
        let base = layout.plot_top + layout.plot_height;
        svg.push_str("<g class=\"bars\">\n");
        for (s, name) in self.series.iter().enumerate() {
            for (g, group) in self.groups.iter().enumerate() {
                let centre = layout.bar_centre(s, g);
                match self.bar_value(s, g) {
                    Some(v) => {
                        let top = layout.y_of(v);
                        let _ = writeln!(
                            svg,
                            r#"<rect class="bar" x="{}" y="{}" width="{}" height="{}" fill="{}"><title>{}</title></rect>"#,
                            px(centre - layout.bar_width / 2.0),
                            px(top),
                            px(layout.bar_width),
                            px(base - top),
                            colour(s),
                            escape(&format!("{name}, {group}: {}", full_number(v)))
                        );
                        let _ = writeln!(
                            svg,
                            r##"<text x="{}" y="{}" font-size="{VALUE_SIZE}" fill="#222222" text-anchor="middle">{}</text>"##,
                            px(centre),
                            px(top - 4.0),
                            escape(&compact(v))
                        );
                    }
                    None => {
                        let _ = writeln!(
                            svg,
                            r##"<text x="{}" y="{}" font-size="{VALUE_SIZE}" fill="#777777" text-anchor="middle">{NOT_AVAILABLE}</text>"##,
                            px(centre),
                            px(base - 5.0)
                        );
                    }
                }
            }
        }
        let _ = writeln!(
            svg,
            r##"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#333333" stroke-width="1"/>"##,
            px(layout.plot_left),
            px(base),
            px(layout.plot_left + layout.plot_width),
            px(base)
        );
        svg.push_str("</g>\n");
    }

    fn write_group_labels(&self, svg: &mut String, layout: &Layout) {
        let y = layout.plot_top + layout.plot_height + GROUP_SIZE + 8.0;
        svg.push_str("<g class=\"x-axis\">\n");
        for (g, group) in self.groups.iter().enumerate() {
            let _ = writeln!(
                svg,
                r##"<text x="{}" y="{}" font-size="{GROUP_SIZE}" fill="#222222" text-anchor="middle">{}</text>"##,
                px(layout.group_centre(g)),
                px(y),
                escape(group)
            );
        }
        svg.push_str("</g>\n");
    }
}

/// Where everything goes, in pixels.
#[derive(Debug)]
struct Layout {
    width: f64,
    height: f64,
    title_y: f64,
    subtitle_y: f64,
    /// Baseline-left point of each legend entry (swatch, then text).
    legend: Vec<(f64, f64)>,
    plot_left: f64,
    plot_top: f64,
    plot_width: f64,
    plot_height: f64,
    group_width: f64,
    slot: f64,
    bar_width: f64,
    n_series: usize,
    ticks: Vec<f64>,
    tick_step: f64,
}

impl Layout {
    fn new(chart: &BarChart) -> Self {
        let n_groups = chart.groups.len();
        let n_series = chart.series.len();

        let mut max = 0.0_f64;
        let mut label_width = 0.0_f64;
        for s in 0..n_series {
            for g in 0..n_groups {
                let text = match chart.bar_value(s, g) {
                    Some(v) => {
                        max = max.max(v);
                        compact(v)
                    }
                    None => NOT_AVAILABLE.to_owned(),
                };
                label_width = label_width.max(text_width(&text, VALUE_SIZE));
            }
        }
        let ticks = nice_ticks(max);
        let tick_step = ticks.get(1).copied().unwrap_or(1.0);
        let tick_width = ticks
            .iter()
            .map(|&t| text_width(&tick_label(t, tick_step), TICK_SIZE))
            .fold(0.0, f64::max);

        // Horizontal: y-axis title, tick labels, then the groups.
        let plot_left = PAD + AXIS_TITLE_SIZE * 1.4 + 8.0 + tick_width + 8.0;
        let min_slot = MIN_SLOT.max(label_width + 6.0);
        let group_label_width = chart
            .groups
            .iter()
            .map(|g| text_width(g, GROUP_SIZE))
            .fold(0.0, f64::max);
        let min_group = (n_series as f64 * min_slot + GROUP_GAP).max(group_label_width + 16.0);
        let legend_widths: Vec<f64> = chart
            .series
            .iter()
            .map(|s| SWATCH + SWATCH_GAP + text_width(s, LEGEND_SIZE))
            .collect();
        let width = [
            MIN_WIDTH,
            plot_left + n_groups as f64 * min_group + PAD,
            2.0 * PAD + text_width_bold(&chart.title, TITLE_SIZE),
            2.0 * PAD + text_width(&chart.subtitle, SUBTITLE_SIZE),
            2.0 * PAD + legend_widths.iter().copied().fold(0.0, f64::max),
        ]
        .into_iter()
        .fold(0.0, f64::max)
        .ceil();
        let plot_width = width - plot_left - PAD;
        let group_width = plot_width / n_groups.max(1) as f64;
        let slot = ((group_width - GROUP_GAP) / n_series.max(1) as f64).min(MAX_SLOT);

        // Vertical: title, subtitle, legend rows, room for value labels,
        // plot, group labels.
        let title_y = PAD + TITLE_SIZE * 0.8;
        let mut y = title_y;
        let subtitle_y = y + SUBTITLE_SIZE + 8.0;
        if !chart.subtitle.is_empty() {
            y = subtitle_y;
        }
        let mut legend = Vec::with_capacity(n_series);
        let mut x = PAD;
        y += LEGEND_ROW + 6.0;
        for (i, &entry) in legend_widths.iter().enumerate() {
            if i > 0 && x + entry > width - PAD {
                x = PAD;
                y += LEGEND_ROW;
            }
            legend.push((x, y));
            x += entry + LEGEND_ENTRY_GAP;
        }
        let plot_top = y + 12.0 + VALUE_SIZE + 8.0;
        let bottom = GROUP_SIZE + 8.0 + PAD;
        let height = MIN_HEIGHT.max(plot_top + MIN_PLOT_HEIGHT + bottom).ceil();
        Self {
            width,
            height,
            title_y,
            subtitle_y,
            legend,
            plot_left,
            plot_top,
            plot_width,
            plot_height: height - plot_top - bottom,
            group_width,
            slot,
            bar_width: slot * BAR_FILL,
            n_series,
            ticks,
            tick_step,
        }
    }

    /// The y coordinate of a value; the top tick is the top of the plot.
    fn y_of(&self, value: f64) -> f64 {
        let top = self.ticks.last().copied().unwrap_or(1.0);
        let share = if top > 0.0 {
            (value / top).clamp(0.0, 1.0)
        } else {
            0.0
        };
        self.plot_top + self.plot_height * (1.0 - share)
    }

    fn group_centre(&self, g: usize) -> f64 {
        self.plot_left + self.group_width * (g as f64 + 0.5)
    }

    fn bar_centre(&self, s: usize, g: usize) -> f64 {
        let cluster = self.slot * self.n_series as f64;
        self.group_centre(g) - cluster / 2.0 + self.slot * (s as f64 + 0.5)
    }
}

/// The colour of series `s`.
fn colour(s: usize) -> &'static str {
    PALETTE[s % PALETTE.len()]
}

/// A coordinate with one decimal, without a trailing `.0`.
fn px(v: f64) -> String {
    let s = format!("{v:.1}");
    s.strip_suffix(".0").map(str::to_owned).unwrap_or(s)
}

/// Escapes text for XML character data and attribute values, and replaces
/// characters that XML 1.0 does not allow (most C0 controls) with U+FFFD.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// The ticks of a y axis from 0 that covers `max`: multiples of a step of
/// 1, 2 or 5 times a power of ten, at most eight intervals, the last tick at
/// or above `max`. A `max` that is not positive and finite gives 0..1.
///
/// ```
/// use test_tools::svg_chart::nice_ticks;
///
/// assert_eq!(nice_ticks(73_553.0).last(), Some(&80_000.0));
/// assert_eq!(nice_ticks(73_553.0)[1], 10_000.0);
/// ```
pub fn nice_ticks(max: f64) -> Vec<f64> {
    // Normal positive values only: a subnormal maximum would make the step
    // 0 and the tick count unbounded.
    let max = if max.is_normal() && max > 0.0 {
        max
    } else {
        1.0
    };
    let raw = max / MAX_TICK_INTERVALS;
    let magnitude = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * magnitude)
        .find(|&s| s >= raw * (1.0 - 1e-9))
        .unwrap_or(10.0 * magnitude);
    let intervals = ((max / step) - 1e-9).ceil().max(1.0) as usize;
    (0..=intervals).map(|i| i as f64 * step).collect()
}

/// The suffix unit of a magnitude: G, M, k or none.
fn unit_of(v: f64) -> (f64, &'static str) {
    let a = v.abs();
    if a >= 1e9 {
        (1e9, "G")
    } else if a >= 1e6 {
        (1e6, "M")
    } else if a >= 1e3 {
        (1e3, "k")
    } else {
        (1.0, "")
    }
}

/// A tick label: `v` with a k/M/G suffix and as many decimals as the tick
/// step needs, trailing zeros dropped (`0`, `500`, `1.5k`, `80k`, `2M`).
pub fn tick_label(v: f64, step: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return if v == 0.0 {
            "0".to_owned()
        } else {
            NOT_AVAILABLE.to_owned()
        };
    }
    let (div, suffix) = unit_of(v);
    let scaled_step = (step / div).abs();
    let decimals = if scaled_step > 0.0 && scaled_step.is_finite() {
        (-scaled_step.log10().floor()).clamp(0.0, 12.0) as usize
    } else {
        0
    };
    let mut s = format!("{:.*}", decimals, v / div);
    if s.contains('.') {
        s = s.trim_end_matches('0').trim_end_matches('.').to_owned();
    }
    s + suffix
}

/// A value label: three significant digits with a k/M/G suffix (`73.6k`,
/// `29.0k`, `162k`, `1.23M`); whole numbers below 1000 as they are.
pub fn compact(v: f64) -> String {
    if !v.is_finite() {
        return NOT_AVAILABLE.to_owned();
    }
    if v == 0.0 {
        return "0".to_owned();
    }
    let a = v.abs();
    let sign = if v < 0.0 { "-" } else { "" };
    if a < 1000.0 && a.fract() == 0.0 {
        return format!("{sign}{a}");
    }
    // Round to three significant digits first, so that 999.7 becomes 1.00k.
    let magnitude = a.log10().floor() as i32;
    let scale = 10f64.powi(magnitude - 2);
    let rounded = (a / scale).round() * scale;
    let (div, suffix) = unit_of(rounded);
    let scaled = rounded / div;
    let decimals = if scaled >= 100.0 {
        0
    } else if scaled >= 10.0 {
        1
    } else if scaled >= 1.0 {
        2
    } else {
        (2 - magnitude).clamp(0, 15) as usize
    };
    format!("{sign}{scaled:.decimals$}{suffix}")
}

/// A value in full for tooltips, with thousands separators (`73,553`,
/// `49,134.2`).
fn full_number(v: f64) -> String {
    let text = v.abs().to_string();
    let (whole, fraction) = text.split_once('.').unwrap_or((&text, ""));
    let mut out = String::new();
    if v < 0.0 {
        out.push('-');
    }
    for (i, c) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if !fraction.is_empty() {
        out.push('.');
        out.push_str(fraction);
    }
    out
}

/// Estimated width of text in a sans-serif font, in pixels. Errs wide
/// (DejaVu Sans, the widest common default), so that text is not clipped.
fn text_width(text: &str, size: f64) -> f64 {
    text.chars()
        .map(|c| match c {
            'i' | 'j' | 'l' | '.' | ',' | ':' | ';' | '\'' | '!' | '|' | ' ' | '(' | ')' | '['
            | ']' | 'f' | 't' | 'r' | 'I' => 0.38,
            'm' | 'w' | 'M' | 'W' => 0.95,
            'A'..='Z' => 0.74,
            '0'..='9' => 0.64,
            c if c.is_ascii() => 0.62,
            _ => 1.0,
        })
        .sum::<f64>()
        * size
}

/// [`text_width`] for bold text.
fn text_width_bold(text: &str, size: f64) -> f64 {
    text_width(text, size) * 1.1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart(values: Vec<Vec<Option<f64>>>) -> BarChart {
        BarChart {
            title: "ML-KEM-768".into(),
            subtitle: "test".into(),
            value_label: "ops/s (higher is better)".into(),
            groups: vec!["keygen".into(), "encaps".into(), "decaps".into()],
            series: (0..values.len()).map(|i| format!("impl {i}")).collect(),
            values,
        }
    }

    /// Checks that every element the chart writes is closed in order, and
    /// that `&` only starts the entities `escape` writes. Returns the
    /// element names in document order.
    fn check_well_formed(svg: &str) -> Vec<String> {
        let mut stack: Vec<String> = Vec::new();
        let mut seen = Vec::new();
        let mut rest = svg;
        while let Some(open) = rest.find('<') {
            let text = &rest[..open];
            check_entities(text);
            rest = &rest[open..];
            let close = rest.find('>').expect("unclosed tag");
            let tag = &rest[1..close];
            rest = &rest[close + 1..];
            if let Some(decl) = tag.strip_prefix('?') {
                assert!(decl.ends_with('?'), "bad declaration <{tag}>");
                continue;
            }
            assert!(!tag.contains('<'), "'<' inside tag <{tag}>");
            check_entities(tag);
            assert_eq!(tag.matches('"').count() % 2, 0, "unbalanced quotes <{tag}>");
            if let Some(name) = tag.strip_prefix('/') {
                assert_eq!(stack.pop().as_deref(), Some(name), "mismatched </{name}>");
            } else {
                let name: String = tag
                    .chars()
                    .take_while(|c| !c.is_whitespace() && *c != '/')
                    .collect();
                seen.push(name.clone());
                if !tag.ends_with('/') {
                    stack.push(name);
                }
            }
        }
        check_entities(rest);
        assert!(stack.is_empty(), "unclosed elements: {stack:?}");
        assert_eq!(seen.first().map(String::as_str), Some("svg"));
        seen
    }

    fn check_entities(text: &str) {
        for (i, _) in text.match_indices('&') {
            let after = &text[i..];
            assert!(
                ["&amp;", "&lt;", "&gt;", "&quot;", "&#39;"]
                    .iter()
                    .any(|e| after.starts_with(e)),
                "raw '&' in {text:?}"
            );
        }
    }

    #[test]
    #[should_panic(expected = "raw '&'")]
    fn checker_rejects_raw_ampersand() {
        check_well_formed("<svg><text>R&D</text></svg>");
    }

    #[test]
    #[should_panic(expected = "mismatched </g>")]
    fn checker_rejects_crossed_tags() {
        check_well_formed("<svg><g><text></g></text></svg>");
    }

    #[test]
    fn escape_covers_markup_and_controls() {
        assert_eq!(
            escape(r#"R&D <x> "q" 'a'"#),
            "R&amp;D &lt;x&gt; &quot;q&quot; &#39;a&#39;"
        );
        assert_eq!(escape("a\u{1}b\tc"), "a\u{FFFD}b\tc");
        assert_eq!(escape("ML-KEM-768 — ü"), "ML-KEM-768 — ü");
    }

    #[test]
    fn hostile_names_stay_well_formed() {
        let mut c = chart(vec![vec![Some(1.0), Some(2.0), Some(3.0)]]);
        c.title = "R&D <x>".into();
        c.subtitle = "</svg> & \"quotes\"".into();
        c.value_label = "a<b".into();
        c.groups[0] = "<g>".into();
        c.series[0] = "R&D <x>".into();
        let svg = c.to_svg().unwrap();
        check_well_formed(&svg);
        assert!(svg.contains(">R&amp;D &lt;x&gt;</text>"));
        assert!(!svg.contains("R&D"));
        assert_eq!(svg.matches("</svg>").count(), 1);
    }

    #[test]
    fn ticks_use_1_2_5_steps() {
        let ticks = nice_ticks(73_553.0);
        let want: Vec<f64> = (0..=8).map(|i| f64::from(i) * 10_000.0).collect();
        assert_eq!(ticks, want);
        let labels: Vec<String> = ticks.iter().map(|&t| tick_label(t, ticks[1])).collect();
        assert_eq!(
            labels,
            ["0", "10k", "20k", "30k", "40k", "50k", "60k", "70k", "80k"]
        );

        assert_eq!(nice_ticks(161_804.0), [0.0, 50e3, 100e3, 150e3, 200e3]);
        assert_eq!(nice_ticks(1_900.0), [0.0, 500.0, 1000.0, 1500.0, 2000.0]);
        // An exact multiple of the step is the top tick itself.
        assert_eq!(nice_ticks(80_000.0).last(), Some(&80_000.0));
        assert_eq!(nice_ticks(7.0).len(), 8);
        assert_eq!(nice_ticks(2.5e6), [0.0, 500e3, 1e6, 1.5e6, 2e6, 2.5e6]);
        let small = nice_ticks(0.93);
        assert_eq!(small.len(), 6);
        assert!((small[5] - 1.0).abs() < 1e-12);
        assert_eq!(tick_label(small[3], small[1]), "0.6");
        // Nothing to show: 0..1.
        for max in [0.0, -5.0, f64::NAN, f64::INFINITY] {
            let t = nice_ticks(max);
            assert_eq!((t[0], t.len()), (0.0, 6), "max {max}");
            assert!((t[5] - 1.0).abs() < 1e-12);
        }
    }

    #[test]
    fn tick_labels_pick_units_and_decimals() {
        assert_eq!(tick_label(1500.0, 500.0), "1.5k");
        assert_eq!(tick_label(500.0, 500.0), "500");
        assert_eq!(tick_label(2e6, 5e5), "2M");
        assert_eq!(tick_label(2.5e6, 5e5), "2.5M");
        assert_eq!(tick_label(3e9, 1e9), "3G");
        assert_eq!(tick_label(0.30000000000000004, 0.1), "0.3");
    }

    #[test]
    fn compact_values() {
        assert_eq!(compact(73_553.0), "73.6k");
        assert_eq!(compact(29_012.0), "29.0k");
        assert_eq!(compact(161_804.0), "162k");
        assert_eq!(compact(1_234_567.0), "1.23M");
        assert_eq!(compact(999.7), "1.00k");
        assert_eq!(compact(999_950.0), "1.00M");
        assert_eq!(compact(950.0), "950");
        assert_eq!(compact(12.34), "12.3");
        assert_eq!(compact(0.0123), "0.0123");
        assert_eq!(compact(0.0), "0");
        assert_eq!(compact(-2500.0), "-2.50k");
        assert_eq!(compact(f64::NAN), "n/a");
    }

    #[test]
    fn full_numbers_group_thousands() {
        assert_eq!(full_number(73_553.0), "73,553");
        assert_eq!(full_number(1_234_567.0), "1,234,567");
        assert_eq!(full_number(999.0), "999");
        assert_eq!(full_number(12.5), "12.5");
        assert_eq!(full_number(49_134.2), "49,134.2");
        assert_eq!(full_number(-1_000.0), "-1,000");
    }

    #[test]
    fn one_bar_per_drawable_value() {
        let c = chart(vec![
            vec![Some(73_553.0), Some(161_804.0), Some(103_972.0)],
            vec![Some(22_251.0), None, Some(28_989.0)],
            vec![Some(f64::NAN), Some(-1.0), Some(f64::INFINITY)],
            vec![Some(0.0), None, Some(5.0)],
        ]);
        let svg = c.to_svg().unwrap();
        let names = check_well_formed(&svg);
        assert_eq!(svg.matches(r#"<rect class="bar""#).count(), 7);
        // Background, one swatch per series, the bars.
        assert_eq!(svg.matches("<rect").count(), 1 + 4 + 7);
        assert_eq!(names.iter().filter(|n| *n == "rect").count(), 12);
        // The gaps: one None, NaN, -1, inf, another None.
        assert_eq!(svg.matches(">n/a</text>").count(), 5);
        for label in [
            ">73.6k<", ">162k<", ">104k<", ">22.3k<", ">29.0k<", ">0<", ">5<",
        ] {
            assert!(svg.contains(label), "missing {label}");
        }
        // Axis to 200k (max 161,804).
        assert!(svg.contains(">200k</text>"));
        assert!(svg.contains(r#"xmlns="http://www.w3.org/2000/svg""#));
        assert!(svg.contains(r#"viewBox="0 0 800 450""#));
    }

    #[test]
    fn bars_scale_to_the_top_tick() {
        let c = chart(vec![vec![Some(80_000.0), Some(40_000.0), Some(0.0)]]);
        let layout = Layout::new(&c);
        let base = layout.plot_top + layout.plot_height;
        assert!((layout.y_of(80_000.0) - layout.plot_top).abs() < 1e-9);
        assert!((layout.y_of(40_000.0) - (layout.plot_top + base) / 2.0).abs() < 1e-9);
        assert!((layout.y_of(0.0) - base).abs() < 1e-9);
        // Bars of one group sit inside the group and do not overlap.
        let c = chart(vec![vec![Some(1.0); 3]; 6]);
        let layout = Layout::new(&c);
        for g in 0..3 {
            let lo = layout.plot_left + layout.group_width * g as f64;
            let hi = lo + layout.group_width;
            for s in 0..6 {
                let x = layout.bar_centre(s, g);
                assert!(x - layout.bar_width / 2.0 > lo && x + layout.bar_width / 2.0 < hi);
                if s > 0 {
                    assert!(x - layout.bar_centre(s - 1, g) >= layout.bar_width);
                }
            }
        }
    }

    #[test]
    fn grows_with_content() {
        let small = Layout::new(&chart(vec![vec![Some(1.0); 3]; 2]));
        assert_eq!((small.width, small.height), (MIN_WIDTH, MIN_HEIGHT));
        let mut big = chart(vec![vec![Some(1_234_567.0); 3]; 8]);
        big.groups.push("decaps (cached key)".into());
        for row in &mut big.values {
            row.push(Some(1.0));
        }
        let layout = Layout::new(&big);
        assert!(layout.width > MIN_WIDTH);
        // Every value label fits its slot.
        assert!(layout.slot >= text_width("1.23M", VALUE_SIZE) + 6.0);
        // Legend entries stay inside the chart.
        for (s, &(x, _)) in layout.legend.iter().enumerate() {
            let end = x + SWATCH + SWATCH_GAP + text_width(&big.series[s], LEGEND_SIZE);
            assert!(end <= layout.width - PAD, "legend entry {s} ends at {end}");
        }
    }

    #[test]
    fn empty_charts_render() {
        for c in [
            BarChart::default(),
            BarChart {
                groups: vec!["keygen".into()],
                ..BarChart::default()
            },
            chart(vec![vec![None, None, None]]),
        ] {
            let svg = c.to_svg().unwrap();
            check_well_formed(&svg);
            assert_eq!(svg.matches(r#"<rect class="bar""#).count(), 0);
        }
        assert!(BarChart::default()
            .to_svg()
            .unwrap()
            .contains(">no data</text>"));
    }

    #[test]
    fn shape_mismatch_is_an_error() {
        let mut c = chart(vec![vec![Some(1.0); 3]]);
        c.series.push("extra".into());
        assert_eq!(
            c.to_svg(),
            Err(ChartError::SeriesCount { series: 2, rows: 1 })
        );
        let mut c = chart(vec![vec![Some(1.0); 3], vec![Some(1.0); 2]]);
        let err = c.to_svg().unwrap_err();
        assert_eq!(
            err,
            ChartError::GroupCount {
                series: "impl 1".into(),
                groups: 3,
                values: 2
            }
        );
        assert_eq!(
            err.to_string(),
            "series \"impl 1\" has 2 values but the chart has 3 groups"
        );
        c.values[1].push(None);
        assert!(c.to_svg().is_ok());
    }
}
