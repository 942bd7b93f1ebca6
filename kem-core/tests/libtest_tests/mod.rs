//! libtest entry points for checks written as plain functions, so that the
//! `single_threaded` runner (which has no libtest) can call the same checks.

/// Defines `mod tests` with one `#[test]` per named check of the including
/// file (a `pub fn()`), calling it; checks after `ignored:` are `#[ignore]`d
/// with the given reason.
macro_rules! libtest_tests {
    ($($check:ident),* $(,)? $(; ignored($reason:literal): $($slow:ident),* $(,)?)?) => {
        mod tests {
            $(
                #[test]
                fn $check() {
                    super::$check();
                }
            )*
            $($(
                #[test]
                #[ignore = $reason]
                fn $slow() {
                    super::$slow();
                }
            )*)?
        }
    };
}
pub(crate) use libtest_tests;
