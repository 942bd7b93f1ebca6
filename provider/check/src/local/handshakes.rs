//! Local mode's handshakes: in memory, through this process's libssl and
//! the configuration in effect — a default client against a default
//! server, then each post-quantum group end to end.

use openssl::asn1::Asn1Time;
use openssl::bn::BigNum;
use openssl::ec::{EcGroup, EcKey};
use openssl::hash::MessageDigest;
use openssl::nid::Nid;
use openssl::pkey::{PKey, Private};
use openssl::ssl::{Ssl, SslContext, SslMethod};
use openssl::x509::{X509Name, X509};

use crate::diagnosis::Setup;
use crate::groups;
use crate::handshake::{self, Outcome};
use crate::ossl;
use crate::report::{Status, Step};

/// A server's key and certificate.
type Identity = (PKey<Private>, X509);

/// A throwaway P-256 key and self-signed certificate for the in-memory
/// server (made in the default library context: its failure says the
/// default provider is missing).
fn server_identity() -> Result<Identity, openssl::error::ErrorStack> {
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

fn server_context(identity: &Identity, groups: Option<&str>) -> Result<SslContext, String> {
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

/// Every handshake step: the default pair, then (with the provider active)
/// each post-quantum group.
pub(super) fn handshakes(
    setup: &Setup,
    provider_active: bool,
    groups_fix: &str,
    steps: &mut Vec<Step>,
) {
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

    steps.extend(default_pair(&client, &server, &configured, groups_fix));
    if provider_active {
        steps.extend(per_group(&identity, &server, &configured, groups_fix));
    }
}

/// A default client against a default server: what programs get. Two
/// steps: what the client offers, and what the pair negotiates.
fn default_pair(
    client: &SslContext,
    server: &SslContext,
    configured: &str,
    groups_fix: &str,
) -> Vec<Step> {
    let mut steps = Vec::new();
    let outcome = handshake(client, server);
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
            groups_fix,
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
            format!("{groups_fix}; or set the groups in each program"),
        )),
        (None, error) => steps.push(Step::problem(
            "default handshake",
            Status::Fail,
            format!("fails: {}", error.as_deref().unwrap_or("no group")),
            "programs that leave TLS settings to OpenSSL fail or stay classical",
            "see the steps above",
        )),
    }
    steps
}

/// Which post-quantum groups a default server takes (one step), then each
/// group end to end through the provider (a step each).
fn per_group(
    identity: &Identity,
    server: &SslContext,
    configured: &str,
    groups_fix: &str,
) -> Vec<Step> {
    let mut accepted = Vec::new();
    let mut per_group = Vec::new();
    for group in groups::post_quantum() {
        // One client offering only this group, against a default server
        // and against one configured for the group.
        let client = handshake::client_context(Some(group.name()));
        if client
            .as_ref()
            .is_ok_and(|c| handshake(c, server).group() == Some(group.code_point))
        {
            accepted.push(group.name());
        }
        let both = client
            .and_then(|c| server_context(identity, Some(group.name())).map(|s| handshake(&c, &s)));
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
    let mut steps = vec![if accepted.is_empty() {
        Step::problem(
            "default server",
            Status::Fail,
            format!("accepts none of the post-quantum groups ({configured})"),
            "servers that leave the groups to OpenSSL stay classical",
            format!("{groups_fix}; or set each server's groups (nginx ssl_ecdh_curve, ...)"),
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
    }];
    steps.extend(per_group);
    steps
}
