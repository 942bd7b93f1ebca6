#!/usr/bin/env bash
# Runs every check of the project: formatting, clippy, the whole test suite
# (release build: the vector and accumulated tests do tens of thousands of
# ML-KEM operations), and a short smoke run of each tool.
#
# Vectors are read from ../shared/vectors (or $MLKEM_VECTORS_DIR). Outside CI,
# missing vectors are skipped with a printed reason; with CI=true they fail.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh

echo "== cargo fmt --check"
cargo fmt --all -- --check

echo "== cargo clippy (all targets and features, warnings are errors)"
cargo clippy --release --workspace --all-targets --all-features -- -D warnings

echo "== tool smoke runs"
cargo run --release -q -p test-tools --bin kat -- --check
cargo run --release -q -p test-tools --bin bench -- --quick >/dev/null
echo "bench --quick: ok"

echo "== cargo test (release)"
cargo test --release --workspace
