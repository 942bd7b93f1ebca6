#!/usr/bin/env bash
# Cross-builds kem-core for AArch64 (aarch64-unknown-linux-gnu) and runs its
# single-threaded verification runner (kem-core/tests/single_threaded.rs:
# every vector source, the accumulated, property and differential checks, on
# every backend the CPU has) under qemu-aarch64, once per emulated CPU:
#
#   max          Armv8.x with the SHA-3 extension: portable and neon, the
#                neon backend's Keccak on EOR3/RAX1/BCAX/XAR; every check
#   neoverse-n1  Armv8.2 without SHA-3 (Graviton2, Ampere Altra): portable
#                and neon, the neon backend's Keccak on plain Neon; the
#                vectors, properties and 2,000 differential cases per set
#
# The runner fails if the backends or the Keccak it finds are not these.
#
# Threads hang under this emulation, so nothing here may use libtest.
#
# The toolchain is Debian's second Rust compiler, which ships the AArch64
# standard library (rustup cannot fetch targets here). This script installs
# it when missing, as root (or through sudo):
#
#   dpkg --add-architecture arm64 && apt-get update
#   apt-get install rustc-web cargo-web libstd-rust-web-dev:arm64 \
#       gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user libssl-dev:arm64
#
# (libssl-dev:arm64, for the provider step, brings libssl3:arm64 beside the
# system's amd64 one). The arm64 `openssl` program would replace
# the system's, so this script unpacks it instead (`apt-get download
# openssl:arm64` + `dpkg -x`, into $CARGO_TARGET_DIR/openssl-arm64).
#
# Usage: scripts/aarch64.sh [kem-core] [provider]   (default: both)
#
#   kem-core  the runner, as above
#   provider  mlkem.so cross-built and driven by the arm64 `openssl` (3.0)
#             under qemu: genpkey from a seed, pkey -pubout, -text and DER
#             for each parameter set, byte-identical to the x86-64 build's
#             output; then an EVP encapsulate/decapsulate round trip for
#             each set in the arm64 libcrypto (`evp-bench`, cross-built, one
#             iteration: it checks decaps(encaps) before timing, and its
#             emulated timings are meaningless and discarded)
#
# Environment: CARGO_TARGET_DIR (default target/aarch64), MLKEM_VECTORS_DIR,
# MLKEM_HOST_PROVIDER_DIR (a directory with the x86-64 mlkem.so; default:
# built by scripts/build-provider.sh into target/provider),
# MLKEM_AARCH64_CASES / MLKEM_AARCH64_QUICK_CASES (differential cases per set
# under -cpu max / neoverse-n1; default 10000 / 2000).
#
# Time (2 shared cores, loaded): about 10.5 minutes from a cold target
# directory, of which the runner takes about 5 minutes under -cpu max and
# 40 s under neoverse-n1, and the provider step under a minute once built.
set -euo pipefail
cd "$(dirname "$0")/.."

# The toolchain (rustc-web, cargo-web, the AArch64 linker, libssl-dev:arm64,
# qemu-user): scripts/aarch64-env.sh, installed here when missing.
source scripts/aarch64-env.sh
aarch64_toolchain aarch64.sh "$(packages_policy)"
target=$aarch64_target
sysroot=$aarch64_sysroot
cargo=$aarch64_cargo

export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target/aarch64}
export MLKEM_VECTORS_DIR=${MLKEM_VECTORS_DIR:-$PWD/../shared/vectors}

# Runs the emulated program "$@" on CPU model $cpu.
emulate() {
    qemu-aarch64 -L "$sysroot" -cpu "$cpu" "$@"
}

steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(kem-core provider)

kem_core_step() {
    echo "== kem-core for $target: build"
    "$cargo" build --release -q --target "$target" -p kem-core --test single_threaded
    runner=$("$cargo" test --release -q --target "$target" -p kem-core --test single_threaded \
        --no-run --message-format=json |
        sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -1)

    # The full run (10,000 differential cases and accumulated rounds per set)
    # on the SHA-3 CPU; on the other, whose code differs only in the Keccak
    # rounds, the vectors and 2,000 differential cases per set.
    local full=${MLKEM_AARCH64_CASES:-10000} quick=${MLKEM_AARCH64_QUICK_CASES:-2000}
    for cpu_keccak_args in "max neon-sha3-x2 $full" "neoverse-n1 neon-x2 $quick --quick"; do
        read -r cpu keccak cases args <<<"$cpu_keccak_args"
        echo "== kem-core single-threaded runner, qemu -cpu $cpu"
        # The "backend: ..." lines (one per check and backend) only matter
        # in a failure's log.
        local log=$CARGO_TARGET_DIR/single_threaded-$cpu.log
        if MLKEM_EXPECT_BACKENDS=portable,neon \
            MLKEM_EXPECT_KECCAK="$keccak" \
            MLKEM_DIFFERENTIAL_CASES="$cases" \
            emulate "$runner" ${args:-} >"$log" 2>&1; then
            grep -v '^backend: ' "$log"
        else
            cat "$log"
            exit 1
        fi
    done
}

provider_step() {
    local cpu=max
    echo "== provider for $target: build"
    local arm_dir=$CARGO_TARGET_DIR/provider-arm64
    "$cargo" build --release -q --target "$target" -p mlkem-provider
    mkdir -p "$arm_dir"
    install -m 0755 "$CARGO_TARGET_DIR/$target/release/libmlkem.so" "$arm_dir/mlkem.so"

    local arm_openssl=$CARGO_TARGET_DIR/openssl-arm64/usr/bin/openssl
    if [ ! -x "$arm_openssl" ]; then
        echo "== the arm64 openssl program (apt-get download + dpkg -x)"
        local debs=$CARGO_TARGET_DIR/openssl-arm64-deb
        rm -rf "$debs" && mkdir -p "$debs"
        (cd "$debs" && apt-get download -q openssl:arm64 2>&1 | grep -v '^W: Download is performed unsandboxed' || true)
        dpkg -x "$debs"/openssl_*_arm64.deb "$CARGO_TARGET_DIR/openssl-arm64"
    fi
    emulate "$arm_openssl" version

    local host_dir=${MLKEM_HOST_PROVIDER_DIR:-}
    if [ -z "$host_dir" ]; then
        echo "== provider for x86-64 (the reference)"
        host_dir=$(env -u CARGO_TARGET_DIR bash scripts/build-provider.sh | tail -1)
    fi

    local work=$CARGO_TARGET_DIR/provider-check
    rm -rf "$work" && mkdir -p "$work"
    local seed
    seed=$(printf '%02x' $(seq 0 63))
    for set in ML-KEM-512 ML-KEM-768 ML-KEM-1024; do
        for arch in x86-64 arm64; do
            local run=(openssl) dir=$host_dir
            if [ "$arch" = arm64 ]; then
                run=(emulate "$arm_openssl")
                dir=$arm_dir
            fi
            local load=(-provider-path "$dir" -provider mlkem -provider default)
            local out=$work/$set.$arch
            "${run[@]}" genpkey "${load[@]}" -algorithm "$set" \
                -pkeyopt "hexseed:$seed" -out "$out.pem"
            "${run[@]}" pkey "${load[@]}" -in "$out.pem" -pubout -out "$out.pub.pem"
            "${run[@]}" pkey "${load[@]}" -in "$out.pem" -outform DER -out "$out.der"
            "${run[@]}" pkey "${load[@]}" -in "$out.pem" -text -noout >"$out.txt"
            # Each side also reads the other's key.
            "${run[@]}" pkey "${load[@]}" -in "$work/$set.x86-64.pem" -pubout -out "$out.x86-pub.pem"
        done
        for file in pem pub.pem der txt x86-pub.pem; do
            cmp "$work/$set.x86-64.$file" "$work/$set.arm64.$file"
        done
        cmp "$work/$set.x86-64.pub.pem" "$work/$set.arm64.x86-pub.pem"
        echo "$set: genpkey -pkeyopt hexseed, pkey -pubout/-outform DER/-text: arm64 = x86-64"
    done

    # A provider error reaches OpenSSL's error queue through vset_error,
    # whose va_list argument differs between the architectures.
    if emulate "$arm_openssl" genpkey -provider-path "$arm_dir" -provider mlkem \
        -provider default -algorithm ML-KEM-768 -pkeyopt hexseed:0011 \
        -out "$work/bad.pem" 2>"$work/bad.err"; then
        echo "aarch64.sh: a 2-byte seed was accepted" >&2
        exit 1
    fi
    grep -q "invalid length:mlkem-provider:0:seed must be 64 bytes, got 2" "$work/bad.err" || {
        cat "$work/bad.err" >&2
        exit 1
    }
    echo "a bad seed: the provider's error text, as on x86-64"

    echo "== EVP round trip in the arm64 libcrypto (evp-bench, one iteration)"
    "$cargo" build --release -q --target "$target" -p test-tools --bin evp-bench
    if ! emulate "$CARGO_TARGET_DIR/$target/release/evp-bench" --provider-dir "$arm_dir" \
        --trials 1 --iterations 1 ML-KEM-512 ML-KEM-768 ML-KEM-1024 X25519MLKEM768 \
        >"$work/evp-bench.out" 2>&1; then
        cat "$work/evp-bench.out" >&2
        exit 1
    fi
    echo "ML-KEM-512/768/1024, X25519MLKEM768: EVP_PKEY_encapsulate/decapsulate secrets match"
}

for step in "${steps[@]}"; do
    case $step in
    kem-core) kem_core_step ;;
    provider) provider_step ;;
    *)
        echo "aarch64.sh: unknown step $step (kem-core, provider)" >&2
        exit 2
        ;;
    esac
done
