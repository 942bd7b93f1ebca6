//! Remote mode: which group a server negotiates, offering each
//! post-quantum group in turn and then this machine's default list.

use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use openssl::ssl::Ssl;
use serde::Serialize;

use crate::deadline::{Bounded, Deadline};
use crate::diagnosis::PROVIDER;
use crate::groups;
use crate::handshake::{self, Outcome, Stop};
use crate::ossl;
use crate::starttls::Protocol;
use crate::tls_wire;

/// A server to check.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Target {
    /// The host name or address.
    pub host: String,
    /// The TCP port.
    pub port: u16,
}

impl Target {
    /// `HOST`, `HOST:PORT`, `[V6]:PORT` or a bare IPv6 address; the port
    /// defaults to the protocol's (443 for plain TLS).
    pub fn parse(text: &str, starttls: Option<Protocol>) -> Result<Self, String> {
        let default_port = starttls.map_or(443, Protocol::default_port);
        let bad = || format!("'{text}' is not HOST[:PORT]");
        let (host, port) = if let Some(rest) = text.strip_prefix('[') {
            let (host, after) = rest.split_once(']').ok_or_else(bad)?;
            match after.strip_prefix(':') {
                Some(port) => (host, Some(port)),
                None if after.is_empty() => (host, None),
                None => return Err(bad()),
            }
        } else if text.matches(':').count() > 1 {
            (text, None) // a bare IPv6 address
        } else {
            match text.split_once(':') {
                Some((host, port)) => (host, Some(port)),
                None => (text, None),
            }
        };
        if host.is_empty() || host.chars().any(|c| c.is_whitespace() || c == '/') {
            return Err(bad());
        }
        let port = match port {
            Some(p) => p
                .parse::<u16>()
                .ok()
                .filter(|&p| p != 0)
                .ok_or_else(|| format!("'{p}' is not a port number (1-65535)"))?,
            None => default_port,
        };
        Ok(Self {
            host: host.to_owned(),
            port,
        })
    }

    fn shown(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

/// One connection: what was offered and what came back.
#[derive(Debug, Serialize)]
pub struct Attempt {
    /// The group offered, or "default list".
    pub offered: String,
    /// The group the server chose, if the handshake completed.
    pub negotiated: Option<String>,
    /// Its code point.
    pub codepoint: Option<u16>,
    /// Whether it is post-quantum.
    pub post_quantum: bool,
    /// The group a HelloRetryRequest asked for, if the server sent one.
    pub hello_retry_request: Option<String>,
    /// Connection and handshake time, in milliseconds.
    pub ms: f64,
    /// Why it failed, if it did.
    pub error: Option<String>,
}

/// What remote mode found.
#[derive(Debug, Serialize)]
pub struct RemoteReport {
    /// Always "remote".
    pub mode: &'static str,
    /// The server.
    pub target: Target,
    /// The STARTTLS protocol used, if any.
    pub starttls: Option<Protocol>,
    /// How the provider came to be loaded.
    pub provider: String,
    /// One per offer.
    pub attempts: Vec<Attempt>,
    /// Whether the server negotiates a post-quantum group.
    pub post_quantum: bool,
    /// The one-line conclusion.
    pub conclusion: String,
}

/// How many connections a run makes: one per post-quantum group, then the
/// default list.
pub const ATTEMPTS: u32 = {
    let (mut attempts, mut i) = (1, 0);
    while i < tls_groups::GROUPS.len() {
        if tls_groups::GROUPS[i].offered_everywhere() {
            attempts += 1;
        }
        i += 1;
    }
    attempts
};

/// The longest a run takes: `timeout` for the name lookup, and `timeout`
/// for each attempt (connect, STARTTLS exchange, handshake).
pub fn bound(timeout: Duration) -> Duration {
    timeout * (1 + ATTEMPTS)
}

/// Resolves the host by `deadline` (a stuck resolver must not hang the
/// check: the lookup runs in a thread that is left behind if it is late).
fn resolve(target: &Target, deadline: Deadline) -> Result<Vec<SocketAddr>, String> {
    let (tx, rx) = mpsc::channel();
    let query = (target.host.clone(), target.port);
    thread::spawn(move || {
        let _ = tx.send(query.to_socket_addrs().map(Iterator::collect::<Vec<_>>));
    });
    let left = deadline
        .remaining()
        .map_err(|e| format!("cannot resolve {}: {e}", target.host))?;
    match rx.recv_timeout(left) {
        Ok(Ok(addrs)) if !addrs.is_empty() => Ok(addrs),
        Ok(Ok(_)) => Err(format!("{} has no address", target.host)),
        Ok(Err(e)) => Err(format!("cannot resolve {}: {e}", target.host)),
        Err(_) => Err(format!(
            "cannot resolve {}: no answer in {}s",
            target.host,
            deadline.budget().as_secs()
        )),
    }
}

/// One connection offering `group` (or the default list), all of it by
/// `deadline`; an error is an attempt that could not reach the handshake,
/// after which the check cannot go on.
fn attempt(
    target: &Target,
    addrs: &[SocketAddr],
    starttls: Option<Protocol>,
    group: Option<&str>,
    deadline: Deadline,
) -> Result<(Outcome, Option<Stop>), String> {
    let started = Instant::now();
    let context = handshake::client_context(group)?;
    let mut stream = Bounded::connect(addrs, deadline)?;
    if let Some(protocol) = starttls {
        protocol.prepare(&mut stream).map_err(|why| {
            format!(
                "{} (STARTTLS {}): {why}",
                target.shown(),
                format!("{protocol:?}").to_lowercase()
            )
        })?;
    }
    let mut ssl = Ssl::new(&context).map_err(|e| ossl::describe(&e))?;
    if target.host.parse::<std::net::IpAddr>().is_err() {
        ssl.set_hostname(&target.host)
            .map_err(|e| ossl::describe(&e))?;
    }
    Ok(handshake::over_stream(ssl, stream, started))
}

/// Why the stream stopping a handshake ends the check: a server that
/// announces an oversized record is no TLS server; one that does not
/// finish its part in time cannot be checked.
fn stopped(target: &Target, outcome: &Outcome, stop: &Stop) -> String {
    match stop {
        Stop::Oversized(len) => format!(
            "{} does not speak TLS: it announced a record of {len} bytes (TLS allows {})",
            target.shown(),
            tls_wire::MAX_RECORD
        ),
        Stop::Deadline(why) if outcome.received == 0 => format!(
            "{} accepted the connection but did not answer the TLS ClientHello in time ({why})",
            target.shown()
        ),
        Stop::Deadline(why) if outcome.answer.version.is_none() => format!(
            "{} did not finish its answer to the TLS ClientHello in time ({} bytes came; {why})",
            target.shown(),
            outcome.received
        ),
        Stop::Deadline(why) => format!(
            "{} did not finish the TLS handshake in time (after its ServerHello; {why})",
            target.shown()
        ),
    }
}

/// Why an answer shows the server is not a TLS 1.3 server at all (as
/// opposed to one that refuses a group).
fn not_tls13(target: &Target, outcome: &Outcome) -> Option<String> {
    let answer = &outcome.answer;
    outcome.error.as_ref()?;
    if !answer.looked_like_tls {
        return Some(match outcome.error.as_deref() {
            Some("no answer from the server in time") => format!(
                "{} accepted the connection but did not answer the TLS ClientHello in time",
                target.shown()
            ),
            _ if outcome.received == 0 => format!(
                "{} closed the connection without answering the TLS ClientHello",
                target.shown()
            ),
            _ => format!("{} does not speak TLS", target.shown()),
        });
    }
    // protocol_version (70): the server has no TLS 1.3.
    if answer.alert.is_some_and(|(_, code)| code == 70) {
        return Some(format!("{} does not offer TLS 1.3", target.shown()));
    }
    // TLS records, but neither a ServerHello (or HelloRetryRequest) nor an
    // alert: libssl refused what came (an oversized message, garbage).
    if answer.version.is_none() && answer.alert.is_none() {
        return Some(format!(
            "{} answered the TLS ClientHello with no ServerHello: {}",
            target.shown(),
            outcome.error.as_deref().unwrap_or("no reason")
        ));
    }
    match answer.version {
        Some(v) if !answer.is_tls13() => Some(format!(
            "{} does not offer TLS 1.3 (it chose {})",
            target.shown(),
            match v {
                0x0303 => "TLS 1.2".to_owned(),
                0x0302 => "TLS 1.1".to_owned(),
                0x0301 => "TLS 1.0".to_owned(),
                other => format!("version {other:#06x}"),
            }
        )),
        _ => None,
    }
}

fn record(offered: &str, outcome: &Outcome) -> Attempt {
    let group = outcome.group();
    Attempt {
        offered: offered.to_owned(),
        negotiated: group.map(groups::name),
        codepoint: group,
        post_quantum: group.is_some_and(groups::is_post_quantum),
        hello_retry_request: outcome.answer.hello_retry_group.map(groups::name),
        ms: (outcome.elapsed.as_secs_f64() * 1e4).round() / 10.0,
        error: outcome.error.clone(),
    }
}

/// Checks `target`; an error is a check that could not be made (exit 2).
pub fn run(
    target: Target,
    starttls: Option<Protocol>,
    timeout: Duration,
) -> Result<RemoteReport, String> {
    let provider = if ossl::provider_available(PROVIDER) {
        "mlkem, enabled by the configuration in effect".to_owned()
    } else {
        ossl::load_provider(PROVIDER)
            .map_err(|e| format!("cannot load the mlkem provider: {}", ossl::describe(&e)))?;
        "mlkem, loaded by this check (not enabled by the configuration in effect)".to_owned()
    };
    // The whole run's deadline; each step gets `timeout` within it.
    let run_deadline = Instant::now() + bound(timeout);
    let addrs = resolve(&target, Deadline::within(timeout, Some(run_deadline)))?;
    let offers = groups::post_quantum().map(|g| Some(g.name())).chain([None]);
    let mut attempts = Vec::new();
    for group in offers {
        let deadline = Deadline::within(timeout, Some(run_deadline));
        let (outcome, stop) = attempt(&target, &addrs, starttls, group, deadline)?;
        if let Some(stop) = stop {
            return Err(stopped(&target, &outcome, &stop));
        }
        if let Some(why) = not_tls13(&target, &outcome) {
            return Err(why);
        }
        attempts.push(record(group.unwrap_or("default list"), &outcome));
    }
    let best = attempts.iter().find(|a| a.post_quantum);
    let default = attempts.last().expect("the default list is always tried");
    let conclusion = match (best, &default.negotiated) {
        (_, Some(g)) if default.post_quantum => format!("{} negotiates {g}", target.host),
        (Some(best), default_group) => format!(
            "{} negotiates {} (when offered; this machine's default client list gets {})",
            target.host,
            best.negotiated.as_deref().unwrap_or("?"),
            default_group.as_deref().unwrap_or("no connection")
        ),
        (None, Some(g)) => format!("{} stays classical ({g})", target.host),
        (None, None) => format!(
            "{} stays classical (and refuses this machine's default list: {})",
            target.host,
            default.error.as_deref().unwrap_or("no group")
        ),
    };
    Ok(RemoteReport {
        mode: "remote",
        post_quantum: best.is_some(),
        target,
        starttls,
        provider,
        attempts,
        conclusion,
    })
}

/// The attempts as an aligned table.
pub fn render(report: &RemoteReport) -> String {
    let mut out = format!(
        "  {:<20} {:<28} {:<22} {:>7}\n",
        "offered", "negotiated", "HelloRetryRequest", "ms"
    );
    for a in &report.attempts {
        let negotiated = match (&a.negotiated, &a.error) {
            (Some(g), _) => g.clone(),
            (None, Some(e)) => format!("refused: {}", short(e)),
            (None, None) => "-".into(),
        };
        let retry = a
            .hello_retry_request
            .as_ref()
            .map_or("no".to_owned(), |g| format!("yes, for {g}"));
        out.push_str(&format!(
            "  {:<20} {:<28} {:<22} {:>7.1}\n",
            a.offered, negotiated, retry, a.ms
        ));
    }
    out
}

/// The alert in an OpenSSL error line, in TLS's words, or its last reason.
fn short(error: &str) -> &str {
    const ALERTS: [(&str, &str); 6] = [
        ("alert number 40)", "handshake_failure"),
        ("alert number 47)", "illegal_parameter"),
        ("alert number 70)", "protocol_version"),
        ("alert number 71)", "insufficient_security"),
        ("alert number 80)", "internal_error"),
        ("alert number 112)", "unrecognized_name"),
    ];
    ALERTS
        .iter()
        .find(|(number, _)| error.contains(number))
        .map_or_else(
            || error.rsplit("; ").next().unwrap_or(error),
            |(_, name)| name,
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_targets() {
        let t = |s, p| Target::parse(s, p).map(|t| (t.host, t.port));
        assert_eq!(t("example.org", None), Ok(("example.org".into(), 443)));
        assert_eq!(t("127.0.0.1:8443", None), Ok(("127.0.0.1".into(), 8443)));
        assert_eq!(t("[::1]:993", None), Ok(("::1".into(), 993)));
        assert_eq!(t("::1", None), Ok(("::1".into(), 443)));
        assert_eq!(t("db", Some(Protocol::Postgres)), Ok(("db".into(), 5432)));
        assert_eq!(t("mx", Some(Protocol::Smtp)), Ok(("mx".into(), 25)));
        assert!(t("host:0", None).is_err());
        assert!(t("host:https", None).unwrap_err().contains("not a port"));
        assert!(t("", None).is_err());
        assert!(t("a b", None).is_err());
        assert!(t("[::1", None).is_err());
    }

    #[test]
    fn the_documented_bound() {
        // The help text, docs/mlkem-provider-check.md and the manual page
        // say 7 connections and 8 x --timeout (40 s by default).
        assert_eq!(ATTEMPTS, 7);
        assert_eq!(bound(Duration::from_secs(5)), Duration::from_secs(40));
    }

    #[test]
    fn names_alerts() {
        let e = "client: sslv3 alert handshake failure (SSL alert number 40)";
        assert_eq!(short(e), "handshake_failure");
        assert_eq!(short("a; b"), "b");
    }
}
