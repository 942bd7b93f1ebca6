#!/usr/bin/env bash
# Installs what building and testing the project needs on Debian/Ubuntu:
# a C toolchain, pkg-config and the OpenSSL headers and CLI (the openssl
# crate, bindgen's view of the provider headers, the tests), libclang (for
# bindgen), perl (to build OpenSSL 3.5/4.0), valgrind and jq (fuzz seeds),
# python3 (the AArch64 assembly generator's check), and checks for a
# Rust toolchain (rustup's stable; Debian's rustc is too old).
# Sourced by the other scripts; safe to run again.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

need_packages=()
for pkg in build-essential pkg-config libssl-dev openssl ca-certificates cmake libclang-dev perl valgrind jq python3; do
    # With a second architecture installed (scripts/aarch64.sh adds
    # libssl-dev:arm64), a bare name is ambiguous to dpkg: ask for ours too.
    dpkg -s "$pkg" >/dev/null 2>&1 || dpkg -s "$pkg:$(dpkg --print-architecture)" >/dev/null 2>&1 ||
        need_packages+=("$pkg")
done
if ((${#need_packages[@]})); then
    echo "setup: installing ${need_packages[*]}"
    sudo_cmd=()
    [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
    "${sudo_cmd[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${need_packages[@]}"
fi

if ! command -v cargo >/dev/null 2>&1; then
    [ -x "$HOME/.cargo/bin/cargo" ] && export PATH="$HOME/.cargo/bin:$PATH"
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
