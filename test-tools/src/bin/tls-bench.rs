//! `tls-bench`: full TLS 1.3 handshakes per second per group and
//! implementation, in process (see [`Args`]), or with `--connect` as the
//! client of a real server (`scripts/nginx-soak.sh` runs it against nginx).

use std::cell::RefCell;
use std::ffi::{c_char, c_int, c_long, CStr, CString};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use std::{collections::VecDeque, marker::PhantomData, net::TcpStream, rc::Rc};

use clap::builder::NonEmptyStringValueParser as NonEmpty;
use clap::Parser;
use foreign_types_shared::ForeignTypeRef;
use openssl::error::ErrorStack;
use openssl::ssl::{
    ErrorCode, Ssl, SslContext, SslContextBuilder, SslMethod, SslOptions, SslRef,
    SslSessionCacheMode, SslStream, SslVerifyMode, SslVersion,
};
use openssl::{asn1::Asn1Time, bn::BigNum, ec, hash::MessageDigest, nid::Nid, pkey, x509};
use openssl_sys as ffi;
use serde_json::json;
use test_tools::cli::{self, default_provider_dir, positive, Files, Progress};
use test_tools::comparison::Implementation;
use test_tools::evp_harness::{clear_openssl_errors, take_openssl_errors, Library};
use test_tools::measure::{median, Measurement, Operation, Trial};
use test_tools::system_info::openssl_version;
use test_tools::table::{Column, Style, Table, Value};

extern "C" {
    /// libssl 3.0's, which openssl-sys does not declare.
    fn SSL_CTX_new_ex(
        libctx: *mut ffi::OSSL_LIB_CTX,
        propq: *const c_char,
        method: *const ffi::SSL_METHOD,
    ) -> *mut ffi::SSL_CTX;
}

/// `SSL_get_negotiated_group(s)` is `SSL_ctrl(s, this, 0, NULL)`.
const SSL_CTRL_GET_NEGOTIATED_GROUP: c_int = 134;
/// libssl reports a group it has no NID for as this bit or'ed with the
/// group's TLS code point.
const TLSEXT_NID_UNKNOWN: c_long = 0x100_0000;
/// The groups measured when none is named.
const DEFAULT_GROUPS: &str = "X25519,MLKEM768,X25519MLKEM768,SecP256r1MLKEM768,MLKEM1024";
/// The classical group the ratio column compares with.
const BASELINE_GROUP: &str = "X25519";
/// Handshake steps per side before a handshake is declared stuck (a full
/// TLS 1.3 handshake needs 2 to 3).
const MAX_STEPS: usize = 16;
/// The property query of `ours`' SSL_CTXs.
const OURS: &CStr = c"?provider=mlkem";
/// The first OpenSSL version (`OPENSSL_VERSION_NUMBER`) whose default
/// provider has ML-KEM; oqsprovider switches its own off there.
const OPENSSL_3_5: i64 = 0x3050_0000;

/// Full TLS 1.3 handshakes per second, in process: client and server in one
/// thread over in-memory buffers, stepped in turn, each offering exactly the
/// group measured. Every handshake is a full one (no tickets, no session
/// cache) with fresh SSLs, a self-signed P-256 ECDSA server certificate, a
/// check of the negotiated group and a small message each way.
///
/// `ours` is providers `mlkem` and `default` in their own OSSL_LIB_CTX
/// (SSL_CTX_new_ex, property query ?provider=mlkem); `native` the `default`
/// provider alone in another, when the linked libssl has ML-KEM groups
/// (OpenSSL 3.5+); `--oqsprovider` and each `--provider NAME=DIR` add one
/// more the way ours is made (provider NAME and `default`, ?provider=NAME).
/// All are measured in turn within every round. The table: group,
/// implementation, median handshakes/s, ms/handshake, the server's and the
/// client's µs per handshake (the wall time of their handshake steps), the
/// ratio to X25519's handshakes/s with the same implementation, with
/// `--baseline` the ratio to the baseline's handshakes/s for the same group,
/// and the rounds. An implementation without a requested group gets an n/a
/// row and fails the run at the end (native's are left out with a note).
/// Progress goes to stderr.
#[derive(Parser, Debug, PartialEq)]
#[command(name = "tls-bench")]
struct Args {
    /// Where mlkem.so is (made by `bash scripts/build-provider.sh`)
    #[arg(long, value_name = "DIR", default_value_os_t = default_provider_dir())]
    provider_dir: PathBuf,
    /// Comma-separated TLS groups
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = group_name, default_value = DEFAULT_GROUPS)]
    groups: Vec<String>,
    /// Handshake for S seconds per group, implementation and round (0.2
    /// with --quick)
    #[arg(long, value_name = "S", value_parser = seconds, conflicts_with = "handshakes")]
    #[arg(default_value_t = 2.0, default_value_if("quick", "true", "0.2"))]
    seconds: f64,
    /// Or exactly N handshakes each
    #[arg(long, value_name = "N", value_parser = positive)]
    handshakes: Option<usize>,
    /// Rounds; each round runs every group in turn, and the reported rate is
    /// the median over rounds (1 with --quick)
    #[arg(long, value_name = "R", value_parser = positive)]
    #[arg(default_value_t = 3, default_value_if("quick", "true", "1"))]
    rounds: usize,
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
    /// Also measure oqsprovider: the directory holding oqsprovider.so, or a
    /// module NAME.so (its own ML-KEM is off on OpenSSL 3.5+, where it is
    /// skipped with a note)
    #[arg(long, value_name = "DIR", value_parser = cli::path, conflicts_with = "connect")]
    oqsprovider: Option<PathBuf>,
    /// Also measure provider NAME, loaded from DIR/NAME.so with `default` in
    /// an OSSL_LIB_CTX of its own (repeatable)
    #[arg(long = "provider", value_name = "NAME=DIR", value_parser = provider_spec)]
    #[arg(conflicts_with = "connect")]
    providers: Vec<(String, PathBuf)>,
    /// Add a column: each row's handshakes/s over IMPL's for the same group
    /// (IMPL: ours, native, oqsprovider or a --provider NAME)
    #[arg(long, value_name = "IMPL", value_parser = NonEmpty::new(), conflicts_with = "connect")]
    baseline: Option<String>,
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

/// A value parser: `--provider`'s NAME=DIR.
fn provider_spec(value: &str) -> Result<(String, PathBuf), String> {
    let name_char = |c: char| c.is_ascii_alphanumeric() || "_-.".contains(c);
    match value.split_once('=') {
        Some((name, dir)) if !name.is_empty() && name.chars().all(name_char) && !dir.is_empty() => {
            Ok((name.to_owned(), PathBuf::from(dir)))
        }
        _ => Err(format!(
            "expected NAME=DIR (NAME of letters, digits, _ - .), got {value:?}"
        )),
    }
}

fn seconds(value: &str) -> Result<f64, String> {
    match value.parse::<f64>() {
        Ok(s) if s.is_finite() && s > 0.0 => Ok(s),
        _ => Err(format!("expected a number above 0, got {value:?}")),
    }
}

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    if let Err(e) = args.check() {
        cli::usage_error::<Args>(e);
    }
    let run = match &args.connect {
        Some(address) => run_external(&args, address),
        None => run_in_process(&args),
    };
    cli::exit("tls-bench", run)
}

impl Args {
    /// Whether another handshake may start, `started` of them since `start`
    /// (each group, implementation and round gets this budget).
    fn allows(&self, started: usize, start: Instant) -> bool {
        match self.handshakes {
            Some(n) => started < n,
            None => start.elapsed() < Duration::from_secs_f64(self.seconds),
        }
    }

    /// The budget, in words.
    fn budget(&self) -> String {
        match self.handshakes {
            Some(n) => format!("{n} handshakes"),
            None => format!("{} s", self.seconds),
        }
    }

    /// The groups, each once (names compared without case).
    fn groups(&self) -> Vec<String> {
        cli::unique_by(self.groups.clone(), |a, b| a.eq_ignore_ascii_case(b))
    }
}

/// The groups whose negotiation can be checked exactly: OpenSSL's names and
/// the other spellings our provider also registers (oqsprovider's and
/// crypto-policies'; names compare without case, so `mlkem768` is
/// `MLKEM768`), the TLS code point and the NID libssl reports (`NID_undef` where it reports
/// [`TLSEXT_NID_UNKNOWN`] | the code point instead).
const KNOWN_GROUPS: [(&str, u16, c_int); 11] = [
    ("X25519", 0x001d, ffi::NID_X25519),
    ("X448", 0x001e, ffi::NID_X448),
    (
        "P-256 secp256r1 prime256v1",
        0x0017,
        ffi::NID_X9_62_prime256v1,
    ),
    ("P-384 secp384r1", 0x0018, ffi::NID_secp384r1),
    ("P-521 secp521r1", 0x0019, ffi::NID_secp521r1),
    ("MLKEM512", 0x0200, ffi::NID_undef),
    ("MLKEM768", 0x0201, ffi::NID_undef),
    ("MLKEM1024", 0x0202, ffi::NID_undef),
    ("SecP256r1MLKEM768 p256_mlkem768", 0x11eb, ffi::NID_undef),
    ("X25519MLKEM768 x25519_mlkem768", 0x11ec, ffi::NID_undef),
    ("SecP384r1MLKEM1024 p384_mlkem1024", 0x11ed, ffi::NID_undef),
];

/// A [`KNOWN_GROUPS`] entry's code point and NID.
type KnownGroup = (u16, c_int);

fn known_group(name: &str) -> Option<KnownGroup> {
    let names = |g: &&(&str, u16, c_int)| g.0.split(" ").any(|n| n.eq_ignore_ascii_case(name));
    let found = KNOWN_GROUPS.iter().find(names);
    found.map(|&(_, code_point, nid)| (code_point, nid))
}

/// Whether `SSL_get_negotiated_group` reported `group`.
fn reports((code_point, nid): KnownGroup, reported: c_long) -> bool {
    (nid != ffi::NID_undef && reported == c_long::from(nid))
        || reported == TLSEXT_NID_UNKNOWN | c_long::from(code_point)
}

/// Checks that a finished handshake (TLS 1.3: the contexts allow no other)
/// negotiated `known`'s group.
fn check_group(ssl: &SslRef, known: Option<KnownGroup>) -> Result<(), String> {
    let null = std::ptr::null_mut();
    // SAFETY: a live SSL (borrowed); this control reads state and takes no
    // pointer.
    let reported = unsafe { ffi::SSL_ctrl(ssl.as_ptr(), SSL_CTRL_GET_NEGOTIATED_GROUP, 0, null) };
    match known.is_some_and(|k| !reports(k, reported)) {
        true => Err(format!("negotiated group {reported:#x}")),
        false => Ok(()),
    }
}

/// The server's certificate and key.
struct Identity {
    certificate: x509::X509,
    key: pkey::PKey<pkey::Private>,
}

/// A self-signed P-256 ECDSA certificate for `localhost`, valid for a day.
fn self_signed() -> Result<Identity, ErrorStack> {
    let curve = ec::EcGroup::from_curve_name(Nid::X9_62_PRIME256V1)?;
    let key = pkey::PKey::from_ec_key(ec::EcKey::generate(&curve)?)?;
    let mut name = x509::X509Name::builder()?;
    name.append_entry_by_text("CN", "localhost")?;
    let name = name.build();
    let mut cert = x509::X509::builder()?;
    cert.set_version(2)?;
    cert.set_serial_number(&*BigNum::from_u32(1)?.to_asn1_integer()?)?;
    cert.set_subject_name(&name)?;
    cert.set_issuer_name(&name)?;
    cert.set_pubkey(&key)?;
    cert.set_not_before(&*Asn1Time::days_from_now(0)?)?;
    cert.set_not_after(&*Asn1Time::days_from_now(1)?)?;
    cert.sign(&key, MessageDigest::sha256())?;
    let certificate = cert.build();
    Ok(Identity { certificate, key })
}

/// An `SSL_CTX` made in a [`Library`]'s context (which must outlive it).
struct TlsContext<'l>(SslContext, PhantomData<&'l Library>);

impl<'l> TlsContext<'l> {
    /// A TLS 1.3-only context offering (client) or accepting (server, with
    /// `identity`) exactly `group`, with tickets and session caching off.
    fn new(
        library: &'l Library,
        propquery: Option<&CStr>,
        group: &str,
        identity: Option<&Identity>,
    ) -> Result<TlsContext<'l>, String> {
        let (side, method) = match identity {
            Some(_) => ("server", SslMethod::tls_server()),
            None => ("client", SslMethod::tls_client()),
        };
        let propquery = propquery.map_or(std::ptr::null(), CStr::as_ptr);
        clear_openssl_errors();
        // SAFETY: a live library context (borrowed for 'l), a
        // NUL-terminated property query or NULL, and a static method.
        let raw = unsafe { SSL_CTX_new_ex(library.as_ptr(), propquery, method.as_ptr()) };
        if raw.is_null() {
            return Err(format!("{side} SSL_CTX_new_ex: {}", take_openssl_errors()));
        }
        // SAFETY: a new SSL_CTX that nothing else owns; the builder frees it.
        let mut builder = unsafe { SslContextBuilder::from_ptr(raw) };
        builder
            .set_groups_list(group)
            .map_err(|e| format!("{side} group {group}: {e}"))?;
        configure(&mut builder, identity).map_err(|e| format!("{side} context: {e}"))?;
        Ok(TlsContext(builder.build(), PhantomData))
    }
}

/// TLS 1.3 only, no tickets, no session cache; the server's `identity`.
fn configure(
    builder: &mut SslContextBuilder,
    identity: Option<&Identity>,
) -> Result<(), ErrorStack> {
    builder.set_min_proto_version(Some(SslVersion::TLS1_3))?;
    builder.set_max_proto_version(Some(SslVersion::TLS1_3))?;
    builder.set_session_cache_mode(SslSessionCacheMode::OFF);
    builder.set_options(SslOptions::NO_TICKET);
    let Some(identity) = identity else {
        // The certificate is not what is measured; the client still checks
        // the server's CertificateVerify signature.
        builder.set_verify(SslVerifyMode::NONE);
        return Ok(());
    };
    builder.set_num_tickets(0)?;
    builder.set_certificate(&identity.certificate)?;
    builder.set_private_key(&identity.key)?;
    builder.check_private_key()
}

/// One end's view of an in-memory link: it reads `link[end]`, which the other
/// end writes; a read with nothing buffered would block (`SSL_ERROR_WANT_READ`).
struct Wire {
    link: Rc<RefCell<[VecDeque<u8>; 2]>>,
    end: usize,
}

impl Read for Wire {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let incoming = &mut self.link.borrow_mut()[self.end];
        match incoming.is_empty() {
            true => Err(io::ErrorKind::WouldBlock.into()),
            false => incoming.read(buf),
        }
    }
}

impl Write for Wire {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.link.borrow_mut()[1 - self.end].write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The client and server contexts of one (implementation, group).
struct GroupContexts<'l> {
    known: Option<KnownGroup>,
    ends: [TlsContext<'l>; 2],
}

impl GroupContexts<'_> {
    /// One full handshake, its checks and a message each way; adds the
    /// time the client's (0) and the server's (1) handshake steps took to
    /// `spent`.
    fn handshake(&self, spent: &mut [Duration; 2]) -> Result<(), String> {
        // A fresh client (0) and server (1) joined by an in-memory link.
        let link = Rc::default();
        let end = |end: usize| {
            let mut ssl = Ssl::new(&self.ends[end].0)?;
            match end {
                0 => ssl.set_connect_state(),
                _ => ssl.set_accept_state(),
            }
            let link = Rc::clone(&link);
            SslStream::new(ssl, Wire { link, end })
        };
        let ssl_new = |e: ErrorStack| format!("SSL_new: {e}");
        let [client, server] = &mut [end(0).map_err(ssl_new)?, end(1).map_err(ssl_new)?];
        let mut steps = 0;
        // Both step each time; a finished end stays done.
        loop {
            let client_done = timed(|| step(client, "client"), &mut spent[0])?;
            let server_done = timed(|| step(server, "server"), &mut spent[1])?;
            if client_done && server_done {
                break;
            }
            steps += 1;
            if steps == MAX_STEPS {
                return Err(format!("handshake unfinished after {MAX_STEPS} steps"));
            }
        }
        for (end, side) in [(&*client, "client"), (&*server, "server")] {
            check_group(end.ssl(), self.known).map_err(|e| format!("{side}: {e}"))?;
        }
        exchange(client, server, b"ping").map_err(|e| format!("client to server: {e}"))?;
        exchange(server, client, b"pong").map_err(|e| format!("server to client: {e}"))
    }
}

/// Runs `f`, adding the wall time it took to `spent`.
fn timed<T>(f: impl FnOnce() -> T, spent: &mut Duration) -> T {
    let start = Instant::now();
    let result = f();
    *spent += start.elapsed();
    result
}

/// Advances `end`'s handshake as far as its input allows: whether it is done.
fn step(end: &mut SslStream<Wire>, side: &str) -> Result<bool, String> {
    match end.do_handshake() {
        Ok(()) => Ok(true),
        Err(e) if e.code() == ErrorCode::WANT_READ => Ok(false),
        Err(e) => Err(format!("{side} handshake: {e}")),
    }
}

/// Writes `message` on `from` and checks that `to` reads exactly it.
fn exchange(
    from: &mut SslStream<Wire>,
    to: &mut SslStream<Wire>,
    message: &[u8],
) -> Result<(), String> {
    from.write_all(message).map_err(|e| format!("write: {e}"))?;
    let mut buf = [0u8; 64];
    let n = to.ssl_read(&mut buf).map_err(|e| format!("read: {e}"))?;
    match buf[..n] == *message {
        true => Ok(()),
        false => Err(format!("read {:02x?}, expected {message:02x?}", &buf[..n])),
    }
}

/// How an implementation names groups.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Spelling {
    /// OpenSSL 3.5's names, which ours uses and `--groups` takes.
    OpenSsl,
    /// oqsprovider's: lower case for the pure parameter sets.
    Oqsprovider,
}

/// The groups an implementation spells differently from `--groups`:
/// (spelling, the `--groups` name, that spelling's). oqsprovider 0.8+ names
/// its hybrids as OpenSSL 3.5 does.
const SPELLINGS: [(Spelling, &str, &str); 3] = [
    (Spelling::Oqsprovider, "MLKEM512", "mlkem512"),
    (Spelling::Oqsprovider, "MLKEM768", "mlkem768"),
    (Spelling::Oqsprovider, "MLKEM1024", "mlkem1024"),
];

impl Spelling {
    /// `group`, a `--groups` name, as this spelling writes it.
    fn of(self, group: &str) -> &str {
        let same = |&&(spelling, ours, _): &&(Spelling, &str, &str)| {
            spelling == self && ours.eq_ignore_ascii_case(group)
        };
        SPELLINGS
            .iter()
            .find(same)
            .map_or(group, |&(_, _, theirs)| theirs)
    }
}

/// What a group an implementation lacks does to the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Lacking {
    /// Ours: an error, at once.
    Fails,
    /// Native: a note, and no row.
    LeftOut,
    /// An added provider: an n/a row, and an error after the table.
    NotAvailable,
}

/// What runs an [`Implementation`]: a library context and the property
/// query its SSL_CTXs use.
struct Loaded {
    library: Library,
    propquery: Option<CString>,
    spelling: Spelling,
    lacking: Lacking,
    description: String,
}

impl Loaded {
    fn contexts(&self, group: &str, identity: &Identity) -> Result<GroupContexts<'_>, String> {
        let (propquery, spelled) = (self.propquery.as_deref(), self.spelling.of(group));
        let end = |identity| TlsContext::new(&self.library, propquery, spelled, identity);
        let ends = [end(None)?, end(Some(identity))?];
        Ok(GroupContexts {
            known: known_group(group),
            ends,
        })
    }

    /// Whether `SSL_CTX_set1_groups_list` takes `group` (as this
    /// implementation spells it) in its library context.
    fn has_group(&self, group: &str) -> bool {
        let (propquery, spelled) = (self.propquery.as_deref(), self.spelling.of(group));
        TlsContext::new(&self.library, propquery, spelled, None).is_ok()
    }
}

/// A provider measured beside ours: `--oqsprovider` or `--provider`.
#[derive(Clone, Debug, PartialEq)]
struct Added {
    name: String,
    dir: PathBuf,
    spelling: Spelling,
}

impl Args {
    /// `--oqsprovider`, then every `--provider` in order.
    fn added(&self) -> Vec<Added> {
        let oqsprovider = self.oqsprovider.as_deref().map(|path| {
            // A module file (NAME.so, loaded as NAME), else the directory
            // holding oqsprovider.so.
            let file = path.extension().is_some_and(|e| e == "so") && !path.is_dir();
            let (dir, name) = match (file, path.file_stem()) {
                (true, Some(stem)) => {
                    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
                    (dir.unwrap_or(Path::new(".")), stem.to_string_lossy())
                }
                _ => (path, "oqsprovider".into()),
            };
            let (name, dir) = (name.into_owned(), dir.to_owned());
            let spelling = Spelling::Oqsprovider;
            Added {
                name,
                dir,
                spelling,
            }
        });
        let providers = self.providers.iter().map(|(name, dir)| Added {
            name: name.clone(),
            dir: dir.clone(),
            spelling: match name.as_str() {
                "oqsprovider" => Spelling::Oqsprovider,
                _ => Spelling::OpenSsl,
            },
        });
        oqsprovider.into_iter().chain(providers).collect()
    }

    /// The checks clap cannot make: implementation names once each, and a
    /// `--baseline` among them.
    fn check(&self) -> Result<(), String> {
        let mut names = vec!["ours".to_owned(), "native".to_owned()];
        for added in self.added() {
            if names.contains(&added.name) {
                return Err(format!("implementation {:?} named twice", added.name));
            }
            names.push(added.name);
        }
        match &self.baseline {
            Some(baseline) if !names.contains(baseline) => Err(format!(
                "--baseline: no implementation {baseline:?} (known: {})",
                names.join(", ")
            )),
            _ => Ok(()),
        }
    }
}

/// Loads an added provider and `default` into a library context of their
/// own; `None`, with a note, for oqsprovider where it has no ML-KEM.
fn load_added(added: &Added, notes: &mut Vec<String>) -> Result<Option<Loaded>, String> {
    let name = &added.name;
    let version = openssl::version::number();
    if added.spelling == Spelling::Oqsprovider && version >= OPENSSL_3_5 {
        notes.push(format!(
            "{name}: skipped: oqsprovider switches its own ML-KEM off on OpenSSL 3.5 and later, \
             where the default provider has it (linked: OpenSSL {}); compare with native instead",
            openssl_version()
        ));
        return Ok(None);
    }
    let module = added.dir.join(format!("{name}.so"));
    if !module.is_file() {
        return Err(format!("{name}: {} is missing", module.display()));
    }
    let library = Library::load(Some(&added.dir), name).map_err(|e| format!("{name}: {e}"))?;
    let propquery = format!("?provider={name}");
    let description = format!(
        "{name}: providers {name} ({}) + default in one OSSL_LIB_CTX, SSL_CTX_new_ex with \
         propquery {propquery}",
        module.display()
    );
    Ok(Some(Loaded {
        library,
        propquery: Some(CString::new(propquery).map_err(|e| format!("{name}: {e}"))?),
        spelling: added.spelling,
        lacking: Lacking::NotAvailable,
        description,
    }))
}

/// Loads `ours`, `native` when the linked libssl has ML-KEM groups, and the
/// added providers; `skipped` gets the names of those left out.
fn load_implementations(
    args: &Args,
    notes: &mut Vec<String>,
    skipped: &mut Vec<String>,
) -> Result<Vec<Implementation<Loaded>>, String> {
    cli::require_provider(&args.provider_dir)?;
    let ours = Loaded {
        library: Library::load(Some(&args.provider_dir), "mlkem")
            .map_err(|e| format!("ours: {e}"))?,
        propquery: Some(OURS.to_owned()),
        spelling: Spelling::OpenSsl,
        lacking: Lacking::Fails,
        description: format!(
            "ours: providers mlkem ({}) + default in one OSSL_LIB_CTX, SSL_CTX_new_ex with \
             propquery ?provider=mlkem",
            args.provider_dir.display()
        ),
    };
    let native = Loaded {
        library: Library::load(None, "default").map_err(|e| format!("native: {e}"))?,
        propquery: None,
        spelling: Spelling::OpenSsl,
        lacking: Lacking::LeftOut,
        description: "native: provider default alone in one OSSL_LIB_CTX".to_owned(),
    };
    let implementation = |name: &str, run| Implementation {
        name: name.to_owned(),
        openssl_version: Some(openssl_version()),
        run,
    };
    let ours = implementation("ours", ours);
    let native = implementation("native", native);
    let mut implementations = vec![ours];
    // Native runs where the linked libssl has a non-classical group of the
    // list; on 3.0-3.4 it would only repeat ours' X25519.
    let groups = args.groups();
    let post_quantum: Vec<&str> = groups
        .iter()
        .filter(|g| known_group(g).is_none_or(|(_, nid)| nid == ffi::NID_undef))
        .map(String::as_str)
        .collect();
    if post_quantum.iter().any(|g| native.run.has_group(g)) {
        implementations.push(native);
    } else {
        skipped.push(native.name);
        if !post_quantum.is_empty() {
            let (version, groups) = (openssl_version(), post_quantum.join(", "));
            notes.push(format!(
                "native: the linked OpenSSL {version} has none of {groups}; skipped (OpenSSL 3.5+ has them)"
            ));
        }
    }
    for added in args.added() {
        match load_added(&added, notes)? {
            Some(run) => implementations.push(implementation(&added.name, run)),
            None => skipped.push(added.name),
        }
    }
    Ok(implementations)
}

/// One (group, implementation) of the table.
struct Row {
    /// Its rounds; none where the implementation lacks the group.
    measurement: Measurement,
    /// Per round, the client's and the server's µs in handshake steps per
    /// handshake.
    sides: [Vec<f64>; 2],
}

impl Row {
    /// The median handshakes/s, if measured.
    fn rate(&self) -> Option<f64> {
        Some(self.measurement.ops_per_sec()).filter(|r| r.is_finite())
    }

    /// The median over rounds of `side`'s (0: client, 1: server) µs per
    /// handshake.
    fn side_us(&self, side: usize) -> Option<f64> {
        median(self.sides[side].iter().copied())
    }
}

fn rate_column() -> Column {
    let (text, csv) = (Style::Fixed(0), Style::Fixed(1));
    Column::number("handshakes/s", "handshakes_per_sec", text, csv)
}

fn ratio_column() -> Column {
    let (text, csv) = (Style::Fixed(2), Style::Fixed(4));
    Column::number("vs X25519", "ratio_to_x25519", text, csv)
}

/// The ratio of `m`'s handshakes/s to X25519's with the same implementation.
fn ratio_to_x25519(all: &[Measurement], m: &Measurement) -> Option<f64> {
    let x25519 = |b: &&Measurement| b.parameter_set.eq_ignore_ascii_case(BASELINE_GROUP);
    let mut same = all.iter().filter(|b| b.implementation == m.implementation);
    m.ratio_to(same.find(x25519))
}

fn seconds_of(m: &Measurement) -> f64 {
    m.trials.iter().map(|t| t.seconds).sum()
}

/// Per group and implementation, the median over rounds (n/a where the
/// implementation lacks the group); the files add the handshakes and
/// seconds in all, the JSON every round.
fn results_table(rows: &[Row], baseline: Option<&str>) -> Table {
    let (ms_text, ms_csv) = (Style::Fixed(3), Style::Fixed(4));
    let us = |title: &str, key: &str| {
        Column::number(title, key, Style::Fixed(0), Style::Fixed(1)).missing("n/a")
    };
    let mut columns = vec![
        Column::new("group", "group"),
        Column::new("implementation", "implementation"),
        Column::new("openssl_version", "openssl_version").file_only(),
        rate_column().missing("n/a"),
        Column::number("ms/handshake", "ms_per_handshake", ms_text, ms_csv).missing("n/a"),
        us("server µs", "server_us_per_handshake"),
        us("client µs", "client_us_per_handshake"),
        ratio_column().missing("n/a"),
    ];
    if let Some(baseline) = baseline {
        columns.push(Column::new("baseline", "baseline").file_only());
        let (text, csv) = (Style::Fixed(2), Style::Fixed(4));
        let title = format!("vs {baseline}");
        columns.push(Column::number(title, "ratio_to_baseline", text, csv).missing("n/a"));
    }
    columns.extend([
        Column::new("rounds", "rounds").right(),
        Column::new("handshakes", "handshakes").file_only(),
        Column::new("seconds", "seconds")
            .csv(Style::Fixed(3))
            .file_only(),
        Column::new("raw rounds", "raw_rounds").json_only(),
    ]);
    // The files keep the columns of earlier versions first.
    let mut file_order = vec![
        "group",
        "implementation",
        "openssl_version",
        "handshakes_per_sec",
        "ms_per_handshake",
        "ratio_to_x25519",
        "rounds",
        "handshakes",
        "seconds",
        "server_us_per_handshake",
        "client_us_per_handshake",
    ];
    if baseline.is_some() {
        file_order.extend(["baseline", "ratio_to_baseline"]);
    }
    file_order.push("raw_rounds");
    let mut table = Table::new(columns).file_order(&file_order);
    let measurements: Vec<Measurement> = rows.iter().map(|r| r.measurement.clone()).collect();
    for row in rows {
        let m = &row.measurement;
        let mut cells = vec![
            Value::text(&m.parameter_set),
            Value::text(&m.implementation),
            Value::Text(openssl_version()),
            Value::num(row.rate()),
            Value::num(row.rate().map(|r| 1e3 / r)),
            Value::num(row.side_us(1)),
            Value::num(row.side_us(0)),
            Value::num(ratio_to_x25519(&measurements, m)),
        ];
        if let Some(baseline) = baseline {
            let ratio = m.ratio_to(m.counterpart(&measurements, baseline));
            cells.extend([Value::text(baseline), Value::num(ratio)]);
        }
        let raw = m.trials.iter().zip(&row.sides[0]).zip(&row.sides[1]);
        let raw = raw.map(|((trial, client), server)| {
            let mut round = serde_json::to_value(trial).unwrap_or_default();
            round["client_us_per_handshake"] = json!(client);
            round["server_us_per_handshake"] = json!(server);
            round
        });
        cells.extend([
            Value::Int(m.trials.len() as u64),
            Value::Int(m.operations()),
            Value::Num(seconds_of(m)),
            Value::Json(raw.collect()),
        ]);
        table.push(cells);
    }
    table
}

/// The in-process benchmark: every (group, implementation), checked with
/// one handshake, then measured round by round.
fn run_in_process(args: &Args) -> Result<(), String> {
    let (mut notes, mut skipped, mut lacking) = (Vec::new(), Vec::new(), Vec::new());
    let implementations = load_implementations(args, &mut notes, &mut skipped)?;
    let identity = self_signed().map_err(|e| format!("certificate: {e}"))?;
    let (mut contexts, mut rows) = (Vec::new(), Vec::new());
    for group in &args.groups() {
        for implementation in &implementations {
            let name = &implementation.name;
            let row = || Row {
                measurement: Measurement::new(name, group, Operation::Handshake),
                sides: [Vec::new(), Vec::new()],
            };
            let run = &implementation.run;
            if run.lacking == Lacking::NotAvailable && !run.has_group(group) {
                let spelled = run.spelling.of(group);
                let spelled = match spelled == group {
                    true => String::new(),
                    false => format!(" (spelled {spelled})"),
                };
                lacking.push(format!("{name} has no group {group}{spelled}"));
                rows.push(row());
                contexts.push(None);
                continue;
            }
            let made = match run.contexts(group, &identity) {
                Ok(made) => made,
                Err(e) if run.lacking == Lacking::LeftOut => {
                    notes.push(format!("{name}: skipped {group}: {e}"));
                    continue;
                }
                Err(e) => return Err(format!("{name}: {e}")),
            };
            made.handshake(&mut [Duration::ZERO; 2])
                .map_err(|e| format!("{name}: first handshake: {group}: {e}"))?;
            contexts.push(Some(made));
            rows.push(row());
        }
    }
    if let Some(baseline) = args
        .baseline
        .as_deref()
        .filter(|b| skipped.iter().any(|s| s == b))
    {
        notes.push(format!(
            "--baseline {baseline} was skipped: its ratios are n/a"
        ));
    }

    let (budget, rounds) = (args.budget(), args.rounds);
    println!(
        "tls-bench: {}; {rounds} round(s) x {budget} per group and implementation; full TLS 1.3 \
         handshakes (no resumption), P-256 ECDSA server certificate, in-memory BIOs, \
         one thread",
        openssl::version::version(),
    );
    implementations
        .iter()
        .for_each(|i| println!("  {}", i.run.description));
    notes.iter().for_each(|note| println!("note: {note}"));
    lacking.iter().for_each(|l| println!("n/a: {l}"));

    let progress = Progress::stderr();
    for round in 1..=rounds {
        for (made, row) in contexts.iter().zip(&mut rows) {
            let Some(made) = made else { continue };
            let m = &mut row.measurement;
            let (name, group) = (&m.implementation, &m.parameter_set);
            let (start, mut spent) = (Instant::now(), [Duration::ZERO; 2]);
            let mut handshakes = 0;
            while args.allows(handshakes, start) {
                made.handshake(&mut spent)
                    .map_err(|e| format!("{name} round {round}: {group}: {e}"))?;
                handshakes += 1;
            }
            let trial = Trial::timed(handshakes as u64, start.elapsed().as_secs_f64(), None);
            progress.update(&format!(
                "[{name} {group}] round {round}/{rounds}: {} handshakes in {:.2} s ({:.0}/s)",
                trial.operations, trial.seconds, trial.ops_per_sec
            ));
            m.trials.push(trial);
            for (side, spent) in row.sides.iter_mut().zip(spent) {
                side.push(spent.as_secs_f64() * 1e6 / handshakes as f64);
            }
        }
    }
    progress.finish();

    let table = results_table(&rows, args.baseline.as_deref());
    print!("\n{}", table.render());
    let settings = json!({
        "tool": "tls-bench",
        "openssl_version": openssl::version::version(),
        "budget": budget,
        "rounds": rounds,
        "implementations": implementations.iter().map(|i| &i.run.description).collect::<Vec<_>>(),
        "baseline": args.baseline,
        "skipped": skipped,
        "notes": notes,
        "not_available": lacking,
    });
    args.files.write(&table, settings)?;
    match lacking.is_empty() {
        true => Ok(()),
        false => Err(lacking.join("; ")),
    }
}

/// One connection: TCP, a full TLS 1.3 handshake offering only `known`'s
/// group, a check of the negotiated group, and `GET /` answered with 200.
fn external_handshake(
    address: &str,
    context: &SslContext,
    known: Option<KnownGroup>,
) -> Result<(), String> {
    let tcp = TcpStream::connect(address).map_err(|e| format!("connect: {e}"))?;
    let _ = tcp.set_nodelay(true);
    let ssl = Ssl::new(context).map_err(|e| format!("SSL_new: {e}"))?;
    let mut tls = ssl.connect(tcp).map_err(|e| format!("handshake: {e}"))?;
    check_group(tls.ssl(), known)?;
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
fn external_round(args: &Args, address: &str, context: &SslContext, group: &str) -> Tally {
    let (known, started, start) = (known_group(group), AtomicUsize::new(0), Instant::now());
    let client = || {
        let mut tally: Tally = (0, 0, None);
        while args.allows(started.fetch_add(1, Ordering::Relaxed), start) {
            tally.0 += 1;
            if let Err(e) = external_handshake(address, context, known) {
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
type Tally = (usize, usize, Option<String>);

/// Per group: handshakes, failures, seconds, handshakes/s and the ratio to
/// X25519's.
fn external_table(measurements: &[Measurement], failures: &[usize]) -> Table {
    let mut table = Table::new(vec![
        Column::new("group", "group"),
        Column::new("handshakes", "handshakes").right(),
        Column::new("failures", "failures").right(),
        Column::number("seconds", "seconds", Style::Fixed(1), Style::Fixed(3)),
        rate_column(),
        ratio_column(),
    ]);
    for (m, &failed) in measurements.iter().zip(failures) {
        table.push(vec![
            Value::text(&m.parameter_set),
            Value::Int(m.operations()),
            Value::Int(failed as u64),
            Value::Num(seconds_of(m)),
            Value::Num(m.ops_per_sec()),
            Value::num(ratio_to_x25519(measurements, m)),
        ]);
    }
    table
}

/// `--connect`: our provider's client against an external server.
fn run_external(args: &Args, address: &str) -> Result<(), String> {
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
        let (n, failures_here, first) = external_round(args, address, &context.0, group);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_groups_match_what_libssl_reports() {
        let x25519 = known_group("x25519").unwrap();
        assert!(reports(x25519, 1034) && reports(x25519, 0x100_001d));
        assert!(!reports(x25519, 0x100_0201));
        let mlkem768 = known_group("MLKEM768").unwrap();
        assert!(reports(mlkem768, 0x100_0201) && !reports(mlkem768, 0x201));
        assert!(!reports(mlkem768, 0), "NID_undef is no group");
        assert_eq!(known_group("prime256v1").unwrap().0, 0x17);
        assert_eq!(known_group("X25519MLKEM768").unwrap().0, 0x11ec);
        // The other spellings the provider registers, each its IANA group.
        let aliases = [
            ("x25519_mlkem768", 0x11ec),
            ("p256_mlkem768", 0x11eb),
            ("p384_mlkem1024", 0x11ed),
            ("mlkem512", 0x0200),
            ("mlkem768", 0x0201),
            ("mlkem1024", 0x0202),
        ];
        for (alias, code_point) in aliases {
            assert_eq!(known_group(alias).map(|g| g.0), Some(code_point), "{alias}");
        }
        assert!(known_group("FFDHE2048").is_none());
    }

    #[test]
    fn spellings_and_provider_names() {
        assert_eq!(Spelling::Oqsprovider.of("MLKEM768"), "mlkem768");
        assert_eq!(Spelling::Oqsprovider.of("mlkem1024"), "mlkem1024");
        assert_eq!(Spelling::Oqsprovider.of("X25519MLKEM768"), "X25519MLKEM768");
        assert_eq!(Spelling::OpenSsl.of("MLKEM512"), "MLKEM512");
        let spec = provider_spec("oqsprovider=/opt/oqs/lib").unwrap();
        assert_eq!(
            spec,
            ("oqsprovider".to_owned(), PathBuf::from("/opt/oqs/lib"))
        );
        assert!(["x", "=d", "x=", "a b=d", "a/b=d"]
            .iter()
            .all(|bad| provider_spec(bad).is_err()));
    }
}
