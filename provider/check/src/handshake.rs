//! TLS 1.3 handshakes through the system's libssl, with a copy of the
//! bytes each side sent, so the check can say what was offered and
//! answered: in memory between two of this process's SSL objects (no
//! port, no thread), or over a TCP connection to a server.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::rc::Rc;
use std::time::{Duration, Instant};

use openssl::ssl::{
    HandshakeError, MidHandshakeSslStream, Ssl, SslContext, SslMethod, SslStream, SslVerifyMode,
    SslVersion,
};

use crate::deadline::Deadline;
use crate::ossl;
use crate::tls_wire::{self, ClientHello, ServerAnswer};

/// What a handshake showed.
#[derive(Debug)]
pub struct Outcome {
    /// The client's first ClientHello.
    pub client_hello: Option<ClientHello>,
    /// The server's plaintext answer.
    pub answer: ServerAnswer,
    /// Why the handshake failed, if it did.
    pub error: Option<String>,
    /// How many bytes the client received.
    pub received: usize,
    /// From the first byte sent to the handshake's end.
    pub elapsed: Duration,
}

impl Outcome {
    /// The group the handshake agreed on, if it completed.
    pub fn group(&self) -> Option<u16> {
        self.error.is_none().then_some(self.answer.group).flatten()
    }
}

/// The most a tap keeps: the plaintext hellos come first, and the largest
/// (ML-KEM-1024's key share) is under 2 KiB.
const TAP_LIMIT: usize = 64 * 1024;

fn keep(tap: &mut Vec<u8>, bytes: &[u8]) {
    let room = TAP_LIMIT.saturating_sub(tap.len());
    tap.extend_from_slice(&bytes[..bytes.len().min(room)]);
}

/// A stream that keeps a copy of what went each way.
pub struct Tapped<S> {
    inner: S,
    sent: Vec<u8>,
    received: Vec<u8>,
}

impl<S> Tapped<S> {
    /// Wraps `inner`.
    pub fn new(inner: S) -> Self {
        Self {
            inner,
            sent: Vec::new(),
            received: Vec::new(),
        }
    }
}

impl<S: Read> Read for Tapped<S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        keep(&mut self.received, &buf[..n]);
        Ok(n)
    }
}

impl<S: Write> Write for Tapped<S> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        keep(&mut self.sent, &buf[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// One end of an in-memory duplex pipe: reads what the other end wrote,
/// and would block (rather than wait) when there is nothing.
struct MemoryEnd {
    incoming: Rc<RefCell<VecDeque<u8>>>,
    outgoing: Rc<RefCell<VecDeque<u8>>>,
}

impl Read for MemoryEnd {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut incoming = self.incoming.borrow_mut();
        if incoming.is_empty() {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let n = buf.len().min(incoming.len());
        for (slot, byte) in buf.iter_mut().zip(incoming.drain(..n)) {
            *slot = byte;
        }
        Ok(n)
    }
}

impl Write for MemoryEnd {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.outgoing.borrow_mut().extend(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

enum Progress<S> {
    Going(MidHandshakeSslStream<S>),
    Done(SslStream<S>),
    /// Why, and a copy of what this side sent.
    Failed(String, Vec<u8>),
}

fn describe(error: &openssl::ssl::Error) -> String {
    match error.ssl_error() {
        Some(stack) => ossl::describe(stack),
        None => error.to_string(),
    }
}

fn progress(
    result: Result<SslStream<Tapped<MemoryEnd>>, HandshakeError<Tapped<MemoryEnd>>>,
) -> Progress<Tapped<MemoryEnd>> {
    match result {
        Ok(done) => Progress::Done(done),
        Err(HandshakeError::WouldBlock(mid)) => Progress::Going(mid),
        Err(HandshakeError::Failure(mid)) => {
            Progress::Failed(describe(mid.error()), mid.get_ref().sent.clone())
        }
        Err(HandshakeError::SetupFailure(stack)) => {
            Progress::Failed(ossl::describe(&stack), Vec::new())
        }
    }
}

/// What this side has sent so far.
fn sent(side: &Progress<Tapped<MemoryEnd>>) -> &[u8] {
    match side {
        Progress::Going(mid) => &mid.get_ref().sent,
        Progress::Done(stream) => &stream.get_ref().sent,
        Progress::Failed(_, sent) => sent,
    }
}

/// A handshake between `client` and `server` in this process, over memory.
pub fn in_memory(client: Ssl, server: Ssl) -> Outcome {
    let to_server = Rc::new(RefCell::new(VecDeque::new()));
    let to_client = Rc::new(RefCell::new(VecDeque::new()));
    let client_end = Tapped::new(MemoryEnd {
        incoming: to_client.clone(),
        outgoing: to_server.clone(),
    });
    let server_end = Tapped::new(MemoryEnd {
        incoming: to_server,
        outgoing: to_client,
    });
    let start = Instant::now();
    let mut c = progress(client.connect(client_end));
    let mut s = progress(server.accept(server_end));
    // A TLS 1.3 handshake takes two round trips, three with a
    // HelloRetryRequest: a few dozen steps mean it is stuck.
    let mut error = None;
    for _ in 0..64 {
        c = match c {
            Progress::Going(mid) => progress(mid.handshake()),
            other => other,
        };
        s = match s {
            Progress::Going(mid) => progress(mid.handshake()),
            other => other,
        };
        match (&c, &s) {
            (Progress::Done(_), Progress::Done(_)) => break,
            (Progress::Failed(why, _), _) => {
                error = Some(format!("client: {why}"));
                if let Progress::Failed(server_why, _) = &s {
                    error = Some(format!("server: {server_why}; client: {why}"));
                }
                break;
            }
            (_, Progress::Failed(why, _)) => {
                error = Some(format!("server: {why}"));
                break;
            }
            _ => {}
        }
    }
    let done = matches!((&c, &s), (Progress::Done(_), Progress::Done(_)));
    if error.is_none() && !done {
        error = Some("the handshake did not finish".into());
    }
    Outcome {
        client_hello: tls_wire::client_hello(sent(&c)),
        answer: tls_wire::server_answer(sent(&s)),
        received: sent(&s).len(),
        error,
        elapsed: start.elapsed(),
    }
}

/// Why the stream under a handshake stopped it, rather than libssl or the
/// server.
#[derive(Debug, PartialEq, Eq)]
pub enum Stop {
    /// The attempt's deadline passed (what it says).
    Deadline(String),
    /// The server announced a record longer than TLS allows (its length).
    Oversized(usize),
}

/// The error a read fails with after the server announced a record longer
/// than TLS allows.
#[derive(Debug)]
struct Oversized(usize);

impl std::fmt::Display for Oversized {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "a TLS record of {} bytes announced (at most {})",
            self.0,
            tls_wire::MAX_RECORD
        )
    }
}

impl std::error::Error for Oversized {}

/// A stream whose reads follow the server's record framing and fail at a
/// header that announces an oversized record, before its body is read.
struct Framed<S> {
    inner: S,
    framing: tls_wire::RecordFraming,
}

impl<S: Read> Read for Framed<S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.framing
            .feed(&buf[..n])
            .map_err(|len| io::Error::new(io::ErrorKind::InvalidData, Oversized(len)))?;
        Ok(n)
    }
}

impl<S: Write> Write for Framed<S> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.inner.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// What stopped the handshake, if the stream did.
fn stop(error: &io::Error) -> Option<Stop> {
    if Deadline::is_passed(error) {
        return Some(Stop::Deadline(error.to_string()));
    }
    error
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<Oversized>())
        .map(|o| Stop::Oversized(o.0))
}

/// A client handshake over `stream` (already connected; its reads and
/// writes bounded in time), and whether the stream stopped it: at a
/// deadline, or at an oversized record.
pub fn over_stream<S: Read + Write>(
    client: Ssl,
    stream: S,
    started: Instant,
) -> (Outcome, Option<Stop>) {
    let framed = Framed {
        inner: stream,
        framing: tls_wire::RecordFraming::default(),
    };
    let mut stopped = None;
    let (tapped, error) = match client.connect(Tapped::new(framed)) {
        Ok(done) => {
            let tapped = done.get_ref();
            ((tapped.sent.clone(), tapped.received.clone()), None)
        }
        Err(HandshakeError::Failure(mid) | HandshakeError::WouldBlock(mid)) => {
            let io_error = mid.error().io_error();
            stopped = io_error.and_then(stop);
            let why = match (&stopped, io_error) {
                (Some(Stop::Deadline(why)), _) => why.clone(),
                (Some(Stop::Oversized(len)), _) => Oversized(*len).to_string(),
                (None, Some(e))
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    "no answer from the server in time".to_owned()
                }
                _ => describe(mid.error()),
            };
            let tapped = mid.get_ref();
            ((tapped.sent.clone(), tapped.received.clone()), Some(why))
        }
        Err(HandshakeError::SetupFailure(stack)) => {
            ((Vec::new(), Vec::new()), Some(ossl::describe(&stack)))
        }
    };
    let outcome = Outcome {
        client_hello: tls_wire::client_hello(&tapped.0),
        answer: tls_wire::server_answer(&tapped.1),
        received: tapped.1.len(),
        error,
        elapsed: started.elapsed(),
    };
    (outcome, stopped)
}

/// A TLS 1.3 client context as a program gets it from the configuration
/// in effect (`SSL_CTX_new` applies its `system_default` settings),
/// offering only `groups` if given, and not verifying the server: the
/// check asks which key exchange is used, not whom it talks to.
pub fn client_context(groups: Option<&str>) -> Result<SslContext, String> {
    let mut builder =
        SslContext::builder(SslMethod::tls_client()).map_err(|e| ossl::describe(&e))?;
    builder.set_verify(SslVerifyMode::NONE);
    builder
        .set_min_proto_version(Some(SslVersion::TLS1_3))
        .map_err(|e| ossl::describe(&e))?;
    if let Some(groups) = groups {
        builder
            .set_groups_list(groups)
            .map_err(|_| format!("this libssl does not know the group {groups}"))?;
    }
    Ok(builder.build())
}
