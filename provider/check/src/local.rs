//! Local mode: the OpenSSL and configuration in effect on this machine,
//! step by step, ending in handshakes through the system's libssl.

use std::env;
use std::path::{Path, PathBuf};

use openssl::asn1::Asn1Time;
use openssl::bn::BigNum;
use openssl::ec::{EcGroup, EcKey};
use openssl::hash::MessageDigest;
use openssl::nid::Nid;
use openssl::pkey::{PKey, Private};
use openssl::ssl::{Ssl, SslContext, SslMethod};
use openssl::x509::{X509Name, X509};
use serde::Serialize;

use crate::conf::{Config, Entry};
use crate::diagnosis::{self, Setup, PROVIDER};
use crate::elf;
use crate::groups;
use crate::handshake::{self, Outcome};
use crate::ossl;
use crate::report::{Status, Step};

/// What local mode found.
#[derive(Debug, Serialize)]
pub struct LocalReport {
    /// Always "local".
    pub mode: &'static str,
    /// Whether no step failed: post-quantum TLS is in effect and nothing
    /// that enabling it replaced went unnoticed.
    pub ok: bool,
    /// The steps, in order.
    pub steps: Vec<Step>,
    /// One line: in effect or not, and why.
    pub conclusion: String,
}

const ENABLE: &str = "append `.include /etc/ssl/mlkem-provider.cnf` and \
                      `.include /etc/ssl/mlkem-tls-groups.cnf` at the end of the configuration file";

/// Runs every local step.
pub fn run() -> LocalReport {
    let mut steps = Vec::new();
    let info = ossl::openssl_info();
    let supported = info.version.starts_with("OpenSSL 3") || info.version.starts_with("OpenSSL 4");
    steps.push(Step::new(
        "OpenSSL",
        if supported { Status::Ok } else { Status::Fail },
        format!(
            "{} (libssl {}); OPENSSLDIR {}; MODULESDIR {}",
            info.version,
            info.libssl
                .as_deref()
                .map_or("?".into(), |p| p.display().to_string()),
            info.openssl_dir.display(),
            info.modules_dir.display()
        ),
    ));

    let (file, setup) = configuration(&info.openssl_dir, &mut steps);
    if let Some(step) = tls12_group_choice(&info.version, &setup) {
        steps.push(step);
    }
    if let Some(step) = long_group_list(&info.version, setup.groups.as_ref()) {
        // Initialising libssl with this list would corrupt this process too.
        steps.push(step);
        return finish(steps, &[]);
    }
    if let Err(errors) = ossl::init_ssl() {
        steps.push(Step::problem(
            "initialisation",
            Status::Fail,
            format!(
                "libssl fails to initialise with this configuration: {}",
                ossl::describe(&errors)
            ),
            "config_diagnostics = 1 makes every program that reads this file fail the same way",
            "fix the configuration error above, or take the .include lines out again",
        ));
        return finish(steps, &[]);
    }
    module(&info.modules_dir, &setup, &mut steps);
    providers(&file, &setup, &mut steps);
    handshakes(&setup, ossl::provider_available(PROVIDER), &mut steps);
    finish(steps, &setup.replaced)
}

/// The conclusion. `replaced`: the findings that say enabling mlkem set a
/// setting of the file's own again; when they are the only failures, every
/// handshake went as it should: post-quantum TLS is on, and the check still
/// fails, for what enabling it undid.
fn finish(steps: Vec<Step>, replaced: &[String]) -> LocalReport {
    let failed = steps.iter().find(|s| s.status == Status::Fail);
    let only_replaced = steps
        .iter()
        .filter(|s| s.status == Status::Fail)
        .all(|s| replaced.contains(&s.detail));
    let leading = steps
        .iter()
        .find(|s| s.name == "default handshake")
        .map_or(String::new(), |s| format!(": {}", s.detail));
    let conclusion = match failed {
        None => format!("post-quantum TLS is in effect{leading}"),
        Some(_) if only_replaced => format!(
            "post-quantum TLS is in effect{leading}; but enabling it replaced the file's own \
             settings: {}",
            replaced.join("; ")
        ),
        Some(step) => format!(
            "post-quantum TLS is NOT in effect: {}: {}",
            step.name, step.detail
        ),
    };
    LocalReport {
        mode: "local",
        ok: failed.is_none(),
        steps,
        conclusion,
    }
}

/// The most entries a `Groups` list may have on the releases whose libssl
/// writes past its group array beyond them.
pub const GROUP_LIST_LIMIT: usize = 40;

/// Whether `version` ("OpenSSL 3.0.2 15 Mar 2022") is a release whose
/// `SSL_CTX_set1_groups_list` grows its array by 40 bytes instead of 40
/// entries, and so corrupts memory for a list of more than 40 groups:
/// 3.0.0-3.0.13, 3.1.0-3.1.5 and 3.2.0-3.2.1 (fixed in 3.0.14, 3.1.6, 3.2.2).
fn has_long_group_list_bug(version: &str) -> bool {
    matches!(
        release(version),
        Some((3, 0, 0..=13) | (3, 1, 0..=5) | (3, 2, 0..=1))
    )
}

/// A failure when the configured `Groups` list is longer than this libssl
/// can take: checked before libssl reads it.
fn long_group_list(version: &str, groups: Option<&Entry>) -> Option<Step> {
    let groups = groups?;
    let count = groups
        .value
        .split(':')
        .filter(|g| !g.trim().is_empty())
        .count();
    (count > GROUP_LIST_LIMIT && has_long_group_list_bug(version)).then(|| {
        Step::problem(
            "configuration",
            Status::Fail,
            format!(
                "Groups at {} lists {count} groups: {version} corrupts memory with more than \
                 {GROUP_LIST_LIMIT} (a libssl bug fixed in 3.0.14, 3.1.6 and 3.2.2); the check \
                 stops here rather than load it",
                groups.at
            ),
            "every program that reads this file may crash or misbehave when it sets up TLS",
            format!(
                "shorten the Groups line to {GROUP_LIST_LIMIT} groups or fewer (the post-quantum \
                 groups first), or update OpenSSL"
            ),
        )
    })
}

/// Whether `version` is a release whose TLS 1.2 server can choose a TLS
/// 1.3-only group (the post-quantum ones) from a client's supported
/// groups, and then fails the handshake: 3.0.0-3.0.9 and 3.1.0-3.1.1 (fixed
/// in 3.0.10 and 3.1.2).
fn has_tls12_group_bug(version: &str) -> bool {
    matches!(release(version), Some((3, 0, 0..=9) | (3, 1, 0..=1)))
}

/// (major, minor, patch) of "OpenSSL 3.0.2 15 Mar 2022".
fn release(version: &str) -> Option<(u32, u32, u32)> {
    let release = version.split_whitespace().nth(1)?;
    let mut numbers = release.split(['.', '-']).map(|n| {
        n.trim_end_matches(|c: char| c.is_ascii_alphabetic())
            .parse::<u32>()
            .ok()
    });
    Some((numbers.next()??, numbers.next()??, numbers.next()??))
}

/// On a release with the TLS 1.2 group bug and post-quantum groups in the
/// configured list: a failure when the configuration itself keeps servers
/// at TLS 1.2 or below, else a warning for the servers that do so on their
/// own (nginx `ssl_protocols TLSv1.2`).
fn tls12_group_choice(version: &str, setup: &Setup) -> Option<Step> {
    let groups = setup.groups.as_ref()?;
    let post_quantum = groups
        .value
        .split(':')
        .any(|g| groups::post_quantum_named(g).is_some());
    if !post_quantum || !has_tls12_group_bug(version) {
        return None;
    }
    let why = "a server limited to TLS 1.2 picks an ML-KEM group offered by a TLS 1.3 client \
               (Chromium, Firefox, OpenSSL 3.5) for TLS 1.2 and fails the handshake: a libssl \
               bug fixed in 3.0.10 and 3.1.2";
    let fix = "keep TLS 1.3 on for servers that use these groups, or give a TLS 1.2-only server \
               classical groups of its own (nginx ssl_ecdh_curve X25519:prime256v1), or update \
               OpenSSL";
    let capped = setup.max_protocol.as_ref().filter(|m| {
        let m = m.value.trim().to_ascii_lowercase();
        !m.is_empty() && m != "tlsv1.3" && !m.starts_with("dtls") && m != "none"
    });
    Some(match capped {
        Some(max) => Step::problem(
            "TLS 1.2 servers",
            Status::Fail,
            format!(
                "MaxProtocol = {} at {} with post-quantum groups on {version}",
                max.value, max.at
            ),
            why,
            fix,
        ),
        None => Step::problem(
            "TLS 1.2 servers",
            Status::Warn,
            format!("{version}: a server that a program limits to TLS 1.2 fails with these groups"),
            why,
            fix,
        ),
    })
}

/// The configuration file in effect, and how: `OPENSSL_CONF` or
/// OpenSSL's default.
pub fn configuration_file(openssl_dir: &Path) -> (PathBuf, String) {
    let default_file = openssl_dir.join("openssl.cnf");
    match env::var_os("OPENSSL_CONF") {
        Some(set) => (
            PathBuf::from(set),
            format!(
                "OPENSSL_CONF overrides the default {}",
                default_file.display()
            ),
        ),
        None => (
            default_file,
            "OpenSSL's default; OPENSSL_CONF is not set".to_owned(),
        ),
    }
}

/// The configuration file in effect, what it sets up and its mistakes.
fn configuration(openssl_dir: &Path, steps: &mut Vec<Step>) -> (PathBuf, Setup) {
    let (file, source) = configuration_file(openssl_dir);
    if !file.is_file() {
        steps.push(Step::problem(
            "configuration",
            Status::Fail,
            format!("{} ({source}) does not exist", file.display()),
            "OpenSSL runs without a configuration: no provider is loaded, TLS stays classical",
            "point OPENSSL_CONF at an existing file, or unset it",
        ));
        return (file, Setup::default());
    }
    let config = Config::read(&file);
    steps.push(Step::new(
        "configuration",
        Status::Ok,
        format!("{} ({source})", file.display()),
    ));
    if let Some(error) = config.errors.first() {
        steps.push(Step::problem(
            "configuration",
            Status::Fail,
            format!("OpenSSL cannot read it: {error}"),
            "programs read none of it (or, with config_diagnostics = 1, fail to start)",
            "correct the line named",
        ));
    }
    let setup = diagnosis::diagnose(&config);
    for finding in &setup.findings {
        steps.push(Step::problem(
            "configuration",
            Status::Fail,
            finding.problem.clone(),
            finding.why.clone(),
            finding.fix.clone(),
        ));
    }
    match ossl::load_config_strictly(&file, PROVIDER) {
        Ok(true) => steps.push(Step::new(
            "configuration",
            Status::Ok,
            "OpenSSL applies it without an error and loads mlkem from it",
        )),
        Ok(false) => steps.push(Step::new(
            "configuration",
            Status::Info,
            "OpenSSL applies it without reporting an error, and without mlkem (OpenSSL treats \
             a provider that fails to load as a non-fatal error: nothing is printed)",
        )),
        Err(errors) => steps.push(Step::problem(
            "configuration",
            Status::Fail,
            format!("OpenSSL reports an error applying it: {}", ossl::describe(&errors)),
            if setup.config_diagnostics {
                "config_diagnostics = 1: every program that reads this file fails to start"
            } else {
                "config_diagnostics is off: programs start anyway, without what failed, and say nothing"
            },
            "correct what the error names",
        )),
    }
    steps.push(Step::new(
        "config_diagnostics",
        Status::Info,
        if setup.config_diagnostics {
            "on: an error in the configuration stops the programs that read it (a module that \
             fails to load is not such an error: OpenSSL goes on without it)"
        } else {
            "off: an error in the configuration is ignored and programs run without what failed \
             (`config_diagnostics = 1` at the top of the file makes it stop them instead)"
        },
    ));
    (file, setup)
}

/// Where OpenSSL looks for mlkem.so: the `module` setting, OPENSSL_MODULES,
/// then MODULESDIR.
fn module_path(modules_dir: &Path, setup: &Setup) -> (PathBuf, &'static str) {
    if let Some(module) = &setup.module {
        return (
            PathBuf::from(module),
            "the configuration's `module` setting",
        );
    }
    match env::var_os("OPENSSL_MODULES") {
        Some(dir) => (Path::new(&dir).join("mlkem.so"), "OPENSSL_MODULES"),
        None => (modules_dir.join("mlkem.so"), "OpenSSL's MODULESDIR"),
    }
}

fn module(modules_dir: &Path, setup: &Setup, steps: &mut Vec<Step>) {
    let (path, from) = module_path(modules_dir, setup);
    let shown = format!("{} (from {from})", path.display());
    // Opened rather than stat'ed: the same call OpenSSL's loader makes (and
    // the one qemu's -L root redirects, where the check runs emulated).
    if let Err(e) = std::fs::File::open(&path) {
        if e.kind() != std::io::ErrorKind::NotFound {
            steps.push(Step::problem(
                "module",
                Status::Fail,
                format!("cannot read {shown}: {e}"),
                "OpenSSL cannot load it: TLS stays classical",
                "make the file readable by the users that run the programs",
            ));
            return;
        }
        steps.push(Step::problem(
            "module",
            Status::Fail,
            format!("no mlkem.so at {shown}"),
            "programs that load the provider run without it: TLS stays classical",
            "install the package (dpkg -i mlkem-provider_*.deb) or scripts/install.sh, \
             or point `module =` in [mlkem_sect] at the file",
        ));
        return;
    }
    match elf::machine(&path) {
        Ok(machine) if machine != elf::HOST_MACHINE => {
            steps.push(Step::problem(
                "module",
                Status::Fail,
                format!(
                    "{shown} is built for {}, this OpenSSL for {}",
                    elf::machine_name(machine),
                    elf::machine_name(elf::HOST_MACHINE)
                ),
                "OpenSSL cannot load it: TLS stays classical",
                "install the package built for this machine's architecture",
            ));
            return;
        }
        Ok(_) => {}
        Err(why) => {
            steps.push(Step::problem(
                "module",
                Status::Fail,
                format!("{shown}: {why}"),
                "OpenSSL cannot load it: TLS stays classical",
                "install the package again",
            ));
            return;
        }
    }
    match ossl::probe_module(&path) {
        Ok(buildinfo) => steps.push(Step::new(
            "module",
            Status::Ok,
            format!("{shown} loads: {buildinfo}"),
        )),
        Err(errors) => steps.push(Step::problem(
            "module",
            Status::Fail,
            format!("{shown} does not load: {}", ossl::describe(&errors)),
            "OpenSSL cannot load it: TLS stays classical",
            "install the package again (and for this OpenSSL: 3.0 or later)",
        )),
    }
}

fn providers(file: &Path, setup: &Setup, steps: &mut Vec<Step>) {
    let mlkem = ossl::provider_available(PROVIDER);
    let default = ossl::provider_available("default");
    let explained = if setup.findings.is_empty() {
        format!("{ENABLE} ({})", file.display())
    } else {
        "see the configuration findings above".to_owned()
    };
    match (mlkem, default) {
        (true, true) => steps.push(Step::new(
            "providers",
            Status::Ok,
            format!(
                "the configuration activates mlkem and default (providers section [{}])",
                setup.providers_section.as_deref().unwrap_or("?")
            ),
        )),
        (false, _) => steps.push(Step::problem(
            "providers",
            Status::Fail,
            "mlkem is not active in programs that read this configuration",
            "they run without ML-KEM: TLS stays classical, silently",
            explained.clone(),
        )),
        (true, false) => steps.push(Step::problem(
            "providers",
            Status::Fail,
            "mlkem is active but default is not",
            "every algorithm but ML-KEM is gone (RSA, ECDSA, AES, SHA-2, X25519): most programs fail",
            explained.clone(),
        )),
    }
    if !mlkem {
        return;
    }
    let properties = setup
        .default_properties
        .as_ref()
        .map_or("no default_properties".to_owned(), |p| {
            format!("default_properties = {}", p.value)
        });
    match ossl::kem_provider("ML-KEM-768") {
        Some(name) if name == PROVIDER => steps.push(Step::new(
            "ML-KEM",
            Status::Ok,
            format!("ML-KEM-768 comes from mlkem for programs without a property query ({properties})"),
        )),
        Some(name) => steps.push(Step::problem(
            "ML-KEM",
            Status::Warn,
            format!("ML-KEM-768 comes from {name}, not mlkem ({properties})"),
            "this OpenSSL has an ML-KEM of its own, which programs get unless they ask for ours",
            "set `default_properties = ?provider=mlkem` in the configuration's alg_section (mlkem-provider.cnf does)",
        )),
        None => steps.push(Step::new("ML-KEM", Status::Fail, "no provider serves ML-KEM-768")),
    }
}

/// A throwaway P-256 key and self-signed certificate for the in-memory
/// server (made in the default library context: its failure says the
/// default provider is missing).
fn server_identity() -> Result<(PKey<Private>, X509), openssl::error::ErrorStack> {
    let group = EcGroup::from_curve_name(Nid::X9_62_PRIME256V1)?;
    let key = PKey::from_ec_key(EcKey::generate(&group)?)?;
    let mut name = X509Name::builder()?;
    name.append_entry_by_text("CN", "mlkem-provider-check")?;
    let name = name.build();
    let mut cert = X509::builder()?;
    cert.set_version(2)?;
    let serial = BigNum::from_u32(1)?.to_asn1_integer()?;
    cert.set_serial_number(&serial)?;
    cert.set_subject_name(&name)?;
    cert.set_issuer_name(&name)?;
    let (not_before, not_after) = (Asn1Time::days_from_now(0)?, Asn1Time::days_from_now(1)?);
    cert.set_not_before(&not_before)?;
    cert.set_not_after(&not_after)?;
    cert.set_pubkey(&key)?;
    cert.sign(&key, MessageDigest::sha256())?;
    Ok((key, cert.build()))
}

fn server_context(
    identity: &(PKey<Private>, X509),
    groups: Option<&str>,
) -> Result<SslContext, String> {
    let describe = |e: openssl::error::ErrorStack| ossl::describe(&e);
    let mut builder = SslContext::builder(SslMethod::tls_server()).map_err(describe)?;
    builder.set_private_key(&identity.0).map_err(describe)?;
    builder.set_certificate(&identity.1).map_err(describe)?;
    if let Some(groups) = groups {
        builder
            .set_groups_list(groups)
            .map_err(|_| format!("this libssl does not know the group {groups}"))?;
    }
    Ok(builder.build())
}

fn handshake(client: &SslContext, server: &SslContext) -> Outcome {
    match (Ssl::new(client), Ssl::new(server)) {
        (Ok(c), Ok(s)) => handshake::in_memory(c, s),
        (Err(e), _) | (_, Err(e)) => Outcome {
            client_hello: None,
            answer: Default::default(),
            received: 0,
            error: Some(ossl::describe(&e)),
            elapsed: Default::default(),
        },
    }
}

fn offered(outcome: &Outcome) -> String {
    let Some(hello) = &outcome.client_hello else {
        return "(no ClientHello)".into();
    };
    hello
        .groups
        .iter()
        .map(|&g| {
            let share = if hello.key_shares.contains(&g) {
                " (key share)"
            } else {
                ""
            };
            format!("{}{share}", groups::name(g))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn negotiated(outcome: &Outcome) -> String {
    let retry = match outcome.answer.hello_retry_group {
        Some(g) => format!("after a HelloRetryRequest for {}", groups::name(g)),
        None => "no HelloRetryRequest".into(),
    };
    format!("{retry}, {:.1} ms", outcome.elapsed.as_secs_f64() * 1e3)
}

fn handshakes(setup: &Setup, provider_active: bool, steps: &mut Vec<Step>) {
    let identity = match server_identity() {
        Ok(identity) => identity,
        Err(e) => {
            steps.push(Step::problem(
                "handshakes",
                Status::Fail,
                format!(
                    "cannot make a P-256 server certificate: {}",
                    ossl::describe(&e)
                ),
                "the default provider is missing: TLS fails in every program",
                "activate default next to mlkem in the providers section",
            ));
            return;
        }
    };
    let configured = setup.groups.as_ref().map_or(
        "OpenSSL's built-in list: no Groups line in effect".to_owned(),
        |g| format!("Groups = {} at {}", g.value, g.at),
    );
    let (client, server) = match (
        handshake::client_context(None),
        server_context(&identity, None),
    ) {
        (Ok(c), Ok(s)) => (c, s),
        (Err(e), _) | (_, Err(e)) => {
            steps.push(Step::new("handshakes", Status::Fail, e));
            return;
        }
    };

    // A default client against a default server: what programs get.
    let outcome = handshake(&client, &server);
    let leads = outcome
        .client_hello
        .as_ref()
        .and_then(|h| h.groups.first().copied());
    if leads.is_some_and(groups::is_post_quantum) {
        steps.push(Step::new(
            "default client",
            Status::Ok,
            format!("offers {} ({configured})", offered(&outcome)),
        ));
    } else {
        steps.push(Step::problem(
            "default client",
            Status::Fail,
            format!("offers {} ({configured})", offered(&outcome)),
            "a client sends a key share for its first group only: programs start classical, and \
             stay classical with a server that also takes X25519",
            "append `.include /etc/ssl/mlkem-tls-groups.cnf` after mlkem-provider.cnf (or put \
             X25519MLKEM768 first in your own system_default section's Groups line)",
        ));
    }
    match (outcome.group(), &outcome.error) {
        (Some(g), _) if groups::is_post_quantum(g) => steps.push(Step::new(
            "default handshake",
            Status::Ok,
            format!(
                "a default client and a default server negotiate {} ({})",
                groups::name(g),
                negotiated(&outcome)
            ),
        )),
        (Some(g), _) => steps.push(Step::problem(
            "default handshake",
            Status::Fail,
            format!(
                "a default client and a default server negotiate {} ({})",
                groups::name(g),
                negotiated(&outcome)
            ),
            "programs that leave the groups to OpenSSL stay classical",
            "include /etc/ssl/mlkem-tls-groups.cnf, or set the groups in each program",
        )),
        (None, error) => steps.push(Step::problem(
            "default handshake",
            Status::Fail,
            format!("fails: {}", error.as_deref().unwrap_or("no group")),
            "programs that leave TLS settings to OpenSSL fail or stay classical",
            "see the steps above",
        )),
    }

    if !provider_active {
        return;
    }
    // Which post-quantum groups a default server takes, and each group end
    // to end through the provider.
    let mut accepted = Vec::new();
    let mut per_group = Vec::new();
    for group in groups::post_quantum() {
        // One client offering only this group, against a default server
        // and against one configured for the group.
        let client = handshake::client_context(Some(group.name()));
        if client
            .as_ref()
            .is_ok_and(|c| handshake(c, &server).group() == Some(group.code_point))
        {
            accepted.push(group.name());
        }
        let both = client
            .and_then(|c| server_context(&identity, Some(group.name())).map(|s| handshake(&c, &s)));
        per_group.push(match both {
            Ok(o) if o.group() == Some(group.code_point) => Step::new(
                &format!("handshake {}", group.name()),
                Status::Ok,
                format!("negotiated {} ({})", group.name(), negotiated(&o)),
            ),
            Ok(o) => Step::problem(
                &format!("handshake {}", group.name()),
                Status::Fail,
                match (&o.error, o.group()) {
                    (Some(e), _) => format!("fails: {e}"),
                    (None, g) => format!("negotiated {}", g.map_or("nothing".into(), groups::name)),
                },
                "this post-quantum group does not work through this libssl and provider",
                "report it with this output (mlkem-provider-check --json)",
            ),
            Err(e) => Step::problem(
                &format!("handshake {}", group.name()),
                Status::Fail,
                e,
                "the provider's TLS groups are not registered with libssl",
                "check the providers step above",
            ),
        });
    }
    let not_accepted: Vec<&str> = groups::post_quantum()
        .map(|g| g.name())
        .filter(|g| !accepted.contains(g))
        .collect();
    steps.push(if accepted.is_empty() {
        Step::problem(
            "default server",
            Status::Fail,
            format!("accepts none of the post-quantum groups ({configured})"),
            "servers that leave the groups to OpenSSL stay classical",
            "include /etc/ssl/mlkem-tls-groups.cnf, or set each server's groups (nginx ssl_ecdh_curve, ...)",
        )
    } else {
        Step::new(
            "default server",
            Status::Ok,
            format!(
                "accepts {}{}",
                accepted.join(", "),
                if not_accepted.is_empty() {
                    String::new()
                } else {
                    format!("; not {}", not_accepted.join(", "))
                }
            ),
        )
    });
    steps.extend(per_group);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conf::Place;

    #[test]
    fn the_releases_with_the_long_group_list_bug() {
        for affected in [
            "OpenSSL 3.0.2 15 Mar 2022",
            "OpenSSL 3.0.13 30 Jan 2024",
            "OpenSSL 3.1.4 24 Oct 2023",
            "OpenSSL 3.2.1 30 Jan 2024",
        ] {
            assert!(has_long_group_list_bug(affected), "{affected}");
        }
        for fixed in [
            "OpenSSL 3.0.14 4 Jun 2024",
            "OpenSSL 3.1.6 4 Jun 2024",
            "OpenSSL 3.2.2 4 Jun 2024",
            "OpenSSL 3.3.2 3 Sep 2024",
            "OpenSSL 3.5.5 27 Jan 2026",
            "OpenSSL 4.0.3 1 Oct 2026",
            "OpenSSL 1.1.1w 11 Sep 2023",
            "garbage",
        ] {
            assert!(!has_long_group_list_bug(fixed), "{fixed}");
        }
    }

    #[test]
    fn the_tls12_group_bug_warns_and_fails_where_servers_are_capped() {
        let entry = |key: &str, value: &str| Entry {
            section: "t".into(),
            key: key.into(),
            value: value.into(),
            at: Place {
                file: "openssl.cnf".into(),
                line: 3,
            },
        };
        let mut setup = Setup {
            groups: Some(entry("Groups", "x25519_mlkem768:X25519")),
            ..Setup::default()
        };
        let old = "OpenSSL 3.0.7 1 Nov 2022";
        assert_eq!(
            tls12_group_choice(old, &setup).unwrap().status,
            Status::Warn
        );
        assert!(tls12_group_choice("OpenSSL 3.0.10 1 Aug 2023", &setup).is_none());
        assert!(tls12_group_choice("OpenSSL 3.1.4 24 Oct 2023", &setup).is_none());
        setup.max_protocol = Some(entry("MaxProtocol", "TLSv1.2"));
        let step = tls12_group_choice(old, &setup).unwrap();
        assert_eq!(step.status, Status::Fail);
        assert!(
            step.detail.contains("MaxProtocol = TLSv1.2"),
            "{}",
            step.detail
        );
        setup.groups = Some(entry("Groups", "X25519:P-256"));
        assert!(tls12_group_choice(old, &setup).is_none());
    }

    #[test]
    fn a_list_of_more_than_40_groups_fails_only_where_libssl_breaks() {
        let entry = |n: usize| Entry {
            section: "t".into(),
            key: "Groups".into(),
            value: vec!["X25519"; n].join(":"),
            at: Place {
                file: "openssl.cnf".into(),
                line: 7,
            },
        };
        let old = "OpenSSL 3.0.2 15 Mar 2022";
        assert!(long_group_list(old, Some(&entry(40))).is_none());
        let step = long_group_list(old, Some(&entry(41))).expect("a failure");
        assert_eq!(step.status, Status::Fail);
        assert!(step.detail.contains("lists 41 groups"), "{}", step.detail);
        assert!(long_group_list("OpenSSL 3.0.14 4 Jun 2024", Some(&entry(41))).is_none());
        assert!(long_group_list(old, None).is_none());
    }
}
