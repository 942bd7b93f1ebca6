#!/usr/bin/env bash
# Coverage-guided fuzzing (libFuzzer, through cargo-fuzz), with
# AddressSanitizer on the nightly toolchain or without a sanitizer on stable:
#
#   scripts/fuzz.sh [--seconds N] [--sanitizer address|none] [TARGET...]
#
#   parse_and_decapsulate  kem-core/fuzz: ek/dk/seed/ct bytes parsed and
#                          used on every backend, checked against an
#                          independent FIPS 203 input-check oracle
#   decode_der_pem         provider/fuzz: the provider's DER/PEM key codec
#   ossl_params            provider/fuzz: import, generation, set/get
#                          params, export and the KEM's context params, with
#                          arbitrary OSSL_PARAM arrays, through libcrypto
#
# Each target runs N seconds (default 300; CI's smoke run uses 20), one after
# another. Printed per target: executions, exec/s, coverage (libFuzzer's
# cov/ft from its last status line: edges and features of the instrumented
# Rust code, the harness, kem-core and the provider, not libcrypto), the
# corpus libFuzzer keeps (inputs/size), the files in the corpus directory,
# and crashes. Exits non-zero on any crash; libFuzzer's input is then under
# target/fuzz-artifacts/ and its path is printed (replay: the target binary
# with that file as argument).
#
# --sanitizer address (the default when a nightly toolchain is installed;
# `rustup toolchain install nightly`): `cargo +nightly fuzz build`, cargo-fuzz's
# default, which adds -Zsanitizer=address to its coverage flags. Instrumented:
# every Rust crate compiled for the target (the harness, kem-core, the
# provider, their dependencies). Not instrumented: Rust's std (prebuilt;
# -Zbuild-std needs the network), libFuzzer itself, and the system's
# libcrypto.so.3 that ossl_params drives (OpenSSL 3.0, as Debian ships it).
# ASan still sees what libcrypto does to memory through the allocator and the
# libc functions it intercepts: a libcrypto memcpy past the end of a buffer
# our code allocated, a double free or a use after free of a block either
# side allocated is reported; a plain load or store inside libcrypto is not.
# LeakSanitizer runs at exit of each input (libFuzzer's -detect_leaks=1).
#
# --sanitizer none (the default without nightly): stable Rust, cargo-fuzz's
# `--sanitizer none`. cargo-fuzz then passes only stable codegen options:
# -Cpasses=sancov-module, -Cllvm-args=-sanitizer-coverage-{level=4,
# inline-8bit-counters,pc-table,trace-compares,stack-depth}, --cfg fuzzing,
# -Cdebug-assertions (overflow checks and Rust's unsafe-precondition checks
# on). No RUSTC_BOOTSTRAP. What is lost is ASan: an out-of-bounds access in
# unsafe code is found only if it crashes or trips a precondition check.
#
# Builds go to target/fuzz-asan or target/fuzz (one per sanitizer, so that
# switching does not rebuild). Corpora live in target/fuzz-corpus/<target>/
# (shared by both; never committed), seeded
# from the vectors in ../shared/vectors (or $MLKEM_VECTORS_DIR; needs jq) and
# from keys `openssl genpkey` makes with our provider in all six private key
# formats (DER and PEM). Inputs that once crashed are committed in
# <crate>/fuzz/regressions/<target>/ and replayed at the start of every run.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

usage() {
    sed -n '2,/with that file as argument/p' "$0" | sed 's/^# \{0,1\}//'
}

have_nightly() { rustup run nightly rustc --version >/dev/null 2>&1; }

seconds=300
sanitizer=
targets=()
while (($#)); do
    case $1 in
        --seconds)
            [[ ${2:-} =~ ^[0-9]+$ ]] || { echo "fuzz: --seconds needs a number" >&2; exit 2; }
            seconds=$2
            shift 2
            ;;
        --sanitizer)
            [[ ${2:-} =~ ^(address|none)$ ]] || { echo "fuzz: --sanitizer takes address or none" >&2; exit 2; }
            sanitizer=$2
            shift 2
            ;;
        -h | --help) usage; exit 0 ;;
        -*) echo "fuzz: unknown option $1 (see --help)" >&2; exit 2 ;;
        *) targets+=("$1"); shift ;;
    esac
done
all_targets=(parse_and_decapsulate decode_der_pem ossl_params)
((${#targets[@]})) || targets=("${all_targets[@]}")

crate_of() {
    case $1 in
        parse_and_decapsulate) echo kem-core ;;
        decode_der_pem | ossl_params) echo provider ;;
        *) echo "fuzz: unknown target $1 (targets: ${all_targets[*]})" >&2; exit 2 ;;
    esac
}
max_len_of() {
    # The largest seed plus room: 1 + dk + ct + m of ML-KEM-1024 is 4,769
    # bytes; a PEM oqskeypair key of ML-KEM-1024 about 6.6 KiB.
    case $1 in
        parse_and_decapsulate) echo 8192 ;;
        *) echo 16384 ;;
    esac
}
for t in "${targets[@]}"; do crate_of "$t" >/dev/null; done

source scripts/setup.sh >&2

if [ -z "$sanitizer" ]; then
    if have_nightly; then
        sanitizer=address
    else
        sanitizer=none
        echo "fuzz: no nightly toolchain: --sanitizer none (rustup toolchain install nightly for ASan)" >&2
    fi
fi
toolchain=()
if [ "$sanitizer" = address ]; then
    have_nightly || { echo "fuzz: --sanitizer address needs the nightly toolchain (rustup toolchain install nightly)" >&2; exit 1; }
    toolchain=(+nightly)
fi

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "fuzz: installing cargo-fuzz (crates.io)" >&2
    cargo install cargo-fuzz --version '^0.13' --locked >&2
fi

case $sanitizer in
    address) fuzz_dir=$root/target/fuzz-asan ;;
    none) fuzz_dir=$root/target/fuzz ;;
esac
corpus_root=$root/target/fuzz-corpus
artifact_root=$root/target/fuzz-artifacts
log_root=$root/target/fuzz-logs
bin_dir=$fuzz_dir/$(rustc -vV | sed -n 's/^host: //p')/release

# ------------------------------------------------------------------ build

for crate in kem-core provider; do
    wanted=()
    for t in "${targets[@]}"; do [ "$(crate_of "$t")" = "$crate" ] && wanted+=("$t"); done
    for t in "${wanted[@]}"; do
        echo "fuzz: building $t ($crate/fuzz, --sanitizer $sanitizer${toolchain:+, ${toolchain[*]}})" >&2
        (cd "$crate" && cargo "${toolchain[@]}" fuzz build --sanitizer "$sanitizer" --target-dir "$fuzz_dir" "$t" >&2)
    done
done

# ------------------------------------------------------------------ seeds

vectors=${MLKEM_VECTORS_DIR:-$root/../shared/vectors}

# Writes the bytes of the hex arguments, concatenated, to stdout.
hex() {
    local all
    all=$(printf '%s' "$@")
    # shellcheck disable=SC2001,SC2059 # every byte pair becomes a \xHH escape
    printf "$(sed 's/../\\x&/g' <<<"$all")"
}
u8() { printf '%02x' "$1"; }
u16le() { printf '%02x%02x' $(($1 & 255)) $(($1 >> 8)); }
set_index() {
    case $1 in ML-KEM-512) echo 0 ;; ML-KEM-768) echo 1 ;; ML-KEM-1024) echo 2 ;; esac
}
have_vectors() {
    if ! command -v jq >/dev/null; then
        echo "fuzz: jq not installed; no vector seeds for $1" >&2
        return 1
    fi
    if [ ! -d "$vectors" ]; then
        echo "fuzz: no vectors at $vectors; no vector seeds for $1" >&2
        return 1
    fi
}

# parse_and_decapsulate: selector (set + 3 * mode), then ek ‖ m, dk ‖ ct ‖ m
# or seed ‖ ct ‖ m.
seed_parse_and_decapsulate() {
    local dir=$1 n=0 set ps mode a b c
    have_vectors parse_and_decapsulate || return 1
    while IFS=$'\t' read -r mode ps a b c; do
        set=$(set_index "$ps")
        hex "$(u8 $((set + 3 * mode)))" "$a" "$b" "$c" >"$dir/vector-$n"
        n=$((n + 1))
    done < <(
        for set in 512 768 1024; do
            # Wycheproof: encapsulation keys, the invalid (unreduced or
            # wrong-length) ones and a few valid.
            jq -r '[.testGroups[].tests[]] | (map(select(.result == "invalid")) + map(select(.result == "valid"))[:5])[]
                   | [0, "ML-KEM-'$set'", .ek, .m, ""] | @tsv' "$vectors/wycheproof/mlkem_${set}_encaps_test.json"
            # Wycheproof: expanded decapsulation keys, valid and invalid.
            jq -r '.testGroups[] | .parameterSet as $p | .tests[] | [1, $p, .dk, .c, ""] | @tsv' \
                "$vectors/wycheproof/mlkem_${set}_semi_expanded_decaps_test.json"
            # Wycheproof: seeds with (also malformed) ciphertexts.
            jq -r '[.testGroups[] | .parameterSet as $p | .tests[] | [2, $p, .seed, .c, ""]][:20][] | @tsv' \
                "$vectors/wycheproof/mlkem_${set}_test.json"
        done
        # ACVP: dk with valid and modified ciphertexts; encapsulations.
        jq -r '.testGroups[] | select(.function == "decapsulation") | .parameterSet as $p | .dk as $dk
               | .tests[] | [1, $p, $dk, .c, ""] | @tsv' \
            "$vectors/acvp/ML-KEM-encapDecap-FIPS203/internalProjection.json"
        jq -r '.testGroups[] | select(.function == "encapsulation") | .parameterSet as $p
               | .tests[:3][] | [1, $p, .dk, .c, .m], [0, $p, .ek, .m, ""] | @tsv' \
            "$vectors/acvp/ML-KEM-encapDecap-FIPS203/internalProjection.json"
        jq -r '.testGroups[] | .parameterSet as $p | .tests[:3][] | [2, $p, .d + .z, "", ""] | @tsv' \
            "$vectors/acvp/ML-KEM-keyGen-FIPS203/internalProjection.json"
    )
    echo "fuzz: parse_and_decapsulate: $n seeds from the vectors" >&2
}

# decode_der_pem: selector 0 (all formats), then a DER or PEM document, for
# keys our provider writes in every private key format.
seed_decode_der_pem() {
    local dir=$1 provider_dir work alg fmt form cnf
    if ! command -v openssl >/dev/null; then
        echo "fuzz: no openssl binary; no key seeds for decode_der_pem" >&2
        return 0
    fi
    provider_dir=$(bash scripts/build-provider.sh | tail -1)
    work=$(mktemp -d)
    for alg in ML-KEM-512 ML-KEM-768 ML-KEM-1024; do
        OPENSSL_CONF=/dev/null openssl genpkey -provider-path "$provider_dir" -provider mlkem \
            -provider default -algorithm "$alg" -out "$work/$alg.pem"
        for fmt in seed-priv seed-only priv-only oqskeypair bare-seed bare-priv; do
            cnf=$work/$fmt.cnf
            printf '%s\n' "openssl_conf = init" "[init]" "providers = prov" "[prov]" \
                "default = dflt" "mlkem = mlkem" "[dflt]" "activate = 1" "[mlkem]" \
                "activate = 1" "ml-kem.output_formats = $fmt" >"$cnf"
            for form in DER PEM; do
                OPENSSL_CONF=$cnf OPENSSL_MODULES=$provider_dir openssl pkey -in "$work/$alg.pem" \
                    -outform "$form" -out "$work/out"
                { hex 00; cat "$work/out"; } >"$dir/$alg-$fmt.${form,,}"
            done
        done
        for form in DER PEM; do
            OPENSSL_CONF=/dev/null openssl pkey -provider-path "$provider_dir" -provider mlkem \
                -provider default -in "$work/$alg.pem" -pubout -outform "$form" -out "$work/out"
            { hex 00; cat "$work/out"; } >"$dir/$alg-public.${form,,}"
        done
    done
    rm -rf "$work"
    echo "fuzz: decode_der_pem: $(find "$dir" -maxdepth 1 -name 'ML-KEM-*' | wc -l) seed keys from openssl genpkey" >&2
}

# ossl_params: see the input layout in provider/fuzz/fuzz_targets/
# ossl_params.rs. Name and type numbers are indices into its NAMES (0 seed,
# 1 priv, 2 pub, 3 encoded-pub-key, 4 bits, 7 max-size, 8 properties,
# 9 ikme) and TYPES (0 integer, 1 unsigned, 3 UTF-8 string, 4 octet string).
param() { # name type flags hex-data
    printf '%s' "$(u8 "$1")$(u8 "$2")$(u8 "$3")$(u16le $((${#4} / 2)))$4"
}
octets() { param "$1" 4 0 "$2"; }
list() { # param...
    printf '%s' "$(u8 $#)"
    printf '%s' "$@"
}
zeros() { printf '00%.0s' $(seq "$1"); }
ascii_hex() { printf '%s' "$1" | od -An -tx1 | tr -d ' \n'; }
# One input: algorithm source selection create set get enc_init enc_set
# dec_init [ciphertext], with both buffer slacks 0.
ossl_case() {
    hex "$(u8 "$1")" "$(u8 "$2")" "$(u8 "$3")" "$4" "$5" "$6" "$7" "$8" 00 00 "$9" "${10:-}"
}
seed_ossl_params() {
    local dir=$1 n=0 none get get_seed alg ps seed ek dk m c ikme props
    none=$(list)
    # pub and priv into buffers large enough for every algorithm, bits (a
    # C int), max-size (a size_t).
    get=$(list "$(octets 2 "$(zeros 1600)")" "$(octets 1 "$(zeros 3200)")" \
        "$(param 4 0 0 "$(zeros 4)")" "$(param 7 1 0 "$(zeros 8)")")
    # seed, and encoded-pub-key as a size query (NULL data).
    get_seed=$(list "$(octets 0 "$(zeros 64)")" "$(param 3 4 1 "$(zeros 16)")")
    # Each algorithm (pure and hybrid): generated, then used by the KEM;
    # an empty key from paramgen.
    for alg in 0 1 2 3 4 5; do
        ossl_case "$alg" 1 0 "$none" "$none" "$get" "$none" "$none" "$none" >"$dir/keygen-$alg"
        ossl_case "$alg" 2 0 "$none" "$none" "$get_seed" "$none" "$none" "$none" >"$dir/paramgen-$alg"
    done
    have_vectors ossl_params || return 1
    while IFS=$'\t' read -r ps seed ek dk m c; do
        alg=$(set_index "$ps")
        ikme=$(list "$(octets 9 "$m")")
        props=$(param 8 3 0 "$(ascii_hex provider=mlkem)")
        # Import (selection: 0 key pair, 1 public key) of a seed, seed and
        # pub, priv, priv and pub, pub alone.
        ossl_case "$alg" 0 0 "$(list "$(octets 0 "$seed")")" "$none" "$get" "$ikme" "$none" "$none" "$c" \
            >"$dir/import-$n-seed"
        ossl_case "$alg" 0 0 "$(list "$(octets 0 "$seed")" "$(octets 2 "$ek")")" "$none" "$get_seed" \
            "$none" "$ikme" "$none" "$c" >"$dir/import-$n-seed-pub"
        ossl_case "$alg" 0 0 "$(list "$(octets 1 "$dk")")" "$none" "$get" "$ikme" "$none" "$none" "$c" \
            >"$dir/import-$n-priv"
        ossl_case "$alg" 0 0 "$(list "$(octets 1 "$dk")" "$(octets 2 "$ek")")" "$none" "$get" "$none" \
            "$none" "$none" >"$dir/import-$n-priv-pub"
        ossl_case "$alg" 0 1 "$(list "$(octets 2 "$ek")")" "$none" "$get" "$ikme" "$none" "$none" \
            >"$dir/import-$n-pub"
        # Generation from a seed, with properties.
        ossl_case "$alg" 1 0 "$(list "$(octets 0 "$seed")" "$props")" "$none" "$get" "$none" "$ikme" \
            "$none" "$c" >"$dir/keygen-$n-seed"
        # An empty key given its public key by set_params.
        ossl_case "$alg" 2 0 "$none" "$(list "$(octets 3 "$ek")")" "$get" "$ikme" "$none" "$none" \
            >"$dir/paramgen-$n-pub"
        n=$((n + 1))
    done < <(
        # ACVP keyGen gives d, z, ek and dk of one key; encapDecap an m and
        # a c for another key of the same set (a mismatched c is fine).
        jq -r '.testGroups[] | .parameterSet as $p | .tests[:2][] | [$p, .d + .z, .ek, .dk] | @tsv' \
            "$vectors/acvp/ML-KEM-keyGen-FIPS203/internalProjection.json" |
            while IFS=$'\t' read -r ps seed ek dk; do
                jq -r --arg p "$ps" '[.testGroups[] | select(.parameterSet == $p and .function == "encapsulation")
                        | .tests[0]][0] | [.m, .c] | @tsv' \
                    "$vectors/acvp/ML-KEM-encapDecap-FIPS203/internalProjection.json" |
                    { IFS=$'\t' read -r m c; printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$ps" "$seed" "$ek" "$dk" "$m" "$c"; }
            done
    )
    echo "fuzz: ossl_params: $((7 * n + 12)) seeds (keys from the vectors)" >&2
}

seeded=()
for t in "${targets[@]}"; do
    dir=$corpus_root/$t
    mkdir -p "$dir" "$artifact_root/$t" "$log_root"
    if [ -e "$dir/.seeded" ]; then
        continue
    fi
    # Marked seeded only when every seed source was there, so that a run
    # without jq or the vectors tries again next time.
    if "seed_$t" "$dir"; then
        touch "$dir/.seeded"
    fi
    seeded+=("$t")
done

# ------------------------------------------------------------------ run

results=()
crashed=0
for t in "${targets[@]}"; do
    crate=$(crate_of "$t")
    corpus=$corpus_root/$t
    regressions=$root/$crate/fuzz/regressions/$t
    dirs=("$corpus")
    [ -d "$regressions" ] && dirs+=("$regressions")
    log=$log_root/$t.log
    echo "fuzz: running $t for ${seconds}s (corpus $(find "$corpus" -type f ! -name .seeded | wc -l) inputs; log $log)" >&2
    status=0
    "$bin_dir/$t" "${dirs[@]}" -max_total_time="$seconds" -print_final_stats=1 \
        -max_len="$(max_len_of "$t")" -timeout=30 -rss_limit_mb=2048 \
        -artifact_prefix="$artifact_root/$t/" >"$log" 2>&1 || status=$?
    final=$(grep -E '^#[0-9]+' "$log" | grep ' cov: ' | tail -1 || true)
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
    cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$final")
    ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$final")
    # libFuzzer's corpus (inputs it keeps, and their size) and the files in
    # the corpus directory (seeds included).
    corp=$(sed -n 's/.* corp: \([0-9]*\/[0-9]*[A-Za-z]*\).*/\1/p' <<<"$final")
    files=$(find "$corpus" -type f ! -name .seeded | wc -l)
    artifacts=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log")
    crashes=$(grep -c . <<<"$artifacts" || true)
    if ((status != 0)) && ((crashes == 0)); then
        # A failure without an input (the harness could not start, say).
        crashes=1
        artifacts="(no input written; see $log)"
    fi
    if ((crashes)); then
        crashed=1
        grep -E -A1 "panicked at" "$log" | head -4 >&2 || true
        grep -E "ERROR: (libFuzzer|AddressSanitizer|LeakSanitizer)|SUMMARY: (libFuzzer|AddressSanitizer)" "$log" | head -4 >&2 || true
        while read -r a; do echo "fuzz: $t: CRASH: $a" >&2; done <<<"$artifacts"
    fi
    results+=("$(printf '%-22s %11s %7s %6s %6s %12s %6s %7s' "$t" "${execs:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" "$files" "$crashes")")
done

printf '%-22s %11s %7s %6s %6s %12s %6s %7s\n' target executions "exec/s" cov ft corpus files crashes
printf '%s\n' "${results[@]}"
if ((crashed)); then
    echo "fuzz: FAILED: crash inputs are listed above (replay: $bin_dir/<target> <input>)" >&2
    exit 1
fi
echo "fuzz: ${#targets[@]} target(s), ${seconds}s each, --sanitizer $sanitizer, no crashes"
