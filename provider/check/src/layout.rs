//! How this machine's OpenSSL is laid out and packaged — Debian's (the
//! .deb's snippets in /etc/ssl, included at the end of openssl.cnf) or the
//! RHEL family's and SUSE's (the RPM: /usr/lib64/ossl-modules, an
//! `openssl.d` drop-in directory from RHEL 9.4, `Groups` written by
//! crypto-policies) — and so which step turns mlkem and its groups on.

use std::fs;
use std::path::{Path, PathBuf};

use crate::conf::Entry;

/// The RPM's file that an admin copies to crypto-policies' `local.d` to
/// put the post-quantum groups first.
pub const POLICY_SNIPPET: &str =
    "/usr/share/mlkem-provider/crypto-policies/opensslcnf-mlkem.config";
/// The RPM's provider lines for systems without an `openssl.d` directory.
pub const RPM_PROVIDER_SNIPPET: &str = "/usr/share/mlkem-provider/mlkem-provider.cnf";
/// The drop-in file the RPM puts in `openssl.d`.
pub const DROP_IN_FILE: &str = "mlkem-provider.cnf";

/// Which packaging conventions this OpenSSL follows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Debian and Ubuntu: modules under `/usr/lib/<triplet>`, the .deb.
    Debian,
    /// RHEL and its rebuilds, Amazon Linux, SLES: modules under
    /// /usr/lib64, the RPM; `drop_in` is OPENSSLDIR's `openssl.d` where
    /// it exists (RHEL 9.4+).
    Rpm {
        /// The drop-in directory, if this system has one.
        drop_in: Option<PathBuf>,
    },
}

impl Layout {
    /// The layout of the OpenSSL with these directories.
    pub fn detect(openssl_dir: &Path, modules_dir: &Path) -> Self {
        if modules_dir.starts_with("/usr/lib64") || openssl_dir == Path::new("/etc/pki/tls") {
            let dir = openssl_dir.join("openssl.d");
            Layout::Rpm {
                drop_in: dir.is_dir().then_some(dir),
            }
        } else {
            Layout::Debian
        }
    }

    /// How to install the package.
    pub fn install(&self) -> &'static str {
        match self {
            Layout::Debian => {
                "install the package (dpkg -i mlkem-provider_*.deb) or scripts/install.sh"
            }
            Layout::Rpm { .. } => {
                "install the package (dnf install ./mlkem-provider-*.rpm, or zypper on SUSE)"
            }
        }
    }

    /// How to load mlkem with the configuration in effect (`file`).
    pub fn enable_provider(&self, file: &Path) -> String {
        match self {
            Layout::Debian => format!(
                "append `.include /etc/ssl/mlkem-provider.cnf` and `.include \
                 /etc/ssl/mlkem-tls-groups.cnf` at the end of {}",
                file.display()
            ),
            Layout::Rpm { drop_in: Some(dir) } => format!(
                "install the package: it puts {} in {}, which {} includes",
                DROP_IN_FILE,
                dir.display(),
                file.display()
            ),
            Layout::Rpm { drop_in: None } => format!(
                "append `.include {RPM_PROVIDER_SNIPPET}` at the end of {}",
                file.display()
            ),
        }
    }

    /// How to put the post-quantum groups first.
    pub fn enable_groups(&self, policy: Option<&CryptoPolicy>) -> String {
        match policy {
            Some(policy) => policy.step(),
            None if *self == Layout::Debian => {
                "append `.include /etc/ssl/mlkem-tls-groups.cnf` after mlkem-provider.cnf (or put \
                 X25519MLKEM768 first in your own system_default section's Groups line)"
                    .into()
            }
            None => "put X25519MLKEM768 first in the Groups line of the system_default section \
                     (mlkem-provider-check --enable-lines prints the lines)"
                .into(),
        }
    }
}

/// A `Groups` line written by crypto-policies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CryptoPolicy {
    /// crypto-policies' directory (`/etc/crypto-policies`).
    pub root: PathBuf,
    /// The policy in effect (`state/current`), if recorded.
    pub name: Option<String>,
}

impl CryptoPolicy {
    /// The policy that wrote `groups`, if a crypto-policies back-end file
    /// (`.../crypto-policies/back-ends/...`) holds it.
    pub fn of(groups: &Entry) -> Option<Self> {
        let file = &groups.at.file;
        let back_ends = file.parent()?;
        if back_ends.file_name()? != "back-ends" {
            return None;
        }
        let root = back_ends.parent()?;
        if root.file_name()? != "crypto-policies" {
            return None;
        }
        let name = fs::read_to_string(root.join("state/current"))
            .ok()
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty());
        Some(Self {
            root: root.to_owned(),
            name,
        })
    }

    /// The policy's name for a sentence.
    pub fn describe(&self) -> String {
        match &self.name {
            Some(name) => format!("crypto-policies (policy {name})"),
            None => "crypto-policies".into(),
        }
    }

    /// The documented step that turns the post-quantum groups on.
    pub fn step(&self) -> String {
        format!(
            "cp {POLICY_SNIPPET} {}/ && update-crypto-policies",
            self.root.join("local.d").display()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conf::Place;

    #[test]
    fn the_layout_follows_the_directories() {
        let debian = Layout::detect(
            Path::new("/usr/lib/ssl"),
            Path::new("/usr/lib/x86_64-linux-gnu/ossl-modules"),
        );
        assert_eq!(debian, Layout::Debian);
        let suse = Layout::detect(Path::new("/etc/ssl"), Path::new("/usr/lib64/ossl-modules"));
        assert!(matches!(suse, Layout::Rpm { .. }));
        assert!(suse.install().contains("rpm"));
    }

    #[test]
    fn a_groups_line_from_crypto_policies_names_the_policy_and_the_step() {
        let dir = std::env::temp_dir().join(format!("mlkem-layout-{}", std::process::id()));
        let root = dir.join("crypto-policies");
        fs::create_dir_all(root.join("back-ends")).unwrap();
        fs::create_dir_all(root.join("state")).unwrap();
        fs::write(root.join("state/current"), "DEFAULT\n").unwrap();
        let entry = |file: PathBuf| Entry {
            section: "crypto_policy".into(),
            key: "Groups".into(),
            value: "X25519:secp256r1".into(),
            at: Place { file, line: 7 },
        };
        let policy = CryptoPolicy::of(&entry(root.join("back-ends/opensslcnf.config"))).unwrap();
        assert_eq!(policy.describe(), "crypto-policies (policy DEFAULT)");
        assert_eq!(
            policy.step(),
            format!(
                "cp {POLICY_SNIPPET} {}/ && update-crypto-policies",
                root.join("local.d").display()
            )
        );
        assert!(CryptoPolicy::of(&entry(dir.join("openssl.cnf"))).is_none());
        fs::remove_dir_all(dir).unwrap();
    }
}
