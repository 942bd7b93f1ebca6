//! X25519MLKEM768 against an independent TLS stack: rustls with its aws-lc-rs
//! crypto provider, in both directions, on the system OpenSSL (3.0) with our
//! provider loaded through `openssl.cnf.example`.
//!
//! OpenSSL 3.0 has no ML-KEM of its own, so an `openssl` handshake with
//! `-groups X25519MLKEM768` can only succeed if our provider did the key
//! exchange; rustls is restricted to that one group, so nothing else can be
//! negotiated on its side either.
//!
//! Everything is bounded in time: sockets have read/write timeouts, accepts
//! and child processes have deadlines, and children are killed on drop.

mod common;

use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use rustls::crypto::aws_lc_rs::{self, kx_group::X25519MLKEM768};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{
    AlertDescription, ClientConfig, ClientConnection, NamedGroup, RootCertStore, ServerConfig,
    ServerConnection, StreamOwned,
};

use common::{scratch, system};

/// Socket read/write timeout.
const IO_TIMEOUT: Duration = Duration::from_secs(5);
/// How long an `openssl` child or an accept may take.
const PROCESS_TIMEOUT: Duration = Duration::from_secs(20);
/// The code point of X25519MLKEM768 (draft-ietf-tls-ecdhe-mlkem).
const X25519MLKEM768_CODE: u16 = 0x11EC;
/// What the rustls server answers.
const REPLY: &str = "hello from rustls\n";

/// The system `openssl` with our provider loaded through
/// openssl.cnf.example, running in `dir`.
fn openssl_with_provider(dir: &Path) -> Command {
    let mut cmd = system().command(dir);
    cmd.env("OPENSSL_CONF", common::example_config())
        .env("OPENSSL_MODULES", common::module_dir());
    cmd
}

/// aws-lc-rs' crypto provider with X25519MLKEM768 as its only group.
fn provider() -> Arc<CryptoProvider> {
    Arc::new(CryptoProvider {
        kx_groups: vec![X25519MLKEM768],
        ..aws_lc_rs::default_provider()
    })
}

fn load_cert(dir: &Path) -> CertificateDer<'static> {
    CertificateDer::from_pem_file(dir.join("server.crt")).expect("server.crt")
}

fn load_key(dir: &Path) -> PrivateKeyDer<'static> {
    PrivateKeyDer::from_pem_file(dir.join("server.key")).expect("server.key")
}

fn client_config(dir: &Path) -> Arc<ClientConfig> {
    let mut roots = RootCertStore::empty();
    roots
        .add(load_cert(dir))
        .expect("trust the test certificate");
    let config = ClientConfig::builder_with_provider(provider())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .expect("TLS 1.3 with aws-lc-rs")
        .with_root_certificates(roots)
        .with_no_client_auth();
    Arc::new(config)
}

fn server_config(dir: &Path) -> Arc<ServerConfig> {
    let config = ServerConfig::builder_with_provider(provider())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .expect("TLS 1.3 with aws-lc-rs")
        .with_no_client_auth()
        .with_single_cert(vec![load_cert(dir)], load_key(dir))
        .expect("server certificate and key");
    Arc::new(config)
}

/// A free localhost port (the OS picks it; it is released for s_server).
fn free_port() -> u16 {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port()
}

fn connect(port: u16) -> TcpStream {
    let sock = TcpStream::connect((Ipv4Addr::LOCALHOST, port)).expect("connect");
    sock.set_read_timeout(Some(IO_TIMEOUT)).expect("timeout");
    sock.set_write_timeout(Some(IO_TIMEOUT)).expect("timeout");
    sock
}

/// A child process, killed and reaped on drop.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `openssl s_server -www` with our provider on 127.0.0.1:`port`
/// and waits (bounded) for it to print "ACCEPT".
fn start_openssl_server(dir: &Path, port: u16, groups: &str) -> Killed {
    let mut cmd = openssl_with_provider(dir);
    cmd.args([
        "s_server",
        "-cert",
        "server.crt",
        "-key",
        "server.key",
        "-accept",
        &format!("127.0.0.1:{port}"),
        "-tls1_3",
        "-groups",
        groups,
        "-naccept",
        "1",
        "-www",
    ])
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::null());
    let mut server = Killed(cmd.spawn().expect("s_server"));
    let stdout = server.0.stdout.take().expect("stdout");
    let (ready_tx, ready_rx) = mpsc::channel();
    // Reads every line, so the server never blocks on a full pipe; the
    // first "ACCEPT" says it listens.
    thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            match line {
                Ok(line) if line.starts_with("ACCEPT") => {
                    let _ = ready_tx.send(());
                }
                Ok(_) => {}
                Err(_) => break,
            }
        }
    });
    if ready_rx.recv_timeout(PROCESS_TIMEOUT).is_err() {
        let status = server.0.try_wait();
        panic!("s_server -groups {groups} did not start ({status:?})");
    }
    server
}

/// Runs `cmd` with `input` on stdin (then closed) and returns its exit
/// status (`None` if killed at the deadline) and stdout + stderr.
fn run_bounded(mut cmd: Command, input: &[u8]) -> (Option<ExitStatus>, String) {
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = Killed(cmd.spawn().expect("spawn"));
    let drain = |mut pipe: Box<dyn Read + Send>| {
        thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = pipe.read_to_end(&mut buf);
            buf
        })
    };
    let stdout = drain(Box::new(child.0.stdout.take().expect("stdout")));
    let stderr = drain(Box::new(child.0.stderr.take().expect("stderr")));
    {
        let mut stdin = child.0.stdin.take().expect("stdin");
        let _ = stdin.write_all(input);
    }
    let deadline = Instant::now() + PROCESS_TIMEOUT;
    let status = loop {
        match child.0.try_wait().expect("wait") {
            Some(status) => break Some(status),
            None if Instant::now() >= deadline => break None,
            None => thread::sleep(Duration::from_millis(20)),
        }
    };
    // Kills the child on timeout, which closes the pipes for the drains.
    drop(child);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&stdout.join().expect("stdout drain")),
        String::from_utf8_lossy(&stderr.join().expect("stderr drain"))
    );
    (status, text)
}

/// Accepts one connection on `listener` within `PROCESS_TIMEOUT`.
fn accept_bounded(listener: &TcpListener) -> Result<TcpStream, String> {
    listener.set_nonblocking(true).map_err(|e| e.to_string())?;
    let deadline = Instant::now() + PROCESS_TIMEOUT;
    loop {
        match listener.accept() {
            Ok((sock, _)) => {
                sock.set_nonblocking(false).map_err(|e| e.to_string())?;
                sock.set_read_timeout(Some(IO_TIMEOUT))
                    .map_err(|e| e.to_string())?;
                sock.set_write_timeout(Some(IO_TIMEOUT))
                    .map_err(|e| e.to_string())?;
                return Ok(sock);
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                if Instant::now() >= deadline {
                    return Err("no client connected".into());
                }
                thread::sleep(Duration::from_millis(20));
            }
            Err(e) => return Err(format!("accept: {e}")),
        }
    }
}

/// What the rustls server saw.
#[derive(Debug)]
struct Served {
    group: Option<NamedGroup>,
    request: String,
}

/// Serves one connection with rustls: handshake, read the request (up to
/// its blank line), write `REPLY`, close_notify, close.
fn rustls_server(
    listener: TcpListener,
    config: Arc<ServerConfig>,
) -> JoinHandle<Result<Served, String>> {
    thread::spawn(move || {
        let sock = accept_bounded(&listener)?;
        let conn = ServerConnection::new(config).map_err(|e| e.to_string())?;
        let mut tls = StreamOwned::new(conn, sock);
        while tls.conn.is_handshaking() {
            tls.conn
                .complete_io(&mut tls.sock)
                .map_err(|e| format!("server handshake: {e}"))?;
        }
        let group = tls.conn.negotiated_key_exchange_group().map(|g| g.name());
        let mut request = Vec::new();
        let mut buf = [0u8; 1024];
        while !request.windows(4).any(|w| w == b"\r\n\r\n") {
            match tls.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => request.extend_from_slice(&buf[..n]),
                Err(e) => return Err(format!("server read: {e}")),
            }
        }
        tls.write_all(REPLY.as_bytes())
            .map_err(|e| format!("server write: {e}"))?;
        tls.conn.send_close_notify();
        while tls.conn.wants_write() {
            tls.conn
                .write_tls(&mut tls.sock)
                .map_err(|e| format!("server flush: {e}"))?;
        }
        let _ = tls.sock.shutdown(std::net::Shutdown::Write);
        Ok(Served {
            group,
            request: String::from_utf8_lossy(&request).into_owned(),
        })
    })
}

/// The rustls error inside an I/O error from a rustls stream, if any.
fn rustls_error(e: &std::io::Error) -> Option<&rustls::Error> {
    e.get_ref().and_then(|inner| inner.downcast_ref())
}

#[test]
fn rustls_client_to_openssl_server() {
    let dir = scratch("rustls-client");
    common::certificate(&dir);
    let port = free_port();
    let _server = start_openssl_server(&dir, port, "X25519MLKEM768");

    let name = ServerName::try_from("localhost").expect("server name");
    let conn = ClientConnection::new(client_config(&dir), name).expect("client");
    let mut tls = StreamOwned::new(conn, connect(port));
    while tls.conn.is_handshaking() {
        if let Err(e) = tls.conn.complete_io(&mut tls.sock) {
            panic!("rustls handshake with openssl s_server failed: {e}");
        }
    }
    let group = tls
        .conn
        .negotiated_key_exchange_group()
        .expect("a negotiated group")
        .name();
    assert_eq!(group, NamedGroup::X25519MLKEM768);
    assert_eq!(u16::from(group), X25519MLKEM768_CODE);
    assert_eq!(
        tls.conn.protocol_version(),
        Some(rustls::ProtocolVersion::TLSv1_3)
    );

    tls.write_all(b"GET / HTTP/1.0\r\n\r\n").expect("request");
    let mut response = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match tls.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => response.extend_from_slice(&buf[..n]),
            // A peer that closes without close_notify; the response is
            // what was read before it.
            Err(e) if e.kind() == ErrorKind::UnexpectedEof => break,
            Err(e) => panic!("reading the response: {e}"),
        }
    }
    let response = String::from_utf8_lossy(&response);
    assert!(
        response.starts_with("HTTP/1.0 200 ok"),
        "unexpected response:\n{response}"
    );
    // s_server -www reports the session, including the cipher it chose.
    assert!(response.contains("TLSv1.3"), "response:\n{response}");
}

#[test]
fn openssl_client_to_rustls_server() {
    let dir = scratch("rustls-server");
    common::certificate(&dir);
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let server = rustls_server(listener, server_config(&dir));

    let mut cmd = openssl_with_provider(&dir);
    cmd.args([
        "s_client",
        "-connect",
        &format!("127.0.0.1:{port}"),
        "-tls1_3",
        "-groups",
        "X25519MLKEM768",
        "-servername",
        "localhost",
        "-CAfile",
        "server.crt",
        "-verify_hostname",
        "localhost",
        "-verify_return_error",
        "-ign_eof",
    ]);
    let (status, text) = run_bounded(cmd, b"GET / HTTP/1.0\r\n\r\n");
    let served = server.join().expect("server thread");

    assert!(
        status.is_some_and(|s| s.success()),
        "s_client failed ({status:?}); server: {served:?}\n{text}"
    );
    assert!(text.contains(REPLY), "no reply in s_client output:\n{text}");
    assert!(text.contains("TLSv1.3"), "not TLS 1.3:\n{text}");
    assert!(
        text.contains("Verify return code: 0 (ok)"),
        "certificate not verified:\n{text}"
    );
    let served = served.expect("rustls server");
    assert_eq!(served.group, Some(NamedGroup::X25519MLKEM768));
    assert!(
        served.request.starts_with("GET / HTTP/1.0\r\n"),
        "request: {:?}",
        served.request
    );
}

#[test]
fn mismatched_groups_fail_cleanly() {
    let dir = scratch("rustls-mismatch");
    common::certificate(&dir);
    let port = free_port();
    // Pure ML-KEM-768, which the rustls client does not offer.
    let _server = start_openssl_server(&dir, port, "MLKEM768");

    let name = ServerName::try_from("localhost").expect("server name");
    let mut conn = ClientConnection::new(client_config(&dir), name).expect("client");
    let mut sock = connect(port);
    let started = Instant::now();
    let err = loop {
        if !conn.is_handshaking() {
            panic!(
                "handshake succeeded with {:?}",
                conn.negotiated_key_exchange_group().map(|g| g.name())
            );
        }
        if let Err(e) = conn.complete_io(&mut sock) {
            break e;
        }
    };
    let tls_err = rustls_error(&err)
        .unwrap_or_else(|| panic!("not a rustls error (timeout or I/O?): {err:?}"));
    assert_eq!(
        *tls_err,
        rustls::Error::AlertReceived(AlertDescription::HandshakeFailure),
        "{err}"
    );
    assert!(
        started.elapsed() < IO_TIMEOUT,
        "took {:?}",
        started.elapsed()
    );
}
