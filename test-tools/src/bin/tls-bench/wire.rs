//! One full handshake in process: client and server stepped in turn over an
//! in-memory link, then a message each way.

use std::cell::RefCell;
use std::io::{self, Read, Write};
use std::time::{Duration, Instant};
use std::{collections::VecDeque, rc::Rc};

use openssl::error::ErrorStack;
use openssl::ssl::{ErrorCode, Ssl, SslStream};

use crate::groups::{check_group, KnownGroup};
use crate::tls::TlsContext;

/// Handshake steps per side before a handshake is declared stuck (a full
/// TLS 1.3 handshake needs 2 to 3).
pub(crate) const MAX_STEPS: usize = 16;

/// One end's view of an in-memory link: it reads `link[end]`, which the other
/// end writes; a read with nothing buffered would block (`SSL_ERROR_WANT_READ`).
pub(crate) struct Wire {
    pub(crate) link: Rc<RefCell<[VecDeque<u8>; 2]>>,
    pub(crate) end: usize,
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
pub(crate) struct GroupContexts<'l> {
    pub(crate) known: Option<KnownGroup>,
    pub(crate) ends: [TlsContext<'l>; 2],
}

impl GroupContexts<'_> {
    /// One full handshake, its checks and a message each way; adds the
    /// time the client's (0) and the server's (1) handshake steps took to
    /// `spent`.
    pub(crate) fn handshake(&self, spent: &mut [Duration; 2]) -> Result<(), String> {
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
pub(crate) fn timed<T>(f: impl FnOnce() -> T, spent: &mut Duration) -> T {
    let start = Instant::now();
    let result = f();
    *spent += start.elapsed();
    result
}

/// Advances `end`'s handshake as far as its input allows: whether it is done.
pub(crate) fn step(end: &mut SslStream<Wire>, side: &str) -> Result<bool, String> {
    match end.do_handshake() {
        Ok(()) => Ok(true),
        Err(e) if e.code() == ErrorCode::WANT_READ => Ok(false),
        Err(e) => Err(format!("{side} handshake: {e}")),
    }
}

/// Writes `message` on `from` and checks that `to` reads exactly it.
pub(crate) fn exchange(
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
