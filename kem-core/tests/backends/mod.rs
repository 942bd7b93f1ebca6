//! Running a test under every backend this CPU supports.

/// Runs `test` once under every available backend (the portable reference
/// first), printing which one runs so that a failure names it.
pub fn for_each_backend(test: impl Fn()) {
    for kind in kem_core::available_backends() {
        eprintln!("backend: {kind}");
        kem_core::with_backend(kind, &test).expect("available backend");
    }
}
