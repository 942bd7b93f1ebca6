#!/usr/bin/env bash
# A hostile TLS peer, long form: provider/tests/tls_mitm.rs's man in the
# middle rewrites the key share of the ClientHello (against our server, a
# long-running `openssl s_server` with the provider) and of the ServerHello
# (against our client, the in-process libssl with the provider) for every
# group we offer, with servers of the system's OpenSSL 3.0 and of 3.5, 3.6
# and 4.0 (scripts/build-openssl.sh), and MLKEM_MITM_FLIPS (default 64)
# random single-bit flips per group and side on top of the fixed cases.
# Prints the table case x group x side -> outcome and the counts; fails on
# any finding. `cargo test` runs the short form (system OpenSSL, fixed cases).
#
#   scripts/tls-mitm.sh          the long form
#   scripts/tls-mitm.sh --asan   the short form under AddressSanitizer (nightly
#       Rust), the module and the test binary instrumented:
#     export RUSTFLAGS="-Zsanitizer=address -Clink-arg=-rdynamic"
#     cargo +nightly build --release --target x86_64-unknown-linux-gnu \
#         -p mlkem-provider --lib
#     MLKEM_MITM_PRELOAD=$(gcc -print-file-name=libasan.so) \
#     ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 cargo +nightly test \
#         --release --target x86_64-unknown-linux-gnu -p mlkem-provider \
#         --test tls_mitm -- --nocapture
#       The test binary links rustc's ASan runtime and exports it
#       (-rdynamic) to the module libcrypto loads into it; the uninstrumented
#       s_server (and s_client) processes take gcc's shared runtime through
#       LD_PRELOAD. An ASan report kills that process, which the test
#       reports as a finding. --asan --long runs the long form so.
set -euo pipefail
cd "$(dirname "$0")/.."

asan=0
long=0
for arg in "$@"; do
    case "$arg" in
        -h | --help)
            sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'
            exit 0
            ;;
        --asan) asan=1 ;;
        --long) long=1 ;;
        *)
            echo "tls-mitm: unexpected argument '$arg' (try --help)" >&2
            exit 2
            ;;
    esac
done
[ "$asan" = 1 ] || long=1

source scripts/setup.sh >/dev/null
test_args=(-- --nocapture --test-threads 1)
[ "$long" = 1 ] && test_args+=(--ignored)

if [ "$asan" = 0 ]; then
    bash scripts/build-provider.sh >/dev/null
    cargo test --release -p mlkem-provider --test tls_mitm "${test_args[@]}"
    exit
fi

# AddressSanitizer: the module and the test binary instrumented (an explicit
# --target keeps build scripts and proc macros uninstrumented).
target=$(rustc -vV | sed -n 's/^host: //p')
export RUSTFLAGS="-Zsanitizer=address -Clink-arg=-rdynamic ${RUSTFLAGS:-}"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1}
cargo +nightly build --release --target "$target" -p mlkem-provider --lib
# s_server is not instrumented: it takes the runtime from a shared copy.
runtime=$(gcc -print-file-name=libasan.so)
[ -e "$runtime" ] || { echo "tls-mitm: no shared ASan runtime (gcc's libasan)" >&2; exit 1; }
export MLKEM_MITM_PRELOAD=$runtime
cargo +nightly test --release --target "$target" -p mlkem-provider --test tls_mitm "${test_args[@]}"
