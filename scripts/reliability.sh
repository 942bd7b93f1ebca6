#!/usr/bin/env bash
# Long-form reliability runs of the provider, in-process through the system
# OpenSSL's EVP API (provider/tests/scale.rs and load_cycles.rs), plus the
# short fault-table and secret-wiping tests:
#   1. 8 threads x 10,000 ML-KEM-768 encapsulate+decapsulate pairs on one
#      shared key, every secret checked;
#   2. throughput of 1 and of 2 threads on the same key (the same total
#      work, 3 runs each, alternating; medians): 2 threads must reach 1.6x;
#   3. 1,000 provider load/unload cycles, resident memory (VmRSS) after
#      cycle 100 and after the last one, growth bounded;
#   4. the fault table over every entry point, and the zeroisation tests.
# Prints the figures at the end. The sizes can be changed through
# MLKEM_SCALE_THREADS, MLKEM_SCALE_ROUNDS, MLKEM_SCALE_MIN_SPEEDUP and
# MLKEM_LOAD_CYCLES.
set -euo pipefail
cd "$(dirname "$0")/.."

case "${1:-}" in
    -h | --help)
        sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'
        echo
        echo "usage: scripts/reliability.sh"
        exit 0
        ;;
    "") ;;
    *)
        echo "reliability: unexpected argument '$1' (try --help)" >&2
        exit 2
        ;;
esac

source scripts/setup.sh >/dev/null

export MLKEM_SCALE_THREADS=${MLKEM_SCALE_THREADS:-8}
export MLKEM_SCALE_ROUNDS=${MLKEM_SCALE_ROUNDS:-10000}
export MLKEM_SCALE_MIN_SPEEDUP=${MLKEM_SCALE_MIN_SPEEDUP:-1.6}
export MLKEM_LOAD_CYCLES=${MLKEM_LOAD_CYCLES:-1000}

log=$(mktemp)
trap 'rm -f "$log"' EXIT

echo "== provider module"
# cargo test does not rebuild the cdylib the tests load.
bash scripts/build-provider.sh >/dev/null
cargo build --release -q -p mlkem-provider --tests

# Runs one test binary with its output shown and kept for the summary.
run() {
    local what=$1
    shift
    echo "== $what"
    cargo test --release -p mlkem-provider "$@" -- --nocapture --test-threads 1 2>&1 | tee -a "$log"
}

run "scale: $MLKEM_SCALE_THREADS threads x $MLKEM_SCALE_ROUNDS pairs; 1 vs 2 threads (>= ${MLKEM_SCALE_MIN_SPEEDUP}x)" \
    --test scale
run "load cycles: $MLKEM_LOAD_CYCLES provider load/unload cycles" --test load_cycles
run "fault table over every entry point" --test entry_point_faults
run "secrets wiped when keys and their copies are freed" --lib zeroize_tests

echo
echo "== reliability figures"
grep -oE '(scale|throughput: median of [0-9]+|load cycles): .*' "$log" || true
echo "reliability: all checks passed"
