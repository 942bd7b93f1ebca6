#!/usr/bin/env bash
# TLS 1.3 interoperability with the Open Quantum Safe project's oqsprovider:
# for each of the six groups (X25519MLKEM768, SecP256r1MLKEM768,
# SecP384r1MLKEM1024, MLKEM512, MLKEM768, MLKEM1024) and both directions, an
# `openssl s_server` with one provider and an `openssl s_client` with the
# other, on 127.0.0.1, each process with only its provider and the default
# one loaded, each offering only that group in its provider's spelling
# (oqsprovider names the pure groups mlkem512, mlkem768, mlkem1024).
#
#   scripts/tls-interop-oqs.sh --oqsprovider DIR [--provider-dir DIR]
#                              [--openssl BIN|3.4] [--logs DIR]
#
#   --oqsprovider DIR   the directory holding an oqsprovider.so you built
#                       (this script builds nothing of it); without it the
#                       script says why it skips and exits 0
#   --provider-dir DIR  the directory holding our mlkem.so (default: what
#                       scripts/build-provider.sh builds and prints)
#   --openssl BIN|3.4   the openssl binary both sides run (default: the
#                       system's, OpenSSL 3.0); a series such as 3.4 means
#                       the install scripts/build-openssl.sh left in its cache
#                       (${MLKEM_OPENSSL_CACHE:-~/.cache/mlkem-provider/openssl}),
#                       which must already be there: it is not built here
#   --logs DIR          keep the server and client logs of every row there
#
# A row passes when the client exits 0 with a TLS 1.3 session, verified the
# server's certificate, the server received the line the client sent (so both
# sides derived the same keys), and the ServerHello's key_share, as printed in
# hex by `-msg` on both sides (the server's sent one, the client's received
# one), carries the group's code point, with no HelloRetryRequest. The code
# point is read from the bytes because OpenSSL 3.0 prints no name for a
# provider's group. Prints the 12-row table (group, server, client, result)
# and exits non-zero on any failure.
#
# Each process gets OPENSSL_CONF set to a file in a temporary directory that
# activates no provider, and names its providers on the command line
# (-provider-path DIR -provider mlkem|oqsprovider -provider default); a
# check with `openssl list -providers` confirms that exactly those two load.
# Servers listen on 127.0.0.1 ports below 32768 with -naccept 1, their
# standard input held open through a FIFO, and are killed at the end; every
# wait runs under `timeout`.
set -euo pipefail
start_dir=$PWD
cd "$(dirname "$0")/.."

prog=${0##*/}
usage() { sed -n '2,40p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "$prog: error: $*" >&2; exit 2; }
# Relative paths on the command line are taken from where the script was run.
abs() { case $1 in /*) echo "$1" ;; *) echo "$start_dir/$1" ;; esac; }

oqs_dir=""
our_dir=""
openssl_arg=""
logs=""
while (($#)); do
    case $1 in
        -h | --help) usage; exit 0 ;;
        --oqsprovider) (($# >= 2)) || die "$1 needs a directory"; oqs_dir=$(abs "$2"); shift 2 ;;
        --provider-dir) (($# >= 2)) || die "$1 needs a directory"; our_dir=$(abs "$2"); shift 2 ;;
        --openssl) (($# >= 2)) || die "$1 needs a binary or a series"; openssl_arg=$2; shift 2 ;;
        --logs) (($# >= 2)) || die "$1 needs a directory"; logs=$(abs "$2"); shift 2 ;;
        *) usage >&2; exit 2 ;;
    esac
done

if [ -z "$oqs_dir" ]; then
    echo "$prog: skipped: no --oqsprovider DIR given. This check needs an" \
        "oqsprovider.so built by you (github.com/open-quantum-safe/oqs-provider" \
        "with liboqs, against this OpenSSL); it builds none itself."
    exit 0
fi
# A path to the module itself is taken for its directory.
if [ -f "$oqs_dir" ] && [ "${oqs_dir##*/}" = oqsprovider.so ]; then
    oqs_dir=$(dirname "$oqs_dir")
fi
[ -f "$oqs_dir/oqsprovider.so" ] || die "no oqsprovider.so in $oqs_dir"
oqs_dir=$(cd "$oqs_dir" && pwd)

if [ -z "$our_dir" ]; then
    our_dir=$(bash scripts/build-provider.sh | tail -1)
fi
[ -f "$our_dir/mlkem.so" ] || die "no mlkem.so in $our_dir (scripts/build-provider.sh builds it)"
our_dir=$(cd "$our_dir" && pwd)

# ------------------------------------------------------------ the openssl
libdir=""
case $openssl_arg in
    "") openssl_bin=$(command -v openssl) || die "no openssl in PATH" ;;
    [0-9].[0-9]*)
        cache=${MLKEM_OPENSSL_CACHE:-$HOME/.cache/mlkem-provider/openssl}
        openssl_bin=""
        for prefix in "$cache/openssl-$openssl_arg".*; do
            if [ -x "$prefix/bin/openssl" ] &&
                LD_LIBRARY_PATH=$prefix/lib "$prefix/bin/openssl" version >/dev/null 2>&1; then
                openssl_bin=$prefix/bin/openssl
            fi
        done
        [ -n "$openssl_bin" ] ||
            die "no OpenSSL $openssl_arg in $cache (scripts/build-openssl.sh $openssl_arg builds it)"
        ;;
    */*) openssl_bin=$(abs "$openssl_arg") ;;
    *) openssl_bin=$(command -v "$openssl_arg") || die "no $openssl_arg in PATH" ;;
esac
[ -x "$openssl_bin" ] || die "$openssl_bin is not executable"
case $openssl_bin in
    /usr/bin/* | /bin/*) ;;
    *) [ -d "$(dirname "$openssl_bin")/../lib" ] && libdir=$(cd "$(dirname "$openssl_bin")/../lib" && pwd) ;;
esac

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tls-interop-oqs.XXXXXX")
server_pid=""
server_fd=""
cleanup() {
    if [ -n "$server_pid" ]; then
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    if [ -n "$server_fd" ]; then exec {server_fd}>&-; fi
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# No provider is activated by this file; `req` gets what it needs.
cat >"$tmp/openssl.cnf" <<'EOF'
# Written by tls-interop-oqs.sh: activates no provider (each command names its
# own on the command line).
[req]
distinguished_name = req_distinguished_name
x509_extensions = v3_ca
[req_distinguished_name]
[v3_ca]
subjectKeyIdentifier = hash
basicConstraints = critical, CA:true
EOF

# The openssl command with only our configuration file in effect.
ossl=(env -u OPENSSL_MODULES -u OPENSSL_ENGINES)
if [ -n "$libdir" ]; then
    ossl+=(LD_LIBRARY_PATH="$libdir")
else
    ossl+=(-u LD_LIBRARY_PATH)
fi
ossl+=(OPENSSL_CONF="$tmp/openssl.cnf" "$openssl_bin")

version=$("${ossl[@]}" version)
echo "$prog: $version ($openssl_bin)"

# Provider flags for a side: ours or oqs.
declare -A FLAGS=(
    [ours]="-provider-path $our_dir -provider mlkem -provider default"
    [oqs]="-provider-path $oqs_dir -provider oqsprovider -provider default"
)
declare -A MODULE=([ours]=mlkem [oqs]=oqsprovider)
# The directories come from the caller; word splitting of FLAGS needs them
# free of blanks.
case "$our_dir$oqs_dir" in *[[:space:]]*) die "provider directories must not contain blanks" ;; esac

for side in ours oqs; do
    # shellcheck disable=SC2086
    "${ossl[@]}" list -providers ${FLAGS[$side]} >"$tmp/providers.$side" 2>&1 ||
        die "${MODULE[$side]} does not load: $(tail -3 "$tmp/providers.$side")"
    loaded=$(grep -E '^  [^ ]' "$tmp/providers.$side" | tr -d ' ' | sort | tr '\n' ' ')
    expected=$(printf '%s\n' default "${MODULE[$side]}" | sort | tr '\n' ' ')
    [ "$loaded" = "$expected" ] ||
        die "${MODULE[$side]}'s side loads [${loaded% }], not [${expected% }]"
    echo "$prog: ${MODULE[$side]} $(awk -v m="  ${MODULE[$side]}" '
        $0 == m { on = 1; next } /^  [^ ]/ { on = 0 }
        on && $1 == "version:" { print $2 }' "$tmp/providers.$side") from" \
        "$([ "$side" = ours ] && echo "$our_dir" || echo "$oqs_dir")"
done

"${ossl[@]}" req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -keyout "$tmp/key.pem" -out "$tmp/cert.pem" -subj /CN=localhost -days 2 \
    >"$tmp/req.log" 2>&1 || die "certificate: $(tail -3 "$tmp/req.log")"

# group (ours) | group (oqsprovider) | code point
TLS_GROUPS=(
    "X25519MLKEM768 X25519MLKEM768 11ec"
    "SecP256r1MLKEM768 SecP256r1MLKEM768 11eb"
    "SecP384r1MLKEM1024 SecP384r1MLKEM1024 11ed"
    "MLKEM512 mlkem512 0200"
    "MLKEM768 mlkem768 0201"
    "MLKEM1024 mlkem1024 0202"
)

# ServerHellos in a -msg log, one line each: "hrr|sh <code point>", for the
# direction given (">>>" sent, "<<<" received). The hex dump is the whole
# handshake message: type, length, version, random, session id, cipher,
# compression, extensions; key_share (51) starts with the group.
server_hellos() {
    awk -v dir="$1" '
        function flush(   n, i, p, end, t, l, g, rnd, hrr) {
            if (!collecting) return
            collecting = 0
            n = split(hex, b, " ")
            for (i = 1; i <= n; i++) v[i - 1] = h2d(b[i])
            if (n < 39 || v[0] != 2) { print "bad"; return }
            rnd = ""
            for (i = 6; i < 38; i++) rnd = rnd b[i + 1]
            hrr = (tolower(rnd) == "cf21ad74e59a6111be1d8c021e65b891c2a211167abb8c5e079e09e2c8a8339c")
            p = 38; p += 1 + v[p]; p += 3
            end = p + 2 + v[p] * 256 + v[p + 1]; p += 2
            g = "none"
            while (p + 4 <= end && p + 4 <= n) {
                t = v[p] * 256 + v[p + 1]; l = v[p + 2] * 256 + v[p + 3]
                if (t == 51 && l >= 2) g = sprintf("%04x", v[p + 4] * 256 + v[p + 5])
                p += 4 + l
            }
            print (hrr ? "hrr " : "sh ") g
        }
        function h2d(x,   d) {
            x = tolower(x)
            return (index("0123456789abcdef", substr(x, 1, 1)) - 1) * 16 \
                + index("0123456789abcdef", substr(x, 2, 1)) - 1
        }
        collecting && /^    [0-9a-f][0-9a-f]( [0-9a-f][0-9a-f])*[ ]*$/ { hex = hex " " $0; next }
        { flush() }
        index($0, dir " ") == 1 && /Handshake .*, ServerHello$/ { collecting = 1; hex = "" }
        END { flush() }
    ' "$2"
}

# Starts s_server for the side, group and certificate on a free port below
# 32768; sets server_pid, server_fd, port.  Fails when no port would do.
start_server() {
    local side=$1 group=$2 log=$3 try
    port=$((20000 + RANDOM % 12000))
    for try in 1 2 3 4 5 6 7 8; do
        mkfifo "$tmp/stdin.$port"
        exec {server_fd}<>"$tmp/stdin.$port"
        # shellcheck disable=SC2086
        timeout 120 "${ossl[@]}" s_server -accept "127.0.0.1:$port" -naccept 1 \
            -tls1_3 -groups "$group" -cert "$tmp/cert.pem" -key "$tmp/key.pem" \
            -msg ${FLAGS[$side]} <"$tmp/stdin.$port" >"$log" 2>&1 &
        server_pid=$!
        # shellcheck disable=SC2016
        if timeout 15 bash -c 'until grep -q "^ACCEPT" "$1" || ! kill -0 "$2" 2>/dev/null; do sleep 0.1; done' \
            _ "$log" "$server_pid" && grep -q "^ACCEPT" "$log"; then
            return 0
        fi
        stop_server
        grep -q "Address already in use" "$log" || return 1
        echo "$prog: port $port is taken (try $try), trying another" >&2
        port=$((20000 + RANDOM % 12000))
    done
    return 1
}

stop_server() {
    if [ -n "$server_pid" ]; then
        # -naccept 1: the server exits after the one connection; wait for
        # that, then kill it if it did not.
        timeout 10 tail --pid="$server_pid" -f /dev/null 2>/dev/null || true
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
        server_pid=""
    fi
    if [ -n "$server_fd" ]; then
        exec {server_fd}>&-
        server_fd=""
    fi
    rm -f "$tmp"/stdin.*
}

# Runs one row; sets result and returns non-zero on failure.
run_row() {
    local cp=$1 server=$2 sgroup=$3 client=$4 cgroup=$5 base=$6
    local slog="$tmp/$base.server.log" clog="$tmp/$base.client.log"
    local token="mlkem-interop-$base-$RANDOM$RANDOM" rc=0 seen_c seen_s
    if ! start_server "$server" "$sgroup" "$slog"; then
        result="FAIL: s_server did not start ($(grep -m1 -i error "$slog" | cut -c1-80))"
        return 1
    fi
    # shellcheck disable=SC2086
    printf '%s\n' "$token" | timeout 30 "${ossl[@]}" s_client \
        -connect "127.0.0.1:$port" -servername localhost -tls1_3 \
        -groups "$cgroup" -CAfile "$tmp/cert.pem" -verify_return_error -msg \
        ${FLAGS[$client]} >"$clog" 2>&1 || rc=$?
    stop_server
    if [ -n "$logs" ]; then
        mkdir -p "$logs"
        cp "$slog" "$clog" "$logs/"
    fi
    seen_c=$(server_hellos "<<<" "$clog" | tr '\n' ' ')
    seen_s=$(server_hellos ">>>" "$slog" | tr '\n' ' ')
    if [ "$rc" != 0 ]; then
        result="FAIL: s_client exit $rc ($(grep -m1 -iE 'error|fail' "$clog" | cut -c1-80))"
    elif ! grep -q "^New, TLSv1.3, Cipher is" "$clog"; then
        result="FAIL: no TLS 1.3 session on the client"
    elif ! grep -q "Verify return code: 0 (ok)" "$clog"; then
        result="FAIL: certificate not verified"
    elif ! grep -qxF "$token" "$slog"; then
        result="FAIL: the server did not receive the client's data"
    elif [ "$seen_c" != "sh $cp " ] || [ "$seen_s" != "sh $cp " ]; then
        result="FAIL: ServerHello key_share: client saw [${seen_c% }], server sent [${seen_s% }], want 0x$cp"
    else
        result="ok (0x$cp, no HRR, data exchanged)"
        return 0
    fi
    return 1
}

row_fmt="| %-18s | %-11s | %-11s | %s\n"
# shellcheck disable=SC2059
{
    printf "$row_fmt" group server client result
    printf "$row_fmt" "------------------" "-----------" "-----------" "------"
}
failures=0
n=0
for entry in "${TLS_GROUPS[@]}"; do
    read -r ours oqs cp <<<"$entry"
    for server in ours oqs; do
        n=$((n + 1))
        if [ "$server" = ours ]; then
            client=oqs sgroup=$ours cgroup=$oqs
        else
            client=ours sgroup=$oqs cgroup=$ours
        fi
        run_row "$cp" "$server" "$sgroup" "$client" "$cgroup" \
            "$(printf '%02d' "$n")-$ours-${MODULE[$server]}-server" || failures=$((failures + 1))
        # shellcheck disable=SC2059
        printf "$row_fmt" "$ours" "${MODULE[$server]}" "${MODULE[$client]}" "$result"
    done
done

if ((failures)); then
    echo "$prog: $failures of $n rows failed${logs:+ (logs in $logs)}" >&2
    exit 1
fi
echo "$prog: all $n rows passed"
