//! A TCP relay on loopback that sits between a TLS client and server for
//! one connection at a time, rewrites the key shares of the first
//! ClientHello (client to server) and the first ServerHello (server to
//! client), and notes every plaintext alert it relays.

use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::thread;
use std::time::Duration;

use super::wire::{Hello, KeyShare, Record, ALERT, CLIENT_HELLO, HANDSHAKE, SERVER_HELLO};

/// How long either side may stay silent before the relay gives up (a hang
/// is reported, not waited out).
const IDLE: Duration = Duration::from_secs(10);

/// A rewrite of one hello's key shares.
pub type Rewrite = Box<dyn FnOnce(&mut Vec<KeyShare>) + Send>;

/// Which way a record travelled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    ClientToServer,
    ServerToClient,
}

/// What the relay saw on one connection.
#[derive(Debug, Default)]
pub struct Seen {
    /// The ClientHello's key shares as the client sent them.
    pub client_shares: Option<Vec<KeyShare>>,
    /// The ServerHello's key share as the server sent it.
    pub server_share: Option<KeyShare>,
    /// Plaintext alerts (level, description), in the order relayed.
    pub alerts: Vec<(Direction, u8, u8)>,
    /// Whether a side went silent for longer than [`IDLE`].
    pub stalled: bool,
}

/// The relay: listens on an ephemeral loopback port and forwards to
/// `upstream`.
pub struct Mitm {
    listener: TcpListener,
    upstream: SocketAddr,
}

/// One direction's result.
#[derive(Default)]
struct Leg {
    shares: Option<Vec<KeyShare>>,
    alerts: Vec<(u8, u8)>,
    stalled: bool,
}

impl Mitm {
    /// Listens on 127.0.0.1 (any free port) for connections to `upstream`.
    pub fn new(upstream: SocketAddr) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("mitm listen");
        Self { listener, upstream }
    }

    /// Where clients connect.
    pub fn addr(&self) -> SocketAddr {
        self.listener.local_addr().expect("mitm address")
    }

    /// Relays the next connection to its end, applying `client_hello` to
    /// the first ClientHello's key shares and `server_hello` to the first
    /// ServerHello's, on a thread of its own; join it for what it saw.
    pub fn relay_one(
        &self,
        client_hello: Option<Rewrite>,
        server_hello: Option<Rewrite>,
    ) -> thread::JoinHandle<Seen> {
        let listener = self.listener.try_clone().expect("listener clone");
        let upstream = self.upstream;
        thread::spawn(move || {
            let (client, _) = listener.accept().expect("mitm accept");
            let server = TcpStream::connect(upstream).expect("mitm connect upstream");
            for end in [&client, &server] {
                end.set_read_timeout(Some(IDLE)).expect("timeout");
                end.set_write_timeout(Some(IDLE)).expect("timeout");
                end.set_nodelay(true).expect("nodelay");
            }
            let (c2, s2) = (
                client.try_clone().expect("clone"),
                server.try_clone().expect("clone"),
            );
            let back = thread::spawn(move || leg(s2, c2, SERVER_HELLO, server_hello));
            let forth = leg(client, server, CLIENT_HELLO, client_hello);
            let back = back.join().expect("relay thread");
            let mut alerts: Vec<_> = forth
                .alerts
                .iter()
                .map(|&(l, d)| (Direction::ClientToServer, l, d))
                .collect();
            alerts.extend(
                back.alerts
                    .iter()
                    .map(|&(l, d)| (Direction::ServerToClient, l, d)),
            );
            Seen {
                client_shares: forth.shares,
                server_share: back.shares.and_then(|s| s.into_iter().next()),
                alerts,
                stalled: forth.stalled || back.stalled,
            }
        })
    }
}

/// Forwards records from `from` to `to` until either closes, rewriting the
/// first `hello` message's key shares.
fn leg(mut from: TcpStream, mut to: TcpStream, hello: u8, mut rewrite: Option<Rewrite>) -> Leg {
    let mut seen = Leg::default();
    let mut first_handshake = true;
    loop {
        let mut record = match Record::read(&mut from) {
            Ok(Some(record)) => record,
            Ok(None) => break,
            Err(e) => {
                seen.stalled |= matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                );
                break;
            }
        };
        if record.content_type == HANDSHAKE && first_handshake {
            first_handshake = false;
            let mut parsed = Hello::parse(&record.fragment)
                .filter(|h| h.msg_type == hello)
                .unwrap_or_else(|| panic!("expected one hello of type {hello} in the record"));
            let mut shares = parsed.key_shares().expect("key_share extension");
            seen.shares = Some(shares.clone());
            if let Some(rewrite) = rewrite.take() {
                rewrite(&mut shares);
                parsed.set_key_shares(&shares);
                record.fragment = parsed.encode();
            }
        }
        if record.content_type == ALERT && record.fragment.len() == 2 {
            seen.alerts.push((record.fragment[0], record.fragment[1]));
        }
        if record.write(&mut to).is_err() {
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Write);
    seen
}
