//! `tls-bench`: full TLS 1.3 handshakes per second, in process, per key
//! exchange group and per implementation.
//!
//! Client and server run in one thread over an in-memory BIO pair and are
//! stepped in turn with non-blocking semantics (a read with nothing buffered
//! is `SSL_ERROR_WANT_READ`), so a handshake costs only the cryptography
//! and libssl's own work: no sockets, no threads, no scheduler. Every
//! handshake is a full one (no tickets, no session cache), with a fresh
//! `SSL` on each side; it checks the negotiated group and exchanges a small
//! message both ways.
//!
//! ```text
//! bash scripts/build-provider.sh
//! cargo run --release -p test-tools --bin tls-bench -- --seconds 1 --rounds 1
//! ```
//!
//! With `--connect HOST:PORT` it is instead the client of a real server
//! (`scripts/nginx-soak.sh` runs it against nginx): N connections in flight
//! over TCP, each a full TLS 1.3 handshake and an HTTP/1.0 `GET /`.

use std::ffi::{c_int, c_long, CStr, CString};
use std::io::{Read, Write};
use std::marker::PhantomData;
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::ExitCode;
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use clap::Parser;
use foreign_types_shared::ForeignTypeRef;
use openssl::asn1::Asn1Time;
use openssl::bn::BigNum;
use openssl::ec::{EcGroup, EcKey};
use openssl::hash::MessageDigest;
use openssl::nid::Nid;
use openssl::pkey::{PKey, Private};
use openssl::ssl::{
    Ssl, SslContext, SslContextBuilder, SslMethod, SslOptions, SslSessionCacheMode, SslVerifyMode,
    SslVersion,
};
use openssl::x509::{X509Name, X509};
use openssl_sys as ffi;
use serde_json::json;
use test_tools::cli::{self, default_provider_dir, positive, Files, Progress};
use test_tools::evp_harness::{clear_openssl_errors, take_openssl_errors, Library};
use test_tools::measure::{Measurement, Operation, Trial};
use test_tools::system_info::openssl_version;
use test_tools::table::{Column, Style, Table, Value};

// libssl / libcrypto 3.0 functions that openssl-sys does not declare.
extern "C" {
    fn SSL_CTX_new_ex(
        libctx: *mut ffi::OSSL_LIB_CTX,
        propq: *const std::ffi::c_char,
        method: *const ffi::SSL_METHOD,
    ) -> *mut ffi::SSL_CTX;
    fn BIO_new_bio_pair(
        bio1: *mut *mut ffi::BIO,
        writebuf1: usize,
        bio2: *mut *mut ffi::BIO,
        writebuf2: usize,
    ) -> c_int;
}

/// `SSL_get_negotiated_group(s)` is `SSL_ctrl(s, this, 0, NULL)`.
const SSL_CTRL_GET_NEGOTIATED_GROUP: c_int = 134;
/// libssl reports a group it has no NID for as this bit or'ed with the
/// group's TLS code point.
const TLSEXT_NID_UNKNOWN: c_long = 0x100_0000;

/// The groups measured when none is named.
const DEFAULT_GROUPS: [&str; 5] = [
    "X25519",
    "MLKEM768",
    "X25519MLKEM768",
    "SecP256r1MLKEM768",
    "MLKEM1024",
];
/// The classical group the ratio column compares with.
const BASELINE_GROUP: &str = "X25519";
const DEFAULT_SECONDS: f64 = 2.0;
const DEFAULT_ROUNDS: usize = 3;
/// Handshake steps per side before a handshake is declared stuck (a full
/// TLS 1.3 handshake needs 2 to 3).
const MAX_STEPS: usize = 16;

/// Full TLS 1.3 handshakes per second, in process: client and server in one
/// thread over an in-memory BIO pair, stepped in turn.
///
/// Every handshake is a full one (no session tickets, no session cache) with
/// a fresh SSL on each side and a self-signed P-256 ECDSA server certificate
/// made at start-up; each checks the negotiated group
/// (SSL_get_negotiated_group: the NID of a classical group, the code point
/// of a provider group) and exchanges a small message both ways. Each side
/// offers exactly the one group measured.
///
/// Implementations: `ours` is providers `mlkem` and `default` in their own
/// OSSL_LIB_CTX, which the SSL_CTXs are made in (SSL_CTX_new_ex, property
/// query ?provider=mlkem; X25519 is served there by `default`); `native` the
/// `default` provider alone in its own OSSL_LIB_CTX, when the linked libssl
/// offers ML-KEM groups (OpenSSL 3.5+; skipped with a note on 3.0-3.4).
///
/// The table: group, implementation, median handshakes/s, ms/handshake, the
/// ratio of its handshakes/s to X25519's with the same implementation (when
/// X25519 is measured) and the number of rounds. Progress goes to stderr.
#[derive(Parser, Debug, PartialEq)]
#[command(name = "tls-bench")]
struct Args {
    /// Where mlkem.so is (made by `bash scripts/build-provider.sh`)
    #[arg(long, value_name = "DIR", default_value_os_t = default_provider_dir())]
    provider_dir: PathBuf,
    /// Comma-separated TLS groups [default:
    /// X25519,MLKEM768,X25519MLKEM768,SecP256r1MLKEM768,MLKEM1024]
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = group_name)]
    groups: Vec<String>,
    /// Handshake for S seconds per group, implementation and round [default:
    /// 2; 0.2 with --quick]
    #[arg(long, value_name = "S", value_parser = seconds, conflicts_with = "handshakes")]
    seconds: Option<f64>,
    /// Or exactly N handshakes each
    #[arg(long, value_name = "N", value_parser = positive)]
    handshakes: Option<usize>,
    /// Rounds; each round runs every group in turn, and the reported rate is
    /// the median over rounds [default: 3; 1 with --quick]
    #[arg(long, value_name = "R", value_parser = positive)]
    rounds: Option<usize>,
    /// One short round, for a smoke run
    #[arg(long)]
    quick: bool,
    /// Be the client of the TLS server at HOST:PORT instead (one round per
    /// group: full handshakes, each followed by an HTTP/1.0 GET /, with
    /// --in-flight connections at a time; failures are counted and fail the
    /// run at the end)
    #[arg(long, value_name = "HOST:PORT")]
    connect: Option<String>,
    /// Connections in flight with --connect (one thread each)
    #[arg(long, value_name = "N", value_parser = positive, default_value_t = 8, requires = "connect")]
    in_flight: usize,
    #[command(flatten)]
    files: Files,
}

fn group_name(group: &str) -> Result<String, String> {
    let group = group.trim();
    match group.is_empty() || group.contains(['\0', ':']) {
        true => Err(format!("bad group name {group:?}")),
        false => Ok(group.to_owned()),
    }
}

fn seconds(value: &str) -> Result<f64, String> {
    match value.parse::<f64>() {
        Ok(s) if s.is_finite() && s > 0.0 => Ok(s),
        _ => Err(format!("expected a number above 0, got {value:?}")),
    }
}

fn main() -> ExitCode {
    cli::exit("tls-bench", run(&Args::parse()))
}

/// How long each (group, implementation) runs in a round.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Budget {
    /// For at least this long.
    Seconds(f64),
    /// Exactly this many handshakes.
    Handshakes(usize),
}

impl std::fmt::Display for Budget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Budget::Seconds(s) => write!(f, "{s} s"),
            Budget::Handshakes(n) => write!(f, "{n} handshakes"),
        }
    }
}

impl Args {
    fn budget(&self) -> Budget {
        match (self.handshakes, self.seconds) {
            (Some(n), _) => Budget::Handshakes(n),
            (None, s) => {
                Budget::Seconds(s.unwrap_or(if self.quick { 0.2 } else { DEFAULT_SECONDS }))
            }
        }
    }

    fn rounds(&self) -> usize {
        self.rounds
            .unwrap_or(if self.quick { 1 } else { DEFAULT_ROUNDS })
    }

    /// The groups, each once (names compared without case).
    fn groups(&self) -> Vec<String> {
        let mut groups: Vec<String> = Vec::new();
        let given = match self.groups.is_empty() {
            true => DEFAULT_GROUPS.map(str::to_owned).to_vec(),
            false => self.groups.clone(),
        };
        for group in given {
            if !groups.iter().any(|g| g.eq_ignore_ascii_case(&group)) {
                groups.push(group);
            }
        }
        groups
    }
}

// ------------------------------------------------------------------ groups

/// What `SSL_get_negotiated_group` reports for a group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct KnownGroup {
    /// OpenSSL's names for it (the first is the canonical one).
    names: &'static [&'static str],
    /// The TLS `NamedGroup` code point.
    code_point: u16,
    /// The NID libssl reports for a classical group.
    nid: Option<c_int>,
}

impl KnownGroup {
    /// Whether `SSL_get_negotiated_group` returned this group.
    fn matches(&self, reported: c_long) -> bool {
        self.nid.is_some_and(|nid| reported == c_long::from(nid))
            || reported == TLSEXT_NID_UNKNOWN | c_long::from(self.code_point)
    }
}

/// A [`KnownGroup`].
const fn group(names: &'static [&'static str], code_point: u16, nid: Option<c_int>) -> KnownGroup {
    KnownGroup {
        names,
        code_point,
        nid,
    }
}

/// The groups whose negotiation can be checked exactly.
const KNOWN_GROUPS: [KnownGroup; 11] = [
    group(&["X25519", "x25519"], 0x001d, Some(ffi::NID_X25519)),
    group(&["X448", "x448"], 0x001e, Some(ffi::NID_X448)),
    group(
        &["P-256", "secp256r1", "prime256v1"],
        0x0017,
        Some(ffi::NID_X9_62_prime256v1),
    ),
    group(&["P-384", "secp384r1"], 0x0018, Some(ffi::NID_secp384r1)),
    group(&["P-521", "secp521r1"], 0x0019, Some(ffi::NID_secp521r1)),
    group(&["MLKEM512"], 0x0200, None),
    group(&["MLKEM768"], 0x0201, None),
    group(&["MLKEM1024"], 0x0202, None),
    group(&["SecP256r1MLKEM768"], 0x11eb, None),
    group(&["X25519MLKEM768"], 0x11ec, None),
    group(&["SecP384r1MLKEM1024"], 0x11ed, None),
];

fn known_group(name: &str) -> Option<&'static KnownGroup> {
    KNOWN_GROUPS
        .iter()
        .find(|g| g.names.iter().any(|n| n.eq_ignore_ascii_case(name)))
}

// ------------------------------------------------------------------ TLS objects

/// The server's certificate and key.
struct Identity {
    certificate: X509,
    key: PKey<Private>,
}

impl Identity {
    /// A self-signed P-256 ECDSA certificate for `localhost`, valid for a
    /// day.
    fn generate() -> Result<Identity, String> {
        let e =
            |what: &str, err: openssl::error::ErrorStack| format!("certificate ({what}): {err}");
        let group = EcGroup::from_curve_name(Nid::X9_62_PRIME256V1).map_err(|x| e("P-256", x))?;
        let ec = EcKey::generate(&group).map_err(|x| e("key", x))?;
        let key = PKey::from_ec_key(ec).map_err(|x| e("key", x))?;
        let mut name = X509Name::builder().map_err(|x| e("name", x))?;
        name.append_entry_by_text("CN", "localhost")
            .map_err(|x| e("name", x))?;
        let name = name.build();
        let serial = BigNum::from_u32(1)
            .and_then(|n| n.to_asn1_integer())
            .map_err(|x| e("serial", x))?;
        let mut cert = X509::builder().map_err(|x| e("builder", x))?;
        cert.set_version(2).map_err(|x| e("version", x))?;
        cert.set_serial_number(&serial)
            .map_err(|x| e("serial", x))?;
        cert.set_subject_name(&name).map_err(|x| e("subject", x))?;
        cert.set_issuer_name(&name).map_err(|x| e("issuer", x))?;
        cert.set_pubkey(&key).map_err(|x| e("public key", x))?;
        let not_before = Asn1Time::days_from_now(0).map_err(|x| e("validity", x))?;
        let not_after = Asn1Time::days_from_now(1).map_err(|x| e("validity", x))?;
        cert.set_not_before(&not_before)
            .map_err(|x| e("validity", x))?;
        cert.set_not_after(&not_after)
            .map_err(|x| e("validity", x))?;
        cert.sign(&key, MessageDigest::sha256())
            .map_err(|x| e("signature", x))?;
        Ok(Identity {
            certificate: cert.build(),
            key,
        })
    }
}

/// An `SSL_CTX` made in a [`Library`]'s context (which must outlive it).
struct TlsContext<'l> {
    /// Owns the `SSL_CTX` (frees it when dropped).
    owner: SslContext,
    /// The same `SSL_CTX`, valid while `ctx` lives.
    raw: NonNull<ffi::SSL_CTX>,
    _library: PhantomData<&'l Library>,
}

impl<'l> TlsContext<'l> {
    /// A TLS 1.3-only context offering (client) or accepting (server, with
    /// `identity`) exactly `group`, with tickets and session caching off.
    fn new(
        library: &'l Library,
        propquery: Option<&CStr>,
        group: &str,
        identity: Option<&Identity>,
    ) -> Result<TlsContext<'l>, String> {
        let side = if identity.is_some() {
            "server"
        } else {
            "client"
        };
        let method = if identity.is_some() {
            SslMethod::tls_server()
        } else {
            SslMethod::tls_client()
        };
        let e = |what: &str, err: openssl::error::ErrorStack| format!("{side} {what}: {err}");
        clear_openssl_errors();
        // SAFETY: a live library context (borrowed for 'l), a
        // NUL-terminated property query or NULL, and a static method.
        let raw = unsafe {
            SSL_CTX_new_ex(
                library.as_ptr(),
                propquery.map_or(ptr::null(), CStr::as_ptr),
                method.as_ptr(),
            )
        };
        let raw = NonNull::new(raw)
            .ok_or_else(|| format!("{side} SSL_CTX_new_ex: {}", take_openssl_errors()))?;
        // SAFETY: a new SSL_CTX that nothing else owns; the builder frees it.
        let mut builder = unsafe { SslContextBuilder::from_ptr(raw.as_ptr()) };
        builder
            .set_min_proto_version(Some(SslVersion::TLS1_3))
            .map_err(|x| e("TLS 1.3", x))?;
        builder
            .set_max_proto_version(Some(SslVersion::TLS1_3))
            .map_err(|x| e("TLS 1.3", x))?;
        builder
            .set_groups_list(group)
            .map_err(|x| e(&format!("group {group}"), x))?;
        builder.set_session_cache_mode(SslSessionCacheMode::OFF);
        builder.set_options(SslOptions::NO_TICKET);
        match identity {
            Some(identity) => {
                builder.set_num_tickets(0).map_err(|x| e("tickets", x))?;
                builder
                    .set_certificate(&identity.certificate)
                    .map_err(|x| e("certificate", x))?;
                builder
                    .set_private_key(&identity.key)
                    .map_err(|x| e("private key", x))?;
                builder.check_private_key().map_err(|x| e("key check", x))?;
            }
            // The certificate is not what is measured; the client still
            // checks the server's CertificateVerify signature.
            None => builder.set_verify(SslVerifyMode::NONE),
        }
        Ok(TlsContext {
            owner: builder.build(),
            raw,
            _library: PhantomData,
        })
    }
}

/// One end of a connection: an `SSL` with its half of a BIO pair.
struct Connection<'c> {
    ssl: NonNull<ffi::SSL>,
    side: &'static str,
    _context: PhantomData<&'c SslContext>,
}

impl Drop for Connection<'_> {
    fn drop(&mut self) {
        // SAFETY: ours, freed once; this also frees its BIO.
        unsafe { ffi::SSL_free(self.ssl.as_ptr()) };
    }
}

/// What a non-blocking TLS call did.
enum Step<T> {
    Done(T),
    /// It needs the peer to send (or drain) first.
    Blocked,
}

impl<'c> Connection<'c> {
    fn new(context: &'c TlsContext<'_>, side: &'static str) -> Result<Connection<'c>, String> {
        // SAFETY: a live SSL_CTX: `context.owner` owns `context.raw`, and the
        // borrow of `context` ('c) keeps it alive while this connection
        // lives (an SSL also holds a reference to its SSL_CTX).
        let ssl = unsafe { ffi::SSL_new(context.raw.as_ptr()) };
        let ssl = NonNull::new(ssl)
            .ok_or_else(|| format!("{side} SSL_new: {}", take_openssl_errors()))?;
        Ok(Connection {
            ssl,
            side,
            _context: PhantomData,
        })
    }

    /// A client and a server joined by an in-memory BIO pair.
    fn pair(
        client: &'c TlsContext<'_>,
        server: &'c TlsContext<'_>,
    ) -> Result<(Connection<'c>, Connection<'c>), String> {
        let (client, server) = (
            Connection::new(client, "client")?,
            Connection::new(server, "server")?,
        );
        let (mut client_bio, mut server_bio) = (ptr::null_mut(), ptr::null_mut());
        // SAFETY: two out-pointers; 0 asks for the default buffer sizes.
        if unsafe { BIO_new_bio_pair(&mut client_bio, 0, &mut server_bio, 0) } != 1 {
            return Err(format!("BIO_new_bio_pair: {}", take_openssl_errors()));
        }
        // SAFETY: live SSLs and new BIOs; each SSL takes over the one
        // reference of its BIO (used for reading and writing), and the two
        // halves of the pair are freed with their SSLs.
        unsafe {
            ffi::SSL_set_bio(client.ssl.as_ptr(), client_bio, client_bio);
            ffi::SSL_set_bio(server.ssl.as_ptr(), server_bio, server_bio);
            ffi::SSL_set_connect_state(client.ssl.as_ptr());
            ffi::SSL_set_accept_state(server.ssl.as_ptr());
        }
        Ok((client, server))
    }

    /// Turns the result of an SSL I/O call into a [`Step`] or an error.
    fn outcome(&self, what: &str, rc: c_int) -> Result<Step<usize>, String> {
        if rc > 0 {
            return Ok(Step::Done(rc as usize));
        }
        // SAFETY: a live SSL and the return value of its last call.
        match unsafe { ffi::SSL_get_error(self.ssl.as_ptr(), rc) } {
            ffi::SSL_ERROR_WANT_READ | ffi::SSL_ERROR_WANT_WRITE => Ok(Step::Blocked),
            code => Err(format!(
                "{} {what}: SSL error {code}: {}",
                self.side,
                take_openssl_errors()
            )),
        }
    }

    /// Advances the handshake as far as the buffered input allows.
    fn handshake(&mut self) -> Result<Step<()>, String> {
        // SAFETY: a live SSL with its BIO set.
        let rc = unsafe { ffi::SSL_do_handshake(self.ssl.as_ptr()) };
        Ok(match self.outcome("handshake", rc)? {
            Step::Done(_) => Step::Done(()),
            Step::Blocked => Step::Blocked,
        })
    }

    /// Writes all of `data` (small enough for the BIO pair's buffer).
    fn write(&mut self, data: &[u8]) -> Result<(), String> {
        let len = c_int::try_from(data.len()).map_err(|_| "message too long".to_owned())?;
        // SAFETY: a live SSL and a buffer readable for `len` bytes.
        let rc = unsafe { ffi::SSL_write(self.ssl.as_ptr(), data.as_ptr().cast(), len) };
        match self.outcome("write", rc)? {
            Step::Done(n) if n == data.len() => Ok(()),
            Step::Done(n) => Err(format!("{} wrote {n} of {} bytes", self.side, data.len())),
            Step::Blocked => Err(format!("{} write blocked", self.side)),
        }
    }

    /// Reads what has arrived into `buf`.
    fn read(&mut self, buf: &mut [u8]) -> Result<Step<usize>, String> {
        let len = c_int::try_from(buf.len()).unwrap_or(c_int::MAX);
        // SAFETY: a live SSL and a buffer writable for `len` bytes.
        let rc = unsafe { ffi::SSL_read(self.ssl.as_ptr(), buf.as_mut_ptr().cast(), len) };
        self.outcome("read", rc)
    }

    /// The negotiated protocol version (`SSL_version`).
    fn version(&self) -> c_int {
        // SAFETY: a live SSL.
        unsafe { ffi::SSL_version(self.ssl.as_ptr()) }
    }

    /// `SSL_get_negotiated_group`: a NID, or [`TLSEXT_NID_UNKNOWN`] | code
    /// point for a group without one.
    fn negotiated_group(&self) -> c_long {
        // SAFETY: `self.ssl` is live while this connection is.
        unsafe { negotiated_group(self.ssl.as_ptr()) }
    }
}

/// `SSL_get_negotiated_group`.
///
/// # Safety
/// `ssl` is a live `SSL`.
unsafe fn negotiated_group(ssl: *mut ffi::SSL) -> c_long {
    // SAFETY: a live SSL (the caller's contract); this control reads state
    // and takes no pointer.
    unsafe { ffi::SSL_ctrl(ssl, SSL_CTRL_GET_NEGOTIATED_GROUP, 0, ptr::null_mut()) }
}

/// The client and server contexts of one (implementation, group).
struct GroupContexts<'l> {
    group: String,
    known: Option<&'static KnownGroup>,
    client: TlsContext<'l>,
    server: TlsContext<'l>,
}

impl<'l> GroupContexts<'l> {
    fn new(
        library: &'l Library,
        propquery: Option<&CStr>,
        group: &str,
        identity: &Identity,
    ) -> Result<GroupContexts<'l>, String> {
        Ok(GroupContexts {
            group: group.to_owned(),
            known: known_group(group),
            client: TlsContext::new(library, propquery, group, None)?,
            server: TlsContext::new(library, propquery, group, Some(identity))?,
        })
    }

    /// One full handshake, its checks and a message each way; `serial`
    /// tags the messages.
    fn handshake(&self, serial: u64) -> Result<(), String> {
        let (mut client, mut server) = Connection::pair(&self.client, &self.server)?;
        let (mut client_done, mut server_done) = (false, false);
        for _ in 0..MAX_STEPS {
            if !client_done {
                client_done = matches!(client.handshake()?, Step::Done(()));
            }
            if !server_done {
                server_done = matches!(server.handshake()?, Step::Done(()));
            }
            if client_done && server_done {
                break;
            }
        }
        if !(client_done && server_done) {
            return Err(format!(
                "{}: handshake unfinished after {MAX_STEPS} steps (client done: \
                 {client_done}, server done: {server_done})",
                self.group
            ));
        }
        for end in [&client, &server] {
            if end.version() != ffi::TLS1_3_VERSION {
                return Err(format!(
                    "{}: {} negotiated version {:#x}, not TLS 1.3",
                    self.group,
                    end.side,
                    end.version()
                ));
            }
            let reported = end.negotiated_group();
            if self.known.is_some_and(|k| !k.matches(reported)) {
                return Err(format!(
                    "{}: {} reports negotiated group {reported:#x}",
                    self.group, end.side
                ));
            }
        }
        let request = serial.to_le_bytes();
        client.write(&request)?;
        expect_message(&mut server, &request)?;
        let reply = (!serial).to_le_bytes();
        server.write(&reply)?;
        expect_message(&mut client, &reply)
    }
}

/// Reads one message and checks it is `expected`.
fn expect_message(end: &mut Connection<'_>, expected: &[u8]) -> Result<(), String> {
    let mut buf = [0u8; 64];
    match end.read(&mut buf)? {
        Step::Done(n) if buf[..n] == *expected => Ok(()),
        Step::Done(n) => Err(format!(
            "{} read {:02x?}, expected {expected:02x?}",
            end.side,
            &buf[..n]
        )),
        Step::Blocked => Err(format!("{} read: no message arrived", end.side)),
    }
}

/// An implementation: a library context and the property query its
/// SSL_CTXs use.
struct Implementation {
    name: &'static str,
    library: Library,
    propquery: Option<CString>,
    description: String,
}

/// Runs handshakes for one round's budget.
fn run_round(
    contexts: &GroupContexts<'_>,
    budget: Budget,
    serial: &mut u64,
) -> Result<Trial, String> {
    let start = Instant::now();
    let mut handshakes = 0;
    loop {
        let done = match budget {
            Budget::Handshakes(n) => handshakes >= n,
            Budget::Seconds(s) => start.elapsed() >= Duration::from_secs_f64(s),
        };
        if done {
            break;
        }
        *serial += 1;
        contexts.handshake(*serial)?;
        handshakes += 1;
    }
    Ok(Trial::timed(
        handshakes as u64,
        start.elapsed().as_secs_f64(),
        None,
    ))
}

/// Loads `ours` and, when the linked libssl has ML-KEM groups, `native`.
fn load_implementations(
    args: &Args,
    notes: &mut Vec<String>,
) -> Result<Vec<Implementation>, String> {
    cli::require_provider(&args.provider_dir)?;
    let ours =
        Library::load(Some(&args.provider_dir), "mlkem").map_err(|e| format!("ours: {e}"))?;
    let native = Library::load(None, "default").map_err(|e| format!("native: {e}"))?;
    let mut implementations = vec![Implementation {
        name: "ours",
        description: format!(
            "ours: providers mlkem ({}) + default in one OSSL_LIB_CTX, SSL_CTX_new_ex with \
             propquery ?provider=mlkem",
            args.provider_dir.display()
        ),
        library: ours,
        propquery: Some(c"?provider=mlkem".to_owned()),
    }];
    // Native runs where the linked libssl has a non-classical group of the
    // list; on 3.0-3.4 it would only repeat ours' X25519.
    let groups = args.groups();
    let post_quantum: Vec<&String> = groups
        .iter()
        .filter(|g| known_group(g).is_none_or(|k| k.nid.is_none()))
        .collect();
    let native_has = |group: &str| {
        let has = TlsContext::new(&native, None, group, None).is_ok();
        clear_openssl_errors();
        has
    };
    if post_quantum.iter().any(|g| native_has(g)) {
        implementations.push(Implementation {
            name: "native",
            description: "native: provider default alone in one OSSL_LIB_CTX".to_owned(),
            library: native,
            propquery: None,
        });
    } else if !post_quantum.is_empty() {
        notes.push(format!(
            "native: the linked OpenSSL {} has none of {}; skipped (OpenSSL 3.5+ has them)",
            openssl_version(),
            post_quantum
                .iter()
                .map(|g| g.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    Ok(implementations)
}

/// The handshakes/s column of both tables.
fn rate_column() -> Column {
    Column::number(
        "handshakes/s",
        "handshakes_per_sec",
        Style::Fixed(0),
        Style::Fixed(1),
    )
}

/// The column of the ratio to X25519's handshakes/s.
fn ratio_column() -> Column {
    Column::number(
        "vs X25519",
        "ratio_to_x25519",
        Style::Fixed(2),
        Style::Fixed(4),
    )
}

/// Per group and implementation: the median over rounds of handshakes/s,
/// ms per handshake, the ratio to X25519 with the same implementation and
/// the rounds; in the files also the handshakes and seconds in all, and in
/// JSON every round.
fn results_table(measurements: &[Measurement]) -> Table {
    let mut table = Table::new(vec![
        Column::new("group", "group"),
        Column::new("implementation", "implementation"),
        Column::new("openssl_version", "openssl_version").file_only(),
        rate_column(),
        Column::number(
            "ms/handshake",
            "ms_per_handshake",
            Style::Fixed(3),
            Style::Fixed(4),
        ),
        ratio_column(),
        Column::new("rounds", "rounds").right(),
        Column::new("handshakes", "handshakes").file_only(),
        Column::new("seconds", "seconds")
            .csv(Style::Fixed(3))
            .file_only(),
        Column::new("raw rounds", "raw_rounds").json_only(),
    ]);
    for m in measurements {
        let rate = m.ops_per_sec();
        let baseline = measurements.iter().find(|b| {
            b.implementation == m.implementation
                && b.parameter_set.eq_ignore_ascii_case(BASELINE_GROUP)
        });
        table.push(vec![
            Value::text(&m.parameter_set),
            Value::text(&m.implementation),
            Value::Text(openssl_version()),
            Value::Num(rate),
            Value::Num(1e3 / rate),
            Value::num(baseline.map(|b| rate / b.ops_per_sec())),
            Value::Int(m.trials.len() as u64),
            Value::Int(m.operations()),
            Value::Num(m.trials.iter().map(|t| t.seconds).sum()),
            Value::Json(serde_json::to_value(&m.trials).unwrap_or_default()),
        ]);
    }
    table
}

// ------------------------------------------------------------------ external server

/// What one group's run against `--connect` did.
struct ExternalRun {
    group: String,
    handshakes: usize,
    failures: usize,
    first_failure: Option<String>,
    seconds: f64,
}

/// One connection: TCP, a full TLS 1.3 handshake offering only `known`'s
/// group, a check of the negotiated group, and `GET /` answered with 200.
fn external_handshake(
    address: &str,
    context: &SslContext,
    known: Option<&KnownGroup>,
) -> Result<(), String> {
    let tcp = TcpStream::connect(address).map_err(|e| format!("connect: {e}"))?;
    let _ = tcp.set_nodelay(true);
    let ssl = Ssl::new(context).map_err(|e| format!("SSL_new: {e}"))?;
    let mut tls = ssl.connect(tcp).map_err(|e| format!("handshake: {e}"))?;
    // SAFETY: `tls` owns this live SSL for the whole call.
    let reported = unsafe { negotiated_group(tls.ssl().as_ptr()) };
    if known.is_some_and(|k| !k.matches(reported)) {
        return Err(format!("negotiated group {reported:#x}"));
    }
    tls.write_all(b"GET / HTTP/1.0\r\nHost: localhost\r\n\r\n")
        .map_err(|e| format!("write: {e}"))?;
    let mut response = Vec::new();
    tls.read_to_end(&mut response)
        .map_err(|e| format!("read: {e}"))?;
    match response.starts_with(b"HTTP/1.1 200 ") {
        true => Ok(()),
        false => Err(format!(
            "response {:?}",
            String::from_utf8_lossy(&response[..response.len().min(40)])
        )),
    }
}

/// Handshakes with `--connect` for one group, `--in-flight` at a time,
/// until the budget is spent; failures are counted, not fatal.
fn external_round(args: &Args, address: &str, context: &SslContext, group: &str) -> ExternalRun {
    let budget = args.budget();
    let known = known_group(group);
    let (started, done, failed) = (
        AtomicUsize::new(0),
        AtomicUsize::new(0),
        AtomicUsize::new(0),
    );
    let first_failure = Mutex::new(None);
    let start = Instant::now();
    std::thread::scope(|scope| {
        let threads: Vec<_> = (0..args.in_flight)
            .map(|_| {
                scope.spawn(|| loop {
                    let more = match budget {
                        Budget::Handshakes(n) => started.fetch_add(1, Ordering::Relaxed) < n,
                        Budget::Seconds(s) => start.elapsed() < Duration::from_secs_f64(s),
                    };
                    if !more {
                        break;
                    }
                    let outcome = external_handshake(address, context, known);
                    done.fetch_add(1, Ordering::Relaxed);
                    if let Err(e) = outcome {
                        failed.fetch_add(1, Ordering::Relaxed);
                        let mut first = first_failure.lock().unwrap_or_else(|p| p.into_inner());
                        first.get_or_insert(e);
                    }
                })
            })
            .collect();
        // Joined one by one: join() waits for the thread to end, after
        // OpenSSL's thread-exit handlers (its per-thread state in our
        // library context); the scope's own wait does not, and the library
        // context freed right after raced them (a crash at exit, once in
        // a few runs).
        for thread in threads {
            thread.join().expect("a client thread panicked");
        }
    });
    ExternalRun {
        group: group.to_owned(),
        handshakes: done.into_inner(),
        failures: failed.load(Ordering::Relaxed),
        first_failure: first_failure
            .into_inner()
            .unwrap_or_else(|p| p.into_inner()),
        seconds: start.elapsed().as_secs_f64(),
    }
}

/// Per group: handshakes, failures, seconds, handshakes/s and the ratio to
/// X25519's.
fn external_table(runs: &[ExternalRun]) -> Table {
    let mut table = Table::new(vec![
        Column::new("group", "group"),
        Column::new("handshakes", "handshakes").right(),
        Column::new("failures", "failures").right(),
        Column::number("seconds", "seconds", Style::Fixed(1), Style::Fixed(3)),
        rate_column(),
        ratio_column(),
    ]);
    let rate = |r: &ExternalRun| r.handshakes as f64 / r.seconds;
    let baseline = runs
        .iter()
        .find(|r| r.group.eq_ignore_ascii_case(BASELINE_GROUP));
    for run in runs {
        table.push(vec![
            Value::text(&run.group),
            Value::Int(run.handshakes as u64),
            Value::Int(run.failures as u64),
            Value::Num(run.seconds),
            Value::Num(rate(run)),
            Value::num(baseline.map(|b| rate(run) / rate(b))),
        ]);
    }
    table
}

/// `--connect`: our provider's client against an external server.
fn run_external(args: &Args, address: &str) -> Result<(), String> {
    cli::require_provider(&args.provider_dir)?;
    let ours = Library::load(Some(&args.provider_dir), "mlkem")?;
    let budget = args.budget().to_string();
    println!(
        "tls-bench: client of {address}, {}, providers mlkem ({}) + default; {budget} per group, {} connections in flight; full TLS 1.3 handshakes (no resumption) + GET /",
        openssl::version::version(),
        args.provider_dir.display(),
        args.in_flight
    );
    let mut runs = Vec::new();
    for group in &args.groups() {
        let context = TlsContext::new(&ours, Some(c"?provider=mlkem"), group, None)?;
        let run = external_round(args, address, &context.owner, group);
        eprintln!(
            "[{group}] {} handshakes, {} failures in {:.1} s",
            run.handshakes, run.failures, run.seconds
        );
        runs.push(run);
    }
    let table = external_table(&runs);
    print!("\n{}", table.render());
    let failures: Vec<String> = runs
        .iter()
        .filter_map(|r| {
            let first = r.first_failure.as_deref()?;
            Some(format!(
                "{}: {} failed (first: {first})",
                r.group, r.failures
            ))
        })
        .collect();
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

fn run(args: &Args) -> Result<(), String> {
    if let Some(address) = &args.connect {
        return run_external(args, address);
    }
    let mut notes = Vec::new();
    let implementations = load_implementations(args, &mut notes)?;
    let identity = Identity::generate()?;

    // Every (group, implementation), checked with one handshake each.
    let mut contexts: Vec<GroupContexts<'_>> = Vec::new();
    let mut measurements: Vec<Measurement> = Vec::new();
    let mut serial = 0u64;
    for group in &args.groups() {
        for implementation in &implementations {
            let propquery = implementation.propquery.as_deref();
            let made =
                match GroupContexts::new(&implementation.library, propquery, group, &identity) {
                    Ok(made) => made,
                    Err(e) if implementation.name == "native" => {
                        notes.push(format!("native: skipped {group}: {e}"));
                        continue;
                    }
                    Err(e) => return Err(format!("{}: {e}", implementation.name)),
                };
            serial += 1;
            made.handshake(serial)
                .map_err(|e| format!("{}: first handshake: {e}", implementation.name))?;
            contexts.push(made);
            measurements.push(Measurement::new(
                implementation.name,
                group,
                Operation::Handshake,
            ));
        }
    }

    let budget = args.budget().to_string();
    let rounds = args.rounds();
    println!(
        "tls-bench: {}; {rounds} round(s) x {budget} per group and implementation; full TLS 1.3 \
         handshakes (no resumption), P-256 ECDSA server certificate, in-memory BIO pair, \
         one thread",
        openssl::version::version(),
    );
    implementations
        .iter()
        .for_each(|i| println!("  {}", i.description));
    notes.iter().for_each(|note| println!("note: {note}"));

    let progress = Progress::new();
    for round in 1..=rounds {
        for (made, m) in contexts.iter().zip(&mut measurements) {
            let result = run_round(made, args.budget(), &mut serial)
                .map_err(|e| format!("{} round {round}: {e}", m.implementation))?;
            progress.update(&format!(
                "[{} {}] round {round}/{rounds}: {} handshakes in {:.2} s ({:.0}/s)",
                m.implementation,
                m.parameter_set,
                result.operations,
                result.seconds,
                result.ops_per_sec
            ));
            m.trials.push(result);
        }
    }
    progress.finish();

    let table = results_table(&measurements);
    print!("\n{}", table.render());
    let settings = json!({
        "tool": "tls-bench",
        "openssl_version": openssl::version::version(),
        "budget": budget,
        "rounds": rounds,
        "implementations": implementations.iter().map(|i| &i.description).collect::<Vec<_>>(),
        "notes": notes,
    });
    args.files.write(&table, settings)
}

#[cfg(test)]
mod tests {
    use super::*;
    use test_tools::cli::try_parse;

    #[test]
    fn parses_the_command_line() {
        let a = try_parse::<Args>(&[]).unwrap();
        assert_eq!((a.budget(), a.rounds()), (Budget::Seconds(2.0), 3));
        assert_eq!(a.groups(), DEFAULT_GROUPS.map(str::to_owned).to_vec());
        assert!(a.provider_dir.ends_with("target/provider"));
        let a = try_parse::<Args>(&[
            "--handshakes=50",
            "--rounds",
            "5",
            "--groups",
            "x25519, MLKEM768,X25519",
            "--csv",
            "t.csv",
        ]);
        let a = a.unwrap();
        assert_eq!((a.budget(), a.rounds()), (Budget::Handshakes(50), 5));
        assert_eq!(a.groups(), ["x25519", "MLKEM768"]);
        assert_eq!(a.files.csv, Some(PathBuf::from("t.csv")));
        assert_eq!(
            try_parse::<Args>(&["--seconds", "0.5"]).unwrap().budget(),
            Budget::Seconds(0.5)
        );
        assert_eq!(try_parse::<Args>(&["--quick"]).unwrap().rounds(), 1);
        let a = try_parse::<Args>(&["--connect", "127.0.0.1:8443", "--in-flight", "3"]).unwrap();
        assert_eq!(
            (a.connect.as_deref(), a.in_flight),
            (Some("127.0.0.1:8443"), 3)
        );
        assert_eq!(
            try_parse::<Args>(&["--connect", "h:1"]).unwrap().in_flight,
            8
        );
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
            assert!(try_parse::<Args>(bad).is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn known_groups_match_what_libssl_reports() {
        let x25519 = known_group("x25519").unwrap();
        assert!(x25519.matches(1034));
        assert!(x25519.matches(0x100_001d));
        assert!(!x25519.matches(0x100_0201));
        let mlkem768 = known_group("MLKEM768").unwrap();
        assert!(mlkem768.matches(0x100_0201));
        assert!(!mlkem768.matches(0x201));
        assert_eq!(known_group("prime256v1").unwrap().code_point, 0x17);
        assert_eq!(known_group("X25519MLKEM768").unwrap().code_point, 0x11ec);
        assert!(known_group("FFDHE2048").is_none());
    }

    #[test]
    fn ratio_and_median() {
        let series = |group: &str, rounds: &[(u64, f64)]| Measurement {
            trials: rounds
                .iter()
                .map(|&(n, s)| Trial::timed(n, s, None))
                .collect(),
            ..Measurement::new("ours", group, Operation::Handshake)
        };
        let all = [
            series("X25519", &[(1000, 1.0), (900, 1.0), (1100, 1.0)]),
            series("MLKEM768", &[(1500, 1.0), (1400, 1.0)]),
        ];
        assert_eq!(
            (all[0].ops_per_sec(), all[1].ops_per_sec()),
            (1000.0, 1450.0)
        );
        let table = results_table(&all);
        let text = table.render();
        assert!(
            text.contains(
                "MLKEM768  ours                    1450         0.690       1.45       2"
            ),
            "{text}"
        );
        let csv = table.to_csv();
        let version = openssl_version();
        assert!(
            csv.starts_with(&format!(
                "group,implementation,openssl_version,handshakes_per_sec,ms_per_handshake,\
                 ratio_to_x25519,rounds,handshakes,seconds\n\
                 X25519,ours,{version},1000.0,1.0000,1.0000,3,3000,3.000\n"
            )),
            "{csv}"
        );
    }

    /// Handshakes through our provider report the group offered.
    #[test]
    fn handshakes_negotiate_the_offered_group() {
        let dir = default_provider_dir();
        cli::require_provider(&dir).unwrap_or_else(|e| panic!("{e}"));
        let library = Library::load(Some(&dir), "mlkem").unwrap();
        let identity = Identity::generate().unwrap();
        for (group, reported) in [
            ("X25519", c_long::from(ffi::NID_X25519)),
            ("MLKEM768", 0x100_0201),
            ("X25519MLKEM768", 0x100_11ec),
            ("SecP256r1MLKEM768", 0x100_11eb),
            ("MLKEM1024", 0x100_0202),
        ] {
            let contexts =
                GroupContexts::new(&library, Some(c"?provider=mlkem"), group, &identity).unwrap();
            contexts.handshake(7).unwrap();
            let (mut client, mut server) =
                Connection::pair(&contexts.client, &contexts.server).unwrap();
            for _ in 0..MAX_STEPS {
                let c = client.handshake().unwrap();
                let s = server.handshake().unwrap();
                if matches!((c, s), (Step::Done(()), Step::Done(()))) {
                    break;
                }
            }
            assert_eq!(client.version(), ffi::TLS1_3_VERSION, "{group}");
            assert_eq!(client.negotiated_group(), reported, "{group}: client");
            assert_eq!(server.negotiated_group(), reported, "{group}: server");
        }
        // A group the server does not accept fails the handshake.
        let client = TlsContext::new(&library, None, "MLKEM768", None).unwrap();
        let server = TlsContext::new(&library, None, "X25519", Some(&identity)).unwrap();
        let mismatched = GroupContexts {
            group: "MLKEM768".to_owned(),
            known: known_group("MLKEM768"),
            client,
            server,
        };
        assert!(mismatched.handshake(1).is_err());
    }
}
