# shellcheck shell=bash disable=SC2034  # the variables are for the sourcing script
# The AArch64 cross-build toolchain, shared (sourced) by scripts/aarch64.sh
# and scripts/package-deb.sh --arch arm64 (and so scripts/package-test.sh).
#
# The toolchain is Debian's second Rust compiler, which ships the AArch64
# standard library (rustup cannot fetch targets here), GCC's AArch64 linker
# and the arm64 libssl-dev (openssl-sys finds it through pkg-config):
#
#   dpkg --add-architecture arm64 && apt-get update
#   apt-get install rustc-web cargo-web libstd-rust-web-dev:arm64 \
#       gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user libssl-dev:arm64
#
# libssl-dev:arm64 must match the amd64 libssl-dev's version, so apt may
# upgrade that one to the same Debian release.

aarch64_target=aarch64-unknown-linux-gnu
# The cross libc (libc6-arm64-cross): qemu-aarch64 -L for programs that need
# nothing beyond it and the multiarch libraries in /usr/lib/aarch64-linux-gnu.
aarch64_sysroot=/usr/aarch64-linux-gnu
# Debian's rustc-web/cargo-web install as /usr/bin/rustc and /usr/bin/cargo;
# a rustup toolchain earlier on PATH has no AArch64 standard library.
aarch64_cargo=/usr/bin/cargo
aarch64_packages=(rustc-web cargo-web libstd-rust-web-dev:arm64 gcc-aarch64-linux-gnu
    libc6-dev-arm64-cross qemu-user libssl-dev:arm64)

# aarch64_toolchain WHO install|require [PACKAGE...]: makes sure the packages
# above (and any PACKAGE) are installed, installing the missing ones as root
# or through sudo (install), or failing with their names (require); then
# exports what cargo needs to build for $aarch64_target. WHO prefixes the
# messages.
aarch64_toolchain() {
    local who=$1 policy=$2
    shift 2
    local packages=("${aarch64_packages[@]}" "$@") missing=() pkg tool
    for pkg in "${packages[@]}"; do
        dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        if [ "$policy" != install ]; then
            echo "$who: missing packages ${missing[*]} (see scripts/aarch64-env.sh)" >&2
            return 1
        fi
        echo "$who: installing ${missing[*]}" >&2
        local sudo_cmd=()
        [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
        dpkg --print-foreign-architectures | grep -qx arm64 ||
            "${sudo_cmd[@]}" dpkg --add-architecture arm64
        "${sudo_cmd[@]}" apt-get update -qq >&2
        DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" \
            apt-get -o DPkg::Lock::Timeout=300 install -y -qq "${missing[@]}" >&2
    fi
    export RUSTC=/usr/bin/rustc
    for tool in "$RUSTC" "$aarch64_cargo" aarch64-linux-gnu-gcc aarch64-linux-gnu-strip qemu-aarch64; do
        command -v "$tool" >/dev/null || {
            echo "$who: $tool is missing after installing ${packages[*]}" >&2
            return 1
        }
    done
    export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
    # openssl-sys finds the arm64 libssl through pkg-config.
    export PKG_CONFIG_ALLOW_CROSS=1
    export PKG_CONFIG_PATH=/usr/lib/aarch64-linux-gnu/pkgconfig
}
