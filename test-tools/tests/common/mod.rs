//! What the `tls-bench` test files share.

use std::path::Path;
use std::process::{Command, Output};

use test_tools::cli::{default_provider_dir, require_provider};

/// Runs the `tls-bench` binary (after checking the provider module is
/// built): its exit status, stdout and stderr.
pub fn tls_bench(args: &[&str]) -> (Output, String, String) {
    tls_bench_with(args, &[])
}

/// [`tls_bench`] with more environment variables.
#[allow(dead_code, reason = "not every test file sets any")]
pub fn tls_bench_with(args: &[&str], env: &[(&str, &Path)]) -> (Output, String, String) {
    require_provider(&default_provider_dir()).unwrap_or_else(|e| panic!("{e}"));
    let out = Command::new(env!("CARGO_BIN_EXE_tls-bench"))
        .args(args)
        .envs(env.iter().copied())
        .output()
        .expect("run tls-bench");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out, stdout, stderr)
}
