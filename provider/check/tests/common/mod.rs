//! What the check's integration tests share: a scratch directory with this
//! workspace's mlkem.so and the package's snippets, and the check run on a
//! configuration file.
#![allow(dead_code)] // each test binary uses its own part

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub const CHECK: &str = env!("CARGO_BIN_EXE_mlkem-provider-check");

/// A scratch directory with mlkem.so (this workspace's release build),
/// the package's two snippets pointing at it, and configuration files.
pub struct Scratch {
    /// The directory.
    pub dir: PathBuf,
}

impl Scratch {
    pub fn new(name: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("mlkem-check-cli-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // target/release/deps/cli-* -> target/release/libmlkem.so
        let exe = std::env::current_exe().unwrap();
        let built = exe
            .parent()
            .and_then(Path::parent)
            .unwrap()
            .join("libmlkem.so");
        assert!(
            built.exists(),
            "{} missing: run `cargo build --release -p mlkem-provider` first",
            built.display()
        );
        std::fs::copy(&built, dir.join("mlkem.so")).unwrap();
        let package = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/package");
        let provider = std::fs::read_to_string(package.join("mlkem-provider.cnf")).unwrap();
        let module = format!("[mlkem_sect]\nmodule = {}/mlkem.so", dir.display());
        std::fs::write(
            dir.join("mlkem-provider.cnf"),
            provider.replace("[mlkem_sect]", &module),
        )
        .unwrap();
        std::fs::copy(
            package.join("mlkem-tls-groups.cnf"),
            dir.join("mlkem-tls-groups.cnf"),
        )
        .unwrap();
        Self { dir }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// Writes `name` and returns its path.
    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.path(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    /// A P-256 key and self-signed certificate for `localhost`
    /// (`key.pem`, `cert.pem`), made once; the certificate's path.
    pub fn cert(&self) -> PathBuf {
        let cert = self.path("cert.pem");
        if !cert.exists() {
            let made = Command::new("openssl")
                .args(["req", "-x509", "-newkey", "ec"])
                .args([
                    "-pkeyopt",
                    "ec_paramgen_curve:P-256",
                    "-nodes",
                    "-days",
                    "1",
                ])
                .args(["-subj", "/CN=localhost", "-keyout"])
                .arg(self.path("key.pem"))
                .arg("-out")
                .arg(&cert)
                .env("OPENSSL_CONF", "/dev/null")
                .output()
                .unwrap();
            assert!(made.status.success(), "{}", text(&made));
        }
        cert
    }

    /// The two `.include` lines of the deployment guide, for this directory.
    pub fn includes(&self) -> String {
        format!(
            ".include {}\n.include {}\n",
            self.path("mlkem-provider.cnf").display(),
            self.path("mlkem-tls-groups.cnf").display()
        )
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Debian's openssl.cnf, cut to what matters: an empty [openssl_init].
pub const SYSTEM: &str = "HOME = .\nopenssl_conf = openssl_init\nconfig_diagnostics = 1\n\
                      [openssl_init]\n# providers = provider_sect\n[ req ]\ndistinguished_name = dn\n[ dn ]\n";

pub fn check(conf: &Path, args: &[&str]) -> Output {
    check_with_modules(conf, None, args)
}

/// The check with OPENSSL_MODULES set (where OpenSSL looks for a module
/// the configuration does not name a path for) or unset.
pub fn check_with_modules(conf: &Path, modules: Option<&Path>, args: &[&str]) -> Output {
    let mut command = Command::new(CHECK);
    command.args(args).env("OPENSSL_CONF", conf);
    match modules {
        Some(dir) => command.env("OPENSSL_MODULES", dir),
        None => command.env_remove("OPENSSL_MODULES"),
    };
    command.output().unwrap()
}

pub fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

pub fn assert_exit(out: &Output, code: i32, wanted: &[&str]) {
    let all = text(out);
    assert_eq!(out.status.code(), Some(code), "{all}");
    for w in wanted {
        assert!(all.contains(w), "no '{w}' in:\n{all}");
    }
}

/// The port `openssl s_server -accept 127.0.0.1:0` listens on: it prints
/// `ACCEPT 127.0.0.1:PORT` once it listens, after a line or two of notes,
/// so this reads at most its first five lines.
pub fn accept_port(lines: impl Iterator<Item = std::io::Result<String>>) -> Option<u16> {
    lines.take(5).find_map(|l| {
        let l = l.ok()?;
        l.strip_prefix("ACCEPT ")?.rsplit(':').next()?.parse().ok()
    })
}
