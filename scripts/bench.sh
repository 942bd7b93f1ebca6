#!/usr/bin/env bash
# The main job for now: benchmark kem-core (every backend the CPU runs)
# against RustCrypto ml-kem, libcrux-ml-kem and liboqs (mlkem-native) in one
# run, as tables and CSV (written to bench.csv), with the bars it must meet
# (`--check-bars` makes a missed bar fail the run).
# Extra arguments go to the bench binary, e.g. `scripts/bench.sh --params 768`.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
cargo run --release -q -p test-tools --features peers-liboqs --bin bench -- --csv bench.csv "$@"
echo "CSV written to $(pwd)/bench.csv"
