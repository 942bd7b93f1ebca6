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

use crate::conf::{Config, DEFAULT_SECTION};
use crate::diagnosis::PROVIDER;
use crate::groups::{self, POST_QUANTUM};

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
pub fn lines(config: &Config) -> Result<String, String> {
    let Some(init) = config.get(DEFAULT_SECTION, "openssl_conf") else {
        return Err(
            "the file names no initialisation section: put `openssl_conf = \
                    openssl_init` before its first [section], then run this again"
                .into(),
        );
    };
    let init = init.value.as_str();
    let own = |key| config.get(init, key).map(|e| e.value.as_str());
    let (providers, alg_section, ssl_conf) =
        (own("providers"), own("alg_section"), own("ssl_conf"));
    if providers.is_none() && alg_section.is_none() && ssl_conf.is_none() {
        return Ok(INCLUDES.to_owned());
    }
    let mut out = Lines(String::from(
        "# mlkem provider and its TLS groups, joining this file's own sections\n\
         # (printed by mlkem-provider-check --enable-lines; keep at the end of the file)\n",
    ));
    match providers {
        Some(section) => join_providers(config, section, &mut out),
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
                let groups = groups_line(config, &defaults.value);
                out.section(&defaults.value, &[("Groups", &groups)]);
            }
            None => {
                out.section(section, &[("system_default", "mlkem_tls_defaults")]);
                out.section(
                    "mlkem_tls_defaults",
                    &[("Groups", &groups_line(config, ""))],
                );
            }
        },
        None => {
            out.section(init, &[("ssl_conf", "mlkem_ssl_sect")]);
            out.section(
                "mlkem_ssl_sect",
                &[("system_default", "mlkem_tls_defaults")],
            );
            out.section(
                "mlkem_tls_defaults",
                &[("Groups", &groups_line(config, ""))],
            );
        }
    }
    Ok(out.0)
}

/// mlkem (and an active default, which loading any provider by
/// configuration otherwise turns off) in the file's providers section.
fn join_providers(config: &Config, section: &str, out: &mut Lines) {
    let named = |name: &str| {
        config
            .section(section)
            .into_iter()
            .find(|e| e.key == name)
            .map(|e| e.value.clone())
    };
    match named("default") {
        Some(default) => {
            let active = config.get(&default, "activate").map(|e| e.value.as_str());
            if !matches!(active, Some("1" | "yes" | "true" | "on")) {
                out.section(&default, &[("activate", "1")]);
            }
        }
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
}

/// The post-quantum groups, hybrids first, then the section's own list
/// (without any post-quantum group in it, by any spelling: libssl before
/// 3.5 refuses a list that names a group twice), or OpenSSL's built-in one.
fn groups_line(config: &Config, section: &str) -> String {
    let own = config
        .get(section, "Groups")
        .or_else(|| config.get(section, "Curves"))
        .map_or(BUILT_IN_GROUPS, |e| e.value.as_str());
    let pq = POST_QUANTUM.iter().map(|g| g.name);
    let rest = own
        .split(':')
        .filter(|g| !g.trim().is_empty() && groups::post_quantum_named(g).is_none());
    pq.chain(rest).collect::<Vec<_>>().join(":")
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

    fn lines_for(name: &str, text: &str) -> Result<String, String> {
        let dir = std::env::temp_dir().join(format!("mlkem-enable-{name}-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let file = dir.join("openssl.cnf");
        fs::write(&file, text).unwrap();
        let out = lines(&Config::read(&file));
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
        let setup = crate::diagnosis::diagnose(&Config::read(&dir.join("openssl.cnf")));
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
        let fips = "openssl_conf = init\n[init]\nalg_section = evp\n[evp]\n\
            default_properties = fips=yes\n";
        let out = lines_for("fips", fips).unwrap();
        assert!(!out.contains("\ndefault_properties ="), "{out}");
        assert!(
            out.contains("# [evp] keeps `default_properties = fips=yes`"),
            "{out}"
        );
    }

    #[test]
    fn a_file_without_openssl_conf_gets_an_error() {
        assert!(lines_for("none", "[ca]\nx = y\n").is_err());
    }
}
