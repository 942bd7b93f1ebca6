//! One full handshake in process: client and server stepped in turn over an
//! in-memory link, then a message each way.

use std::cell::RefCell;
use std::ffi::CStr;
use std::io::{self, Read, Write};
use std::time::{Duration, Instant};
use std::{collections::VecDeque, rc::Rc};

use openssl::error::ErrorStack;
use openssl::ssl::{ErrorCode, Ssl, SslStream};
use tls_groups::Group;

use crate::groups::{check_group, check_key_exchange, key_exchange_provider};
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
    /// The group every handshake must negotiate.
    pub(crate) group: &'static Group,
    /// The provider that must serve every handshake's key exchange: the
    /// implementation's, for a post-quantum group; `None` for a classical
    /// one (the baseline, whichever provider has it).
    pub(crate) provider: Option<&'l CStr>,
    pub(crate) ends: [TlsContext<'l>; 2],
}

impl GroupContexts<'_> {
    /// One full handshake and its checks (the group, the key exchange's
    /// provider) and a message each way; adds the time the client's (0) and
    /// the server's (1) handshake steps took to `spent`.
    pub(crate) fn handshake(&self, spent: &mut [Duration; 2]) -> Result<(), String> {
        let ends = self.finished(spent)?;
        if let Some(provider) = self.provider {
            for (end, server) in ends.iter().zip([false, true]) {
                check_key_exchange(end.ssl(), server, provider)
                    .map_err(|e| format!("{}: {e}", SIDES[usize::from(server)]))?;
            }
        }
        Ok(())
    }

    /// One full handshake, checked as [`GroupContexts::handshake`] checks
    /// it but for the provider: the one that served its key exchange (the
    /// client's and the server's view, which must agree).
    pub(crate) fn served_by(&self) -> Result<String, String> {
        let [client, server] = self.finished(&mut [Duration::ZERO; 2])?;
        let sides = [(&client, false), (&server, true)];
        let [by_client, by_server] = sides.map(|(end, server)| {
            key_exchange_provider(end.ssl(), server).unwrap_or_else(|| "no provider".to_owned())
        });
        match by_client == by_server {
            true => Ok(by_client),
            false => Err(format!(
                "key exchange served by provider {by_client} (client) and {by_server} (server)"
            )),
        }
    }

    /// A full handshake between a fresh client (0) and server (1) over an
    /// in-memory link, its group checked, and a message each way.
    fn finished(&self, spent: &mut [Duration; 2]) -> Result<[SslStream<Wire>; 2], String> {
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
        let [mut client, mut server] = [end(0).map_err(ssl_new)?, end(1).map_err(ssl_new)?];
        let mut steps = 0;
        // Both step each time; a finished end stays done.
        loop {
            let client_done = timed(|| step(&mut client, "client"), &mut spent[0])?;
            let server_done = timed(|| step(&mut server, "server"), &mut spent[1])?;
            if client_done && server_done {
                break;
            }
            steps += 1;
            if steps == MAX_STEPS {
                return Err(format!("handshake unfinished after {MAX_STEPS} steps"));
            }
        }
        for (end, side) in [(&client, SIDES[0]), (&server, SIDES[1])] {
            check_group(end.ssl(), self.group).map_err(|e| format!("{side}: {e}"))?;
        }
        exchange(&mut client, &mut server, b"ping")
            .map_err(|e| format!("client to server: {e}"))?;
        exchange(&mut server, &mut client, b"pong")
            .map_err(|e| format!("server to client: {e}"))?;
        Ok([client, server])
    }
}

/// The ends' names, client (0) and server (1).
const SIDES: [&str; 2] = ["client", "server"];

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
