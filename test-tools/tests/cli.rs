//! Tests of `test_tools::cli`: value parsers and the provider directory.

use std::path::Path;
use test_tools::cli::*;
use test_tools::nist_kat::KatParams;

#[test]
fn value_parsers() {
    assert_eq!(positive("12"), Ok(12));
    assert!(positive("0").is_err() && positive("-1").is_err());
    assert!(positive("x").unwrap_err().contains("\"x\""));
    assert!(path("").is_err());
    assert_eq!(parameter_set("ML-KEM-768"), Ok(KatParams::MlKem768));
    assert!(parameter_set("999").unwrap_err().contains("999"));
    let sets = sets_or_all(&[
        KatParams::MlKem768,
        KatParams::MlKem512,
        KatParams::MlKem768,
    ]);
    assert_eq!(sets, [KatParams::MlKem768, KatParams::MlKem512]);
    assert_eq!(sets_or_all(&[]), KatParams::ALL);
}

#[test]
fn provider_dir_is_in_the_workspace() {
    assert!(default_provider_dir().ends_with("target/provider"));
    assert!(workspace_root().join("Cargo.toml").exists());
    assert!(require_provider(Path::new("/nonexistent")).is_err());
}
