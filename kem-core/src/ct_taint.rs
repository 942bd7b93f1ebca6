//! A hook for constant-time checking (feature `ct-taint`, off in normal
//! builds). A checker marks secret inputs as undefined memory under
//! valgrind memcheck, which then reports any branch or memory address that
//! depends on them; kem-core calls the hook on the few secret-derived
//! values FIPS 203 makes public, so the checker can mark them defined.

use std::sync::OnceLock;

static HOOK: OnceLock<fn(&[u8])> = OnceLock::new();

/// Installs the function called on each secret-derived value that is
/// public (e.g. one that marks the bytes defined for valgrind). Only the
/// first call has an effect.
pub fn set_declassify_hook(hook: fn(&[u8])) {
    let _ = HOOK.set(hook);
}

/// Tells the checker that `bytes` may be treated as public.
pub(crate) fn declassify(bytes: &[u8]) {
    if let Some(hook) = HOOK.get() {
        hook(bytes);
    }
}
