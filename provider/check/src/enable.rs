//! `--enable-lines`: the lines that turn the mlkem provider and its TLS
//! groups on in the configuration file in effect, joining the file's own
//! sections instead of replacing them.
//!
//! OpenSSL merges sections of the same name, and in a section the last
//! value of a key wins. The package's two snippets set `providers`,
//! `alg_section` and `ssl_conf` of `[openssl_init]`: right for a file
//! whose initialisation section sets none of them (Debian's), wrong for
//! one that does (Ubuntu's sets `providers` and `ssl_conf`, RHEL's all
//! three): its own sections, with every setting in them, would no longer
//! be read. For such a file these lines add mlkem to its providers
//! section and the post-quantum groups to its `system_default` section.

use crate::conf::DEFAULT_SECTION;
use crate::diagnosis::{is_true, PROVIDER};
use crate::groups;
use crate::layout::CryptoPolicy;
use crate::local::GROUP_LIST_LIMIT;
use crate::settings::Settings;

/// The two lines of the documented step, for a file with no sections of
/// its own to join.
const INCLUDES: &str =
    ".include /etc/ssl/mlkem-provider.cnf\n.include /etc/ssl/mlkem-tls-groups.cnf\n";

/// OpenSSL's own list when no `Groups` line is in effect (`ssl/t1_lib.c`,
/// 3.0-3.4): kept after the post-quantum groups, so that enabling them
/// takes no classical group away.
const BUILT_IN_GROUPS: &str =
    "X25519:P-256:X448:P-521:P-384:ffdhe2048:ffdhe3072:ffdhe4096:ffdhe6144:ffdhe8192";

/// The lines to append at the end of `config`'s file, or why there are
/// none.
pub fn lines(config: &Settings) -> Result<String, String> {
    let Some(init) = config.get(DEFAULT_SECTION, "openssl_conf") else {
        return Err(
            "the file names no initialisation section: put `openssl_conf = \
                    openssl_init` before its first [section], then run this again"
                .into(),
        );
    };
    let init = init.value.as_str();
    let own = |key| config.get(init, key).map(|e| e.value);
    let (providers, alg_section, ssl_conf) =
        (own("providers"), own("alg_section"), own("ssl_conf"));
    let (providers, alg_section, ssl_conf) = (
        providers.as_deref(),
        alg_section.as_deref(),
        ssl_conf.as_deref(),
    );
    // The package's snippets add to [openssl_init]: right only where the
    // file's initialisation section has that name and sets none of these.
    if init == "openssl_init" && providers.is_none() && alg_section.is_none() && ssl_conf.is_none()
    {
        return Ok(INCLUDES.to_owned());
    }
    let mut out = Lines(String::from(
        "# mlkem provider and its TLS groups, joining this file's own sections\n\
         # (printed by mlkem-provider-check --enable-lines; keep at the end of the file)\n",
    ));
    match providers {
        Some(section) => join_providers(config, section, &mut out)?,
        None => {
            out.section(init, &[("providers", "mlkem_provider_sect")]);
            out.section(
                "mlkem_provider_sect",
                &[("default", "mlkem_default_sect"), (PROVIDER, "mlkem_sect")],
            );
            out.section("mlkem_default_sect", &[("activate", "1")]);
            out.section("mlkem_sect", &[("activate", "1")]);
        }
    }
    match alg_section {
        Some(section) => match config.get(section, "default_properties") {
            Some(set) if set.value.replace(' ', "").contains("fips=yes") => {
                return Err(format!(
                    "[{section}] sets `default_properties = {}` at {}: OpenSSL then fetches \
                     only algorithms with fips=yes, which mlkem's are not",
                    set.value, set.at
                ))
            }
            Some(set) => out.comment(&format!(
                "[{section}] keeps `default_properties = {}`: on OpenSSL 3.5+, add \
                 `?provider=mlkem` to it to prefer mlkem's ML-KEM over OpenSSL's own",
                set.value
            )),
            None => out.section(section, &[("default_properties", "?provider=mlkem")]),
        },
        None => {
            out.section(init, &[("alg_section", "mlkem_evp_properties")]);
            out.section(
                "mlkem_evp_properties",
                &[("default_properties", "?provider=mlkem")],
            );
        }
    }
    match ssl_conf {
        Some(section) => match config.get(section, "system_default") {
            Some(defaults) => {
                let policy = config
                    .get(&defaults.value, "Groups")
                    .and_then(|g| CryptoPolicy::of(&g));
                match policy {
                    // A Groups line here would override the policy's own
                    // settings; its local.d step adds to them instead.
                    Some(policy) => out.comment(&format!(
                        "the groups come from {}: turn them on with `{}`",
                        policy.describe(),
                        policy.step()
                    )),
                    None => {
                        let groups = groups_line(config, &defaults.value, &mut out);
                        out.section(&defaults.value, &[("Groups", &groups)]);
                    }
                }
            }
            None => {
                let groups = groups_line(config, "", &mut out);
                out.section(section, &[("system_default", "mlkem_tls_defaults")]);
                out.section("mlkem_tls_defaults", &[("Groups", &groups)]);
            }
        },
        None => {
            let groups = groups_line(config, "", &mut out);
            out.section(init, &[("ssl_conf", "mlkem_ssl_sect")]);
            out.section(
                "mlkem_ssl_sect",
                &[("system_default", "mlkem_tls_defaults")],
            );
            out.section("mlkem_tls_defaults", &[("Groups", &groups)]);
        }
    }
    Ok(out.0)
}

/// mlkem (and an active default, which loading any provider by
/// configuration otherwise turns off) in the file's providers section; an
/// error for a section that keeps `default` off on purpose (a FIPS setup,
/// or `activate = 0`), where forcing it on would change what the file says.
fn join_providers(config: &Settings, section: &str, out: &mut Lines) -> Result<(), String> {
    let named = |name: &str| {
        config
            .section(section)
            .into_iter()
            .find(|e| e.key == name)
            .map(|e| e.value.clone())
    };
    if named("fips").is_some() {
        return Err(format!(
            "the providers section [{section}] loads the FIPS provider: OpenSSL then fetches only \
             algorithms with fips=yes, which mlkem's are not, so enabling it here would do \
             nothing (or turn the default provider on beside FIPS)"
        ));
    }
    match named("default") {
        Some(default) => match config.get(&default, "activate") {
            Some(set) if is_true(&set.value) => {}
            Some(set) => {
                return Err(format!(
                    "the providers section [{section}] keeps `default` off (`activate = {}` at \
                     {}): loading mlkem would leave programs without RSA, ECDSA, AES or X25519; \
                     turn default on, then run this again",
                    set.value, set.at
                ))
            }
            None => out.section(&default, &[("activate", "1")]),
        },
        None => {
            out.section(section, &[("default", "mlkem_default_sect")]);
            out.section("mlkem_default_sect", &[("activate", "1")]);
        }
    }
    match named(PROVIDER) {
        Some(own) => out.section(&own, &[("activate", "1")]),
        None => {
            out.section(section, &[(PROVIDER, "mlkem_sect")]);
            out.section("mlkem_sect", &[("activate", "1")]);
        }
    }
    Ok(())
}

/// The post-quantum groups, hybrids first, then the section's own list
/// (without any post-quantum group in it, by any spelling: libssl before
/// 3.5 refuses a list that names a group twice), or OpenSSL's built-in one;
/// at most [`GROUP_LIST_LIMIT`] groups, which libssl 3.0.0-3.0.13,
/// 3.1.0-3.1.5 and 3.2.0-3.2.1 corrupt memory beyond: the file's last
/// groups give way, named in a comment.
fn groups_line(config: &Settings, section: &str, out: &mut Lines) -> String {
    let own = config
        .get(section, "Groups")
        .or_else(|| config.get(section, "Curves"))
        .map_or(BUILT_IN_GROUPS.to_owned(), |e| e.value);
    let pq = groups::post_quantum().map(|g| g.name());
    let rest = own
        .split(':')
        .map(str::trim)
        .filter(|g| !g.is_empty() && groups::post_quantum_named(g).is_none());
    let all: Vec<&str> = pq.chain(rest).collect();
    let (kept, dropped) = all.split_at(all.len().min(GROUP_LIST_LIMIT));
    if !dropped.is_empty() {
        out.comment(&format!(
            "left out, to stay within {GROUP_LIST_LIMIT} groups (more corrupt memory in \
             OpenSSL 3.0.0-3.0.13, 3.1.0-3.1.5, 3.2.0-3.2.1): {}",
            dropped.join(":")
        ));
    }
    kept.join(":")
}

/// The text being written.
struct Lines(String);

impl Lines {
    fn section(&mut self, name: &str, entries: &[(&str, &str)]) {
        self.0.push_str(&format!("[{name}]\n"));
        for (key, value) in entries {
            self.0.push_str(&format!("{key} = {value}\n"));
        }
    }

    fn comment(&mut self, text: &str) {
        self.0.push_str(&format!("# {text}\n"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::path::Path;

    fn load(file: &Path) -> Settings {
        Settings::load(file).unwrap_or_else(|e| panic!("{}", e.why))
    }

    fn lines_for(name: &str, text: &str) -> Result<String, String> {
        let dir = std::env::temp_dir().join(format!("mlkem-enable-{name}-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let file = dir.join("openssl.cnf");
        fs::write(&file, text).unwrap();
        let out = lines(&load(&file));
        fs::remove_dir_all(dir).unwrap();
        out
    }

    /// Ubuntu 22.04's and 24.04's file, as far as this matters.
    const UBUNTU: &str = "openssl_conf = openssl_init\n[openssl_init]\nproviders = provider_sect\n\
        ssl_conf = ssl_sect\n[provider_sect]\ndefault = default_sect\n[default_sect]\n\
        # activate = 1\n[ssl_sect]\nsystem_default = system_default_sect\n\
        [system_default_sect]\nCipherString = DEFAULT:@SECLEVEL=2\n";

    #[test]
    fn a_file_without_sections_of_its_own_gets_the_two_includes() {
        let debian = "openssl_conf = openssl_init\n[openssl_init]\n[ca]\ndefault_ca = x\n";
        assert_eq!(lines_for("debian", debian).unwrap(), INCLUDES);
    }

    #[test]
    fn ubuntu_keeps_its_sections() {
        let out = lines_for("ubuntu", UBUNTU).unwrap();
        assert!(!out.contains("\nproviders ="), "{out}");
        assert!(!out.contains("\nssl_conf ="), "{out}");
        assert!(out.contains("[default_sect]\nactivate = 1\n"), "{out}");
        assert!(
            out.contains("[provider_sect]\nmlkem = mlkem_sect\n[mlkem_sect]\nactivate = 1\n"),
            "{out}"
        );
        assert!(
            out.contains("[openssl_init]\nalg_section = mlkem_evp_properties\n"),
            "{out}"
        );
        assert!(
            out.contains(&format!(
                "[system_default_sect]\nGroups = X25519MLKEM768:SecP256r1MLKEM768:SecP384r1MLKEM1024:\
                 MLKEM768:MLKEM1024:MLKEM512:{BUILT_IN_GROUPS}\n"
            )),
            "{out}"
        );
        // Appended, the file then sets each key of [openssl_init] once.
        let joined = format!("{UBUNTU}{out}");
        let dir = std::env::temp_dir().join(format!("mlkem-enable-joined-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("openssl.cnf"), joined).unwrap();
        let setup = crate::diagnosis::diagnose(&load(&dir.join("openssl.cnf")));
        fs::remove_dir_all(dir).unwrap();
        assert_eq!(setup.findings, [], "the joined file has no findings");
        assert!(setup.groups.unwrap().value.starts_with("X25519MLKEM768:"));
    }

    #[test]
    fn a_groups_line_of_its_own_is_kept_after_ours_without_repeats() {
        let rhel = "openssl_conf = init\n[init]\nssl_conf = ssl_module\n[ssl_module]\n\
            system_default = crypto_policy\n[crypto_policy]\n\
            Groups = X25519:secp256r1:x25519_mlkem768:?p256_mlkem768:X448\n";
        let out = lines_for("rhel", rhel).unwrap();
        assert!(
            out.contains(
                "[crypto_policy]\nGroups = X25519MLKEM768:SecP256r1MLKEM768:SecP384r1MLKEM1024:\
                 MLKEM768:MLKEM1024:MLKEM512:X25519:secp256r1:X448\n"
            ),
            "{out}"
        );
    }

    #[test]
    fn default_properties_of_its_own_are_left_alone() {
        let own = "openssl_conf = init\n[init]\nalg_section = evp\n[evp]\n\
            default_properties = ?provider=x\n";
        let out = lines_for("own", own).unwrap();
        assert!(!out.contains("\ndefault_properties ="), "{out}");
        assert!(
            out.contains("# [evp] keeps `default_properties = ?provider=x`"),
            "{out}"
        );
        let fips = own.replace("?provider=x", "fips=yes");
        assert!(lines_for("fips-yes", &fips)
            .unwrap_err()
            .contains("fips=yes"));
    }

    #[test]
    fn another_initialisation_section_is_joined_not_included() {
        let out = lines_for("init", "openssl_conf = init\n[init]\n").unwrap();
        assert!(!out.contains(".include"), "{out}");
        assert!(
            out.contains("[init]\nproviders = mlkem_provider_sect\n"),
            "{out}"
        );
        assert!(out.contains("[init]\nssl_conf = mlkem_ssl_sect\n"), "{out}");
    }

    #[test]
    fn the_groups_line_stays_within_40_groups() {
        let many: Vec<String> = (0..40).map(|i| format!("g{i}")).collect();
        let text = format!(
            "openssl_conf = openssl_init\n[openssl_init]\nssl_conf = s\n[s]\n\
             system_default = d\n[d]\nGroups = {}\n",
            many.join(":")
        );
        let out = lines_for("many", &text).unwrap();
        let groups = out
            .lines()
            .find_map(|l| l.strip_prefix("Groups = "))
            .unwrap();
        assert_eq!(groups.split(':').count(), GROUP_LIST_LIMIT, "{out}");
        assert!(out.contains("left out, to stay within 40 groups"), "{out}");
        assert!(out.contains("): g34:g35:g36:g37:g38:g39\n"), "{out}");
    }

    #[test]
    fn a_default_kept_off_or_fips_is_an_error() {
        let off = "openssl_conf = openssl_init\n[openssl_init]\nproviders = p\n[p]\n\
            default = d\n[d]\nactivate = No\n";
        assert!(lines_for("off", off)
            .unwrap_err()
            .contains("keeps `default` off"));
        let on = off.replace("activate = No", "activate = YES");
        assert!(!lines_for("on", &on).unwrap().contains("[d]\nactivate"));
        let fips = "openssl_conf = openssl_init\n[openssl_init]\nproviders = p\n[p]\n\
            fips = f\nbase = b\n";
        assert!(lines_for("fips-p", fips).unwrap_err().contains("FIPS"));
    }

    #[test]
    fn a_file_without_openssl_conf_gets_an_error() {
        assert!(lines_for("none", "[ca]\nx = y\n").is_err());
    }
}
