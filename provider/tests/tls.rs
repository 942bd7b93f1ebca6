//! TLS 1.3 over the pure ML-KEM groups, configured through
//! `openssl.cnf.example` alone (no `-provider` flags): on the system's 3.0
//! and on 3.5, and across to OpenSSL 3.5's native ML-KEM.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU16, Ordering};
use std::time::{Duration, Instant};

use common::{matrix, natives, openssl_35, openssl_40, scratch, system, OpenSsl};

/// How a side of the connection loads ML-KEM.
#[derive(Clone, Copy, Debug)]
enum Side {
    /// Our provider, through openssl.cnf.example.
    Ours,
    /// OpenSSL's own (3.5+), default configuration.
    Native,
}

fn configure(cmd: &mut Command, side: Side) {
    match side {
        Side::Ours => {
            cmd.env("OPENSSL_CONF", common::example_config())
                .env("OPENSSL_MODULES", common::module_dir());
        }
        Side::Native => {
            cmd.env("OPENSSL_CONF", "/dev/null");
        }
    }
}

static NEXT_PORT: AtomicU16 = AtomicU16::new(0);

/// A port for the next s_server: a base per test process, then one port
/// per server. All lie in 20000..32767, below Linux's ephemeral range
/// (32768-60999), from which every client's own port comes: an outgoing
/// connection of a test running beside this one held a port chosen there
/// about once in six runs (s_server: "Address already in use").
fn port() -> u16 {
    let base = 20000 + (std::process::id() % 10000) as u16;
    base + NEXT_PORT.fetch_add(1, Ordering::Relaxed) % 2700
}

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_server(ssl: &OpenSsl, side: Side, dir: &Path, port: u16, groups: &str) -> Server {
    let mut cmd = ssl.command(dir);
    configure(&mut cmd, side);
    cmd.args([
        "s_server",
        "-cert",
        "server.crt",
        "-key",
        "server.key",
        "-accept",
        &port.to_string(),
        "-tls1_3",
        "-groups",
        groups,
        "-naccept",
        "1",
        "-www",
    ])
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("s_server");
    // Wait for "ACCEPT".
    let stdout = child.stdout.take().expect("stdout");
    let mut lines = BufReader::new(stdout).lines();
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        match lines.next() {
            Some(Ok(line)) if line.starts_with("ACCEPT") => break,
            Some(Ok(_)) => continue,
            _ => {
                let mut stderr = String::new();
                let _ = child
                    .stderr
                    .take()
                    .map(|mut e| e.read_to_string(&mut stderr));
                panic!("s_server ({groups}, port {port}) did not start: {stderr}")
            }
        }
    }
    // s_server's stderr is only read when it fails to start; keep draining
    // it (as stdout below) so that the server never blocks on a full pipe.
    if let Some(stderr) = child.stderr.take() {
        std::thread::spawn(move || for _ in BufReader::new(stderr).lines() {});
    }
    // Keep draining so the server never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    Server(child)
}

/// Runs s_client; returns (success, combined output).
fn client(ssl: &OpenSsl, side: Side, dir: &Path, port: u16, groups: &str) -> (bool, String) {
    client_with(ssl, side, dir, port, groups, &[])
}

/// Runs s_client with extra flags; returns (success, combined output).
fn client_with(
    ssl: &OpenSsl,
    side: Side,
    dir: &Path,
    port: u16,
    groups: &str,
    extra: &[&str],
) -> (bool, String) {
    let mut cmd = ssl.command(dir);
    configure(&mut cmd, side);
    cmd.args([
        "s_client",
        "-connect",
        &format!("127.0.0.1:{port}"),
        "-tls1_3",
        "-groups",
        groups,
        "-servername",
        "localhost",
        "-ign_eof",
    ])
    .args(extra);
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("s_client");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(b"GET / HTTP/1.0\r\n\r\n")
        .expect("request");
    let out = child.wait_with_output().expect("s_client output");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let ok = out.status.success() && text.contains("TLSv1.3") && text.contains("HTTP/1.0 200 ok");
    (ok, text)
}

fn handshake(server: (&OpenSsl, Side), client_side: (&OpenSsl, Side), group: &str) -> String {
    let dir = scratch(&format!(
        "tls-{group}-{}-{:?}-{}-{:?}",
        server.0.series, server.1, client_side.0.series, client_side.1
    ));
    common::certificate(&dir);
    let port = port();
    let _server = start_server(server.0, server.1, &dir, port, group);
    let (ok, text) = client(client_side.0, client_side.1, &dir, port, group);
    assert!(
        ok,
        "{group}: {:?} server / {:?} client failed:\n{text}",
        server, client_side
    );
    text
}

#[test]
fn pure_ml_kem_groups_on_the_system_openssl() {
    let ssl = system();
    for group in ["MLKEM512", "MLKEM768", "MLKEM1024"] {
        // Both sides offer only this group, so success means it was used.
        handshake((&ssl, Side::Ours), (&ssl, Side::Ours), group);
    }
}

#[test]
fn a_group_mismatch_fails_cleanly() {
    let ssl = system();
    let dir = scratch("tls-mismatch");
    common::certificate(&dir);
    let port = port();
    let _server = start_server(&ssl, Side::Ours, &dir, port, "MLKEM768");
    let (ok, text) = client(&ssl, Side::Ours, &dir, port, "MLKEM512");
    assert!(!ok, "handshake should fail:\n{text}");
}

#[test]
fn pure_ml_kem_groups_on_each_native_openssl_and_against_it() {
    for ssl in natives() {
        for group in ["MLKEM512", "MLKEM768", "MLKEM1024"] {
            for (server, client_side) in [
                (Side::Ours, Side::Ours),
                (Side::Native, Side::Ours),
                (Side::Ours, Side::Native),
            ] {
                let text = handshake((&ssl, server), (&ssl, client_side), group);
                assert!(
                    text.contains(&format!("Negotiated TLS1.3 group: {group}")),
                    "{group}: {server:?}/{client_side:?}:\n{text}"
                );
            }
        }
    }
}

#[test]
fn system_openssl_talks_to_each_native_openssl() {
    for native in natives() {
        let ssl = system();
        handshake((&native, Side::Native), (&ssl, Side::Ours), "MLKEM768");
        handshake((&ssl, Side::Ours), (&native, Side::Native), "MLKEM1024");
    }
}

const HYBRIDS: [&str; 3] = ["X25519MLKEM768", "SecP256r1MLKEM768", "SecP384r1MLKEM1024"];

#[test]
fn hybrid_groups_on_the_system_openssl() {
    let ssl = system();
    for group in HYBRIDS {
        handshake((&ssl, Side::Ours), (&ssl, Side::Ours), group);
    }
}

#[test]
fn hybrid_groups_against_each_native_openssl() {
    for native in natives() {
        let ssl = system();
        for group in HYBRIDS {
            for (server, client_side) in [
                ((&native, Side::Native), (&native, Side::Ours)),
                ((&native, Side::Ours), (&native, Side::Native)),
                ((&native, Side::Native), (&ssl, Side::Ours)),
                ((&ssl, Side::Ours), (&native, Side::Native)),
            ] {
                let text = handshake(server, client_side, group);
                if client_side.0.series != "3.0" {
                    assert!(
                        text.contains(&format!("Negotiated TLS1.3 group: {group}")),
                        "{group}: {server:?}/{client_side:?}:\n{text}"
                    );
                }
            }
        }
    }
}

/// OpenSSL 4.0's curveSM2MLKEM768 (0x11EE, the uncompressed SM2 point
/// first): offered where the loading OpenSSL has the `curveSM2` key type for
/// its ECDH half (4.0), and checked there against 4.0's own both ways.
#[test]
fn curve_sm2_hybrid_against_openssl_4() {
    let Some(native) = openssl_40() else {
        return;
    };
    let group = "curveSM2MLKEM768";
    for (server, client_side) in [
        (Side::Ours, Side::Ours),
        (Side::Native, Side::Ours),
        (Side::Ours, Side::Native),
    ] {
        let text = handshake((&native, server), (&native, client_side), group);
        assert!(
            text.contains(&format!("Negotiated TLS1.3 group: {group}")),
            "{group}: {server:?}/{client_side:?}:\n{text}"
        );
    }
}

/// Which hybrids each OpenSSL of the matrix gets from us: X448MLKEM1024 (a
/// KEM, no TLS group) everywhere; curveSM2MLKEM768 only on 4.0, whose EVP
/// has `curveSM2` (OpenSSL 3's EC keymgmt refuses the SM2 curve), so before
/// 4.0 neither the KEM nor the TLS group is listed, and `-groups` refuses it.
#[test]
fn curve_sm2_hybrid_is_offered_only_where_evp_has_the_curve() {
    for ssl in matrix() {
        let dir = scratch(&format!("tls-sm2-offer-{}", ssl.series));
        let mut cmd = ssl.command(&dir);
        configure(&mut cmd, Side::Ours);
        let out = cmd
            .args(["list", "-kem-algorithms"])
            .output()
            .expect("openssl list");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{}: list failed:\n{text}", ssl.series);
        let offers = |name: &str| text.lines().any(|l| l.trim() == format!("{name} @ mlkem"));
        assert!(offers("X448MLKEM1024"), "{}:\n{text}", ssl.series);
        let on_4 = ssl.series.starts_with('4');
        assert_eq!(offers("curveSM2MLKEM768"), on_4, "{}:\n{text}", ssl.series);
        if !on_4 {
            // Refused while the options are read, before any connection.
            let mut cmd = ssl.command(&dir);
            configure(&mut cmd, Side::Ours);
            let out = cmd
                .args(["s_client", "-connect", "127.0.0.1:1", "-tls1_3"])
                .args(["-groups", "curveSM2MLKEM768"])
                .stdin(Stdio::null())
                .output()
                .expect("s_client");
            let text = String::from_utf8_lossy(&out.stderr);
            assert!(
                !out.status.success(),
                "{}: group taken:\n{text}",
                ssl.series
            );
            assert!(text.contains("-groups"), "{}:\n{text}", ssl.series);
        }
    }
}

/// A client whose first (and only) key share is X25519 but which also
/// supports X25519MLKEM768, against a server that accepts only the hybrid:
/// the server asks again (HelloRetryRequest) and the handshake completes
/// over the hybrid.
#[test]
fn hello_retry_request_to_the_hybrid() {
    let ssl = system();
    let mut cases = vec![((ssl.clone(), Side::Ours), (ssl.clone(), Side::Ours))];
    if let Some(native) = openssl_35() {
        cases.push(((native.clone(), Side::Native), (ssl.clone(), Side::Ours)));
        cases.push(((ssl.clone(), Side::Ours), (native.clone(), Side::Ours)));
    }
    for (server, client_side) in cases {
        let dir = scratch(&format!(
            "tls-hrr-{}-{:?}-{}-{:?}",
            server.0.series, server.1, client_side.0.series, client_side.1
        ));
        common::certificate(&dir);
        let port = port();
        let _server = start_server(&server.0, server.1, &dir, port, "X25519MLKEM768");
        let (ok, text) = client_with(
            &client_side.0,
            client_side.1,
            &dir,
            port,
            "X25519:X25519MLKEM768",
            &["-msg"],
        );
        assert!(ok, "HRR {server:?}/{client_side:?} failed:\n{text}");
        // Two ClientHellos: the first with the X25519 share, the second
        // after the HelloRetryRequest.
        let hellos = text.matches("ClientHello").count();
        assert_eq!(hellos, 2, "expected a HelloRetryRequest:\n{text}");
        if client_side.0.series == "3.5" {
            assert!(
                text.contains("Negotiated TLS1.3 group: X25519MLKEM768"),
                "{text}"
            );
        }
    }
}
