//! Section 7: how much of each operation is SHA3/SHAKE and how much is the
//! random number generator, by kem-core's `profiling` counters (calls of G,
//! H, J, PRF and XOF, Keccak permutations and the ticks inside them) and by
//! timing each OpenSSL `RAND_priv_bytes` call, on the randomized API and the
//! DRBG the provider uses. The cost of reading the counter is measured and
//! subtracted.

use std::cell::Cell;
use std::fmt::Write as _;
use std::hint::black_box;

use kem_core::profiling::{self, Profile};
use kem_core::{BackendKind, Ciphertext, DecapsulationKey, Error, ParameterSet};
use serde_json::json;
use test_tools::table::thousands;
use test_tools::timer;

use crate::{on_backend, operation_table, Args, Evidence};

/// Totals over the profiled calls of one operation.
#[derive(Default)]
struct Totals {
    calls: u64,
    /// Ticks of the same number of calls with the counters off.
    unprofiled_ticks: u64,
    ticks: u64,
    /// Calls, bytes and ticks of the random number generator.
    rng: [Cell<u64>; 3],
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

/// Profiles one operation of set `P` on the calling thread's backend.
fn profile_operation<P: ParameterSet>(operation: &str, calls: usize) -> Result<Totals, String> {
    let mut totals = Totals::default();
    let rng_meter = &totals.rng;
    // OpenSSL's `RAND_priv_bytes` (the provider's DRBG), metered.
    let mut rng = |buf: &mut [u8]| {
        let start = timer::now();
        let result = openssl::rand::rand_priv_bytes(buf).map_err(|_| Error::RandomSource);
        let add = [1, buf.len() as u64, timer::now().wrapping_sub(start)];
        rng_meter
            .iter()
            .zip(add)
            .for_each(|(c, n)| c.set(c.get() + n));
        result
    };
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
    let mut timed = |calls: usize| -> Result<u64, String> {
        let mut ticks = 0;
        for _ in 0..calls {
            let start = timer::now();
            run_once().map_err(fail)?;
            ticks += timer::now().wrapping_sub(start);
        }
        Ok(ticks)
    };
    timed(10)?;
    // The same calls with the counters off first: the operation's own cost.
    profiling::disable();
    totals.unprofiled_ticks = timed(calls)?;
    profiling::enable(None);
    rng_meter.iter().for_each(|c| c.set(0));
    profiling::take();
    totals.ticks = timed(calls)?;
    totals.calls = calls as u64;
    totals.profile = profiling::take();
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
    let calls = args.iterations;
    let mut out = String::from("## 7. Symmetric-primitive and RNG share\n\n");
    let _ = writeln!(
        out,
        "{calls} calls per operation with kem-core's `profiling` counters on (after the \
         timings of section 4, which ran with them off). Operations as the provider runs \
         them: keygen from fresh randomness, encaps with fresh randomness on a parsed key, \
         decaps on a parsed key (one fixed key and ciphertext). *SHA3/SHAKE* is the time \
         inside Keccak-f[1600] permutations (one-way, four-way and eight-way), *RNG* the time \
         inside OpenSSL's `RAND_priv_bytes`, each less the counter-read cost ({overhead} {unit} \
         per timed span), as a share of the operation's cost with the counters off \
         (*{unit}/op, counters off*; *counters on* shows what the counting adds). Calls \
         are per operation; a four-wide XOF or PRF counts its four streams. These are \
         means, and keygen and encaps run on fresh random inputs, where section 4 gives \
         medians over fixed inputs.\n"
    );
    let titles = [
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
    ];
    let doing = format!("{calls} calls");
    let table = operation_table(
        args,
        instances,
        &titles,
        ("profile", &doing),
        |backend, label, set, operation| {
            let profiled =
                || test_tools::with_set!(set, P => profile_operation::<P>(operation, calls));
            let totals = on_backend(backend, profiled).map_err(|e| format!("failed: {e}"))?;
            let p = &totals.profile;
            let [rng_calls, rng_bytes, rng_ticks] = totals.rng.each_ref().map(Cell::get);
            let permutations = p.permutations + p.permutations_x4 + p.permutations_x8;
            // Shares are of the operation's own cost: the same calls timed
            // with the counters off (the profiled total also carries the
            // nested spans' counter reads and bookkeeping).
            let net = |ticks: u64, spans: u64| ticks.saturating_sub(overhead * spans) as f64;
            let net_total = net(totals.unprofiled_ticks, totals.calls);
            let share = |part: f64| match net_total > 0.0 {
                true => 100.0 * part / net_total,
                false => f64::NAN,
            };
            let keccak_share = share(net(p.keccak_ticks, permutations));
            let rng_share = share(net(rng_ticks, rng_calls));
            let n = totals.calls.max(1) as f64;
            let per = |v: u64| match v as f64 / n {
                x if x.fract() == 0.0 => format!("{x:.0}"),
                x => format!("{x:.2}"),
            };
            let keccak = [p.permutations, p.permutations_x4, p.permutations_x8].map(per);
            let mut cells = vec![
                thousands(net_total / n),
                thousands(net(totals.ticks, totals.calls) / n),
                format!("{keccak_share:.1}%"),
                format!("{rng_share:.1}%"),
            ];
            cells.extend([p.g, p.h, p.j, p.prf, p.xof].map(per));
            cells.push(keccak.join(" / "));
            cells.push(format!("{} ({})", per(rng_calls), per(rng_bytes)));
            let data = json!({
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
                "rng_ticks": rng_ticks,
                "keccak_share_percent": keccak_share,
                "rng_share_percent": rng_share,
                "primitive_calls": { "G": p.g, "H": p.h, "J": p.j, "PRF": p.prf, "XOF": p.xof },
                "keccak_permutations": p.permutations,
                "keccak_permutations_x4": p.permutations_x4,
                "keccak_permutations_x8": p.permutations_x8,
                "rng_calls": rng_calls,
                "rng_bytes": rng_bytes,
            });
            evidence.push(
                "symmetric-share",
                format!("profile/{}/{label}/{operation}", set.name()),
                data,
            );
            Ok(cells)
        },
    );
    profiling::disable();
    out.push_str(&table.markdown());
    out
}
