//! `--connect`: our provider's client against an external server.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use openssl::ssl::{Ssl, SslContext};
use serde_json::json;
use test_tools::cli;
use test_tools::evp_harness::Library;
use test_tools::measure::{Measurement, Operation, Trial};
use tls_groups::Group;

use crate::args::Args;
use crate::groups::{check_group, check_key_exchange, known_group};
use crate::providers::{MLKEM, OURS};
use crate::table::external_table;
use crate::tls::TlsContext;

/// One connection: TCP, a full TLS 1.3 handshake offering only `group`, a
/// check of the negotiated group and (a post-quantum one) that our provider
/// served the key exchange, and `GET /` answered with 200.
pub(crate) fn external_handshake(
    address: &str,
    context: &SslContext,
    group: &Group,
) -> Result<(), String> {
    let tcp = TcpStream::connect(address).map_err(|e| format!("connect: {e}"))?;
    let _ = tcp.set_nodelay(true);
    let ssl = Ssl::new(context).map_err(|e| format!("SSL_new: {e}"))?;
    let mut tls = ssl.connect(tcp).map_err(|e| format!("handshake: {e}"))?;
    check_group(tls.ssl(), group)?;
    if group.post_quantum() {
        check_key_exchange(tls.ssl(), false, MLKEM)?;
    }
    let request = b"GET / HTTP/1.0\r\nHost: localhost\r\n\r\n";
    tls.write_all(request).map_err(|e| format!("write: {e}"))?;
    let mut response = Vec::new();
    tls.read_to_end(&mut response)
        .map_err(|e| format!("read: {e}"))?;
    match response.starts_with(b"HTTP/1.1 200 ") {
        true => Ok(()),
        false => {
            let start = String::from_utf8_lossy(&response[..response.len().min(40)]);
            Err(format!("response {start:?}"))
        }
    }
}

/// Handshakes with `--connect` for one group, `--in-flight` at a time,
/// until the budget is spent: the handshakes, the failures, the first one.
pub(crate) fn external_round(
    args: &Args,
    address: &str,
    context: &SslContext,
    group: &Group,
) -> Tally {
    let (started, start) = (AtomicUsize::new(0), Instant::now());
    let client = || {
        let mut tally: Tally = (0, 0, None);
        while args.allows(started.fetch_add(1, Ordering::Relaxed), start) {
            tally.0 += 1;
            if let Err(e) = external_handshake(address, context, group) {
                tally.1 += 1;
                tally.2.get_or_insert(e);
            }
        }
        tally
    };
    std::thread::scope(|scope| {
        let threads: Vec<_> = (0..args.in_flight).map(|_| scope.spawn(client)).collect();
        // Joined one by one: join() waits for the thread to end, after
        // OpenSSL's thread-exit handlers (its per-thread state in our
        // library context); the scope's own wait does not, and the library
        // context freed right after raced them (a crash at exit, once in
        // a few runs).
        let mut sum: Tally = (0, 0, None);
        for thread in threads {
            let (handshakes, failures, first) = thread.join().expect("a client thread panicked");
            sum = (sum.0 + handshakes, sum.1 + failures, sum.2.or(first));
        }
        sum
    })
}

/// Handshakes, failures and the first failure.
pub(crate) type Tally = (usize, usize, Option<String>);

/// `--connect`: our provider's client against an external server.
pub(crate) fn run_external(args: &Args, address: &str) -> Result<(), String> {
    cli::require_provider(&args.provider_dir)?;
    let ours = Library::load(Some(&args.provider_dir), "mlkem")?;
    let budget = args.budget();
    println!(
        "tls-bench: client of {address}, {}, providers mlkem ({}) + default; {budget} per group, \
         {} connections in flight; full TLS 1.3 handshakes (no resumption) + GET /",
        openssl::version::version(),
        args.provider_dir.display(),
        args.in_flight
    );
    let (mut measurements, mut failed, mut failures) = (Vec::new(), Vec::new(), Vec::new());
    for group in &args.groups() {
        let context = TlsContext::new(&ours, Some(OURS), group, None)?;
        let start = Instant::now();
        let known = known_group(group)?;
        let (n, failures_here, first) = external_round(args, address, &context.0, known);
        let trial = Trial::timed(n as u64, start.elapsed().as_secs_f64(), None);
        eprintln!(
            "[{group}] {n} handshakes, {failures_here} failures in {:.1} s",
            trial.seconds
        );
        if let Some(first) = first {
            failures.push(format!("{group}: {failures_here} failed (first: {first})"));
        }
        let trials = vec![trial];
        measurements.push(Measurement {
            trials,
            ..Measurement::new("ours", group, Operation::Handshake)
        });
        failed.push(failures_here);
    }
    let table = external_table(&measurements, &failed);
    print!("\n{}", table.render());
    let settings = json!({
        "tool": "tls-bench",
        "connect": address,
        "in_flight": args.in_flight,
        "openssl_version": openssl::version::version(),
        "budget": budget,
    });
    args.files.write(&table, settings)?;
    match failures.is_empty() {
        true => Ok(()),
        false => Err(failures.join("; ")),
    }
}
