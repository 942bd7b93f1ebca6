//! The `tls-bench` binary: in-process runs (groups, rounds, budget, table,
//! CSV, JSON), its argument errors, and `--connect` against a small TLS 1.3
//! server in this process (successes, and failures counted and reported).

mod common;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::PathBuf;

use common::tls_bench;
use openssl::asn1::Asn1Time;
use openssl::ec::{EcGroup, EcKey};
use openssl::hash::MessageDigest;
use openssl::nid::Nid;
use openssl::pkey::PKey;
use openssl::ssl::{SslAcceptor, SslMethod};
use openssl::x509::{X509Name, X509};

fn temp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("tls-bench-{}-{name}", std::process::id()))
}

fn read_and_remove(path: &PathBuf) -> String {
    let text = std::fs::read_to_string(path).expect("file written");
    std::fs::remove_file(path).unwrap();
    text
}

#[test]
fn every_default_group_in_process() {
    let (csv, json) = (temp("in-process.csv"), temp("in-process.json"));
    let (csv_flag, json_flag) = (
        format!("--csv={}", csv.display()),
        format!("--json={}", json.display()),
    );
    let (out, stdout, stderr) =
        tls_bench(&["--handshakes", "3", "--rounds", "2", &csv_flag, &json_flag]);
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(
        stdout.contains("2 round(s) x 3 handshakes per group and implementation"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "group              implementation  handshakes/s  ms/handshake  server µs  client µs  \
             vs X25519  rounds\n"
        ),
        "{stdout}"
    );
    let csv = read_and_remove(&csv);
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some(
            "group,implementation,openssl_version,handshakes_per_sec,ms_per_handshake,\
             ratio_to_x25519,rounds,handshakes,seconds,server_us_per_handshake,\
             client_us_per_handshake"
        )
    );
    for group in [
        "X25519",
        "MLKEM768",
        "X25519MLKEM768",
        "SecP256r1MLKEM768",
        "MLKEM1024",
    ] {
        let row = csv
            .lines()
            .find(|l| l.starts_with(&format!("{group},ours,")))
            .unwrap_or_else(|| panic!("no {group} row: {csv}"));
        let cells: Vec<&str> = row.split(',').collect();
        assert_eq!(&cells[6..8], ["2", "6"], "{row}");
        if group == "X25519" {
            assert_eq!(cells[5], "1.0000", "{row}");
        }
    }
    let json: serde_json::Value = serde_json::from_str(&read_and_remove(&json)).unwrap();
    assert_eq!(json["budget"], "3 handshakes");
    assert_eq!(json["rounds"], 2);
    assert!(
        json["notes"].is_array()
            && json["implementations"][0]
                .as_str()
                .unwrap()
                .starts_with("ours: ")
    );
    assert_eq!(
        json["results"][0]["raw_rounds"].as_array().unwrap().len(),
        2
    );
}

#[test]
fn groups_once_each_and_quick_is_one_round() {
    let (out, stdout, stderr) = tls_bench(&[
        "--quick",
        "--seconds",
        "0.01",
        "--groups",
        "x25519, MLKEM768,X25519",
    ]);
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(stdout.contains("1 round(s) x 0.01 s per group"), "{stdout}");
    let rows = |group: &str| {
        stdout
            .lines()
            .filter(|l| l.starts_with(&format!("{group} ")))
            .count()
    };
    assert_eq!(
        (rows("x25519"), rows("MLKEM768"), rows("X25519")),
        (1, 1, 0),
        "{stdout}"
    );
}

/// The other spellings the provider registers (oqsprovider's,
/// crypto-policies') negotiate their IANA group, which tls-bench checks on
/// every handshake from the code point libssl reports.
#[test]
fn group_aliases_negotiate_their_groups() {
    let aliases = "x25519_mlkem768,p256_mlkem768,p384_mlkem1024,mlkem512,mlkem768,mlkem1024";
    let (out, stdout, stderr) = tls_bench(&["--quick", "--seconds", "0.01", "--groups", aliases]);
    assert!(out.status.success(), "{stdout}{stderr}");
    for alias in aliases.split(',') {
        let rows = stdout
            .lines()
            .filter(|l| l.starts_with(&format!("{alias} ")));
        assert_eq!(rows.count(), 1, "{alias}:\n{stdout}");
    }
}

#[test]
fn errors_and_their_exit_statuses() {
    for bad in [
        &["--seconds", "0"][..],
        &["--seconds", "NaN"],
        &["--handshakes", "0"],
        &["--rounds"],
        &["--seconds", "1", "--handshakes", "2"],
        &["--groups", "A,,B"],
        &["--groups", "X25519:P-256"],
        &["--bogus"],
        &["--in-flight", "2"],
        &["--connect", "h:1", "--in-flight", "0"],
    ] {
        let (out, _, stderr) = tls_bench(bad);
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {stderr}");
    }
    // A group the table does not know could not be checked: an error, not
    // a row.
    let (out, _, stderr) = tls_bench(&["--groups", "X25519,BOGUS", "--handshakes", "1"]);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(
            "invalid value 'BOGUS' for '--groups <LIST>': unknown group \"BOGUS\" (known: "
        ),
        "{stderr}"
    );
    // One the linked libssl cannot take (the provider offers SM2's hybrid
    // on OpenSSL 4.0 only).
    if openssl::version::number() < 0x4000_0000 {
        let (out, _, stderr) = tls_bench(&["--groups", "curveSM2MLKEM768", "--handshakes", "1"]);
        assert_eq!(out.status.code(), Some(1));
        assert!(
            stderr.starts_with("tls-bench: error: ours: client group curveSM2MLKEM768: "),
            "{stderr}"
        );
    }
    let (out, _, stderr) = tls_bench(&["--provider-dir", "/nonexistent", "--connect", "h:1"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr.contains("/nonexistent/mlkem.so is missing"),
        "{stderr}"
    );
}

/// A TLS 1.3 server accepting only X25519 that answers every request with
/// 200, on a port of its own.
fn x25519_server() -> u16 {
    let key = PKey::from_ec_key(
        EcKey::generate(&EcGroup::from_curve_name(Nid::X9_62_PRIME256V1).unwrap()).unwrap(),
    )
    .unwrap();
    let mut name = X509Name::builder().unwrap();
    name.append_entry_by_text("CN", "localhost").unwrap();
    let name = name.build();
    let mut cert = X509::builder().unwrap();
    cert.set_subject_name(&name).unwrap();
    cert.set_issuer_name(&name).unwrap();
    cert.set_pubkey(&key).unwrap();
    cert.set_not_before(&Asn1Time::days_from_now(0).unwrap())
        .unwrap();
    cert.set_not_after(&Asn1Time::days_from_now(1).unwrap())
        .unwrap();
    cert.sign(&key, MessageDigest::sha256()).unwrap();
    let mut acceptor = SslAcceptor::mozilla_modern_v5(SslMethod::tls_server()).unwrap();
    acceptor.set_groups_list("X25519").unwrap();
    acceptor.set_certificate(&cert.build()).unwrap();
    acceptor.set_private_key(&key).unwrap();
    let acceptor = acceptor.build();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for tcp in listener.incoming().flatten() {
            let Ok(mut tls) = acceptor.accept(tcp) else {
                continue;
            };
            let mut request = Vec::new();
            let mut buf = [0u8; 256];
            while !request.ends_with(b"\r\n\r\n") {
                match tls.read(&mut buf) {
                    Ok(n) if n > 0 => request.extend_from_slice(&buf[..n]),
                    _ => break,
                }
            }
            let _ = tls.write_all(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nok\n");
            let _ = tls.shutdown();
        }
    });
    port
}

#[test]
fn connect_counts_handshakes_and_failures() {
    let address = format!("127.0.0.1:{}", x25519_server());
    let csv = temp("connect.csv");
    let csv_flag = format!("--csv={}", csv.display());
    let (out, stdout, stderr) = tls_bench(&[
        "--connect",
        &address,
        "--groups",
        "X25519",
        "--handshakes",
        "8",
        "--in-flight",
        "2",
        &csv_flag,
    ]);
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(
        stdout.contains(&format!("tls-bench: client of {address}, ")),
        "{stdout}"
    );
    assert!(
        stdout.contains("8 handshakes per group, 2 connections in flight"),
        "{stdout}"
    );
    let csv = read_and_remove(&csv);
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("group,handshakes,failures,seconds,handshakes_per_sec,ratio_to_x25519")
    );
    assert!(lines.next().unwrap().starts_with("X25519,8,0,"), "{csv}");

    // A group the server does not accept: every handshake fails, and so does the run.
    let (out, stdout, stderr) = tls_bench(&[
        "--connect",
        &address,
        "--groups",
        "X25519,MLKEM768",
        "--handshakes",
        "3",
    ]);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(
        stderr.contains("tls-bench: error: MLKEM768: 3 failed (first: handshake: "),
        "{stderr}"
    );
    assert!(
        stdout.lines().any(|l| l.starts_with("MLKEM768 ")
            && l.split_whitespace().take(3).eq(["MLKEM768", "3", "3"])),
        "{stdout}"
    );

    // Nothing listening: connect errors.
    let closed = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let (out, _, stderr) = tls_bench(&[
        "--connect",
        &closed.to_string(),
        "--groups",
        "X25519",
        "--handshakes",
        "2",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr.contains("X25519: 2 failed (first: connect: "),
        "{stderr}"
    );
}
