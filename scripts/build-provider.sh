#!/usr/bin/env bash
# Builds the mlkem provider (release, in $CARGO_TARGET_DIR when set) and
# installs it as <dir>/mlkem.so, the name OpenSSL looks for. Prints <dir> as
# the last line of stdout:
#
#   dir=$(scripts/build-provider.sh | tail -1)
#   openssl genpkey -provider-path "$dir" -provider mlkem -provider default \
#       -algorithm ML-KEM-768
#
# <dir> is target/provider unless given as the first argument.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-target/provider}
cargo build --release -q -p mlkem-provider >&2
mkdir -p "$dir"
install -m 0755 "${CARGO_TARGET_DIR:-target}/release/libmlkem.so" "$dir/mlkem.so.tmp"
mv -f "$dir/mlkem.so.tmp" "$dir/mlkem.so"
cd "$dir" && pwd
