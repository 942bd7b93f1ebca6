#!/usr/bin/env bash
# Constant-time check of kem-core under valgrind memcheck (see
# test-tools/src/bin/ct-taint.rs): secrets are marked undefined, and any
# branch or address that depends on them is an error. Runs, in release mode
# on this toolchain, for every backend valgrind's CPU has (valgrind has no
# AVX-512, so the two AVX-512 backends are not covered here):
#   1. the real check, which must report nothing;
#   2. with a deliberate secret-dependent branch, which must be reported;
#   3. without declassifying ρ, whose matrix sampling must be reported
#      (the taint of d really flows through the hashes).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "ct-taint: valgrind is not installed" >&2; exit 1; }
cargo build --release -q -p test-tools --bin ct-taint --features ct-taint
bin=target/release/ct-taint
log=$(mktemp)
trap 'rm -f "$log"' EXIT

vg() { valgrind --quiet --error-exitcode=1 "$bin" "$@" >"$log" 2>&1; }

if vg; then
    cat "$log"
    echo "ct-taint: no secret-dependent branch or address (0 errors)"
else
    cat "$log"
    echo "ct-taint: FAILED: secret-dependent behaviour found (above)" >&2
    exit 1
fi
if vg --leaky; then
    echo "ct-taint: FAILED: the deliberate secret-dependent branch was not reported" >&2
    exit 1
fi
grep -q "leaky_branch" "$log" || { cat "$log"; echo "ct-taint: FAILED: wrong report for --leaky" >&2; exit 1; }
echo "ct-taint: self-check 1 ok: the deliberate branch is reported"
if vg --keep-rho-secret; then
    echo "ct-taint: FAILED: secret-derived rho reached the sampler unreported" >&2
    exit 1
fi
grep -q "rejection_sample\|rejection256\|sample_ntt\|pools::expand" "$log" || { cat "$log"; echo "ct-taint: FAILED: wrong report for --keep-rho-secret" >&2; exit 1; }
echo "ct-taint: self-check 2 ok: taint flows from d through G into the matrix sampling"
