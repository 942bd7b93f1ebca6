//! Deadlines for remote mode. A socket time-out bounds one read: a server
//! that sends a byte every few seconds never trips it. Here every read and
//! write of an attempt (the STARTTLS exchange, and libssl's own I/O during
//! the handshake) gets only the time left before the attempt's deadline,
//! and fails at once when none is left.

use std::fmt;
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// A point in time that a step of the check must finish by.
#[derive(Clone, Copy, Debug)]
pub struct Deadline {
    at: Instant,
    /// What `--timeout` allowed, for the message when it passes.
    budget: Duration,
}

/// The error of a read or write after the deadline passed (its kind is
/// `TimedOut`).
#[derive(Debug)]
pub struct DeadlinePassed {
    budget: Duration,
}

impl fmt::Display for DeadlinePassed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "not done within the attempt's {} s (--timeout)",
            self.budget.as_secs()
        )
    }
}

impl std::error::Error for DeadlinePassed {}

impl Deadline {
    /// `budget` from now, but no later than `cap` (the whole run's deadline).
    pub fn within(budget: Duration, cap: Option<Instant>) -> Self {
        let at = Instant::now() + budget;
        Self {
            at: cap.map_or(at, |cap| cap.min(at)),
            budget,
        }
    }

    /// What `--timeout` allowed.
    pub fn budget(&self) -> Duration {
        self.budget
    }

    /// The time left, or the error to fail with when there is none.
    pub fn remaining(&self) -> io::Result<Duration> {
        let left = self.at.saturating_duration_since(Instant::now());
        if left.is_zero() {
            Err(self.passed())
        } else {
            Ok(left)
        }
    }

    /// The error that says the deadline passed.
    pub fn passed(&self) -> io::Error {
        io::Error::new(
            io::ErrorKind::TimedOut,
            DeadlinePassed {
                budget: self.budget,
            },
        )
    }

    /// Whether `error` is a deadline's.
    pub fn is_passed(error: &io::Error) -> bool {
        error
            .get_ref()
            .is_some_and(|inner| inner.is::<DeadlinePassed>())
    }
}

/// A TCP stream whose reads and writes all end by a deadline.
pub struct Bounded {
    stream: TcpStream,
    deadline: Deadline,
}

impl Bounded {
    /// Connects to the first of `addrs` that answers, each try getting the
    /// time left before `deadline`.
    pub fn connect(addrs: &[std::net::SocketAddr], deadline: Deadline) -> Result<Self, String> {
        let mut last = String::new();
        for addr in addrs {
            let Ok(left) = deadline.remaining() else {
                last = format!("{addr}: {}", deadline.passed());
                break;
            };
            match TcpStream::connect_timeout(addr, left) {
                Ok(stream) => return Ok(Self { stream, deadline }),
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
                    ) =>
                {
                    last = format!("{addr}: no answer in {} s", deadline.budget.as_secs());
                }
                Err(e) => last = format!("{addr}: {e}"),
            }
        }
        Err(format!("cannot connect to {last}"))
    }

    /// Runs `op` with the socket's time-out set to the time left; a time-out
    /// is the deadline passing.
    fn bounded<T>(
        &mut self,
        set: fn(&TcpStream, Option<Duration>) -> io::Result<()>,
        op: impl FnOnce(&mut TcpStream) -> io::Result<T>,
    ) -> io::Result<T> {
        let left = self.deadline.remaining()?;
        set(&self.stream, Some(left))?;
        match op(&mut self.stream) {
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
                ) =>
            {
                Err(self.deadline.passed())
            }
            other => other,
        }
    }
}

impl Read for Bounded {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.bounded(TcpStream::set_read_timeout, |s| s.read(buf))
    }
}

impl Write for Bounded {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.bounded(TcpStream::set_write_timeout, |s| s.write(buf))
    }
    fn flush(&mut self) -> io::Result<()> {
        self.stream.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    /// A peer that trickles a byte every 100 ms: each read gets something
    /// well within any socket time-out, but the reads end at the deadline.
    #[test]
    fn a_trickle_ends_at_the_deadline() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let peer = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            for _ in 0..30 {
                if s.write_all(b"x").is_err() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        });
        let started = Instant::now();
        let deadline = Deadline::within(Duration::from_millis(700), None);
        let mut stream = Bounded::connect(&[addr], deadline).unwrap();
        let mut got = 0;
        let error = loop {
            match stream.read(&mut [0u8; 16]) {
                Ok(n) => got += n,
                Err(e) => break e,
            }
        };
        assert!(Deadline::is_passed(&error), "{error}");
        assert!(got >= 3, "{got}");
        let took = started.elapsed();
        assert!(took < Duration::from_millis(1500), "{took:?}");
        drop(stream);
        peer.join().unwrap();
    }

    #[test]
    fn the_run_deadline_caps_an_attempt() {
        let cap = Instant::now() + Duration::from_millis(10);
        let deadline = Deadline::within(Duration::from_secs(60), Some(cap));
        std::thread::sleep(Duration::from_millis(20));
        assert!(Deadline::is_passed(&deadline.remaining().unwrap_err()));
        assert_eq!(
            deadline.passed().to_string(),
            "not done within the attempt's 60 s (--timeout)"
        );
    }
}
