# shellcheck shell=bash disable=SC2034  # the variables are for the sourcing script
# The AArch64 cross-build toolchain, shared (sourced) by scripts/aarch64.sh
# and scripts/package-deb.sh --arch arm64 (and so scripts/package-test.sh).
#
# The toolchain is Debian's second Rust compiler, which ships the AArch64
# standard library (rustup cannot fetch targets here), GCC's AArch64 linker
# and the arm64 libssl-dev (openssl-sys finds it through pkg-config), with
# qemu-user to run what it builds: the `aarch64` group of scripts/packages.sh
# (arm64 added as a foreign architecture). libssl-dev:arm64 must match the amd64 libssl-dev's version, so apt may
# upgrade that one to the same Debian release.

aarch64_target=aarch64-unknown-linux-gnu
# The cross libc (libc6-arm64-cross): qemu-aarch64 -L for programs that need
# nothing beyond it and the multiarch libraries in /usr/lib/aarch64-linux-gnu.
aarch64_sysroot=/usr/aarch64-linux-gnu
# Debian's rustc-web/cargo-web install as /usr/bin/rustc and /usr/bin/cargo;
# a rustup toolchain earlier on PATH has no AArch64 standard library.
aarch64_cargo=/usr/bin/cargo
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
source "$(dirname "${BASH_SOURCE[0]}")/packages.sh"
mapfile -t aarch64_packages < <(packages_in aarch64)

# aarch64_toolchain WHO install|require [PACKAGE...]: makes sure the packages
# above (and any PACKAGE) are installed, installing the missing ones as root
# or through sudo (install), or failing with their names (require); then
# exports what cargo needs to build for $aarch64_target. WHO prefixes the
# messages.
aarch64_toolchain() {
    local who=$1 policy=$2
    shift 2
    local packages=("${aarch64_packages[@]}" "$@") tool
    packages_ensure "$who" "$policy" "${packages[@]}" || return 1
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
