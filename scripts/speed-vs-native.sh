#!/usr/bin/env bash
# Runs `openssl speed` on OpenSSL 3.5 for the mlkem provider ("ours") and for
# OpenSSL's own ML-KEM ("native"), alternating (ours, native, ours, native,
# ...) so both see the same machine state, and prints per parameter set the
# median ops/s and s/op of each and the ratio to native.
#
#   scripts/speed-vs-native.sh [--rounds N] [--seconds S] [--backend NAME] [ALGORITHM...]
#
# Defaults: 3 rounds of 2 seconds per operation, ML-KEM-512 ML-KEM-768
# ML-KEM-1024 (the hybrids X25519MLKEM768 SecP256r1MLKEM768
# SecP384r1MLKEM1024 work too), and the kem-core backend the provider
# detects (--backend portable|avx2|avx512-keccak|avx512 forces one, through MLKEM_BACKEND).
# OpenSSL 3.5 comes from scripts/build-openssl.sh (built if missing); the
# provider from scripts/build-provider.sh. Every other option of
# test-tools' speed-compare passes through (--csv PATH, --json PATH,
# --raw-dir DIR, --implementations LIST, --oqsprovider MODULE, --openssl BIN,
# ...); `--help` shows them.
set -euo pipefail

# Paths given relative to the caller's directory stay so after the cd below.
path_options=" --csv --json --raw-dir --openssl --provider-dir --oqsprovider --oqs-openssl "
absolute() { case $1 in /*) printf '%s' "$1" ;; *) printf '%s/%s' "$PWD" "$1" ;; esac; }
args=()
expect_path=0
for arg in "$@"; do
    if ((expect_path)); then
        args+=("$(absolute "$arg")")
        expect_path=0
    elif [[ $path_options == *" $arg "* ]]; then
        args+=("$arg")
        expect_path=1
    elif [[ $arg == --*=* && $path_options == *" ${arg%%=*} "* ]]; then
        args+=("${arg%%=*}=$(absolute "${arg#*=}")")
    else
        args+=("$arg")
    fi
done
set -- "${args[@]+"${args[@]}"}"
cd "$(dirname "$0")/.."

compare=(cargo run --release -q -p test-tools --bin speed-compare --)
for arg in "$@"; do
    case $arg in
        -h | --help)
            sed -n '2,17p' "$0"
            echo
            exec "${compare[@]}" --help
            ;;
    esac
done

openssl_args=()
case " $* " in
    *" --openssl "* | *" --openssl="*) ;;
    *)
        prefix=$(bash scripts/build-openssl.sh 3.5 | tail -1)
        openssl_args=(--openssl "$prefix/bin/openssl")
        ;;
esac
provider_args=()
case " $* " in
    *" --provider-dir "* | *" --provider-dir="*) ;;
    *) provider_args=(--provider-dir "$(bash scripts/build-provider.sh | tail -1)") ;;
esac

exec "${compare[@]}" "${openssl_args[@]}" "${provider_args[@]}" "$@"
