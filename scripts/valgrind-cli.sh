#!/usr/bin/env bash
# Runs the provider's CLI flows under valgrind memcheck: key generation and
# conversion, encrypted PKCS#8, encapsulation/decapsulation, bad input, and a
# TLS 1.3 handshake over MLKEM768. Fails on any invalid read/write or use of
# uninitialised memory, and on definitely-lost blocks allocated from the
# provider's frames (OpenSSL's own apps are not our business).
#
#   scripts/valgrind-cli.sh [MODULE_DIR]
#
# MODULE_DIR holds mlkem.so (default: build it with scripts/build-provider.sh).
# OpenSSL 3.5 (from scripts/build-openssl.sh) is used when built, for the
# pkeyutl -encap/-decap flows that 3.0 lacks.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v valgrind >/dev/null || { echo "valgrind-cli: valgrind is not installed" >&2; exit 1; }
module_dir=${1:-$(scripts/build-provider.sh | tail -1)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

source scripts/common.sh
# The 3.5 of scripts/build-openssl.sh's pin, when built (under CI, where
# scripts/test.sh has built it, its absence fails).
openssl35=$(openssl_prefix 3.5)/bin/openssl
if [ ! -x "$openssl35" ]; then
    in_ci && { echo "valgrind-cli: FAIL: no OpenSSL 3.5 at $openssl35" >&2; exit 1; }
    echo "valgrind-cli: skipped: the pkeyutl -encap/-decap flows (no OpenSSL 3.5 at $openssl35)" >&2
    openssl35=""
fi

failures=0
runs=0
# vg NAME EXPECT OPENSSL ARGS...: EXPECT is "ok" or "fail" (the exit status
# the command itself should have).
vg() {
    local name=$1 expect=$2 bin=$3
    shift 3
    local log="$work/$name.log"
    runs=$((runs + 1))
    local status=0
    OPENSSL_CONF=/dev/null valgrind --quiet --leak-check=full --show-leak-kinds=definite \
        --keep-debuginfo=yes --num-callers=40 --log-file="$log" \
        "$bin" "$@" >"$work/$name.out" 2>&1 || status=$?
    if { [ "$expect" = ok ] && [ $status -ne 0 ]; } || { [ "$expect" = fail ] && [ $status -eq 0 ]; }; then
        echo "FAIL $name: exit status $status, expected $expect"; sed 's/^/    /' "$work/$name.out" | head -5
        failures=$((failures + 1)); return
    fi
    if [ $status -gt 128 ]; then
        echo "FAIL $name: killed by signal $((status - 128))"; failures=$((failures + 1)); return
    fi
    if grep -qE "Invalid (read|write|free)|uninitialised|Mismatched free|Process terminating" "$log"; then
        echo "FAIL $name: memory error"; sed 's/^/    /' "$log" | head -40
        failures=$((failures + 1)); return
    fi
    # Definitely-lost records whose stack goes through the provider.
    if awk '/definitely lost in loss record/{rec=1; buf=""} rec{buf=buf"\n"$0} /^==[0-9]+== $/{if(rec && buf ~ /mlkem|kem_core/){print buf; found=1} rec=0} END{exit !found}' "$log"; then
        echo "FAIL $name: leak from the provider"; failures=$((failures + 1)); return
    fi
    echo "ok   $name"
}

P=(-provider-path "$module_dir" -provider mlkem -provider default -propquery '?provider=mlkem')
cd "$work"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout server.key \
    -out server.crt -subj /CN=localhost -days 1 2>/dev/null

for set in ML-KEM-512 ML-KEM-768 ML-KEM-1024; do
    vg "genpkey-$set" ok openssl genpkey "${P[@]}" -algorithm "$set" -out "$set.pem"
done
vg pkey-text ok openssl pkey "${P[@]}" -in ML-KEM-768.pem -text -noout
vg pkey-der ok openssl pkey "${P[@]}" -in ML-KEM-768.pem -outform DER -out k.der
vg pkey-pubout ok openssl pkey "${P[@]}" -in ML-KEM-768.pem -pubout -out pub.pem
vg pkey-encrypt ok openssl pkey "${P[@]}" -in ML-KEM-768.pem -aes256 -passout pass:pw -out enc.pem
vg pkey-decrypt ok openssl pkey "${P[@]}" -in enc.pem -passin pass:pw -noout
head -c 100 k.der > cut.der
vg bad-der fail openssl pkey "${P[@]}" -inform DER -in cut.der -noout
vg pub-as-private fail openssl pkey "${P[@]}" -in pub.pem -noout

if [ -n "$openssl35" ]; then
    vg encap ok "$openssl35" pkeyutl "${P[@]}" -encap -pubin -inkey pub.pem -out ct -secret s1
    vg decap ok "$openssl35" pkeyutl "${P[@]}" -decap -inkey ML-KEM-768.pem -in ct -secret s2
    cmp -s s1 s2 || { echo "FAIL encap/decap secrets differ"; failures=$((failures + 1)); }
    head -c 1000 ct > short.ct
    vg decap-short fail "$openssl35" pkeyutl "${P[@]}" -decap -inkey ML-KEM-768.pem -in short.ct -secret s3
else
    echo "skip encap/decap: OpenSSL 3.5 not built"
fi

# TLS 1.3 handshake, both ends under valgrind, MLKEM768 only.
port=$((20000 + RANDOM % 12000)) # below the ephemeral range (32768-60999)
OPENSSL_CONF=/dev/null valgrind --quiet --leak-check=full --show-leak-kinds=definite \
    --keep-debuginfo=yes --log-file="$work/s_server.log" \
    openssl s_server "${P[@]}" -cert server.crt -key server.key -accept "$port" -tls1_3 \
    -groups MLKEM768 -naccept 1 -www >"$work/s_server.out" 2>&1 &
server=$!
for _ in $(seq 100); do grep -q ACCEPT "$work/s_server.out" 2>/dev/null && break; sleep 0.1; done
printf 'GET / HTTP/1.0\r\n\r\n' >request
vg s_client ok openssl s_client "${P[@]}" -connect "127.0.0.1:$port" -tls1_3 -groups MLKEM768 \
    -ign_eof <request
wait $server || true
runs=$((runs + 1))
if grep -qE "Invalid (read|write|free)|uninitialised" "$work/s_server.log"; then
    echo "FAIL s_server: memory error"; failures=$((failures + 1))
else
    echo "ok   s_server"
fi

echo "valgrind-cli: $runs runs, $failures failures"
[ $failures -eq 0 ]
