//! The one rule for "running in CI", shared by every test crate of the
//! workspace (kem-core's and the provider's tests include this file with
//! `#[path]`; the shell scripts have the same rule in `scripts/common.sh`).
//!
//! CI is on when the `CI` environment variable is `true` (any case) or `1`,
//! as CI services set it. Under CI, a test that cannot run what it checks
//! (missing vectors, a missing OpenSSL build) fails instead of skipping.

/// Whether `CI` is `true` (any case) or `1`.
pub fn running_in_ci() -> bool {
    std::env::var("CI").is_ok_and(|value| is_ci_value(&value))
}

/// The rule itself, on the variable's value.
///
/// ```
/// use test_tools::ci::is_ci_value;
/// assert!(["true", "TRUE", "True", "1"].into_iter().all(is_ci_value));
/// assert!(!["", "0", "false", "yes", " true", "11"].into_iter().any(is_ci_value));
/// ```
pub fn is_ci_value(value: &str) -> bool {
    value.eq_ignore_ascii_case("true") || value == "1"
}
