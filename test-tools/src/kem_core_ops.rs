//! kem-core's operations as the benchmark tools time them: fixed inputs, a
//! consistency check of every backend's outputs, and the five timed
//! operations (keygen from a seed, encaps and decaps from serialized
//! inputs, and encaps and decaps with cached expanded keys). `bench` and
//! `report` both measure with [`measure_kem_core`], so their numbers
//! measure the same thing the same way.

use std::hint::black_box;

use kem_core::{
    with_backend, BackendKind, Ciphertext, DecapsulationKey, EncapsulationKey, ParameterSet,
};

use crate::measure::{measure_trials, Bench, Config, Measurement, Operation};
use crate::table::{Column, Style, Table, Value};
use crate::timer;

/// Runs `$body` with `$p` bound to the kem-core parameter-set type of
/// `$set` (a [`KatParams`](crate::nist_kat::KatParams)).
#[macro_export]
macro_rules! with_set {
    ($set:expr, $p:ident => $body:expr) => {
        match $set {
            $crate::nist_kat::KatParams::MlKem512 => {
                type $p = kem_core::MlKem512;
                $body
            }
            $crate::nist_kat::KatParams::MlKem768 => {
                type $p = kem_core::MlKem768;
                $body
            }
            $crate::nist_kat::KatParams::MlKem1024 => {
                type $p = kem_core::MlKem1024;
                $body
            }
        }
    };
}

/// Fixed key-generation seed d.
pub const D: [u8; 32] = pattern(0x00);
/// Fixed implicit-rejection seed z.
pub const Z: [u8; 32] = pattern(0x40);
/// Fixed encapsulation randomness m.
pub const M: [u8; 32] = pattern(0x80);

const fn pattern(start: u8) -> [u8; 32] {
    let mut out = [0u8; 32];
    let mut i = 0;
    while i < 32 {
        out[i] = start.wrapping_add(i as u8);
        i += 1;
    }
    out
}

/// The implementation label of a backend in tables, e.g. `kem-core/avx2`.
pub fn kem_core_label(backend: BackendKind) -> String {
    format!("kem-core/{}", backend.name())
}

/// The fixed 64-byte seed d ‖ z.
pub fn seed() -> [u8; 64] {
    core::array::from_fn(|i| if i < 32 { D[i] } else { Z[i - 32] })
}

/// The outputs of one deterministic KeyGen, Encaps and Decaps on the fixed
/// inputs, serialized in the FIPS 203 formats.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KnownAnswer {
    /// Encapsulation key ek.
    pub ek: Vec<u8>,
    /// Expanded decapsulation key dk_PKE ‖ ek ‖ H(ek) ‖ z.
    pub dk: Vec<u8>,
    /// Ciphertext from Encaps(ek, m).
    pub ct: Vec<u8>,
    /// Shared secret from Encaps.
    pub ss_encaps: [u8; 32],
    /// Shared secret from Decaps(dk, ct), parsing dk and ct from bytes.
    pub ss_decaps: [u8; 32],
}

impl KnownAnswer {
    /// Names of the fields in which `self` and `other` differ.
    pub fn differences(&self, other: &KnownAnswer) -> Vec<&'static str> {
        [
            ("ek", self.ek == other.ek),
            ("dk", self.dk == other.dk),
            ("ciphertext", self.ct == other.ct),
            ("shared secret (encaps)", self.ss_encaps == other.ss_encaps),
            ("shared secret (decaps)", self.ss_decaps == other.ss_decaps),
        ]
        .into_iter()
        .filter_map(|(field, same)| (!same).then_some(field))
        .collect()
    }
}

/// Runs kem-core on the fixed inputs with the calling thread's backend and
/// checks them: parsing round-trips, encaps from bytes and from the cached
/// key agree, decaps (from bytes and cached) recovers the secret, and a
/// modified ciphertext is implicitly rejected.
pub fn check_kem_core<P: ParameterSet>() -> Result<KnownAnswer, String> {
    let fail = |what: String| format!("kem-core {}: {what}", P::NAME);
    let ensure = |ok: bool, what: &str| ok.then_some(()).ok_or_else(|| fail(what.to_owned()));
    let dk = DecapsulationKey::<P>::from_seed_parts(&D, &Z);
    let ek = dk.encapsulation_key();
    let (ek_bytes, dk_bytes) = (ek.as_bytes().to_vec(), dk.to_bytes().as_ref().to_vec());
    let lengths = (ek_bytes.len(), dk_bytes.len()) == (P::EK_LEN, P::DK_LEN);
    ensure(lengths, "wrong key lengths")?;
    let parsed_ek = EncapsulationKey::<P>::from_bytes(&ek_bytes)
        .map_err(|e| fail(format!("ek does not parse: {e}")))?;
    let parsed_dk = DecapsulationKey::<P>::from_bytes(&dk_bytes)
        .map_err(|e| fail(format!("dk does not parse: {e}")))?;
    let round_trip = parsed_ek == *ek && parsed_dk.to_bytes().as_ref() == dk_bytes.as_slice();
    ensure(round_trip, "keys do not round-trip through bytes")?;
    let (ct, ss) = parsed_ek.encapsulate_deterministic(&M);
    let (ct_cached, ss_cached) = ek.encapsulate_deterministic(&M);
    let same = ct == ct_cached && ss == ss_cached;
    ensure(same, "encaps from bytes and from the cached key differ")?;
    let ct_parsed = Ciphertext::<P>::from_bytes(ct.as_bytes())
        .map_err(|e| fail(format!("ct does not parse: {e}")))?;
    let once = DecapsulationKey::<P>::decapsulate_bytes(&dk_bytes, &ct_parsed)
        .map_err(|e| fail(format!("dk does not decapsulate from bytes: {e}")))?;
    let recovered =
        parsed_dk.decapsulate(&ct_parsed) == ss && dk.decapsulate(&ct) == ss && once == ss;
    ensure(recovered, "decaps does not recover the encapsulated secret")?;
    let mut bad = ct.as_bytes().to_vec();
    bad[0] ^= 1;
    let bad = Ciphertext::<P>::from_bytes(&bad).map_err(|e| e.to_string())?;
    ensure(
        dk.decapsulate(&bad) != ss,
        "a modified ciphertext was not rejected",
    )?;
    Ok(KnownAnswer {
        ek: ek_bytes,
        dk: dk_bytes,
        ct: ct.as_bytes().to_vec(),
        ss_encaps: *ss.as_bytes(),
        // `recovered` checked that decaps from bytes (and cached) gives `ss`.
        ss_decaps: *ss.as_bytes(),
    })
}

/// kem-core's five operations with the given backend, ready to be timed.
pub fn kem_core_benches<P: ParameterSet>(backend: BackendKind) -> Vec<Bench<'static>> {
    let label = kem_core_label(backend);
    let dk = DecapsulationKey::<P>::from_seed_parts(&D, &Z);
    let ek = dk.encapsulation_key().clone();
    let (ek_bytes, dk_bytes) = (ek.as_bytes().to_vec(), dk.to_bytes().as_ref().to_vec());
    let ct = ek.encapsulate_deterministic(&M).0;
    let ct_bytes = ct.as_bytes().to_vec();
    // Decaps from bytes is the one-shot form (as liboqs's is), which
    // absorbs J(z ‖ c) while it parses the key.
    let from_bytes = move || {
        let ct = Ciphertext::<P>::from_bytes(black_box(&ct_bytes)).expect("valid ct");
        DecapsulationKey::<P>::decapsulate_bytes(black_box(&dk_bytes), &ct).expect("valid dk")
    };
    vec![
        on(&label, Operation::Keygen, backend, || {
            DecapsulationKey::<P>::from_seed_parts(black_box(&D), black_box(&Z))
        }),
        on(&label, Operation::Encaps, backend, move || {
            let ek = EncapsulationKey::<P>::from_bytes(black_box(&ek_bytes)).expect("valid ek");
            ek.encapsulate_deterministic(black_box(&M))
        }),
        on(&label, Operation::Decaps, backend, from_bytes),
        on(&label, Operation::EncapsCached, backend, move || {
            black_box(&ek).encapsulate_deterministic(black_box(&M))
        }),
        on(&label, Operation::DecapsCached, backend, move || {
            black_box(&dk).decapsulate(black_box(&ct))
        }),
    ]
}

/// A bench of `f` that selects `backend` for the calling thread on each
/// call (the benches of different backends run interleaved).
fn on<R: 'static>(
    label: &str,
    operation: Operation,
    backend: BackendKind,
    mut f: impl FnMut() -> R + 'static,
) -> Bench<'static> {
    Bench::new(label, operation, move || {
        with_backend(backend, &mut f).expect("available backend")
    })
}

/// Times kem-core's five operations on each of `backends`, and the `extra`
/// benches (peers), on set `P`: `trials` trials of `config.iterations`
/// calls each, in `rounds` interleaved chunks per trial (see
/// [`measure_trials`]).
pub fn measure_kem_core<P: ParameterSet>(
    backends: &[BackendKind],
    extra: Vec<Bench<'static>>,
    config: Config,
    (rounds, trials): (usize, usize),
    progress: impl FnMut(usize),
) -> Vec<Measurement> {
    let mut benches: Vec<Bench<'static>> = backends
        .iter()
        .flat_map(|&b| kem_core_benches::<P>(b))
        .collect();
    benches.extend(extra);
    measure_trials(P::NAME, config, &mut benches, rounds, trials, progress)
}

/// The keys of the columns of [`measurement_table`] that `bench` shows in
/// its text tables, and with `report` those of the report's Markdown.
pub fn shown_columns(report: bool) -> Vec<String> {
    let unit = timer::UNIT;
    let last: &[&str] = match report {
        true => &["mean_time_us", "ops_per_sec", "n"],
        false => &["ops_per_sec", "ratio_vs_kem_core"],
    };
    let first = ["implementation".into(), "operation".into()];
    let ticks = [format!("median_{unit}"), format!("mean_{unit}")];
    first
        .into_iter()
        .chain(ticks)
        .chain(last.iter().map(|k| k.to_string()))
        .collect()
}

/// The measurements of one parameter set's in-process operations, the
/// columns `bench` prints and writes (and `report` writes as
/// `performance.csv`): median, mean and fastest call in [`timer::UNIT`],
/// ops/s, the median's ratio to the `reference` implementation's for the
/// same operation, the number of calls; in text also the mean time at
/// `counter_hz` and `trials × iterations`, and in JSON every trial. Rows in
/// the order of `measurements`, or `by_operation` grouped by operation with
/// a blank line between groups when several implementations were measured.
pub fn measurement_table(
    measurements: &[Measurement],
    reference: &str,
    counter_hz: f64,
    by_operation: bool,
) -> Table {
    let unit = timer::UNIT;
    let mut table = Table::new(vec![
        Column::new("parameter_set", "parameter_set").file_only(),
        Column::new("implementation", "implementation"),
        Column::new("operation", "operation"),
        Column::new(format!("median {unit}"), format!("median_{unit}"))
            .right()
            .text(Style::Thousands),
        Column::number(
            format!("mean {unit}"),
            format!("mean_{unit}"),
            Style::Thousands,
            Style::Fixed(1),
        ),
        Column::new("min", format!("min_{unit}")).file_only(),
        Column::new("mean time (µs)", "mean_time_us")
            .right()
            .text(Style::Fixed(2))
            .text_only(),
        Column::number("ops/s", "ops_per_sec", Style::Thousands, Style::Fixed(1)),
        Column::number(
            "ratio vs kem-core",
            "ratio_vs_kem_core",
            Style::Fixed(2),
            Style::Fixed(4),
        )
        .missing("-"),
        Column::new("iterations", "iterations").file_only(),
        Column::new("n", "n").right().text_only(),
        Column::new("raw trials", "raw_trials").json_only(),
    ]);
    // The reference's median for the same operation on the same set.
    let reference_median = |row: &Measurement| {
        let median = row.counterpart(measurements, reference)?.median_ticks();
        median.filter(|&t| t > 0)
    };
    let grouped = by_operation && measurements.iter().any(|m| m.implementation != reference);
    let mut rows: Vec<&Measurement> = measurements.iter().collect();
    if by_operation {
        rows.sort_by_key(|m| m.operation);
    }
    for (i, m) in rows.iter().enumerate() {
        if grouped && i > 0 && rows[i - 1].operation != m.operation {
            table.blank();
        }
        let (ticks, mean, calls) = (m.median_ticks(), m.mean_ticks(), m.operations());
        let ratio = ticks.zip(reference_median(m));
        let per_trial = calls / m.trials.len().max(1) as u64;
        table.push(vec![
            Value::text(&m.parameter_set),
            Value::text(&m.implementation),
            Value::text(m.operation.label()),
            ticks.map_or(Value::Empty, Value::Int),
            Value::num(mean),
            m.min_ticks().map_or(Value::Empty, Value::Int),
            Value::num(mean.map(|t| t / counter_hz * 1e6)),
            Value::Num(m.ops_per_sec()),
            Value::num(ratio.map(|(t, r)| t as f64 / r as f64)),
            Value::Int(calls),
            Value::text(format!("{} × {per_trial}", m.trials.len())),
            Value::Json(serde_json::to_value(&m.trials).unwrap_or_default()),
        ]);
    }
    table
}
