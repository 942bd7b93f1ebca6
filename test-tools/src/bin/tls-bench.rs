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

use std::ffi::{c_int, c_long, CStr, CString};
use std::io::{IsTerminal as _, Write as _};
use std::marker::PhantomData;
use std::path::PathBuf;
use std::process::ExitCode;
use std::ptr::{self, NonNull};
use std::time::{Duration, Instant};

use openssl::asn1::Asn1Time;
use openssl::bn::BigNum;
use openssl::ec::{EcGroup, EcKey};
use openssl::hash::MessageDigest;
use openssl::nid::Nid;
use openssl::pkey::{PKey, Private};
use openssl::ssl::{
    SslContext, SslContextBuilder, SslMethod, SslOptions, SslSessionCacheMode, SslVerifyMode,
    SslVersion,
};
use openssl::x509::{X509Name, X509};
use openssl_sys as ffi;
use serde_json::json;
use test_tools::cli::{self, default_provider_dir, positive, write_file};
use test_tools::comparison::median;
use test_tools::evp_harness::{clear_openssl_errors, take_openssl_errors, Library};
use test_tools::table::{Align, Table};

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

const USAGE: &str = "\
usage: tls-bench [--provider-dir DIR] [--groups LIST] [--seconds S | --handshakes N]
                 [--rounds R] [--csv PATH] [--json PATH]

Full TLS 1.3 handshakes per second, in process: client and server in one
thread over an in-memory BIO pair, stepped in turn. Every handshake is a
full one (no session tickets, no session cache) with a fresh SSL on each
side and a self-signed P-256 ECDSA server certificate made at start-up;
each checks the negotiated group (SSL_get_negotiated_group: the NID of a
classical group, the code point of a provider group) and exchanges a small
message both ways. Each side offers exactly the one group measured.

implementations:
  ours     provider `mlkem` and `default` in their own OSSL_LIB_CTX, which
           the SSL_CTXs are made in (SSL_CTX_new_ex, property query
           ?provider=mlkem); X25519 is served there by `default`
  native   the `default` provider alone in its own OSSL_LIB_CTX, when the
           linked libssl offers ML-KEM groups (OpenSSL 3.5+; skipped with a
           note on 3.0-3.4)

options:
  --provider-dir DIR  where mlkem.so is (default: <workspace>/target/provider,
                      made by `bash scripts/build-provider.sh`)
  --groups LIST       comma-separated TLS groups (default
                      X25519,MLKEM768,X25519MLKEM768,SecP256r1MLKEM768,MLKEM1024)
  --seconds S         handshake for S seconds per group, implementation and
                      round (default 2)
  --handshakes N      or exactly N handshakes each
  --rounds R          rounds; each round runs every group in turn, and the
                      reported rate is the median over rounds (default 3)
  --csv PATH          write the table as CSV to PATH
  --json PATH         write every round's raw numbers as JSON to PATH
  -h, --help          this text

The table: group, implementation, median handshakes/s, ms/handshake, the
ratio of its handshakes/s to X25519's with the same implementation (when
X25519 is measured) and the number of rounds. Progress goes to stderr.
";

/// How long each (group, implementation) runs in a round.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Budget {
    /// For at least this long.
    Seconds(f64),
    /// Exactly this many handshakes.
    Handshakes(usize),
}

/// The command line.
#[derive(Debug, PartialEq)]
struct Args {
    provider_dir: PathBuf,
    groups: Vec<String>,
    budget: Budget,
    rounds: usize,
    csv: Option<PathBuf>,
    json: Option<PathBuf>,
}

/// Parses the arguments after the program name. `Ok(None)` means `--help`.
fn parse_args(args: impl IntoIterator<Item = String>) -> Result<Option<Args>, String> {
    let mut args = args.into_iter();
    let (mut seconds, mut handshakes, mut rounds) = (None, None, DEFAULT_ROUNDS);
    let (mut provider_dir, mut groups, mut csv, mut json) = (None, None, None, None);
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_owned(), Some(v.to_owned())),
            _ => (arg.clone(), None),
        };
        let mut value = |name: &str| {
            inline
                .clone()
                .or_else(|| args.next())
                .filter(|v| !v.is_empty())
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match flag.as_str() {
            "-h" | "--help" => return Ok(None),
            "--seconds" => {
                let v = value("--seconds")?;
                match v.parse::<f64>() {
                    Ok(s) if s.is_finite() && s > 0.0 => seconds = Some(s),
                    _ => return Err(format!("--seconds: expected a number above 0, got {v:?}")),
                }
            }
            "--handshakes" => handshakes = Some(positive("--handshakes", &value("--handshakes")?)?),
            "--rounds" => rounds = positive("--rounds", &value("--rounds")?)?,
            "--groups" => groups = Some(parse_groups(&value("--groups")?)?),
            "--provider-dir" => provider_dir = Some(PathBuf::from(value("--provider-dir")?)),
            "--csv" => csv = Some(PathBuf::from(value("--csv")?)),
            "--json" => json = Some(PathBuf::from(value("--json")?)),
            _ => return Err(format!("unknown argument {arg:?}")),
        }
    }
    let budget = match (seconds, handshakes) {
        (Some(_), Some(_)) => return Err("give --seconds or --handshakes, not both".into()),
        (_, Some(n)) => Budget::Handshakes(n),
        (s, None) => Budget::Seconds(s.unwrap_or(DEFAULT_SECONDS)),
    };
    Ok(Some(Args {
        provider_dir: provider_dir.unwrap_or_else(default_provider_dir),
        groups: groups.unwrap_or_else(|| DEFAULT_GROUPS.map(str::to_owned).to_vec()),
        budget,
        rounds,
        csv,
        json,
    }))
}

fn parse_groups(list: &str) -> Result<Vec<String>, String> {
    let mut groups: Vec<String> = Vec::new();
    for group in list.split(',').map(str::trim) {
        if group.is_empty() || group.contains(['\0', ':']) {
            return Err(format!("--groups: bad group name {group:?}"));
        }
        if !groups.iter().any(|g| g.eq_ignore_ascii_case(group)) {
            groups.push(group.to_owned());
        }
    }
    Ok(groups)
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

/// The groups whose negotiation can be checked exactly.
const KNOWN_GROUPS: [KnownGroup; 11] = [
    KnownGroup {
        names: &["X25519", "x25519"],
        code_point: 0x001d,
        nid: Some(ffi::NID_X25519),
    },
    KnownGroup {
        names: &["X448", "x448"],
        code_point: 0x001e,
        nid: Some(ffi::NID_X448),
    },
    KnownGroup {
        names: &["P-256", "secp256r1", "prime256v1"],
        code_point: 0x0017,
        nid: Some(ffi::NID_X9_62_prime256v1),
    },
    KnownGroup {
        names: &["P-384", "secp384r1"],
        code_point: 0x0018,
        nid: Some(ffi::NID_secp384r1),
    },
    KnownGroup {
        names: &["P-521", "secp521r1"],
        code_point: 0x0019,
        nid: Some(ffi::NID_secp521r1),
    },
    KnownGroup {
        names: &["MLKEM512"],
        code_point: 0x0200,
        nid: None,
    },
    KnownGroup {
        names: &["MLKEM768"],
        code_point: 0x0201,
        nid: None,
    },
    KnownGroup {
        names: &["MLKEM1024"],
        code_point: 0x0202,
        nid: None,
    },
    KnownGroup {
        names: &["SecP256r1MLKEM768"],
        code_point: 0x11eb,
        nid: None,
    },
    KnownGroup {
        names: &["X25519MLKEM768"],
        code_point: 0x11ec,
        nid: None,
    },
    KnownGroup {
        names: &["SecP384r1MLKEM1024"],
        code_point: 0x11ed,
        nid: None,
    },
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
    /// Owns the `SSL_CTX` (frees it when dropped); only held.
    _owner: SslContext,
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
            _owner: builder.build(),
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
        // SAFETY: a live SSL_CTX: `context._owner` owns `context.raw`, and the
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
        // SAFETY: a live SSL; this control reads state and takes no pointer.
        unsafe {
            ffi::SSL_ctrl(
                self.ssl.as_ptr(),
                SSL_CTRL_GET_NEGOTIATED_GROUP,
                0,
                ptr::null_mut(),
            )
        }
    }
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

// ------------------------------------------------------------------ the run

/// An implementation: a library context and the property query its
/// SSL_CTXs use.
struct Implementation {
    name: &'static str,
    library: Library,
    propquery: Option<CString>,
    description: String,
}

/// One round of one (group, implementation).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Round {
    handshakes: usize,
    seconds: f64,
}

impl Round {
    fn rate(&self) -> f64 {
        self.handshakes as f64 / self.seconds
    }
}

/// The rounds of one (group, implementation).
#[derive(Clone, Debug, PartialEq)]
struct Series {
    group: String,
    implementation: String,
    rounds: Vec<Round>,
}

impl Series {
    /// The median over rounds of handshakes per second.
    fn median_rate(&self) -> f64 {
        let rates: Vec<f64> = self.rounds.iter().map(Round::rate).collect();
        median(&rates).unwrap_or(f64::NAN)
    }

    /// Its median rate over the same implementation's X25519 median rate.
    fn ratio_to_baseline(&self, all: &[Series]) -> Option<f64> {
        all.iter()
            .find(|s| {
                s.implementation == self.implementation
                    && s.group.eq_ignore_ascii_case(BASELINE_GROUP)
            })
            .map(|base| self.median_rate() / base.median_rate())
    }
}

/// Runs handshakes for one round's budget.
fn run_round(
    contexts: &GroupContexts<'_>,
    budget: Budget,
    serial: &mut u64,
) -> Result<Round, String> {
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
    Ok(Round {
        handshakes,
        seconds: start.elapsed().as_secs_f64(),
    })
}

fn openssl_version() -> String {
    let full = openssl::version::version();
    full.split_whitespace().nth(1).unwrap_or(full).to_owned()
}

/// Loads `ours` and, when the linked libssl has ML-KEM groups, `native`.
fn load_implementations(
    args: &Args,
    notes: &mut Vec<String>,
) -> Result<Vec<Implementation>, String> {
    if !args.provider_dir.join("mlkem.so").is_file() {
        return Err(format!(
            "{}/mlkem.so is missing: run `bash scripts/build-provider.sh` first \
             (or pass --provider-dir)",
            args.provider_dir.display()
        ));
    }
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
    let post_quantum: Vec<&String> = args
        .groups
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

fn run(args: &Args) -> Result<(), String> {
    let mut notes = Vec::new();
    let implementations = load_implementations(args, &mut notes)?;
    let identity = Identity::generate()?;

    // Every (group, implementation), checked with one handshake each.
    let mut contexts: Vec<GroupContexts<'_>> = Vec::new();
    let mut series: Vec<Series> = Vec::new();
    let mut serial = 0u64;
    for group in &args.groups {
        for implementation in &implementations {
            let made = GroupContexts::new(
                &implementation.library,
                implementation.propquery.as_deref(),
                group,
                &identity,
            );
            let made = match made {
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
            series.push(Series {
                group: group.clone(),
                implementation: implementation.name.to_owned(),
                rounds: Vec::with_capacity(args.rounds),
            });
        }
    }

    let budget = match args.budget {
        Budget::Seconds(s) => format!("{s} s"),
        Budget::Handshakes(n) => format!("{n} handshakes"),
    };
    println!(
        "tls-bench: {}; {} round(s) x {budget} per group and implementation; full TLS 1.3 \
         handshakes (no resumption), P-256 ECDSA server certificate, in-memory BIO pair, \
         one thread",
        openssl::version::version(),
        args.rounds
    );
    for implementation in &implementations {
        println!("  {}", implementation.description);
    }
    for note in &notes {
        println!("note: {note}");
    }
    let _ = std::io::stdout().flush();

    let terminal = std::io::stderr().is_terminal();
    for round in 1..=args.rounds {
        for (made, series) in contexts.iter().zip(&mut series) {
            let result = run_round(made, args.budget, &mut serial)
                .map_err(|e| format!("{} round {round}: {e}", series.implementation))?;
            let line = format!(
                "[{} {}] round {round}/{}: {} handshakes in {:.2} s ({:.0}/s)",
                series.implementation,
                series.group,
                args.rounds,
                result.handshakes,
                result.seconds,
                result.rate()
            );
            if terminal {
                eprint!("\r\x1b[2K{line}");
            } else {
                eprintln!("{line}");
            }
            series.rounds.push(result);
        }
    }
    if terminal {
        eprint!("\r\x1b[2K");
    }

    println!();
    print!("{}", report_table(&series).render());
    let version = openssl_version();
    if let Some(path) = &args.csv {
        write_file(path, &csv_table(&series, &version).to_csv())?;
        eprintln!("wrote {}", path.display());
    }
    if let Some(path) = &args.json {
        let report = json!({
            "tool": "tls-bench",
            "openssl_version": openssl::version::version(),
            "budget": budget,
            "rounds": args.rounds,
            "implementations": implementations.iter().map(|i| &i.description).collect::<Vec<_>>(),
            "notes": notes,
            "results": series.iter().map(|s| json!({
                "group": s.group,
                "implementation": s.implementation,
                "handshakes_per_sec": s.median_rate(),
                "ratio_to_x25519": s.ratio_to_baseline(&series),
                "rounds": s.rounds.iter().map(|r| json!({
                    "handshakes": r.handshakes,
                    "seconds": r.seconds,
                })).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        });
        let text = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
        write_file(path, &(text + "\n"))?;
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}

fn report_table(series: &[Series]) -> Table {
    let mut table = Table::new(&[
        ("group", Align::Left),
        ("implementation", Align::Left),
        ("handshakes/s", Align::Right),
        ("ms/handshake", Align::Right),
        ("vs X25519", Align::Right),
        ("rounds", Align::Right),
    ]);
    for s in series {
        let rate = s.median_rate();
        table.push([
            s.group.clone(),
            s.implementation.clone(),
            format!("{rate:.0}"),
            format!("{:.3}", 1e3 / rate),
            s.ratio_to_baseline(series)
                .map_or_else(String::new, |r| format!("{r:.2}")),
            s.rounds.len().to_string(),
        ]);
    }
    table
}

fn csv_table(series: &[Series], version: &str) -> Table {
    let mut table = Table::new(
        &[
            "group",
            "implementation",
            "openssl_version",
            "handshakes_per_sec",
            "ms_per_handshake",
            "ratio_to_x25519",
            "rounds",
            "handshakes",
            "seconds",
        ]
        .map(|h| (h, Align::Left)),
    );
    for s in series {
        let rate = s.median_rate();
        let seconds: f64 = s.rounds.iter().map(|r| r.seconds).sum();
        table.push([
            s.group.clone(),
            s.implementation.clone(),
            version.to_owned(),
            format!("{rate:.1}"),
            format!("{:.4}", 1e3 / rate),
            s.ratio_to_baseline(series)
                .map_or_else(String::new, |r| format!("{r:.4}")),
            s.rounds.len().to_string(),
            s.rounds
                .iter()
                .map(|r| r.handshakes)
                .sum::<usize>()
                .to_string(),
            format!("{seconds:.3}"),
        ]);
    }
    table
}

fn main() -> ExitCode {
    cli::main_with(
        "tls-bench",
        USAGE,
        parse_args(std::env::args().skip(1)),
        |args| run(&args),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Result<Option<Args>, String> {
        parse_args(list.iter().map(|s| (*s).to_owned()))
    }

    #[test]
    fn parses_the_command_line() {
        let a = args(&[]).unwrap().unwrap();
        assert_eq!(a.budget, Budget::Seconds(2.0));
        assert_eq!(a.rounds, 3);
        assert_eq!(a.groups, DEFAULT_GROUPS.map(str::to_owned).to_vec());
        assert!(a.provider_dir.ends_with("target/provider"));
        let a = args(&[
            "--handshakes=50",
            "--rounds",
            "5",
            "--groups",
            "x25519, MLKEM768,X25519",
            "--csv",
            "t.csv",
        ])
        .unwrap()
        .unwrap();
        assert_eq!(a.budget, Budget::Handshakes(50));
        assert_eq!(a.rounds, 5);
        assert_eq!(a.groups, ["x25519", "MLKEM768"]);
        assert_eq!(a.csv, Some(PathBuf::from("t.csv")));
        assert_eq!(
            args(&["--seconds", "0.5"]).unwrap().unwrap().budget,
            Budget::Seconds(0.5)
        );
        assert!(args(&["--help"]).unwrap().is_none());
        for bad in [
            &["--seconds", "0"][..],
            &["--seconds", "NaN"],
            &["--handshakes", "0"],
            &["--rounds"],
            &["--seconds", "1", "--handshakes", "2"],
            &["--groups", "A,,B"],
            &["--groups", "X25519:P-256"],
            &["--bogus"],
        ] {
            assert!(args(bad).is_err(), "{bad:?} was accepted");
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
        let series = |group: &str, rates: &[(usize, f64)]| Series {
            group: group.to_owned(),
            implementation: "ours".to_owned(),
            rounds: rates
                .iter()
                .map(|&(handshakes, seconds)| Round {
                    handshakes,
                    seconds,
                })
                .collect(),
        };
        let all = [
            series("X25519", &[(1000, 1.0), (900, 1.0), (1100, 1.0)]),
            series("MLKEM768", &[(1500, 1.0), (1400, 1.0)]),
        ];
        assert_eq!(all[0].median_rate(), 1000.0);
        assert_eq!(all[1].median_rate(), 1450.0);
        assert_eq!(all[1].ratio_to_baseline(&all), Some(1.45));
        let table = report_table(&all).render();
        assert!(
            table.contains(
                "MLKEM768  ours                    1450         0.690       1.45       2"
            ),
            "{table}"
        );
        let csv = csv_table(&all, "3.0.19").to_csv();
        assert!(
            csv.starts_with(
                "group,implementation,openssl_version,handshakes_per_sec,ms_per_handshake,\
             ratio_to_x25519,rounds,handshakes,seconds\n\
             X25519,ours,3.0.19,1000.0,1.0000,1.0000,3,3000,3.000\n"
            ),
            "{csv}"
        );
    }

    /// Handshakes through our provider report the group offered.
    #[test]
    fn handshakes_negotiate_the_offered_group() {
        let dir = default_provider_dir();
        assert!(
            dir.join("mlkem.so").is_file(),
            "{}/mlkem.so is missing: run `bash scripts/build-provider.sh` first",
            dir.display()
        );
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
