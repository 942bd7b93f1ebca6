//! The libssl releases whose bugs touch provider-supplied TLS groups, and
//! what local mode says on them before libssl reads the configuration.

use crate::conf::Entry;
use crate::diagnosis::Setup;
use crate::groups;
use crate::report::{Status, Step};

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
pub(super) fn long_group_list(version: &str, groups: Option<&Entry>) -> Option<Step> {
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
pub(super) fn tls12_group_choice(version: &str, setup: &Setup) -> Option<Step> {
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
