//! Records the rustc version that builds test-tools, for the measurement
//! report's environment section; with the feature `peers-liboqs-system`,
//! finds and links a locally installed liboqs (see [`liboqs_system`]).

use std::process::Command;

fn main() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
    if let Ok(output) = Command::new(rustc).arg("--version").output() {
        let version = String::from_utf8_lossy(&output.stdout);
        let version = version.trim();
        if output.status.success() && !version.is_empty() {
            println!("cargo:rustc-env=TEST_TOOLS_RUSTC_VERSION={version}");
        }
    }
    println!("cargo:rerun-if-env-changed=RUSTC");
    // Set when the `peers-liboqs-system` peer is built (see below).
    println!("cargo::rustc-check-cfg=cfg(liboqs_system)");

    if std::env::var_os("CARGO_FEATURE_PEERS_LIBOQS_SYSTEM").is_some() {
        if std::env::var_os("CARGO_FEATURE_PEERS_LIBOQS").is_some() {
            // Two liboqs in one binary would clash (the same OQS_* C
            // symbols); `peers.rs` leaves the system peer out in this case,
            // so that `--all-features` still builds.
            println!(
                "cargo:warning=peers-liboqs-system is left out: peers-liboqs links liboqs \
                 0.13 (the `oqs` crate) and a second liboqs cannot be linked into the \
                 same binary; enable only one of the two"
            );
        } else {
            liboqs_system::configure();
            println!("cargo:rustc-cfg=liboqs_system");
        }
    }
}

/// The `peers-liboqs-system` peer: a liboqs that is already installed (any
/// recent version with `OQS_KEM_ml_kem_*_encaps_derand`, e.g. main, whose
/// ML-KEM is mlkem-native), linked through the hand-written declarations in
/// `src/peers.rs`.
///
/// Where it is looked for:
/// - `LIBOQS_DIR=/prefix`: headers in `/prefix/include/oqs/`, the library in
///   `/prefix/lib/` or `/prefix/lib64/`;
/// - otherwise pkg-config's `liboqs` (`liboqs.pc`, so `PKG_CONFIG_PATH`
///   works; `PKG_CONFIG` names another pkg-config).
///
/// Static (`liboqs.a`) is linked when it is there, else shared (`liboqs.so`,
/// `liboqs.dylib`) with an rpath to its directory; `LIBOQS_STATIC=1` or `0`
/// forces one. `oqs/oqsconfig.h` says whether ML-KEM-512/768/1024 are
/// compiled in (the build fails if not) and which native code (x86_64 AVX2,
/// aarch64) the library carries and whether it picks it at run time
/// (`OQS_DIST_BUILD`); `oqs/common.h` gives the values of the `OQS_CPU_EXT`
/// constants the run-time choice asks about. These reach `peers.rs` as
/// `TEST_TOOLS_LIBOQS_SYSTEM_*` environment variables.
mod liboqs_system {
    use std::env;
    use std::path::{Path, PathBuf};
    use std::process::Command;

    /// The ML-KEM parameter sets that must be in the library.
    const SETS: [&str; 3] = ["ml_kem_512", "ml_kem_768", "ml_kem_1024"];

    /// The CPU-extension constants that liboqs's ML-KEM dispatch tests.
    const CPU_EXTENSIONS: [&str; 4] = ["AVX2", "BMI2", "POPCNT", "ARM_NEON"];

    pub fn configure() {
        for var in [
            "LIBOQS_DIR",
            "LIBOQS_STATIC",
            "PKG_CONFIG",
            "PKG_CONFIG_PATH",
            "PKG_CONFIG_LIBDIR",
            "PKG_CONFIG_SYSROOT_DIR",
        ] {
            println!("cargo:rerun-if-env-changed={var}");
        }
        let (include, libdir, source) = locate();
        let config_h = include.join("oqs").join("oqsconfig.h");
        let common_h = include.join("oqs").join("common.h");
        let config = read(&config_h);
        println!("cargo:rerun-if-changed={}", config_h.display());
        println!("cargo:rerun-if-changed={}", common_h.display());

        let defined = |name: &str| is_defined(&config, name);
        let missing: Vec<&str> = SETS
            .iter()
            .copied()
            .filter(|set| !defined(&format!("OQS_ENABLE_KEM_{set}")))
            .collect();
        if !missing.is_empty() {
            fail(&format!(
                "the liboqs in {} ({source}) was built without {} (see {}); rebuild it with \
                 ML-KEM enabled",
                libdir.display(),
                missing.join(", "),
                config_h.display()
            ));
        }
        // The native code every set carries, if they all carry the same.
        let native = ["x86_64", "aarch64"]
            .into_iter()
            .find(|arch| {
                SETS.iter()
                    .all(|set| defined(&format!("OQS_ENABLE_KEM_{set}_{arch}")))
            })
            .unwrap_or("");

        let (kind, file) = link_kind(&libdir);
        println!("cargo:rerun-if-changed={}", file.display());
        println!("cargo:rustc-link-search=native={}", libdir.display());
        println!("cargo:rustc-link-lib={kind}=oqs");
        if kind == "dylib" {
            println!("cargo:rustc-link-arg=-Wl,-rpath,{}", libdir.display());
        } else if defined("OQS_USE_OPENSSL") {
            // A static liboqs built against OpenSSL needs libcrypto (also
            // linked by openssl-sys; naming it here keeps the order right).
            if defined("OQS_DLOPEN_OPENSSL") {
                if env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
                    println!("cargo:rustc-link-lib=dl");
                }
            } else {
                println!("cargo:rustc-link-lib=crypto");
            }
        }

        let common = read(&common_h);
        let extensions = cpu_extensions(&common);
        for name in CPU_EXTENSIONS {
            if let Some(value) = extensions.iter().find(|(n, _)| n == name).map(|(_, v)| v) {
                println!("cargo:rustc-env=TEST_TOOLS_LIBOQS_SYSTEM_CPU_EXT_{name}={value}");
            } else {
                println!(
                    "cargo:warning=no OQS_CPU_EXT_{name} in {}; the liboqs-system label \
                     falls back to Rust's CPU detection",
                    common_h.display()
                );
            }
        }
        let header_version = string_define(&config, "OQS_VERSION_TEXT").unwrap_or_default();
        let build_target = string_define(&config, "OQS_COMPILE_BUILD_TARGET").unwrap_or_default();
        let link = if kind == "dylib" { "shared" } else { "static" };
        let dist = if defined("OQS_DIST_BUILD") { "1" } else { "0" };
        let sha3_openssl = if defined("OQS_USE_SHA3_OPENSSL") {
            "1"
        } else {
            "0"
        };
        for (var, value) in [
            ("LIBDIR", libdir.display().to_string()),
            ("SOURCE", source),
            ("LINK", link.to_owned()),
            ("HEADER_VERSION", header_version),
            ("BUILD_TARGET", build_target),
            ("DIST", dist.to_owned()),
            ("NATIVE", native.to_owned()),
            ("SHA3_OPENSSL", sha3_openssl.to_owned()),
        ] {
            println!("cargo:rustc-env=TEST_TOOLS_LIBOQS_SYSTEM_{var}={value}");
        }
    }

    /// The include directory, the library directory, and how they were
    /// found (for the report).
    fn locate() -> (PathBuf, PathBuf, String) {
        if let Some(dir) = env::var_os("LIBOQS_DIR").filter(|d| !d.is_empty()) {
            let prefix = PathBuf::from(dir);
            let include = prefix.join("include");
            let libdir = ["lib", "lib64"]
                .into_iter()
                .map(|l| prefix.join(l))
                .find(|l| library_files(l).iter().any(|f| f.is_file()))
                .unwrap_or_else(|| {
                    fail(&format!(
                        "LIBOQS_DIR={}: no liboqs library in its lib/ or lib64/",
                        prefix.display()
                    ))
                });
            let source = format!("LIBOQS_DIR={}", prefix.display());
            return (include, libdir, source);
        }
        let variable = |name: &str| -> Option<String> {
            let pkg_config = env::var("PKG_CONFIG").unwrap_or_else(|_| "pkg-config".to_owned());
            let output = Command::new(pkg_config)
                .args(["--variable", name, "liboqs"])
                .output()
                .ok()?;
            let value = String::from_utf8_lossy(&output.stdout).trim().to_owned();
            (output.status.success() && !value.is_empty()).then_some(value)
        };
        match (variable("includedir"), variable("libdir")) {
            (Some(include), Some(libdir)) => {
                let source = variable("pcfiledir")
                    .map(|d| format!("pkg-config, {d}/liboqs.pc"))
                    .unwrap_or_else(|| "pkg-config liboqs".to_owned());
                (PathBuf::from(include), PathBuf::from(libdir), source)
            }
            _ => fail(
                "feature `peers-liboqs-system`: no liboqs found; set LIBOQS_DIR to its install \
                 prefix (with include/oqs/ and lib/ under it), or make `pkg-config liboqs` \
                 find its liboqs.pc (PKG_CONFIG_PATH=/prefix/lib/pkgconfig)",
            ),
        }
    }

    /// The library files that may be in `libdir`, static first.
    fn library_files(libdir: &Path) -> [PathBuf; 3] {
        ["liboqs.a", "liboqs.so", "liboqs.dylib"].map(|f| libdir.join(f))
    }

    /// `"static"` or `"dylib"`, and the file that will be linked.
    fn link_kind(libdir: &Path) -> (&'static str, PathBuf) {
        let [a, so, dylib] = library_files(libdir);
        let shared = [so, dylib].into_iter().find(|f| f.is_file());
        let want_static = match env::var("LIBOQS_STATIC").as_deref() {
            Ok("1" | "yes" | "true") => Some(true),
            Ok("0" | "no" | "false") => Some(false),
            Ok("") | Err(_) => None,
            Ok(other) => fail(&format!("LIBOQS_STATIC={other:?}: use 1 or 0")),
        };
        match (want_static, a.is_file(), shared) {
            (Some(true) | None, true, _) => ("static", a),
            (Some(false) | None, _, Some(shared)) => ("dylib", shared),
            (Some(true), false, _) => fail(&format!("LIBOQS_STATIC=1 but no {}", a.display())),
            _ => fail(&format!(
                "no liboqs library in {} (looked for liboqs.a, liboqs.so, liboqs.dylib)",
                libdir.display()
            )),
        }
    }

    fn read(path: &Path) -> String {
        std::fs::read_to_string(path).unwrap_or_else(|e| {
            fail(&format!(
                "cannot read {} ({e}); is liboqs's include directory there?",
                path.display()
            ))
        })
    }

    /// Whether `#define NAME` (any value) is in the header text.
    fn is_defined(header: &str, name: &str) -> bool {
        header.lines().any(|line| {
            let mut words = line.split_whitespace();
            matches!(
                (words.next(), words.next()),
                (Some("#define"), Some(n)) if n == name
            )
        })
    }

    /// The string of `#define NAME "value"`.
    fn string_define(header: &str, name: &str) -> Option<String> {
        header.lines().find_map(|line| {
            let rest = line.trim().strip_prefix("#define")?.trim_start();
            let value = rest.strip_prefix(name)?.trim();
            Some(value.strip_prefix('"')?.strip_suffix('"')?.to_owned())
        })
    }

    /// The constants of `typedef enum { ... } OQS_CPU_EXT;` with their
    /// values, without the `OQS_CPU_EXT_` prefix (empty if not found).
    fn cpu_extensions(common_h: &str) -> Vec<(String, i64)> {
        let Some(end) = common_h.find("} OQS_CPU_EXT;") else {
            return Vec::new();
        };
        let Some(start) = common_h[..end].rfind('{') else {
            return Vec::new();
        };
        let body = strip_comments(&common_h[start + 1..end]);
        let mut out = Vec::new();
        let mut next = 0i64;
        for entry in body.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            let (name, value) = match entry.split_once('=') {
                Some((name, value)) => match value.trim().parse() {
                    Ok(v) => (name.trim(), v),
                    Err(_) => return Vec::new(),
                },
                None => (entry, next),
            };
            next = value + 1;
            if let Some(short) = name.strip_prefix("OQS_CPU_EXT_") {
                out.push((short.to_owned(), value));
            }
        }
        out
    }

    /// `text` without C comments.
    fn strip_comments(text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        loop {
            let block = rest.find("/*");
            let line = rest.find("//");
            match (block, line) {
                (Some(b), l) if l.is_none_or(|l| b < l) => {
                    out.push_str(&rest[..b]);
                    rest = rest[b..].find("*/").map_or("", |e| &rest[b + e + 2..]);
                }
                (_, Some(l)) => {
                    out.push_str(&rest[..l]);
                    rest = rest[l..].find('\n').map_or("", |e| &rest[l + e..]);
                }
                _ => {
                    out.push_str(rest);
                    return out;
                }
            }
        }
    }

    fn fail(message: &str) -> ! {
        panic!("test-tools build script: {message}");
    }
}
