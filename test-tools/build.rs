//! Records the rustc version that builds test-tools, for the measurement
//! report's environment section.

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
}
