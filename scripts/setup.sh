#!/usr/bin/env bash
# Installs what building the project needs on Debian/Ubuntu, the `build`
# group of scripts/packages.sh: a C toolchain, pkg-config and the OpenSSL
# headers and CLI (the openssl crate, bindgen's view of the provider
# headers, the tests), libclang (for bindgen), perl (to build OpenSSL),
# valgrind and jq (fuzz seeds), python3 (the AArch64 assembly generator's
# check); and checks for a Rust toolchain (rustup's stable; Debian's rustc
# is too old). scripts/test.sh installs the other groups.
# Sourced by the other scripts; safe to run again.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

source "$(dirname "${BASH_SOURCE[0]}")/packages.sh"
mapfile -t build_packages < <(packages_in build)
packages_ensure setup install "${build_packages[@]}"

# rustup's toolchain before Debian's rustc-web/cargo-web (the aarch64 group
# installs them as /usr/bin/cargo, too old for the host build).
if [ -x "$HOME/.cargo/bin/cargo" ] && [ "$(command -v cargo)" != "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
fi
if ! command -v cargo >/dev/null 2>&1; then
    cat >&2 <<'MSG'
setup: no Rust toolchain found. Install the stable toolchain with rustup:
    curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y
    source "$HOME/.cargo/env"
then run this command again.
MSG
    exit 1
fi
echo "setup: $(cargo --version), $(openssl version 2>/dev/null || echo 'no openssl binary')"
