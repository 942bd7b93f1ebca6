//! 1,000 TLS 1.3 handshakes across four threads in one process, over the
//! pure and hybrid ML-KEM groups, with the provider loaded once into
//! OpenSSL's default library context (the system's 3.0, through the
//! `openssl` crate). Each handshake offers the client exactly one group, so
//! success means that group was negotiated; each exchanges a message both
//! ways.

mod common;

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::time::Duration;

use openssl::asn1::Asn1Time;
use openssl::bn::BigNum;
use openssl::ec::{EcGroup, EcKey};
use openssl::hash::MessageDigest;
use openssl::nid::Nid;
use openssl::pkey::{PKey, Private};
use openssl::ssl::{Ssl, SslContext, SslMethod, SslVerifyMode, SslVersion};
use openssl::x509::{X509Name, X509};

const THREADS: usize = 4;
const HANDSHAKES_PER_THREAD: usize = 250;
const GROUPS: [&str; 4] = [
    "MLKEM768",
    "X25519MLKEM768",
    "SecP256r1MLKEM768",
    "MLKEM1024",
];

/// A self-signed P-256 certificate and its key.
fn certificate() -> (X509, PKey<Private>) {
    let group = EcGroup::from_curve_name(Nid::X9_62_PRIME256V1).expect("P-256");
    let key = PKey::from_ec_key(EcKey::generate(&group).expect("EC key")).expect("pkey");
    let mut name = X509Name::builder().expect("name");
    name.append_entry_by_text("CN", "localhost").expect("CN");
    let name = name.build();
    let mut cert = X509::builder().expect("x509");
    cert.set_version(2).expect("version");
    cert.set_serial_number(
        &BigNum::from_u32(1)
            .expect("bn")
            .to_asn1_integer()
            .expect("serial"),
    )
    .expect("serial");
    cert.set_subject_name(&name).expect("subject");
    cert.set_issuer_name(&name).expect("issuer");
    cert.set_pubkey(&key).expect("pubkey");
    cert.set_not_before(&Asn1Time::days_from_now(0).expect("time"))
        .expect("not before");
    cert.set_not_after(&Asn1Time::days_from_now(1).expect("time"))
        .expect("not after");
    cert.sign(&key, MessageDigest::sha256()).expect("sign");
    (cert.build(), key)
}

fn server_context(cert: &X509, key: &PKey<Private>) -> SslContext {
    let mut ctx = SslContext::builder(SslMethod::tls_server()).expect("server ctx");
    ctx.set_min_proto_version(Some(SslVersion::TLS1_3))
        .expect("TLS 1.3");
    ctx.set_certificate(cert).expect("cert");
    ctx.set_private_key(key).expect("key");
    ctx.set_groups_list(&GROUPS.join(":"))
        .expect("server groups");
    ctx.build()
}

fn client_context(group: &str) -> SslContext {
    let mut ctx = SslContext::builder(SslMethod::tls_client()).expect("client ctx");
    ctx.set_min_proto_version(Some(SslVersion::TLS1_3))
        .expect("TLS 1.3");
    // The server's certificate is not what is tested here.
    ctx.set_verify(SslVerifyMode::NONE);
    ctx.set_groups_list(group).expect("client group");
    ctx.build()
}

/// One handshake over a socket pair, with a message each way.
fn handshake(server_ctx: &SslContext, client_ctx: &SslContext, round: usize) {
    let (server_end, client_end) = UnixStream::pair().expect("socket pair");
    for end in [&server_end, &client_end] {
        end.set_read_timeout(Some(Duration::from_secs(10)))
            .expect("timeout");
        end.set_write_timeout(Some(Duration::from_secs(10)))
            .expect("timeout");
    }
    std::thread::scope(|scope| {
        let server = scope.spawn(move || {
            let ssl = Ssl::new(server_ctx).expect("server ssl");
            let mut stream = ssl.accept(server_end).expect("server handshake");
            let mut request = [0u8; 5];
            stream.read_exact(&mut request).expect("server read");
            assert_eq!(&request, b"hello");
            stream
                .write_all(&(round as u64).to_le_bytes())
                .expect("server write");
        });
        let ssl = Ssl::new(client_ctx).expect("client ssl");
        let mut stream = ssl
            .connect(client_end)
            .unwrap_or_else(|e| panic!("round {round}: client handshake failed: {e}"));
        assert_eq!(stream.ssl().version_str(), "TLSv1.3");
        stream.write_all(b"hello").expect("client write");
        let mut reply = [0u8; 8];
        stream.read_exact(&mut reply).expect("client read");
        assert_eq!(u64::from_le_bytes(reply), round as u64);
        server.join().expect("server thread");
    });
}

#[test]
fn a_thousand_handshakes_across_four_threads() {
    common::load_providers();
    let (cert, key) = certificate();
    let server_ctx = server_context(&cert, &key);
    let clients: Vec<SslContext> = GROUPS.iter().map(|g| client_context(g)).collect();
    // Joined one by one (common::on_threads), not left to the scope's end: a
    // join waits until the thread has exited, past OpenSSL's thread-exit
    // handler (it takes a lock that OPENSSL_cleanup frees at process exit),
    // and it is what orders the two for ThreadSanitizer; the scope's own
    // wait returns when the closures return, which is before that handler.
    common::on_threads(THREADS, |thread| {
        for i in 0..HANDSHAKES_PER_THREAD {
            let round = thread * HANDSHAKES_PER_THREAD + i;
            handshake(&server_ctx, &clients[round % GROUPS.len()], round);
        }
    });
}
