#!/usr/bin/env bash
# Cross-builds kem-core for AArch64 (aarch64-unknown-linux-gnu) and runs its
# single-threaded verification runner (kem-core/tests/single_threaded.rs:
# every vector source, the accumulated, property and differential checks, on
# every backend the CPU has) under qemu-aarch64, once per emulated CPU:
#
#   max          Armv8.x with the SHA-3 extension: portable and neon, the
#                neon backend's Keccak on EOR3/RAX1/BCAX/XAR
#   neoverse-n1  Armv8.2 without SHA-3 (Graviton2, Ampere Altra): portable
#                and neon, the neon backend's Keccak on plain Neon
#
# Threads hang under this emulation, so nothing here may use libtest.
#
# The toolchain is Debian's second Rust compiler, which ships the AArch64
# standard library (rustup cannot fetch targets here). As root:
#
#   dpkg --add-architecture arm64 && apt-get update
#   apt-get install rustc-web cargo-web libstd-rust-web-dev:arm64 \
#       gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user
#
# Usage: scripts/aarch64.sh [kem-core]   (the only step so far)
# Environment: CARGO_TARGET_DIR (default target/aarch64), MLKEM_VECTORS_DIR.
set -euo pipefail
cd "$(dirname "$0")/.."

target=aarch64-unknown-linux-gnu
sysroot=/usr/aarch64-linux-gnu

# Debian's rustc-web/cargo-web install as /usr/bin/rustc and /usr/bin/cargo;
# a rustup toolchain earlier on PATH has no AArch64 standard library.
export RUSTC=/usr/bin/rustc
cargo=/usr/bin/cargo
missing=()
for tool in "$RUSTC" "$cargo" aarch64-linux-gnu-gcc qemu-aarch64; do
    command -v "$tool" >/dev/null || missing+=("$tool")
done
if [ ! -d "/usr/lib/rustlib/$target" ]; then
    missing+=("libstd-rust-web-dev:arm64")
fi
if [ ${#missing[@]} -gt 0 ]; then
    echo "aarch64.sh: missing ${missing[*]}; install the packages listed at the top of $0" >&2
    exit 1
fi

export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target/aarch64}
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
export MLKEM_VECTORS_DIR=${MLKEM_VECTORS_DIR:-$PWD/../shared/vectors}

# Runs the emulated program "$@" on CPU model $cpu.
emulate() {
    qemu-aarch64 -L "$sysroot" -cpu "$cpu" "$@"
}

echo "== kem-core for $target: build"
"$cargo" build --release -q --target "$target" -p kem-core --test single_threaded
runner=$("$cargo" test --release -q --target "$target" -p kem-core --test single_threaded \
    --no-run --message-format=json |
    sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -1)

for cpu_and_keccak in "max neon-sha3-x2" "neoverse-n1 neon-x2"; do
    read -r cpu keccak <<<"$cpu_and_keccak"
    echo "== kem-core single-threaded runner, qemu -cpu $cpu"
    MLKEM_EXPECT_BACKENDS=portable,neon \
        MLKEM_EXPECT_KECCAK="$keccak" \
        emulate "$runner" | grep -v '^backend: '
done
