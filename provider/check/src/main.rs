//! `mlkem-provider-check`: says, loudly and exactly, whether post-quantum
//! TLS is in effect — on this machine's OpenSSL (local mode) or on a
//! server (remote mode).
//!
//! It links the system's libssl and reads the configuration in effect
//! (`OPENSSL_CONF` or OpenSSL's default file), as the administrator's
//! programs do. Exit status: 0 post-quantum TLS is in effect, 1 it is not
//! (or a step failed), 2 the check could not run.

mod conf;
mod deadline;
mod diagnosis;
mod elf;
mod enable;
mod groups;
mod handshake;
mod layout;
mod local;
mod ossl;
mod remote;
mod report;
mod settings;
mod starttls;
mod tls_wire;

use std::io::Write;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use clap::Parser;

use crate::starttls::Protocol;

/// Says whether post-quantum TLS (ML-KEM) is really in effect.
///
/// Without HOST: checks the OpenSSL and configuration in effect on this
/// machine (OPENSSL_CONF or OpenSSL's default file), step by step, and
/// runs one in-memory TLS 1.3 handshake per post-quantum group through the
/// system's libssl.
///
/// With HOST or HOST:PORT: connects to the server, offering each post-quantum
/// group and then this machine's default list, and reports the group
/// negotiated, whether the server asked for a HelloRetryRequest, and the
/// time of each attempt.
///
/// Exit status: 0 post-quantum TLS is in effect (locally: a default client
/// leads with a post-quantum group and every handshake negotiates its
/// group; remotely: the server negotiates one), 1 it is not, 2 the check
/// could not run (bad arguments, unknown host, closed port, not TLS 1.3).
#[derive(Parser, Debug)]
#[command(name = "mlkem-provider-check", version, verbatim_doc_comment)]
struct Args {
    /// A server to check instead of this machine: HOST, HOST:PORT, an IPv6
    /// address, or one in brackets followed by :PORT (default port 443, or
    /// the STARTTLS protocol's).
    target: Option<String>,
    /// Upgrade to TLS in band first, as `openssl s_client -starttls` does.
    #[arg(long, value_enum, requires = "target")]
    starttls: Option<Protocol>,
    /// Seconds each connection may take, from connect to the handshake's
    /// end, STARTTLS exchange included (remote mode); the name lookup gets
    /// as long. A run makes 7 connections, so it ends within 8 times this.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=120))]
    timeout: u64,
    /// Print the result as JSON on stdout.
    #[arg(long)]
    json: bool,
    /// Print the lines that enable mlkem and its TLS groups in the
    /// configuration file in effect, to append at its end: the two
    /// `.include` lines for a file with no providers, alg_section or
    /// ssl_conf of its own, else lines that join the file's own sections
    /// (Ubuntu's, RHEL's) instead of replacing them. Changes nothing.
    #[arg(long, conflicts_with_all = ["target", "json"])]
    enable_lines: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    if args.enable_lines {
        return enable_lines();
    }
    match &args.target {
        None => local_mode(args.json),
        Some(target) => remote_mode(target, &args),
    }
}

fn print_json<T: serde::Serialize>(value: &T) {
    match serde_json::to_string_pretty(value) {
        Ok(text) => println!("{text}"),
        Err(e) => eprintln!("mlkem-provider-check: cannot write JSON: {e}"),
    }
}

fn enable_lines() -> ExitCode {
    let file = local::configuration_file(&ossl::openssl_info().openssl_dir).0;
    if !file.is_file() {
        eprintln!("mlkem-provider-check: {} does not exist", file.display());
        return ExitCode::from(2);
    }
    let settings = match settings::Settings::load(&file) {
        Ok(settings) => settings,
        Err(unreadable) => {
            eprintln!(
                "mlkem-provider-check: OpenSSL cannot read {}: {}",
                file.display(),
                unreadable.why
            );
            return ExitCode::from(2);
        }
    };
    match enable::lines(&settings) {
        Ok(lines) => {
            print!("{lines}");
            ExitCode::SUCCESS
        }
        Err(why) => {
            eprintln!("mlkem-provider-check: {}: {why}", file.display());
            ExitCode::from(2)
        }
    }
}

fn local_mode(json: bool) -> ExitCode {
    let report = local::run();
    if json {
        print_json(&report);
    } else {
        println!("mlkem-provider-check: the OpenSSL and configuration in effect on this machine");
        print!("{}", report::render(&report.steps));
        println!("{}", report.conclusion);
    }
    if report.ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// Ends the process with exit 2 and a one-line error if remote mode is
/// still running `after` from now: a backstop behind the deadline of each
/// step, for I/O that escaped them. `done` is set, and held while the
/// result is printed, once remote mode has its result.
fn watchdog(after: Duration, json: bool, done: Arc<Mutex<bool>>) {
    std::thread::spawn(move || {
        std::thread::sleep(after);
        let done = done
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if *done {
            return;
        }
        let why = format!(
            "gave up: the check did not end within {} s (8 × --timeout, plus 1)",
            after.as_secs()
        );
        if json {
            print_json(&serde_json::json!({ "mode": "remote", "error": why }));
        }
        eprintln!("mlkem-provider-check: {why}");
        let _ = std::io::stdout().flush();
        // SAFETY: _exit ends the process at once, without running exit
        // handlers (OpenSSL's cleanup) under the main thread, which may be
        // inside libssl.
        unsafe { libc::_exit(2) }
    });
}

fn remote_mode(target: &str, args: &Args) -> ExitCode {
    let timeout = Duration::from_secs(args.timeout);
    let done = Arc::new(Mutex::new(false));
    watchdog(
        remote::bound(timeout) + Duration::from_secs(1),
        args.json,
        done.clone(),
    );
    let result = remote::Target::parse(target, args.starttls)
        .and_then(|target| remote::run(target, args.starttls, timeout));
    // Printed under the lock: the watchdog no longer ends the process.
    let mut done = done
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    *done = true;
    match result {
        Ok(report) => {
            if args.json {
                print_json(&report);
            } else {
                println!(
                    "mlkem-provider-check: {}:{}{} ({})",
                    report.target.host,
                    report.target.port,
                    args.starttls
                        .map_or(String::new(), |p| format!(" with STARTTLS ({p:?})")
                            .to_lowercase()),
                    report.provider
                );
                print!("{}", remote::render(&report));
                println!("{}", report.conclusion);
            }
            if report.post_quantum {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
        Err(why) => {
            if args.json {
                print_json(&serde_json::json!({ "mode": "remote", "error": why }));
            }
            eprintln!("mlkem-provider-check: {why}");
            ExitCode::from(2)
        }
    }
}
