//! The command line.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::builder::NonEmptyStringValueParser as NonEmpty;
use clap::Parser;
use test_tools::cli::{self, default_provider_dir, positive, Files};

use crate::groups::known_group;
use crate::providers::Spelling;

/// The groups measured when none is named.
pub(crate) const DEFAULT_GROUPS: &str =
    "X25519,MLKEM768,X25519MLKEM768,SecP256r1MLKEM768,MLKEM1024";

/// Full TLS 1.3 handshakes per second, in process: client and server in one
/// thread over in-memory buffers, stepped in turn, each offering exactly the
/// group measured. Every handshake is a full one (no tickets, no session
/// cache) with fresh SSLs, a self-signed P-256 ECDSA server certificate, a
/// check of the negotiated group and a small message each way. The groups
/// are those of the group table (`tls-groups`), in any of their spellings;
/// another name is an error.
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
/// row and fails the run at the end (native's are left out with a note;
/// ours fails it at once). The property queries are preferences, so on
/// OpenSSL 3.5+ libssl would take a post-quantum group a provider lacks from
/// the default provider: every post-quantum handshake's key exchange is
/// checked to be the implementation's provider's (a classical group's, the
/// ratio's baseline, is whichever provider has it, named in a note).
/// Progress goes to stderr.
#[derive(Parser, Debug, PartialEq)]
#[command(name = "tls-bench")]
pub(crate) struct Args {
    /// Where mlkem.so is (made by `bash scripts/build-provider.sh`)
    #[arg(long, value_name = "DIR", default_value_os_t = default_provider_dir())]
    pub(crate) provider_dir: PathBuf,
    /// Comma-separated TLS groups
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = group_name, default_value = DEFAULT_GROUPS)]
    pub(crate) groups: Vec<String>,
    /// Handshake for S seconds per group, implementation and round (0.2
    /// with --quick)
    #[arg(long, value_name = "S", value_parser = seconds, conflicts_with = "handshakes")]
    #[arg(default_value_t = 2.0, default_value_if("quick", "true", "0.2"))]
    pub(crate) seconds: f64,
    /// Or exactly N handshakes each
    #[arg(long, value_name = "N", value_parser = positive)]
    pub(crate) handshakes: Option<usize>,
    /// Rounds; each round runs every group in turn, and the reported rate is
    /// the median over rounds (1 with --quick)
    #[arg(long, value_name = "R", value_parser = positive)]
    #[arg(default_value_t = 3, default_value_if("quick", "true", "1"))]
    pub(crate) rounds: usize,
    /// One short round, for a smoke run
    #[arg(long)]
    pub(crate) quick: bool,
    /// Be the client of the TLS server at HOST:PORT instead (one round per
    /// group: full handshakes, each followed by an HTTP/1.0 GET /, with
    /// --in-flight connections at a time; failures are counted and fail the
    /// run at the end)
    #[arg(long, value_name = "HOST:PORT")]
    pub(crate) connect: Option<String>,
    /// Connections in flight with --connect (one thread each)
    #[arg(long, value_name = "N", value_parser = positive, default_value_t = 8, requires = "connect")]
    pub(crate) in_flight: usize,
    /// Also measure oqsprovider: the directory holding oqsprovider.so, or a
    /// module NAME.so (its own ML-KEM is off on OpenSSL 3.5+, where it is
    /// skipped with a note)
    #[arg(long, value_name = "DIR", value_parser = cli::path, conflicts_with = "connect")]
    pub(crate) oqsprovider: Option<PathBuf>,
    /// Also measure provider NAME, loaded from DIR/NAME.so with `default` in
    /// an OSSL_LIB_CTX of its own (repeatable)
    #[arg(long = "provider", value_name = "NAME=DIR", value_parser = provider_spec)]
    #[arg(conflicts_with = "connect")]
    pub(crate) providers: Vec<(String, PathBuf)>,
    /// Add a column: each row's handshakes/s over IMPL's for the same group
    /// (IMPL: ours, native, oqsprovider or a --provider NAME)
    #[arg(long, value_name = "IMPL", value_parser = NonEmpty::new(), conflicts_with = "connect")]
    pub(crate) baseline: Option<String>,
    #[command(flatten)]
    pub(crate) files: Files,
}

pub(crate) fn group_name(group: &str) -> Result<String, String> {
    let group = group.trim();
    match group.is_empty() || group.contains(['\0', ':']) {
        true => Err(format!("bad group name {group:?}")),
        false => known_group(group).map(|_| group.to_owned()),
    }
}

/// A value parser: `--provider`'s NAME=DIR.
pub(crate) fn provider_spec(value: &str) -> Result<(String, PathBuf), String> {
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

pub(crate) fn seconds(value: &str) -> Result<f64, String> {
    match value.parse::<f64>() {
        Ok(s) if s.is_finite() && s > 0.0 => Ok(s),
        _ => Err(format!("expected a number above 0, got {value:?}")),
    }
}

impl Args {
    /// Whether another handshake may start, `started` of them since `start`
    /// (each group, implementation and round gets this budget).
    pub(crate) fn allows(&self, started: usize, start: Instant) -> bool {
        match self.handshakes {
            Some(n) => started < n,
            None => start.elapsed() < Duration::from_secs_f64(self.seconds),
        }
    }

    /// The budget, in words.
    pub(crate) fn budget(&self) -> String {
        match self.handshakes {
            Some(n) => format!("{n} handshakes"),
            None => format!("{} s", self.seconds),
        }
    }

    /// The groups, each once (names compared without case).
    pub(crate) fn groups(&self) -> Vec<String> {
        cli::unique_by(self.groups.clone(), |a, b| a.eq_ignore_ascii_case(b))
    }
}

/// A provider measured beside ours: `--oqsprovider` or `--provider`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Added {
    pub(crate) name: String,
    pub(crate) dir: PathBuf,
    pub(crate) spelling: Spelling,
}

impl Args {
    /// `--oqsprovider`, then every `--provider` in order.
    pub(crate) fn added(&self) -> Vec<Added> {
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
    pub(crate) fn check(&self) -> Result<(), String> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_names() {
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
