//! A hostile network between two real OpenSSL peers that both load our
//! provider: a long-running `openssl s_server` and an in-process client
//! (the system's libssl through the `openssl` crate). A man in the middle
//! on loopback ([`mitm`]) rewrites the key share of the ClientHello (our
//! server's encapsulation and key checks face it) or of the ServerHello
//! (our client's decapsulation and ciphertext checks), for every group we
//! offer, in every way [`mitm::tamper`] lists.
//!
//! Each tampered handshake must end in a fatal TLS alert (a malformed share
//! one raised by the key exchange itself, not by the record layer after a
//! wrong secret), never complete with working application data, never stall,
//! and leave both processes serving: after each one an honest handshake
//! through the same server process and the same client context must succeed
//! and exchange data. A table of case x group x side -> outcome is printed.
//!
//! The short form (the system's OpenSSL 3.0) runs in `cargo test`; the long
//! form (`--ignored`, scripts/tls-mitm.sh) adds servers of OpenSSL 3.5, 3.6
//! and 4.0, each also against its own `s_client` (a fresh process per
//! connection, so there "the same client" is the same binary and provider),
//! and `MLKEM_MITM_FLIPS` (default 64) random single-bit flips per group and
//! side.

mod common;
mod mitm;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use openssl::ssl::{HandshakeError, Ssl, SslContext, SslMethod, SslVerifyMode, SslVersion};

use common::OpenSsl;
use mitm::proxy::{Direction, Mitm, Rewrite, Seen};
use mitm::tamper::{cases, Captured, Expect, Group, Side, Tamper, GROUPS};
use mitm::wire::alert_name;

/// A long-running `openssl s_server -www` with our provider preferred,
/// offering every group; its output is kept for failure reports.
struct Server {
    series: &'static str,
    child: Child,
    addr: SocketAddr,
    log: Arc<Mutex<String>>,
}

impl Server {
    fn start(ssl: &OpenSsl, dir: &Path) -> Self {
        let groups: Vec<&str> = GROUPS.iter().map(|g| g.name).collect();
        let mut cmd = ssl.command(dir);
        cmd.arg("s_server")
            .args(common::ours())
            .args(["-cert", "server.crt", "-key", "server.key"])
            .args(["-accept", "127.0.0.1:0", "-tls1_3", "-www"])
            .args(["-groups", &groups.join(":")])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // Under AddressSanitizer (scripts/tls-mitm.sh --asan) the
        // uninstrumented s_server needs the runtime the module expects.
        if let Some(runtime) = std::env::var_os("MLKEM_MITM_PRELOAD") {
            cmd.env("LD_PRELOAD", runtime);
        }
        // A test process that aborts (a sanitizer report, a crash in the
        // in-process client) runs no Drop: the kernel stops the server then.
        // SAFETY: prctl is async-signal-safe and touches no memory of ours.
        unsafe {
            cmd.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) == 0 {
                    Ok(())
                } else {
                    Err(std::io::Error::last_os_error())
                }
            });
        }
        let mut child = cmd.spawn().expect("s_server");
        let log = Arc::new(Mutex::new(String::new()));
        let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
        let deadline = Instant::now() + Duration::from_secs(20);
        let addr = loop {
            assert!(Instant::now() < deadline, "s_server did not start");
            match lines.next() {
                Some(Ok(line)) => {
                    if let Some(addr) = line.strip_prefix("ACCEPT ") {
                        break addr.parse().expect("s_server address");
                    }
                }
                _ => {
                    let mut stderr = String::new();
                    let _ = child
                        .stderr
                        .take()
                        .expect("stderr")
                        .read_to_string(&mut stderr);
                    panic!("s_server {} did not start:\n{stderr}", ssl.series);
                }
            }
        };
        let stderr = BufReader::new(child.stderr.take().expect("stderr")).lines();
        for source in [
            Box::new(lines) as Box<dyn Iterator<Item = std::io::Result<String>> + Send>,
            Box::new(stderr),
        ] {
            let log = Arc::clone(&log);
            std::thread::spawn(move || {
                for line in source.map_while(Result::ok) {
                    let mut log = log.lock().expect("log");
                    log.push_str(&line);
                    log.push('\n');
                }
            });
        }
        Self {
            series: ssl.series,
            child,
            addr,
            log,
        }
    }

    /// Whether the process is still running (not exited, not killed by a
    /// signal or a sanitizer).
    fn alive(&mut self) -> bool {
        self.child.try_wait().expect("s_server status").is_none()
    }

    fn log_tail(&self) -> String {
        let log = self.log.lock().expect("log");
        let start = (log.len().saturating_sub(2000)..)
            .find(|&i| log.is_char_boundary(i))
            .unwrap_or(0);
        log[start..].to_string()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The client context for `group`: TLS 1.3, this group first (its share is
/// the one the ClientHello carries) and [`Group::other`] second (supported,
/// no share), so a share or label of the other group is not refused merely
/// as unsupported.
fn client_context(group: &Group) -> SslContext {
    let mut ctx = SslContext::builder(SslMethod::tls_client()).expect("client ctx");
    ctx.set_min_proto_version(Some(SslVersion::TLS1_3))
        .expect("TLS 1.3");
    // The server's certificate is not what is tested here.
    ctx.set_verify(SslVerifyMode::NONE);
    ctx.set_groups_list(&format!("{}:{}", group.name, group.other().name))
        .expect("client groups");
    ctx.build()
}

/// How the client's side of one connection ended.
#[derive(Debug)]
enum Client {
    /// The handshake completed; `data` is whether the HTTP exchange
    /// worked.
    Completed { data: bool },
    /// The handshake failed, with OpenSSL's first reason.
    Failed(String),
    /// The client process died of a signal (s_client only; an in-process
    /// crash ends the test).
    Crashed(String),
}

/// The client peer: the test process's own libssl (one context per group,
/// kept for every connection), or a fresh `openssl s_client` per
/// connection (the long form's clients of OpenSSL 3.5 and later).
enum Peer<'a> {
    InProcess(Vec<SslContext>),
    SClient(&'a OpenSsl, &'a Path),
}

impl Peer<'_> {
    fn name(&self) -> String {
        match self {
            Peer::InProcess(_) => {
                let n = openssl::version::number();
                format!("{}.{} in-process", n >> 28, (n >> 20) & 0xff)
            }
            Peer::SClient(ssl, _) => format!("{} s_client", ssl.series),
        }
    }

    fn connect(&self, addr: SocketAddr, group: usize) -> Client {
        match self {
            Peer::InProcess(contexts) => connect(addr, &contexts[group]),
            Peer::SClient(ssl, dir) => s_client(ssl, dir, addr, &GROUPS[group]),
        }
    }
}

fn connect(addr: SocketAddr, ctx: &SslContext) -> Client {
    let stream = TcpStream::connect(addr).expect("connect to mitm");
    let timeout = Some(Duration::from_secs(10));
    stream.set_read_timeout(timeout).expect("timeout");
    stream.set_write_timeout(timeout).expect("timeout");
    match Ssl::new(ctx).expect("client ssl").connect(stream) {
        Ok(mut tls) => {
            let mut page = Vec::new();
            let sent = tls.write_all(b"GET / HTTP/1.0\r\n\r\n").is_ok();
            let mut chunk = [0u8; 4096];
            while let Ok(n @ 1..) = tls.read(&mut chunk) {
                page.extend_from_slice(&chunk[..n]);
            }
            Client::Completed {
                data: sent && page.starts_with(b"HTTP/1.0 200 ok"),
            }
        }
        Err(HandshakeError::Failure(mid)) => Client::Failed(
            mid.error()
                .ssl_error()
                .and_then(|stack| stack.errors().first())
                .and_then(|e| e.reason())
                .map_or_else(|| mid.error().to_string(), str::to_string),
        ),
        Err(other) => Client::Failed(other.to_string()),
    }
}

/// One `openssl s_client` connection for `group` (offered as in
/// [`client_context`]), with an HTTP request once connected.
fn s_client(ssl: &OpenSsl, dir: &Path, addr: SocketAddr, group: &Group) -> Client {
    let mut cmd = ssl.command(dir);
    cmd.arg("s_client")
        .args(common::ours())
        .args(["-connect", &addr.to_string(), "-tls1_3", "-ign_eof"])
        .args(["-groups", &format!("{}:{}", group.name, group.other().name)])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(runtime) = std::env::var_os("MLKEM_MITM_PRELOAD") {
        cmd.env("LD_PRELOAD", runtime);
    }
    let mut child = cmd.spawn().expect("s_client");
    // The relay's idle limit ends a stalled connection, and with it s_client.
    let _ = child
        .stdin
        .take()
        .expect("stdin")
        .write_all(b"GET / HTTP/1.0\r\n\r\n");
    let out = child.wait_with_output().expect("s_client output");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let last = stderr.lines().last().unwrap_or_default().to_string();
    match out.status.code() {
        None => Client::Crashed(format!("{:?}: {last}", out.status)),
        Some(0) if stdout.contains("HTTP/1.0 200 ok") => Client::Completed { data: true },
        // s_client prints its session summary either way; a cipher there
        // means the handshake completed.
        Some(_) if stdout.contains("New, TLSv1.3, Cipher is TLS") => {
            Client::Completed { data: false }
        }
        Some(_) => Client::Failed(last),
    }
}

/// One connection through `mitm` with the given rewrites.
fn attempt(
    mitm: &Mitm,
    peer: &Peer,
    group: usize,
    client_hello: Option<Rewrite>,
    server_hello: Option<Rewrite>,
) -> (Client, Seen) {
    let relay = mitm.relay_one(client_hello, server_hello);
    let client = peer.connect(mitm.addr(), group);
    let seen = relay.join().expect("relay");
    (client, seen)
}

/// One line of the table.
struct Row {
    series: &'static str,
    client: String,
    group: &'static str,
    side: Side,
    case: String,
    expect: Expect,
    outcome: String,
    problem: Option<String>,
}

/// The first plaintext alert, as "<sender> sent <name>".
fn first_alert(seen: &Seen) -> Option<(Direction, String)> {
    seen.alerts
        .first()
        .map(|&(direction, _, description)| (direction, alert_name(description)))
}

/// Judges one tampered connection and the honest one after it.
fn judge(
    expect: Expect,
    tampered: &(Client, Seen),
    honest: &(Client, Seen),
    alive: bool,
) -> (String, Option<String>) {
    let (client, seen) = tampered;
    let alert = first_alert(seen);
    let outcome = match (&alert, client) {
        (Some((Direction::ServerToClient, name)), _) => format!("server sent {name}"),
        (Some((Direction::ClientToServer, name)), _) => format!("client sent {name}"),
        (None, Client::Completed { data: true }) => "COMPLETED with data".into(),
        (None, Client::Completed { data: false }) => "completed, data failed".into(),
        (None, Client::Failed(reason)) => format!("no alert ({reason})"),
        (None, Client::Crashed(how)) => format!("client CRASHED ({how})"),
    };
    let problem = if let Client::Crashed(how) = client {
        Some(format!("the client crashed: {how}"))
    } else if matches!(client, Client::Completed { data: true }) {
        Some("the tampered handshake completed and carried data".to_string())
    } else if seen.stalled {
        Some("a peer stalled".into())
    } else if alert.is_none() {
        Some("no alert on the wire".into())
    } else if !alive {
        Some("the server process died".into())
    } else if !matches!(honest.0, Client::Completed { data: true }) {
        Some(format!("the next honest handshake failed: {:?}", honest.0))
    } else if expect == Expect::Reject
        && alert
            .as_ref()
            .is_some_and(|(_, name)| name == "bad_record_mac" || name == "decrypt_error")
    {
        Some("a malformed share was accepted by the key exchange".into())
    } else {
        None
    };
    (outcome, problem)
}

/// Runs every case of every group on both sides against a server of `ssl`,
/// from the in-process client or (`s_client`) from `ssl`'s s_client, and
/// returns the rows.
fn run_against(ssl: &OpenSsl, s_client: bool, random_flips: usize) -> Vec<Row> {
    common::load_providers();
    let dir = common::scratch(&format!("tls-mitm-{}-{s_client}", ssl.series));
    common::certificate(&dir);
    let mut server = Server::start(ssl, &dir);
    let mitm = Mitm::new(server.addr);
    let peer = if s_client {
        Peer::SClient(ssl, &dir)
    } else {
        Peer::InProcess(GROUPS.iter().map(client_context).collect())
    };

    // Honest handshakes first: the relay must be transparent, and their
    // shares serve as the "earlier" and "other group" shares.
    let mut captured = Captured::default();
    for (at, group) in GROUPS.iter().enumerate() {
        let (client, seen) = attempt(&mitm, &peer, at, None, None);
        assert!(
            matches!(client, Client::Completed { data: true }),
            "honest {} handshake through the relay failed: {client:?}\n{}",
            group.name,
            server.log_tail()
        );
        let shares = seen.client_shares.expect("client shares");
        assert_eq!(shares.len(), 1, "one key share offered");
        captured
            .client
            .insert(group.id, shares[0].key_exchange.clone());
        let share = seen.server_share.expect("server share");
        assert_eq!(share.group, group.id, "{} negotiated", group.name);
        captured.server.insert(group.id, share.key_exchange);
    }

    let captured = Arc::new(captured);
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    let mut rows = Vec::new();
    for (at, group) in GROUPS.iter().enumerate() {
        for side in [Side::OurServer, Side::OurClient] {
            let mut list = cases(group, side);
            for _ in 0..random_flips {
                // xorshift64: reproducible positions without a crate.
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                list.push(Tamper::FlipAt(seed as usize % group.share_len(side)));
            }
            for tamper in list {
                let rewrite: Rewrite = {
                    let captured = Arc::clone(&captured);
                    Box::new(move |shares| tamper.apply(group, side, &captured, shares))
                };
                let (ch, sh) = match side {
                    Side::OurServer => (Some(rewrite), None),
                    Side::OurClient => (None, Some(rewrite)),
                };
                let tampered = attempt(&mitm, &peer, at, ch, sh);
                let honest = attempt(&mitm, &peer, at, None, None);
                let alive = server.alive();
                let expect = tamper.expect(group, side);
                let (outcome, problem) = judge(expect, &tampered, &honest, alive);
                let problem = problem.map(|p| format!("{p}\n{}", server.log_tail()));
                rows.push(Row {
                    series: server.series,
                    client: peer.name(),
                    group: group.name,
                    side,
                    case: tamper.to_string(),
                    expect,
                    outcome,
                    problem,
                });
                assert!(
                    alive,
                    "s_server {} died:\n{}",
                    ssl.series,
                    server.log_tail()
                );
            }
        }
    }
    rows
}

/// Prints the table and the outcome counts, and fails on any problem.
fn report(rows: &[Row]) {
    println!(
        "{:<6} {:<15} {:<19} {:<25} {:<22} {:<7} outcome",
        "server", "client", "group", "side", "case", "expect"
    );
    for row in rows {
        println!(
            "{:<6} {:<15} {:<19} {:<25} {:<22} {:<7} {}{}",
            row.series,
            row.client,
            row.group,
            row.side.to_string(),
            row.case,
            format!("{:?}", row.expect),
            row.outcome,
            if row.problem.is_some() {
                "  <-- FINDING"
            } else {
                ""
            }
        );
    }
    let mut counts: Vec<(String, usize)> = Vec::new();
    for row in rows {
        let key = format!("{}: {}", row.side, row.outcome);
        match counts.iter_mut().find(|(k, _)| *k == key) {
            Some((_, n)) => *n += 1,
            None => counts.push((key, 1)),
        }
    }
    counts.sort();
    let groups: std::collections::BTreeSet<_> = rows.iter().map(|r| r.group).collect();
    let pairs: std::collections::BTreeSet<_> = rows
        .iter()
        .map(|r| format!("{} s_server / {}", r.series, r.client))
        .collect();
    println!(
        "tls-mitm: {} tampered handshakes ({} groups x 2 sides; {}), each followed by an honest one",
        rows.len(),
        groups.len(),
        pairs.into_iter().collect::<Vec<_>>().join(", ")
    );
    for (key, n) in &counts {
        println!("tls-mitm:   {n:>4}  {key}");
    }
    let problems: Vec<String> = rows
        .iter()
        .filter_map(|r| {
            r.problem.as_ref().map(|p| {
                format!(
                    "{} {} {} {}: {} -- {p}",
                    r.series, r.group, r.side, r.case, r.outcome
                )
            })
        })
        .collect();
    assert!(
        problems.is_empty(),
        "{} findings:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn hostile_key_shares_against_the_system_openssl() {
    report(&run_against(&common::system(), false, 0));
}

/// The long form: every OpenSSL of the matrix as the server, with the
/// in-process client and, for 3.5 and later, that version's s_client too;
/// random bit flips on top of the fixed cases.
#[test]
#[ignore = "long form: scripts/tls-mitm.sh"]
fn hostile_key_shares_long() {
    let flips = std::env::var("MLKEM_MITM_FLIPS")
        .ok()
        .map_or(64, |v| v.parse().expect("MLKEM_MITM_FLIPS"));
    let mut rows = Vec::new();
    for ssl in common::matrix() {
        rows.extend(run_against(&ssl, false, flips));
        if ssl.series != "3.0" {
            rows.extend(run_against(&ssl, true, flips));
        }
    }
    report(&rows);
}
