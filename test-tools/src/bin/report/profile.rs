//! Section 7: how much of each operation is SHA3/SHAKE and how much is the
//! random number generator. Runs the randomized API the provider uses
//! (keygen from fresh randomness, encaps with fresh randomness on a parsed
//! key, decaps on a parsed key) with kem-core's `profiling` counters on:
//! calls of G, H, J, PRF and XOF, Keccak permutations and the cycles inside
//! them. The RNG is OpenSSL's `RAND_bytes` (the provider draws from
//! `RAND_bytes_ex`), timed around each call. The cost of reading the
//! counter (two reads per timed span) is measured and subtracted.

use std::cell::Cell;
use std::fmt::Write as _;
use std::hint::black_box;

use kem_core::profiling::{self, Profile};
use kem_core::{with_backend, BackendKind, Ciphertext, DecapsulationKey, Error, ParameterSet};
use serde_json::json;
use test_tools::kem_core_ops::kem_core_label;
use test_tools::timer;

use crate::{Args, Evidence};
use test_tools::table::{thousands, Table};

/// The operations profiled, as the provider runs them.
const OPERATIONS: [&str; 3] = ["keygen", "encaps", "decaps"];

/// Totals over the profiled calls of one operation.
#[derive(Default)]
struct Totals {
    calls: u64,
    /// Ticks of the same number of calls with the counters off.
    unprofiled_ticks: u64,
    ticks: u64,
    rng_calls: u64,
    rng_bytes: u64,
    rng_ticks: u64,
    profile: Profile,
}

/// The cost of one timed span with nothing in it: the median of many
/// back-to-back counter reads.
fn clock_overhead() -> u64 {
    let mut samples: Vec<u64> = (0..2001)
        .map(|_| {
            let start = timer::now();
            timer::now().wrapping_sub(start)
        })
        .collect();
    samples.sort_unstable();
    samples[samples.len() / 2]
}

/// Calls, bytes and counter ticks of the random number generator.
#[derive(Default)]
struct RngMeter {
    calls: Cell<u64>,
    bytes: Cell<u64>,
    ticks: Cell<u64>,
}

impl RngMeter {
    /// Fills `buf` from OpenSSL's `RAND_bytes`, metering the call.
    fn fill(&self, buf: &mut [u8]) -> Result<(), Error> {
        let start = timer::now();
        let result = openssl::rand::rand_bytes(buf).map_err(|_| Error::RandomSource);
        let ticks = timer::now().wrapping_sub(start);
        self.ticks.set(self.ticks.get() + ticks);
        self.calls.set(self.calls.get() + 1);
        self.bytes.set(self.bytes.get() + buf.len() as u64);
        result
    }

    fn reset(&self) {
        self.calls.set(0);
        self.bytes.set(0);
        self.ticks.set(0);
    }
}

/// Profiles one operation of set `P` on the calling thread's backend.
fn profile_operation<P: ParameterSet>(operation: &str, calls: usize) -> Result<Totals, String> {
    let meter = RngMeter::default();
    let mut rng = |buf: &mut [u8]| meter.fill(buf);
    let fail = |e: Error| format!("{} {operation}: {e}", P::NAME);
    let dk = DecapsulationKey::<P>::generate(&mut rng).map_err(fail)?;
    let ek = dk.encapsulation_key().clone();
    let (ct, _) = ek.encapsulate(&mut rng).map_err(fail)?;
    let ct = Ciphertext::<P>::from_bytes(ct.as_bytes()).map_err(fail)?;
    let mut run_once = || -> Result<(), Error> {
        match operation {
            "keygen" => drop(black_box(DecapsulationKey::<P>::generate(&mut rng)?)),
            "encaps" => drop(black_box(ek.encapsulate(&mut rng)?)),
            _ => drop(black_box(dk.decapsulate(black_box(&ct)))),
        }
        Ok(())
    };
    for _ in 0..10 {
        run_once().map_err(fail)?;
    }
    let mut totals = Totals::default();
    // The same calls with the counters off first: the operation's own cost.
    profiling::disable();
    for _ in 0..calls {
        let start = timer::now();
        run_once().map_err(fail)?;
        totals.unprofiled_ticks += timer::now().wrapping_sub(start);
    }
    profiling::enable(None);
    meter.reset();
    profiling::take();
    for _ in 0..calls {
        let start = timer::now();
        run_once().map_err(fail)?;
        totals.ticks += timer::now().wrapping_sub(start);
        totals.calls += 1;
    }
    totals.profile = profiling::take();
    totals.rng_calls = meter.calls.get();
    totals.rng_bytes = meter.bytes.get();
    totals.rng_ticks = meter.ticks.get();
    Ok(totals)
}

/// Runs section 7.
pub fn run(
    args: &Args,
    instances: &[BackendKind],
    counter_hz: f64,
    evidence: &mut Evidence,
) -> String {
    let unit = timer::UNIT;
    profiling::enable(Some(timer::now));
    let overhead = clock_overhead();
    let calls = args.iterations();
    let mut out = String::from("## 7. Symmetric-primitive and RNG share\n\n");
    let _ = writeln!(
        out,
        "{calls} calls per operation with kem-core's `profiling` counters on (after the \
         timings of section 4, which ran with them off). Operations as the provider runs \
         them: keygen from fresh randomness, encaps with fresh randomness on a parsed key, \
         decaps on a parsed key (one fixed key and ciphertext). *SHA3/SHAKE* is the \
         time inside Keccak-f[1600] permutations (one-way, four-way and eight-way), *RNG* the time \
         inside OpenSSL's `RAND_bytes`, each less the counter-read cost ({overhead} {unit} \
         per timed span), as a share of the operation's cost with the counters off \
         (*{unit}/op, counters off*; *counters on* shows what the counting adds). Calls \
         are per operation; a four-wide XOF or PRF counts its four streams. These are \
         means, and keygen and encaps run on fresh random inputs, where section 4 gives \
         medians over fixed inputs.\n"
    );
    let mut table = Table::titled(&[
        "instance",
        "set",
        "operation",
        &format!("{unit}/op, counters off"),
        &format!("{unit}/op, counters on"),
        "SHA3/SHAKE share",
        "RNG share",
        "G",
        "H",
        "J",
        "PRF",
        "XOF",
        "Keccak-f (1-way / 4-way / 8-way)",
        "RNG calls (bytes)",
    ]);
    for &backend in instances {
        let label = kem_core_label(backend);
        for set in &args.sets {
            for operation in OPERATIONS {
                eprintln!(
                    "  [profile {label} {} {operation}] {calls} calls",
                    set.name()
                );
                let result = with_backend(
                    backend,
                    || test_tools::with_set!(*set, P => profile_operation::<P>(operation, calls)),
                )
                .map_err(|e| e.to_string())
                .and_then(|r| r);
                let totals = match result {
                    Ok(totals) => totals,
                    Err(e) => {
                        table.push_text([
                            format!("`{label}`"),
                            set.name().to_owned(),
                            operation.to_owned(),
                            format!("**failed: {e}**"),
                        ]);
                        continue;
                    }
                };
                let p = &totals.profile;
                let permutations = p.permutations + p.permutations_x4 + p.permutations_x8;
                // Shares are of the operation's own cost: the same calls
                // timed with the counters off (the profiled total also
                // carries the nested spans' counter reads and bookkeeping).
                let net_total = totals
                    .unprofiled_ticks
                    .saturating_sub(overhead * totals.calls) as f64;
                let profiled_total = totals.ticks.saturating_sub(overhead * totals.calls) as f64;
                let keccak = p.keccak_ticks.saturating_sub(overhead * permutations) as f64;
                let rng = totals.rng_ticks.saturating_sub(overhead * totals.rng_calls) as f64;
                let n = totals.calls.max(1) as f64;
                let per = |v: u64| {
                    let x = v as f64 / n;
                    if x.fract() == 0.0 {
                        format!("{x:.0}")
                    } else {
                        format!("{x:.2}")
                    }
                };
                let share = |part: f64| {
                    if net_total > 0.0 {
                        100.0 * part / net_total
                    } else {
                        f64::NAN
                    }
                };
                table.push_text([
                    format!("`{label}`"),
                    set.name().to_owned(),
                    operation.to_owned(),
                    thousands(net_total / n),
                    thousands(profiled_total / n),
                    format!("{:.1}%", share(keccak)),
                    format!("{:.1}%", share(rng)),
                    per(p.g),
                    per(p.h),
                    per(p.j),
                    per(p.prf),
                    per(p.xof),
                    format!(
                        "{} / {} / {}",
                        per(p.permutations),
                        per(p.permutations_x4),
                        per(p.permutations_x8)
                    ),
                    format!("{} ({})", per(totals.rng_calls), per(totals.rng_bytes)),
                ]);
                evidence.push(
                    "symmetric-share",
                    format!("profile/{}/{label}/{operation}", set.name()),
                    json!({
                        "instance": label,
                        "parameter_set": set.name(),
                        "operation": operation,
                        "calls": totals.calls,
                        "unit": unit,
                        "counter_hz": counter_hz,
                        "counter_read_overhead": overhead,
                        "total_ticks": totals.ticks,
                        "total_ticks_counters_off": totals.unprofiled_ticks,
                        "keccak_ticks": p.keccak_ticks,
                        "rng_ticks": totals.rng_ticks,
                        "keccak_share_percent": share(keccak),
                        "rng_share_percent": share(rng),
                        "primitive_calls": {
                            "G": p.g, "H": p.h, "J": p.j, "PRF": p.prf, "XOF": p.xof,
                        },
                        "keccak_permutations": p.permutations,
                        "keccak_permutations_x4": p.permutations_x4,
                        "keccak_permutations_x8": p.permutations_x8,
                        "rng_calls": totals.rng_calls,
                        "rng_bytes": totals.rng_bytes,
                    }),
                );
            }
        }
    }
    profiling::disable();
    out.push_str(&table.markdown());
    out
}
