//! The results as a table (text, CSV, JSON).

use serde_json::json;
use test_tools::measure::{median, Measurement};
use test_tools::system_info::openssl_version;
use test_tools::table::{Column, Style, Table, Value};

/// The classical group the ratio column compares with.
pub(crate) const BASELINE_GROUP: &str = "X25519";

/// One (group, implementation) of the table.
pub(crate) struct Row {
    /// Its rounds; none where the implementation lacks the group.
    pub(crate) measurement: Measurement,
    /// Per round, the client's and the server's µs in handshake steps per
    /// handshake.
    pub(crate) sides: [Vec<f64>; 2],
}

impl Row {
    /// The median handshakes/s, if measured.
    fn rate(&self) -> Option<f64> {
        Some(self.measurement.ops_per_sec()).filter(|r| r.is_finite())
    }

    /// The median over rounds of `side`'s (0: client, 1: server) µs per
    /// handshake.
    fn side_us(&self, side: usize) -> Option<f64> {
        median(self.sides[side].iter().copied())
    }
}

pub(crate) fn rate_column() -> Column {
    let (text, csv) = (Style::Fixed(0), Style::Fixed(1));
    Column::number("handshakes/s", "handshakes_per_sec", text, csv)
}

pub(crate) fn ratio_column() -> Column {
    let (text, csv) = (Style::Fixed(2), Style::Fixed(4));
    Column::number("vs X25519", "ratio_to_x25519", text, csv)
}

/// The ratio of `m`'s handshakes/s to X25519's with the same implementation.
pub(crate) fn ratio_to_x25519(all: &[Measurement], m: &Measurement) -> Option<f64> {
    let x25519 = |b: &&Measurement| b.parameter_set.eq_ignore_ascii_case(BASELINE_GROUP);
    let mut same = all.iter().filter(|b| b.implementation == m.implementation);
    m.ratio_to(same.find(x25519))
}

pub(crate) fn seconds_of(m: &Measurement) -> f64 {
    m.trials.iter().map(|t| t.seconds).sum()
}

/// Per group and implementation, the median over rounds (n/a where the
/// implementation lacks the group); the files add the handshakes and
/// seconds in all, the JSON every round.
pub(crate) fn results_table(rows: &[Row], baseline: Option<&str>) -> Table {
    let (ms_text, ms_csv) = (Style::Fixed(3), Style::Fixed(4));
    let us = |title: &str, key: &str| {
        Column::number(title, key, Style::Fixed(0), Style::Fixed(1)).missing("n/a")
    };
    let mut columns = vec![
        Column::new("group", "group"),
        Column::new("implementation", "implementation"),
        Column::new("openssl_version", "openssl_version").file_only(),
        rate_column().missing("n/a"),
        Column::number("ms/handshake", "ms_per_handshake", ms_text, ms_csv).missing("n/a"),
        us("server µs", "server_us_per_handshake"),
        us("client µs", "client_us_per_handshake"),
        ratio_column().missing("n/a"),
    ];
    if let Some(baseline) = baseline {
        columns.push(Column::new("baseline", "baseline").file_only());
        let (text, csv) = (Style::Fixed(2), Style::Fixed(4));
        let title = format!("vs {baseline}");
        columns.push(Column::number(title, "ratio_to_baseline", text, csv).missing("n/a"));
    }
    columns.extend([
        Column::new("rounds", "rounds").right(),
        Column::new("handshakes", "handshakes").file_only(),
        Column::new("seconds", "seconds")
            .csv(Style::Fixed(3))
            .file_only(),
        Column::new("raw rounds", "raw_rounds").json_only(),
    ]);
    // The files keep the columns of earlier versions first.
    let mut file_order = vec![
        "group",
        "implementation",
        "openssl_version",
        "handshakes_per_sec",
        "ms_per_handshake",
        "ratio_to_x25519",
        "rounds",
        "handshakes",
        "seconds",
        "server_us_per_handshake",
        "client_us_per_handshake",
    ];
    if baseline.is_some() {
        file_order.extend(["baseline", "ratio_to_baseline"]);
    }
    file_order.push("raw_rounds");
    let mut table = Table::new(columns).file_order(&file_order);
    let measurements: Vec<Measurement> = rows.iter().map(|r| r.measurement.clone()).collect();
    for row in rows {
        let m = &row.measurement;
        let mut cells = vec![
            Value::text(&m.parameter_set),
            Value::text(&m.implementation),
            Value::Text(openssl_version()),
            Value::num(row.rate()),
            Value::num(row.rate().map(|r| 1e3 / r)),
            Value::num(row.side_us(1)),
            Value::num(row.side_us(0)),
            Value::num(ratio_to_x25519(&measurements, m)),
        ];
        if let Some(baseline) = baseline {
            let ratio = m.ratio_to(m.counterpart(&measurements, baseline));
            cells.extend([Value::text(baseline), Value::num(ratio)]);
        }
        let raw = m.trials.iter().zip(&row.sides[0]).zip(&row.sides[1]);
        let raw = raw.map(|((trial, client), server)| {
            let mut round = serde_json::to_value(trial).unwrap_or_default();
            round["client_us_per_handshake"] = json!(client);
            round["server_us_per_handshake"] = json!(server);
            round
        });
        cells.extend([
            Value::Int(m.trials.len() as u64),
            Value::Int(m.operations()),
            Value::Num(seconds_of(m)),
            Value::Json(raw.collect()),
        ]);
        table.push(cells);
    }
    table
}

/// Per group: handshakes, failures, seconds, handshakes/s and the ratio to
/// X25519's.
pub(crate) fn external_table(measurements: &[Measurement], failures: &[usize]) -> Table {
    let mut table = Table::new(vec![
        Column::new("group", "group"),
        Column::new("handshakes", "handshakes").right(),
        Column::new("failures", "failures").right(),
        Column::number("seconds", "seconds", Style::Fixed(1), Style::Fixed(3)),
        rate_column(),
        ratio_column(),
    ]);
    for (m, &failed) in measurements.iter().zip(failures) {
        table.push(vec![
            Value::text(&m.parameter_set),
            Value::Int(m.operations()),
            Value::Int(failed as u64),
            Value::Num(seconds_of(m)),
            Value::Num(m.ops_per_sec()),
            Value::num(ratio_to_x25519(measurements, m)),
        ]);
    }
    table
}
