//! The common mistakes in a configuration that loads the mlkem provider,
//! named from what the file says: each silently leaves TLS classical, or
//! breaks every other algorithm.
//!
//! What OpenSSL holds (libcrypto's own reading of the file) decides a
//! failure; what only the explaining reader sees (a skipped include, a key
//! set twice, a line that joined another section) is a warning, since
//! OpenSSL's reading and the handshakes have the last word. One exception
//! is read from both: a key of the initialisation section set twice fails
//! when the section libcrypto no longer reads holds settings that the one
//! in effect drops.

use crate::conf::{Entry, DEFAULT_SECTION};
use crate::report::Status;
use crate::settings::Settings;

/// The provider this check is about.
pub const PROVIDER: &str = "mlkem";

/// One mistake, with its reason and its fix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// What is wrong, in one line.
    pub problem: String,
    /// What follows from it.
    pub why: String,
    /// What to change.
    pub fix: String,
    /// `Fail` where OpenSSL's own reading shows it, `Warn` where only the
    /// explaining reader does.
    pub status: Status,
}

/// What a configuration sets up, as far as this check cares.
#[derive(Debug, Default)]
pub struct Setup {
    /// The initialisation section (`openssl_conf = ...`).
    pub init_section: Option<String>,
    /// The providers section in effect.
    pub providers_section: Option<String>,
    /// The `module = ` path of the mlkem provider's section, if set.
    pub module: Option<String>,
    /// `Groups` (or `Curves`) of the system_default TLS settings, and where.
    pub groups: Option<Entry>,
    /// Other `Groups` (or `Curves`) lines of the file that holds the one in
    /// effect, in sections other than its own: a crypto-policies `local.d`
    /// file appended without its `[ crypto_policy ]` line.
    pub misplaced_groups: Vec<Entry>,
    /// The providers section's `mlkem = ...` line, and where.
    pub provider_line: Option<Entry>,
    /// `MaxProtocol` of the system_default TLS settings, and where.
    pub max_protocol: Option<Entry>,
    /// `default_properties` of the algorithm section.
    pub default_properties: Option<Entry>,
    /// Whether `config_diagnostics` makes configuration errors fatal.
    pub config_diagnostics: bool,
    /// The mistakes found.
    pub findings: Vec<Finding>,
    /// Those findings (their `problem`) that say a setting of the
    /// initialisation section was set again, so that the file's own
    /// section is no longer read: post-quantum TLS may be on all the same.
    pub replaced: Vec<String>,
}

pub fn is_true(value: &str) -> bool {
    // OpenSSL 3.0 activates on any value of `activate`; 3.2+ reads a
    // boolean. Count the false spellings as off, as 3.2+ does.
    !matches!(
        value.to_ascii_lowercase().as_str(),
        "0" | "no" | "false" | "off"
    )
}

/// Reads what `config` sets up and names its mistakes.
pub fn diagnose(config: &Settings) -> Setup {
    let mut setup = Setup {
        config_diagnostics: config
            .get(DEFAULT_SECTION, "config_diagnostics")
            .is_some_and(|e| e.value.trim().parse::<i64>().is_ok_and(|n| n != 0)),
        ..Setup::default()
    };
    let findings = &mut setup.findings;
    let explain = config.explain();

    for include in &explain.includes {
        if let Some(skipped) = &include.skipped {
            findings.push(Finding {
                problem: format!(
                    "`.include {}` at {}: {skipped}",
                    include.target.display(),
                    include.at
                ),
                why: "OpenSSL skips it: nothing in it applies".into(),
                fix: "install the file again (the package puts the snippets in /etc/ssl), make it \
                      readable, or delete the line"
                    .into(),
                status: Status::Warn,
            });
        }
        if let Some(line) = &include.swallowed {
            findings.push(Finding {
                problem: format!(
                    "`.include {}` at {} is not at the end of its file: the lines after it join \
                     the included file's last section",
                    include.target.display(),
                    include.at
                ),
                why: format!(
                    "`{} = {}` at {} (and what follows it) now belongs to [{}], not to [{}]",
                    line.key, line.value, line.at, line.section, include.in_section
                ),
                fix: "move the .include line to the end of the file, after every section".into(),
                status: Status::Warn,
            });
        }
    }

    let Some(init) = config.get(DEFAULT_SECTION, "openssl_conf") else {
        let elsewhere = explain.entries.iter().find(|e| e.key == "openssl_conf");
        findings.push(Finding {
            problem:
                "the configuration never names an initialisation section (`openssl_conf = ...` \
                      at the top of the file)"
                    .into(),
            why: match elsewhere {
                Some(e) => format!(
                    "its `openssl_conf` at {} is in section [{}], where OpenSSL does not look: no \
                     provider and no TLS setting of this file is applied",
                    e.at, e.section
                ),
                None => "no provider and no TLS setting of this file is applied".into(),
            },
            fix: "put `openssl_conf = openssl_init` before the first [section] of the file".into(),
            status: Status::Fail,
        });
        return setup;
    };
    let init = init.value.clone();
    setup.init_section = Some(init.clone());
    if !config.has_section(&init) {
        findings.push(Finding {
            problem: format!("the initialisation section [{init}] is empty or missing"),
            why: "no provider and no TLS setting is applied".into(),
            fix: "append `.include /etc/ssl/mlkem-provider.cnf` at the end of the file".into(),
            status: Status::Fail,
        });
    }

    for key in ["providers", "ssl_conf", "alg_section"] {
        if let Some(finding) = overridden(config, &init, key) {
            setup.replaced.push(finding.problem.clone());
            findings.push(finding);
        }
    }

    if let Some(providers) = config.get(&init, "providers") {
        let section = providers.value.clone();
        let listed = config.section(&section);
        let activated = |name: &str| {
            listed.iter().find(|e| e.key == name).map(|e| {
                config
                    .get(&e.value, "activate")
                    .is_some_and(|a| is_true(&a.value))
            })
        };
        match activated(PROVIDER) {
            None => findings.push(Finding {
                problem: format!(
                    "the providers section [{section}] (from {}) does not name mlkem",
                    providers.at
                ),
                why: "programs run without the mlkem provider: TLS stays classical".into(),
                fix: format!(
                    "add `mlkem = mlkem_sect` to [{section}] (and the [mlkem_sect] of \
                     /etc/ssl/mlkem-provider.cnf), or include that file at the end instead"
                ),
                status: Status::Fail,
            }),
            Some(false) => findings.push(Finding {
                problem: format!(
                    "mlkem is named in [{section}] but its section does not `activate = 1`"
                ),
                why: "programs run without the mlkem provider: TLS stays classical".into(),
                fix: "add `activate = 1` to mlkem's section".into(),
                status: Status::Fail,
            }),
            Some(true) => {}
        }
        if activated(PROVIDER).is_some() && activated("default") != Some(true) {
            findings.push(Finding {
                problem: format!("the providers section [{section}] does not activate `default`"),
                why: "loading any provider by configuration turns the implicit default provider \
                      off: RSA, ECDSA, AES, SHA-2 and X25519 are gone, and nearly every program \
                      that uses OpenSSL fails"
                    .into(),
                fix: format!(
                    "add `default = default_sect` to [{section}] and a [default_sect] with `activate = 1`"
                ),
                status: Status::Fail,
            });
        }
        setup.provider_line = listed.iter().find(|e| e.key == PROVIDER).cloned();
        setup.module = listed
            .iter()
            .find(|e| e.key == PROVIDER)
            .and_then(|e| config.get(&e.value, "module"))
            .map(|e| e.value.clone());
        setup.providers_section = Some(section);
    } else if config.has_section(&init) {
        findings.push(Finding {
            problem: format!("the initialisation section [{init}] loads no providers"),
            why: "programs run without the mlkem provider: TLS stays classical".into(),
            fix: "append `.include /etc/ssl/mlkem-provider.cnf` at the end of the file".into(),
            status: Status::Fail,
        });
    }

    let system_default = config
        .get(&init, "ssl_conf")
        .and_then(|ssl| config.get(&ssl.value, "system_default"))
        .map(|defaults| defaults.value.clone());
    if let Some(defaults) = &system_default {
        setup.groups = config
            .get(defaults, "Groups")
            .or_else(|| config.get(defaults, "Curves"));
        setup.max_protocol = config.get(defaults, "MaxProtocol");
        if let Some(groups) = &setup.groups {
            setup.misplaced_groups = config
                .explain()
                .entries
                .iter()
                .filter(|e| {
                    matches!(e.key.as_str(), "Groups" | "Curves")
                        && e.at.file == groups.at.file
                        && e.section != groups.section
                })
                .cloned()
                .collect();
        }
    }
    setup.default_properties = config
        .get(&init, "alg_section")
        .and_then(|alg| config.get(&alg.value, "default_properties"));
    setup
}

/// A key of the initialisation section set more than once: the last wins,
/// which undoes an earlier snippet's (or the system file's) line. Only the
/// explaining reader sees the earlier line; what that line's section set
/// comes from libcrypto, which still holds the section. Where the section
/// in effect keeps all of it (Ubuntu's providers section naming `default`
/// only), the repeat is a warning; where settings of the file's own are
/// dropped (Ubuntu's `CipherString = DEFAULT:@SECLEVEL=2`), a failure: the
/// handshakes may be post-quantum, but the machine's TLS is weaker than its
/// file says.
fn overridden(config: &Settings, init: &str, key: &str) -> Option<Finding> {
    let all = config.explain().all(init, key);
    let [first, .., last] = all.as_slice() else {
        return None;
    };
    if first.value == last.value {
        return None;
    }
    let dropped = dropped_settings(config, key, &first.value, &last.value);
    let (what, why, status) = if dropped.is_empty() {
        (
            String::new(),
            format!(
                "only [{}] is read; [{}], the file's own, is ignored, though [{}] sets all it set",
                last.value, first.value, last.value
            ),
            Status::Warn,
        )
    } else {
        (
            format!(", which drops the file's own {}", dropped.join(", ")),
            format!(
                "only [{}] is read; [{}], the file's own, is ignored with every setting in it: \
                 programs run without what it set",
                last.value, first.value
            ),
            Status::Fail,
        )
    };
    Some(Finding {
        problem: format!(
            "[{init}] sets `{key}` twice: `{key} = {}` at {} is replaced by `{key} = {}` at {}{what}",
            first.value, first.at, last.value, last.at
        ),
        why,
        fix: format!(
            "take out the lines that set `{key}` again, and append the output of \
             `mlkem-provider-check --enable-lines` instead: it adds mlkem to the file's own \
             sections ([{}]) and keeps them",
            first.value
        ),
        status,
    })
}

/// What the replaced section `old` of the initialisation key `key` set that
/// the section in effect, `new`, does not, as libcrypto holds both: a
/// provider it named, a TLS command of one of its applications (`Groups`
/// and `Curves` aside: enabling mlkem sets those on purpose), an algorithm
/// setting. Each as `` `name = value` `` with the section it came from.
fn dropped_settings(config: &Settings, key: &str, old: &str, new: &str) -> Vec<String> {
    let kept = |section: Option<&str>, entry: &Entry| {
        section.is_some_and(|s| {
            config
                .get(s, &entry.key)
                .is_some_and(|e| e.value == entry.value)
        })
    };
    let show = |e: &Entry| format!("`{} = {}` ([{}])", e.key, e.value, e.section);
    match key {
        // A provider is kept when the new section names it too.
        "providers" => config
            .section(old)
            .iter()
            .filter(|e| config.get(new, &e.key).is_none())
            .map(|e| format!("provider `{}` ([{}])", e.key, e.section))
            .collect(),
        // ssl_conf: application name -> section of SSL_CONF commands.
        "ssl_conf" => config
            .section(old)
            .iter()
            .flat_map(|app| {
                let new_app = config.get(new, &app.key).map(|e| e.value);
                config
                    .section(&app.value)
                    .into_iter()
                    .filter(|e| !matches!(e.key.as_str(), "Groups" | "Curves"))
                    .filter(|e| !kept(new_app.as_deref(), e))
                    .map(|e| show(&e))
                    .collect::<Vec<_>>()
            })
            .collect(),
        _ => config
            .section(old)
            .iter()
            .filter(|e| !kept(Some(new), e))
            .map(show)
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::path::PathBuf;

    fn setup_of(name: &str, text: &str) -> Setup {
        let dir = std::env::temp_dir().join(format!("mlkem-diag-{name}-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let file: PathBuf = dir.join("openssl.cnf");
        fs::write(&file, text).unwrap();
        let setup = diagnose(&Settings::load(&file).unwrap_or_else(|e| panic!("{}", e.why)));
        fs::remove_dir_all(dir).unwrap();
        setup
    }

    const GOOD: &str = "openssl_conf = init\nconfig_diagnostics = 1\n[init]\nproviders = p\n\
        ssl_conf = s\nalg_section = a\n[p]\ndefault = d\nmlkem = m\n[d]\nactivate = 1\n\
        [m]\nactivate = 1\nmodule = /opt/mlkem.so\n[s]\nsystem_default = t\n\
        [t]\nGroups = X25519MLKEM768:X25519\n[a]\ndefault_properties = ?provider=mlkem\n";

    #[test]
    fn a_good_configuration_has_no_findings() {
        let setup = setup_of("good", GOOD);
        assert_eq!(setup.findings, []);
        assert_eq!(setup.providers_section.as_deref(), Some("p"));
        assert_eq!(setup.module.as_deref(), Some("/opt/mlkem.so"));
        assert_eq!(setup.groups.unwrap().value, "X25519MLKEM768:X25519");
        assert_eq!(setup.default_properties.unwrap().value, "?provider=mlkem");
        assert!(setup.config_diagnostics);
    }

    #[test]
    fn names_a_providers_section_without_default() {
        let setup = setup_of("nodefault", &GOOD.replace("default = d\n", ""));
        assert_eq!(setup.findings.len(), 1);
        assert!(setup.findings[0]
            .problem
            .contains("does not activate `default`"));
    }

    #[test]
    fn names_providers_set_twice_and_mlkem_missing() {
        let text = format!("{GOOD}[init]\nproviders = other\n[other]\ndefault = d\n");
        let setup = setup_of("twice", &text);
        let problems: Vec<&str> = setup.findings.iter().map(|f| f.problem.as_str()).collect();
        assert!(
            problems[0].contains("sets `providers` twice"),
            "{problems:?}"
        );
        assert!(problems[1].contains("does not name mlkem"), "{problems:?}");
    }

    #[test]
    fn names_a_missing_openssl_conf() {
        let setup = setup_of("noinit", &GOOD.replace("openssl_conf = init\n", ""));
        assert!(setup.findings[0]
            .problem
            .contains("never names an initialisation section"));
        let inactive = setup_of(
            "inactive",
            &GOOD.replace("[m]\nactivate = 1", "[m]\nactivate = 0"),
        );
        assert!(inactive.findings[0]
            .problem
            .contains("does not `activate = 1`"));
    }
}
