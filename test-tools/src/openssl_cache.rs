//! The OpenSSL builds scripts/build-openssl.sh caches, found the same way by
//! every test crate of the workspace (the check's tests include this file
//! with `#[path]`, as they would `ci.rs`).

use std::path::PathBuf;

/// Where scripts/build-openssl.sh keeps its builds: `$MLKEM_OPENSSL_CACHE`,
/// else `~/.cache/mlkem-provider/openssl`.
pub fn cache_root() -> PathBuf {
    std::env::var_os("MLKEM_OPENSSL_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
                .join(".cache/mlkem-provider/openssl")
        })
}

/// The prefix (`bin/openssl`, `lib/`) of the newest cached build of
/// `series` (`"3.5"`), if there is one.
pub fn cached(series: &str) -> Option<PathBuf> {
    let prefix = format!("openssl-{series}.");
    let mut found: Vec<PathBuf> = std::fs::read_dir(cache_root())
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str());
            name.is_some_and(|n| n.starts_with(&prefix) && !n.ends_with(".log"))
        })
        .filter(|p| p.join("bin/openssl").exists())
        .collect();
    found.sort();
    found.pop()
}
