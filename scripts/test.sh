#!/usr/bin/env bash
# Runs every check of the project: formatting, clippy, rustdoc, the whole
# test suite (release build: the vector and accumulated tests do tens of
# thousands of ML-KEM operations), a short smoke run of each tool and of the demo
# (scripts/demo.sh --quick), the fuzzers under AddressSanitizer, the
# threaded tests under ThreadSanitizer, the provider's CLI flows under
# LeakSanitizer and valgrind.
#
# The provider tests run the system's OpenSSL (3.0) and OpenSSL 3.5, 3.6 and 4.0
# (and 3.4, for the README's quickstart), the short OpenSSL matrix 3.0.2 and
# 3.2.1, all built here from the openssl-src crate's source by
# scripts/build-openssl.sh (cached in ~/.cache/mlkem-provider/openssl; a few
# minutes each the first time).
#
# It runs on Debian 12 (the AArch64 cross toolchain is Debian's rustc-web);
# every package its steps need is installed first (scripts/packages.sh).
# Set MLKEM_SKIP_OPENSSL_BUILD=1 to test with what is already built.
#
# Vectors are read from ../shared/vectors (or $MLKEM_VECTORS_DIR). Outside CI,
# missing vectors and OpenSSL builds are skipped with a printed reason; under
# CI (CI=true or 1: in_ci in scripts/common.sh, test_tools::ci in Rust) they
# fail.
set -euo pipefail
cd "$(dirname "$0")/.."

# The tracked files as the run found them: no step may change one (a lock
# file cargo rewrites, a generated file), or CI tests what was not committed.
tracked_state() { git status --porcelain --untracked-files=no && git diff | sha256sum; }
tracked_before=$(tracked_state 2>/dev/null || true)

# Every package any step needs, installed before the first step: a fresh
# machine runs the whole command with nothing installed by hand. A tool that
# a script needs and scripts/packages.sh lacks fails here, not an hour in.
echo "== the packages the steps need: listed (scripts/check-packages.sh) and installed"
bash scripts/check-packages.sh
bash scripts/check-packages.sh --self-test
source scripts/setup.sh
mapfile -t test_packages < <(mapfile -t groups < <(package_groups) && packages_in "${groups[@]}")
packages_ensure test.sh install "${test_packages[@]}"
bash scripts/check-packages.sh --installed

echo "== cargo fmt --check"
cargo fmt --all -- --check

echo "== the generated AArch64 Keccak assembly matches its generator"
python3 scripts/gen-keccak-asm.py --check

echo "== cargo clippy (all targets and features, warnings are errors)"
cargo clippy --release --workspace --all-targets --all-features -- -D warnings

echo "== cargo doc (broken links and stray HTML in doc comments are errors)"
RUSTDOCFLAGS=-Dwarnings cargo doc --workspace --no-deps -q

echo "== tool smoke runs"
cargo run --release -q -p test-tools --bin kat -- --check
cargo run --release -q -p test-tools --bin bench -- --quick >/dev/null
echo "bench --quick: ok"

if [ "${MLKEM_SKIP_OPENSSL_BUILD:-0}" != 1 ]; then
    echo "== OpenSSL 3.4, 3.5, 3.6 and 4.0 for the provider tests, 3.0.2 and 3.2.1 for the matrix"
    for series in 3.4 3.5 3.6 4.0 3.0.2 3.2; do
        bash scripts/build-openssl.sh "$series" >/dev/null
    done
fi

echo "== provider module"
# cargo test does not rebuild the cdylib the CLI tests load.
provider_dir=$(bash scripts/build-provider.sh | tail -1)
echo "built $provider_dir/mlkem.so"

echo "== cargo test (release)"
# Every backend the CPU has must run in each kem-core backend test
# (scripts/backends.sh): a lost backend fails instead of skipping.
source scripts/backends.sh
cpu_backends=$(cpu_backends)
backend_log=$(mktemp)
MLKEM_EXPECT_BACKENDS=$cpu_backends MLKEM_BACKEND_LOG=$backend_log cargo test --release --workspace
check_backends_exercised "$backend_log" "$cpu_backends" \
    vectors accumulated properties differential backend_selection stack_usage
rm -f "$backend_log"
# The report needs kem-core's profiling counters (off in the build above).
cargo test --release -q -p test-tools --features profiling --bin report
# The peer implementations bench measures (RustCrypto ml-kem, libcrux,
# liboqs through the oqs crate) agree with kem-core byte for byte.
cargo test --release -q -p test-tools --features peers-liboqs --test peers

echo "== the OpenSSL releases distributions ship, short: 3.0.2 (Ubuntu 22.04) and 3.2.1 (RHEL 9.5-10.0)"
# scripts/openssl-matrix.sh with no argument runs all eleven releases.
bash scripts/openssl-matrix.sh --quick

echo "== AArch64 under qemu: kem-core (portable, neon; with and without SHA-3) and the provider"
# The toolchain (the aarch64 group of scripts/packages.sh) was installed above.
MLKEM_HOST_PROVIDER_DIR="$provider_dir" bash scripts/aarch64.sh

echo "== in-process benchmarks, smoke (system OpenSSL through the openssl crate)"
cargo run --release -q -p test-tools --bin evp-bench -- --quick ML-KEM-768 X25519MLKEM768 >/dev/null
cargo run --release -q -p test-tools --bin tls-bench -- --handshakes 50 --rounds 1 >/dev/null
echo "evp-bench, tls-bench: ok"

echo "== the demo, short: genpkey, TLS over X25519MLKEM768, speed comparison, report, charts"
demo_dir=$(mktemp -d)
trap 'rm -rf "$demo_dir"' EXIT
bash scripts/demo.sh --quick "$demo_dir" >/dev/null
grep -q "Overall: \*\*PASS\*\*" "$demo_dir/report/report.md"
ls "$demo_dir"/charts/*.svg >/dev/null
rm -rf "$demo_dir"
echo "demo --quick: ok"

# The sanitizers need the nightly toolchain (the CI image has it): CI fails
# without it; elsewhere fuzzing runs without ASan and TSan is skipped.
if rustup run nightly rustc --version >/dev/null 2>&1 || in_ci; then
    fuzz_sanitizer=address
    sanitizers=(tsan lsan)
else
    fuzz_sanitizer=none
    sanitizers=(lsan)
    echo "(no nightly toolchain: fuzzing without AddressSanitizer, no ThreadSanitizer)"
fi
echo "== fuzzing, smoke: 20 s per target, --sanitizer $fuzz_sanitizer (scripts/fuzz.sh runs 300 s by default)"
bash scripts/fuzz.sh --sanitizer "$fuzz_sanitizer" --seconds 20

echo "== ${sanitizers[*]}: the threaded tests under ThreadSanitizer, the CLI flows under LeakSanitizer (short forms)"
MLKEM_MODULE_DIR="$provider_dir" bash scripts/sanitizers.sh --quick "${sanitizers[@]}"
if [ "$fuzz_sanitizer" = address ]; then
    echo "== the TLS man in the middle under AddressSanitizer (short form; scripts/tls-mitm.sh runs the long one)"
    bash scripts/tls-mitm.sh --asan
fi

echo "== constant time: kem-core with secrets tainted, under valgrind"
bash scripts/ct-taint.sh

echo "== provider CLI flows under valgrind"
bash scripts/valgrind-cli.sh "$provider_dir"

echo "== the Debian package and the deployment guide: install, mlkem-provider-check, nginx + curl + OpenSSL 3.5 over every group, remove"
bash scripts/deploy-test.sh

echo "== the packages: reproducible, lintian-clean, arm64 under qemu (arm64 openssl, TLS to OpenSSL 3.5, the check)"
bash scripts/package-test.sh

echo "== the RPMs: files and places, requires, rpmlint, reproducible, aarch64, install in a scratch root, the drop-in on a RHEL-like openssl.cnf"
bash scripts/package-rpm-test.sh

# One shape (OpenSSL 3.0.7, the cheapest build of the four: one more
# OpenSSL build for CI); scripts/rpm-distro-test.sh runs all four.
echo "== the RPM in a root shaped like RHEL 9.0-9.3: rpm -i, groups on through crypto-policies, the check, rpm -e"
bash scripts/rpm-distro-test.sh rhel9.0

echo "== servers and clients from apt with the provider system-wide, short (scripts/compat-test.sh runs every group)"
compat_dir=$(mktemp -d)
bash scripts/compat-test.sh --quick --out "$compat_dir"
rm -rf "$compat_dir"

echo "== the scripts that change this machine, killed mid-run (SIGTERM; SIGKILL and a rerun): the machine as before, short"
bash scripts/restore-test.sh --quick

echo "== nginx under load, short: 2,000 full handshakes per group (scripts/nginx-soak.sh runs 100,000)"
bash scripts/nginx-soak.sh --handshakes 2000

echo "== no step changed a tracked file"
if [ "$(tracked_state 2>/dev/null || true)" != "$tracked_before" ]; then
    echo "test: FAIL: the steps above changed tracked files (commit what they wrote, or keep them from writing it):" >&2
    git status --short --untracked-files=no >&2
    git diff --stat >&2
    exit 1
fi
echo "ok"
