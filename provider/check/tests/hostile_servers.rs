//! Remote mode against hostile servers on loopback: each run must end
//! within its deadline (one `--timeout` per attempt; the whole run within
//! 8 × `--timeout`), with exit 2 and a one-line error that says what
//! happened. The servers trickle, talk without end, or announce records
//! larger than TLS allows.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Output};
use std::thread;
use std::time::{Duration, Instant};

mod common;
use common::{Scratch, CHECK};

/// The documented bound of a run: the name lookup and the seven attempts
/// get `--timeout` each.
const ATTEMPTS_AND_LOOKUP: u32 = 8;

/// Room for the process to start, load the provider and exit on a loaded
/// machine (tests run in parallel).
const SLACK: Duration = Duration::from_secs(3);

/// A server on 127.0.0.1 that runs `serve` on each connection, in its own
/// thread; the listener is bound before its port is handed out.
fn server(serve: fn(TcpStream)) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            thread::spawn(move || serve(stream));
        }
    });
    port
}

/// Writes `bytes` again and again until the client goes away (or a minute
/// passes), `pause` apart.
fn repeat(mut stream: TcpStream, bytes: &[u8], pause: Duration) {
    let until = Instant::now() + Duration::from_secs(60);
    while Instant::now() < until && stream.write_all(bytes).is_ok() {
        thread::sleep(pause);
    }
}

/// The check against 127.0.0.1:`port`, and how long it took.
fn check(name: &str, port: u16, timeout: u64, extra: &[&str]) -> (Output, Duration) {
    // This workspace's provider as mlkem.so and an empty configuration:
    // the check loads the provider itself from OPENSSL_MODULES, as on a
    // machine where it is installed but not enabled.
    let modules = Scratch::new(&format!("hostile-{name}"));
    let empty = modules.write("empty.cnf", "");
    let started = Instant::now();
    let out = Command::new(CHECK)
        .args(["--timeout", &timeout.to_string()])
        .args(extra)
        .arg(format!("127.0.0.1:{port}"))
        .env("OPENSSL_CONF", &empty)
        .env("OPENSSL_MODULES", &modules.dir)
        .output()
        .unwrap();
    let took = started.elapsed();
    eprintln!(
        "{name}: {took:.2?} (--timeout {timeout}): {}",
        String::from_utf8_lossy(&out.stderr).trim_end()
    );
    (out, took)
}

/// Exit 2, nothing on stdout, one line on stderr that contains `wanted`,
/// within one attempt's budget (each hostile server fails the first
/// attempt) and the documented bound of a run.
fn assert_fails(out: &Output, took: Duration, timeout: u64, wanted: &str) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stdout}{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert_eq!(stderr.lines().count(), 1, "not one line: {stderr}");
    assert!(
        stderr.starts_with("mlkem-provider-check: 127.0.0.1:"),
        "{stderr}"
    );
    assert!(stderr.contains(wanted), "no '{wanted}' in: {stderr}");
    let budget = Duration::from_secs(timeout);
    assert!(
        took < budget + SLACK,
        "took {took:?} with --timeout {timeout}: {stderr}"
    );
    assert!(took < budget * ATTEMPTS_AND_LOOKUP);
}

/// The reporter's case: a record header announcing 16 KiB, then one byte
/// every 2 s. Each read gets a byte within the socket time-out of 3 s;
/// only the attempt's deadline ends it.
#[test]
fn a_trickling_server() {
    let port = server(|mut stream| {
        if stream.write_all(&[22, 3, 3, 0x40, 0x00]).is_ok() {
            repeat(stream, &[2], Duration::from_secs(2));
        }
    });
    let (out, took) = check("trickle", port, 3, &[]);
    assert_fails(
        &out,
        took,
        3,
        "did not finish its answer to the TLS ClientHello in time",
    );
    assert!(took >= Duration::from_secs(3), "{took:?}");
}

/// A server that accepts and says nothing.
#[test]
fn a_silent_server() {
    let port = server(|_stream| thread::sleep(Duration::from_secs(30)));
    let (out, took) = check("silent", port, 2, &[]);
    assert_fails(
        &out,
        took,
        2,
        "accepted the connection but did not answer the TLS ClientHello in time",
    );
}

/// A record header announcing 65535 bytes (TLS allows 2^14 + 2048), then a
/// flood: refused at the header.
#[test]
fn an_oversized_record() {
    let port = server(|mut stream| {
        if stream.write_all(&[22, 3, 3, 0xff, 0xff]).is_ok() {
            repeat(stream, &[0; 65536], Duration::ZERO);
        }
    });
    let (out, took) = check("oversized-record", port, 5, &[]);
    assert_fails(
        &out,
        took,
        5,
        "does not speak TLS: it announced a record of 65535 bytes",
    );
    assert!(
        took < Duration::from_secs(4),
        "not refused at once: {took:?}"
    );
}

/// A ServerHello announcing 16 MiB in full-size records, sent without end.
#[test]
fn a_16_mib_server_hello() {
    let port = server(|mut stream| {
        let mut first = vec![22, 3, 3, 0x40, 0x00, 2, 0xff, 0xff, 0xff];
        first.resize(5 + 0x4000, 0);
        let mut next = vec![22, 3, 3, 0x40, 0x00];
        next.resize(5 + 0x4000, 0);
        if stream.write_all(&first).is_ok() {
            repeat(stream, &next, Duration::ZERO);
        }
    });
    let (out, took) = check("16-mib-message", port, 5, &[]);
    assert_fails(
        &out,
        took,
        5,
        "answered the TLS ClientHello with no ServerHello",
    );
    assert!(
        took < Duration::from_secs(4),
        "not refused at once: {took:?}"
    );
}

/// An SMTP greeting that never ends (`220-` lines as fast as they go).
#[test]
fn an_endless_smtp_banner() {
    let port = server(|stream| {
        repeat(
            stream,
            b"220-mx.example ESMTP, more to come\r\n",
            Duration::ZERO,
        );
    });
    let (out, took) = check("smtp-banner", port, 5, &["--starttls", "smtp"]);
    assert_fails(
        &out,
        took,
        5,
        "(STARTTLS smtp): expected an SMTP greeting, got more than 100 lines",
    );
    assert!(
        took < Duration::from_secs(4),
        "not stopped by the cap: {took:?}"
    );
}

/// The same, one line every 100 ms: the deadline ends it.
#[test]
fn a_slow_endless_smtp_banner() {
    let port = server(|stream| {
        repeat(
            stream,
            b"220-mx.example ESMTP\r\n",
            Duration::from_millis(100),
        );
    });
    let (out, took) = check("smtp-slow-banner", port, 2, &["--starttls", "smtp"]);
    assert_fails(
        &out,
        took,
        2,
        "(STARTTLS smtp): reading the server's answer: not done within the attempt's 2 s",
    );
}

/// An IMAP server that answers STARTTLS with untagged lines only, `pause`
/// apart.
fn imap_untagged(stream: TcpStream, pause: Duration) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut stream = stream;
    if stream.write_all(b"* OK IMAP4rev1 ready\r\n").is_err() {
        return;
    }
    let mut command = String::new();
    if reader.read_line(&mut command).is_ok() && command.contains("STARTTLS") {
        repeat(stream, b"* OK still thinking\r\n", pause);
    }
}

#[test]
fn endless_imap_untagged_lines() {
    let port = server(|stream| imap_untagged(stream, Duration::ZERO));
    let (out, took) = check("imap-untagged", port, 5, &["--starttls", "imap"]);
    assert_fails(
        &out,
        took,
        5,
        "(STARTTLS imap): expected an answer to STARTTLS, got more than 100 untagged lines",
    );
    assert!(
        took < Duration::from_secs(4),
        "not stopped by the cap: {took:?}"
    );
}

/// The reporter's second case, slowed down so the line cap is not reached:
/// the deadline ends it.
#[test]
fn slow_endless_imap_untagged_lines() {
    let port = server(|stream| imap_untagged(stream, Duration::from_millis(100)));
    let (out, took) = check("imap-slow-untagged", port, 2, &["--starttls", "imap"]);
    assert_fails(
        &out,
        took,
        2,
        "(STARTTLS imap): reading the server's answer: not done within the attempt's 2 s",
    );
    assert!(took >= Duration::from_secs(2), "{took:?}");
}

/// With --json, the error is also a JSON document on stdout.
#[test]
fn the_json_error_of_a_trickle() {
    let port = server(|mut stream| {
        if stream.write_all(&[22, 3, 3, 0x40, 0x00]).is_ok() {
            repeat(stream, &[2], Duration::from_millis(500));
        }
    });
    let (out, took) = check("trickle-json", port, 2, &["--json"]);
    assert_eq!(out.status.code(), Some(2));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["mode"], "remote");
    assert!(report["error"]
        .as_str()
        .unwrap()
        .contains("did not finish its answer to the TLS ClientHello in time"));
    assert_eq!(String::from_utf8_lossy(&out.stderr).lines().count(), 1);
    assert!(took < Duration::from_secs(2) + SLACK, "{took:?}");
}
