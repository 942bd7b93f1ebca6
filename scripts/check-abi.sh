#!/usr/bin/env bash
# Checks that packaged objects load on every distribution we support: no
# glibc symbol version above the oldest glibc (2.34: RHEL 9, Amazon Linux
# 2023), and every OpenSSL symbol they import exported by the oldest
# libcrypto.so.3 / libssl.so.3 (3.0.2: Ubuntu 22.04).
#
#   scripts/check-abi.sh --openssl-lib DIR OBJECT...
#   scripts/check-abi.sh --openssl-lib DIR --self-test NEWER_LIB_DIR
#       shows the check failing on two programs built here: one calling
#       arc4random (glibc 2.36), one OSSL_ERR_STATE_new (OpenSSL 3.2, from
#       the libcrypto in NEWER_LIB_DIR)
#
# DIR holds the reference libcrypto.so.3 and libssl.so.3 (the 3.0.2 build
# of scripts/build-openssl.sh: <prefix>/lib). Reads the dynamic symbol
# tables (readelf --dyn-syms), of any architecture. A symbol the object
# looks up at run time (dlsym) with a fallback is not in that table, and so
# not checked here: scripts/openssl-matrix.sh loads the objects on each
# release. Exit status 0 when every object passes.
set -euo pipefail

readonly GLIBC_MAX=2.34

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit "${1:-2}"; }
log() { echo "check-abi: $*"; }

lib_dir="" objects=() self_test=""
while (($#)); do
    case $1 in
        --openssl-lib) (($# >= 2)) || usage; lib_dir=$2; shift 2 ;;
        --self-test) (($# >= 2)) || usage; self_test=$2; shift 2 ;;
        -h | --help) usage 0 ;;
        -*) usage ;;
        *) objects+=("$1"); shift ;;
    esac
done
if [ -n "$self_test" ]; then
    [ -n "$lib_dir" ] && ((${#objects[@]} == 0)) || usage
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    printf '#include <stdlib.h>\nint main(void) { return (int)(arc4random() & 1); }\n' >"$tmp/glibc.c"
    printf 'void *OSSL_ERR_STATE_new(void);\nint main(void) { return OSSL_ERR_STATE_new() != 0; }\n' >"$tmp/ossl.c"
    cc -o "$tmp/needs-glibc-2.36" "$tmp/glibc.c" || { log "FAIL: cannot build the glibc probe"; exit 2; }
    cc -o "$tmp/needs-openssl-3.2" "$tmp/ossl.c" -L"$self_test" -lcrypto ||
        { log "FAIL: cannot build the OpenSSL probe against $self_test"; exit 2; }
    out=$("$0" --openssl-lib "$lib_dir" "$tmp/needs-glibc-2.36" "$tmp/needs-openssl-3.2") && status=0 || status=$?
    printf '%s\n' "$out"
    if ((status == 1)) && grep -q 'FAIL: needs-glibc-2.36 needs glibc 2.36' <<<"$out" &&
        grep -q 'FAIL: needs-openssl-3.2 imports OpenSSL symbols that' <<<"$out" &&
        grep -q 'OSSL_ERR_STATE_new@OPENSSL_3.2.0' <<<"$out"; then
        log "self-test ok: both probes fail the check (above)"
        exit 0
    fi
    log "self-test FAIL: the probes were not both reported"
    exit 1
fi
[ -n "$lib_dir" ] && ((${#objects[@]})) || usage
for lib in libcrypto.so.3 libssl.so.3; do
    [ -f "$lib_dir/$lib" ] || { log "FAIL: no $lib_dir/$lib"; exit 2; }
done

# The symbols (NAME@VERSION) an object imports, or a library exports.
imported() {
    readelf --dyn-syms --wide "$1" >/dev/null || { log "FAIL: readelf cannot read $1"; return 1; }
    readelf --dyn-syms --wide "$1" | awk '$7 == "UND" && $8 ~ /@/ { sub(/ \(.*/, "", $8); print $8 }' |
        sed 's/@@*/@/' | sort -u
}
exported() {
    readelf --dyn-syms --wide "$1" | awk '$7 != "UND" && $8 ~ /@/ { print $8 }' | sed 's/@@*/@/' | sort -u
}
reference=$(mktemp)
trap 'rm -f "$reference"' EXIT
{ exported "$lib_dir/libcrypto.so.3"; exported "$lib_dir/libssl.so.3"; } | sort -u >"$reference"
reference_version=$(strings "$lib_dir/libcrypto.so.3" |
    awk '/^OpenSSL [0-9]/ && !v { v = $1 " " $2 } END { print v ? v : "OpenSSL ?" }')

failures=0
for object in "${objects[@]}"; do
    [ -f "$object" ] || { log "FAIL: no $object"; failures=$((failures + 1)); continue; }
    before=$failures
    symbols=$(imported "$object") || { failures=$((failures + 1)); continue; }
    glibc_newest=$( (grep -o '@GLIBC_[0-9.]*$' <<<"$symbols" || true) | sed 's/@GLIBC_//' | sort -uV | tail -1)
    if [ -n "$glibc_newest" ] && [ "$(printf '%s\n' "$glibc_newest" "$GLIBC_MAX" | sort -V | tail -1)" != "$GLIBC_MAX" ]; then
        log "FAIL: ${object##*/} needs glibc $glibc_newest (above $GLIBC_MAX):"
        grep "@GLIBC_$glibc_newest\$" <<<"$symbols" | sed 's/^/    /'
        failures=$((failures + 1))
    fi
    openssl_symbols=$(grep '@OPENSSL_' <<<"$symbols" || true)
    missing=$(comm -23 <(printf '%s\n' "$openssl_symbols" | sed '/^$/d') "$reference")
    if [ -n "$missing" ]; then
        log "FAIL: ${object##*/} imports OpenSSL symbols that $reference_version lacks:"
        sed 's/^/    /' <<<"$missing"
        failures=$((failures + 1))
    fi
    openssl_count=$(sed '/^$/d' <<<"$openssl_symbols" | wc -l)
    ((failures > before)) || log "ok: ${object##*/}: glibc ${glibc_newest:-none} (at most $GLIBC_MAX), $openssl_count OpenSSL symbols, all in $reference_version"
done
((failures == 0))
