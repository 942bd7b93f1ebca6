//! Shared helpers for the integration tests: the built module, the OpenSSL
//! binaries of the test matrix, running them, scratch files, and (in
//! [`evp`]) the in-process EVP wrappers.
//!
//! Every test binary includes this module and uses only some of it.
#![allow(dead_code)]

pub mod evp;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// The directory holding `mlkem.so` (a copy of the `libmlkem.so` cargo
/// built next to this test binary), for `-provider-path` / `OPENSSL_MODULES`.
pub fn module_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let exe = std::env::current_exe().expect("test binary path");
        // target/<profile>/deps/<test> -> target/<profile>
        let profile_dir = exe.parent().and_then(Path::parent).expect("target dir");
        let built = profile_dir.join("libmlkem.so");
        let profile = if profile_dir.ends_with("release") { " --release" } else { "" };
        let hint = format!("run `cargo build{profile} -p mlkem-provider` first (cargo test does not rebuild the cdylib)");
        let built_at = std::fs::metadata(&built)
            .and_then(|m| m.modified())
            .unwrap_or_else(|_| panic!("{} missing: {hint}", built.display()));
        let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        for source in ["provider/src", "kem-core/src"] {
            if let Some(newer) = newest_file(&crates.join(source)).filter(|(t, _)| *t > built_at) {
                panic!("{} is older than {}: {hint}", built.display(), newer.1.display());
            }
        }
        let dir = profile_dir.join("test-modules");
        std::fs::create_dir_all(&dir).expect("module dir");
        // Copy under a per-process name first so concurrent test binaries
        // never load a half-written file.
        let tmp = dir.join(format!("mlkem.so.{}", std::process::id()));
        std::fs::copy(&built, &tmp).expect("copy module");
        std::fs::rename(&tmp, dir.join("mlkem.so")).expect("install module");
        dir
    })
}

/// Loads our provider and the default one into OpenSSL's default library
/// context (the system's libssl through the `openssl` crate), once for the
/// process, and keeps them loaded.
pub fn load_providers() {
    use openssl::provider::Provider;
    static LOADED: OnceLock<(Provider, Provider)> = OnceLock::new();
    LOADED.get_or_init(|| {
        let dir = module_dir().display().to_string();
        Provider::set_default_search_path(None, &dir).expect("search path");
        let ours = Provider::load(None, "mlkem").expect("load mlkem");
        let default = Provider::load(None, "default").expect("load default");
        (ours, default)
    });
}

/// The most recently modified file under `dir`, with its time.
fn newest_file(dir: &Path) -> Option<(std::time::SystemTime, PathBuf)> {
    let mut newest: Option<(std::time::SystemTime, PathBuf)> = None;
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        let candidate = if path.is_dir() {
            newest_file(&path)
        } else {
            entry
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .map(|t| (t, path))
        };
        if let Some(c) = candidate {
            if newest.as_ref().is_none_or(|n| c.0 > n.0) {
                newest = Some(c);
            }
        }
    }
    newest
}

/// One `openssl` binary of the test matrix.
#[derive(Clone, Debug)]
pub struct OpenSsl {
    /// "3.0", "3.4", "3.5", "3.6" or "4.0".
    pub series: &'static str,
    pub binary: PathBuf,
}

fn cache_root() -> PathBuf {
    std::env::var_os("MLKEM_OPENSSL_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
                .join(".cache/mlkem-provider/openssl")
        })
}

/// The newest cached build of `series` made by scripts/build-openssl.sh.
fn cached(series: &'static str) -> Option<OpenSsl> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(cache_root())
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                n.starts_with(&format!("openssl-{series}.")) && !n.ends_with(".log")
            })
        })
        .filter(|p| p.join("bin/openssl").exists())
        .collect();
    found.sort();
    found.pop().map(|p| OpenSsl {
        series,
        binary: p.join("bin/openssl"),
    })
}

// The workspace's one rule for "running in CI" (`CI` is `true` or `1`).
#[path = "../../../test-tools/src/ci.rs"]
#[allow(dead_code)]
mod ci;
use ci::running_in_ci as required;

/// The system's OpenSSL (3.0 on Debian 12).
pub fn system() -> OpenSsl {
    OpenSsl {
        series: "3.0",
        binary: PathBuf::from("openssl"),
    }
}

/// OpenSSL 3.4, the last release without an ML-KEM of its own and the
/// first whose `pkeyutl` has `-encap`/`-decap`, or `None` as for 3.5. Not
/// part of [`matrix`]: the README's quickstart test runs it.
pub fn openssl_34() -> Option<OpenSsl> {
    matrix_member("3.4")
}

/// OpenSSL 3.5, or `None` (with a note; a failure under `CI=true`).
pub fn openssl_35() -> Option<OpenSsl> {
    matrix_member("3.5")
}

/// OpenSSL 3.6, or `None` as for 3.5.
pub fn openssl_36() -> Option<OpenSsl> {
    matrix_member("3.6")
}

/// OpenSSL 4.0, or `None` as for 3.5.
pub fn openssl_40() -> Option<OpenSsl> {
    matrix_member("4.0")
}

/// Every OpenSSL of the matrix with its own ML-KEM (3.5 and later) that is
/// available.
pub fn natives() -> Vec<OpenSsl> {
    [openssl_35(), openssl_36(), openssl_40()]
        .into_iter()
        .flatten()
        .collect()
}

fn matrix_member(series: &'static str) -> Option<OpenSsl> {
    let found = cached(series);
    if found.is_none() {
        assert!(
            !required(),
            "OpenSSL {series} is not built (run scripts/build-openssl.sh {series})"
        );
        eprintln!("skipping OpenSSL {series}: not built (scripts/build-openssl.sh {series})");
    }
    found
}

/// Every OpenSSL of the matrix that is available.
pub fn matrix() -> Vec<OpenSsl> {
    let mut all = vec![system()];
    all.extend(natives());
    all
}

/// The flags that load our provider next to `other` (`default` or `base`).
pub fn ours_with(other: &str) -> Vec<String> {
    vec![
        "-provider-path".into(),
        module_dir().display().to_string(),
        "-provider".into(),
        "mlkem".into(),
        "-provider".into(),
        other.into(),
    ]
}

/// Our provider and the default provider, ours preferred.
pub fn ours() -> Vec<String> {
    let mut flags = ours_with("default");
    flags.extend(["-propquery".into(), "?provider=mlkem".into()]);
    flags
}

impl OpenSsl {
    /// A command for this binary with a clean environment (no stray
    /// `OPENSSL_CONF`), running in `dir`.
    pub fn command(&self, dir: &Path) -> Command {
        let mut cmd = Command::new(&self.binary);
        cmd.current_dir(dir)
            .env_remove("OPENSSL_CONF")
            .env_remove("OPENSSL_MODULES")
            .env("OPENSSL_CONF", "/dev/null");
        cmd
    }

    /// Runs `openssl <args>` in `dir`.
    pub fn run(&self, dir: &Path, args: &[&str]) -> Output {
        self.command(dir).args(args).output().expect("run openssl")
    }

    /// Runs `openssl <subcommand> <provider flags> <args>` and asserts
    /// success.
    pub fn ok(&self, dir: &Path, subcommand: &str, flags: &[String], args: &[&str]) -> Output {
        let out = self.with_flags(dir, subcommand, flags, args);
        assert_success(
            &out,
            &format!("openssl {} {subcommand} {args:?}", self.series),
        );
        out
    }

    /// Runs `openssl <subcommand> <provider flags> <args>`.
    pub fn with_flags(
        &self,
        dir: &Path,
        subcommand: &str,
        flags: &[String],
        args: &[&str],
    ) -> Output {
        self.command(dir)
            .arg(subcommand)
            .args(flags)
            .args(args)
            .output()
            .expect("run openssl")
    }
}

/// Panics with the command's output unless it exited with status 0.
pub fn assert_success(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what} failed ({:?}):\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Asserts a clean failure: a non-zero exit (not a signal), with `needle`
/// in stderr.
pub fn assert_clean_failure(out: &Output, needle: &str, what: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.code().is_some_and(|c| c != 0),
        "{what}: expected a failing exit status, got {:?}\nstderr: {stderr}",
        out.status
    );
    assert!(
        stderr.contains(needle),
        "{what}: expected '{needle}' in stderr:\n{stderr}"
    );
}

/// A fresh scratch directory under the target directory.
pub fn scratch(name: &str) -> PathBuf {
    let base = module_dir()
        .parent()
        .expect("profile dir")
        .join("test-scratch");
    let dir = base.join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// The contents of `dir/name`.
pub fn read(dir: &Path, name: &str) -> Vec<u8> {
    std::fs::read(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Writes `data` to `dir/name`.
pub fn write(dir: &Path, name: &str, data: impl AsRef<[u8]>) {
    std::fs::write(dir.join(name), data).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Runs `work(thread)` on `threads` threads at once and returns what each
/// returned, in thread order; a panic in any of them fails the caller.
pub fn on_threads<T: Send>(threads: usize, work: impl Fn(usize) -> T + Sync) -> Vec<T> {
    std::thread::scope(|scope| {
        let work = &work;
        let workers: Vec<_> = (0..threads)
            .map(|thread| scope.spawn(move || work(thread)))
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("worker panicked"))
            .collect()
    })
}

/// The three parameter sets' names.
pub const SETS: [&str; 3] = ["ML-KEM-512", "ML-KEM-768", "ML-KEM-1024"];

/// A 64-byte seed as hex.
pub fn hex_seed(fill: u8) -> String {
    (0..64u8)
        .map(|i| format!("{:02x}", i.wrapping_mul(7).wrapping_add(fill)))
        .collect()
}

/// The repository's `openssl.cnf.example`.
pub fn example_config() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../openssl.cnf.example")
}

/// A self-signed P-256 server certificate for `localhost` (CN and
/// subjectAltName, not a CA, as rustls requires), as `server.crt` /
/// `server.key` in `dir`.
pub fn certificate(dir: &Path) {
    let out = system().run(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-keyout",
            "server.key",
            "-out",
            "server.crt",
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=DNS:localhost",
            "-addext",
            "basicConstraints=critical,CA:FALSE",
            "-days",
            "1",
        ],
    );
    assert_success(&out, "certificate");
}
