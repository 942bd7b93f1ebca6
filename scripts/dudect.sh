#!/usr/bin/env bash
# A dudect-style timing test of kem-core per backend (valgrind cannot run
# the AVX-512 backend, so scripts/ct-taint.sh does not cover it): first the
# self-check (a deliberately leaky comparison, which must be flagged), then
# decaps with valid vs invalid ciphertexts and keygen with fixed vs random
# seeds for every backend and parameter set (kem-core/examples/dudect.rs
# says how). Not a CI gate: timing on a shared machine varies.
#
#   scripts/dudect.sh [--measurements N] [--backend B] [--set 512|768|1024]
#
# N measurements per row (default 100,000). Fails when the self-check is
# not flagged, or when a decaps or keygen-net row is (|t| > 4.5); keygen and
# ek-parse rows include the public ρ's rejection sampling and are reported
# only.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh >/dev/null

measurements=100000
pass=()
while (($#)); do
    case $1 in
    --measurements) measurements=$2; shift 2 ;;
    --backend | --set) pass+=("$1" "$2"); shift 2 ;;
    *) echo "usage: $0 [--measurements N] [--backend B] [--set 512|768|1024]" >&2; exit 2 ;;
    esac
done
cargo build --release -q -p kem-core --example dudect
dudect=${CARGO_TARGET_DIR:-target}/release/examples/dudect

status=0
"$dudect" --leaky --set 768 --measurements 20000 || status=$?
((status == 2)) || { echo "dudect: FAIL: the self-check's leak was not flagged" >&2; exit 1; }
echo "dudect: self-check flagged, as it must"
echo
out=$("$dudect" --measurements "$measurements" "${pass[@]}") || true
echo "$out"
if grep -E ' (decaps|keygen-net) .* FLAGGED ' <<<"$out" >&2; then
    echo "dudect: FAIL: the rows above differ in timing between their classes" >&2
    exit 1
fi
echo "dudect: no decaps or keygen-net row flagged"
