//! `tls-bench`: full TLS 1.3 handshakes per second per group and
//! implementation, in process (see [`Args`]), or with `--connect` as the
//! client of a real server (`scripts/nginx-soak.sh` runs it against nginx).

mod args;
mod external;
mod ffi;
mod groups;
mod providers;
mod table;
mod tls;
mod wire;

use std::ffi::CStr;
use std::time::{Duration, Instant};

use clap::Parser;
use serde_json::json;
use test_tools::cli::{self, Progress};
use test_tools::measure::{Measurement, Operation, Trial};

use args::Args;
use external::run_external;
use providers::{load_implementations, Lacking};
use table::{results_table, Row};
use tls::self_signed;

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    if let Err(e) = args.check() {
        cli::usage_error::<Args>(e);
    }
    let run = match &args.connect {
        Some(address) => run_external(&args, address),
        None => run_in_process(&args),
    };
    cli::exit("tls-bench", run)
}

/// The in-process benchmark: every (group, implementation), checked with
/// one handshake, then measured round by round.
pub(crate) fn run_in_process(args: &Args) -> Result<(), String> {
    let (mut notes, mut skipped, mut lacking) = (Vec::new(), Vec::new(), Vec::new());
    let implementations = load_implementations(args, &mut notes, &mut skipped)?;
    let identity = self_signed().map_err(|e| format!("certificate: {e}"))?;
    let (mut contexts, mut rows) = (Vec::new(), Vec::new());
    for group in &args.groups() {
        for implementation in &implementations {
            let name = &implementation.name;
            let row = || Row {
                measurement: Measurement::new(name, group, Operation::Handshake),
                sides: [Vec::new(), Vec::new()],
            };
            let run = &implementation.run;
            let spelled = run.spelling.of(group);
            let spelled = match spelled == group {
                true => String::new(),
                false => format!(" (spelled {spelled})"),
            };
            if run.lacking == Lacking::NotAvailable && !run.has_group(group) {
                lacking.push(format!("{name} has no group {group}{spelled}"));
                rows.push(row());
                contexts.push(None);
                continue;
            }
            let made = match run.contexts(group, &identity) {
                Ok(made) => made,
                Err(e) if run.lacking == Lacking::LeftOut => {
                    notes.push(format!("{name}: skipped {group}: {e}"));
                    continue;
                }
                Err(e) => return Err(format!("{name}: {e}")),
            };
            let served = made
                .served_by()
                .map_err(|e| format!("{name}: first handshake: {group}: {e}"))?;
            match made.provider.map(CStr::to_string_lossy) {
                // Where libssl takes the group from another provider (on
                // OpenSSL 3.5+, the default provider has the ML-KEM groups),
                // the row would measure that provider under this one's name.
                Some(wanted) if served != wanted => {
                    let why = format!(
                        "{name} has no group {group}{spelled}: provider {served} served its key \
                         exchange, not {wanted}"
                    );
                    match run.lacking {
                        Lacking::Fails => return Err(why),
                        Lacking::LeftOut => notes.push(format!("skipped: {why}")),
                        Lacking::NotAvailable => {
                            lacking.push(why);
                            rows.push(row());
                            contexts.push(None);
                        }
                    }
                    continue;
                }
                Some(_) => {}
                None => notes.push(format!(
                    "{name}: {group} is classical: provider {served} serves its key exchange"
                )),
            }
            contexts.push(Some(made));
            rows.push(row());
        }
    }
    if let Some(baseline) = args
        .baseline
        .as_deref()
        .filter(|b| skipped.iter().any(|s| s == b))
    {
        notes.push(format!(
            "--baseline {baseline} was skipped: its ratios are n/a"
        ));
    }

    let (budget, rounds) = (args.budget(), args.rounds);
    println!(
        "tls-bench: {}; {rounds} round(s) x {budget} per group and implementation; full TLS 1.3 \
         handshakes (no resumption), P-256 ECDSA server certificate, in-memory BIOs, \
         one thread; every post-quantum handshake's key exchange checked to be the \
         implementation's provider's",
        openssl::version::version(),
    );
    implementations
        .iter()
        .for_each(|i| println!("  {}", i.run.description));
    notes.iter().for_each(|note| println!("note: {note}"));
    lacking.iter().for_each(|l| println!("n/a: {l}"));

    let progress = Progress::stderr();
    for round in 1..=rounds {
        for (made, row) in contexts.iter().zip(&mut rows) {
            let Some(made) = made else { continue };
            let m = &mut row.measurement;
            let (name, group) = (&m.implementation, &m.parameter_set);
            let (start, mut spent) = (Instant::now(), [Duration::ZERO; 2]);
            let mut handshakes = 0;
            while args.allows(handshakes, start) {
                made.handshake(&mut spent)
                    .map_err(|e| format!("{name} round {round}: {group}: {e}"))?;
                handshakes += 1;
            }
            let trial = Trial::timed(handshakes as u64, start.elapsed().as_secs_f64(), None);
            progress.update(&format!(
                "[{name} {group}] round {round}/{rounds}: {} handshakes in {:.2} s ({:.0}/s)",
                trial.operations, trial.seconds, trial.ops_per_sec
            ));
            m.trials.push(trial);
            for (side, spent) in row.sides.iter_mut().zip(spent) {
                side.push(spent.as_secs_f64() * 1e6 / handshakes as f64);
            }
        }
    }
    progress.finish();

    let table = results_table(&rows, args.baseline.as_deref());
    print!("\n{}", table.render());
    let settings = json!({
        "tool": "tls-bench",
        "openssl_version": openssl::version::version(),
        "budget": budget,
        "rounds": rounds,
        "implementations": implementations.iter().map(|i| &i.run.description).collect::<Vec<_>>(),
        "baseline": args.baseline,
        "skipped": skipped,
        "notes": notes,
        "not_available": lacking,
    });
    args.files.write(&table, settings)?;
    match lacking.is_empty() {
        true => Ok(()),
        false => Err(lacking.join("; ")),
    }
}
