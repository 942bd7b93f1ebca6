#!/usr/bin/env bash
# The whole tour in one command, on a fresh Debian/Ubuntu machine:
#
#   scripts/demo.sh [--quick] [OUT_DIR]
#
#  1. installs what is missing (scripts/setup.sh; librsvg2-bin for PNGs);
#  2. builds the provider, and OpenSSL 3.5 when the system's OpenSSL is
#     older than 3.2 (its `openssl speed` has no KEMs);
#  3. generates an ML-KEM-768 key with `openssl genpkey`, and its public key;
#  4. runs a TLS 1.3 handshake configured only through openssl.cnf.example
#     and checks that X25519MLKEM768 was negotiated;
#  5. compares `openssl speed` of the provider with OpenSSL's own ML-KEM
#     (and with oqsprovider when its module is in OpenSSL's modules
#     directory), side by side, and TLS 1.3 handshakes per second per group
#     (tls-bench: ours; beside oqsprovider when its module is there or in
#     $MLKEM_OQSPROVIDER_DIR);
#  6. writes the measurement report (test-tools `report`) and SVG/PNG
#     charts, and names the folder that holds everything.
#
# OUT_DIR defaults to target/demo/<UTC time>. --quick shortens every
# measurement (a smoke run, for CI).
set -euo pipefail
cd "$(dirname "$0")/.."

quick=0
out=""
while (($#)); do
    case $1 in
        --quick) quick=1; shift ;;
        -h | --help) sed -n '2,19p' "$0"; exit 0 ;;
        -*) echo "demo: unknown option $1" >&2; exit 2 ;;
        *) out=$1; shift ;;
    esac
done
out=${out:-target/demo/$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"
out=$(cd "$out" && pwd)
step() { printf '\n== %s\n' "$*" >&2; }

step "1/6 setup"
source scripts/setup.sh
# Only where no password is asked for: the demo's output is quiet.
if [ "$(id -u)" -eq 0 ] || sudo -n true 2>/dev/null; then
    tools_ensure demo install rsvg-convert 2>/dev/null
fi || echo "demo: librsvg2-bin not installed; charts stay SVG only" >&2

step "2/6 build the provider (and OpenSSL 3.5 if needed)"
module_dir=$(bash scripts/build-provider.sh | tail -1)
system_version=$(openssl version | awk '{print $2}')
# `openssl speed` measures provider KEMs from 3.2 on; OpenSSL's own ML-KEM,
# the comparison's baseline, needs 3.5.
if printf '%s\n3.2\n' "$system_version" | sort -V -C; then
    echo "demo: system OpenSSL $system_version is older than 3.2; building OpenSSL 3.5" >&2
    openssl_prefix=$(bash scripts/build-openssl.sh 3.5 | tail -1)
    speed_openssl=$openssl_prefix/bin/openssl
else
    speed_openssl=$(command -v openssl)
fi
echo "demo: provider in $module_dir; system OpenSSL $system_version; speed on $("$speed_openssl" version | cut -d' ' -f1-2)" >&2

step "3/6 genpkey ML-KEM-768 (system OpenSSL $system_version)"
provider=(-provider-path "$module_dir" -provider mlkem -provider default)
OPENSSL_CONF=/dev/null openssl genpkey "${provider[@]}" -algorithm ML-KEM-768 -out "$out/ml-kem-768.key.pem"
OPENSSL_CONF=/dev/null openssl pkey "${provider[@]}" -in "$out/ml-kem-768.key.pem" -pubout -out "$out/ml-kem-768.pub.pem"
OPENSSL_CONF=/dev/null openssl pkey "${provider[@]}" -in "$out/ml-kem-768.pub.pem" -pubin -text -noout |
    head -1 | tee "$out/ml-kem-768.txt" >&2

step "4/6 TLS 1.3 handshake through openssl.cnf.example only"
tls_dir=$(mktemp -d)
server_pid=""
cleanup() {
    [ -z "$server_pid" ] || kill "$server_pid" 2>/dev/null || true
    [ -z "${stdin_pid:-}" ] || kill "$stdin_pid" 2>/dev/null || true
    rm -rf "$tls_dir"
}
trap cleanup EXIT
OPENSSL_CONF=/dev/null openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -keyout "$tls_dir/server.key" -out "$tls_dir/server.crt" -subj /CN=localhost -days 1 2>/dev/null
with_example_cnf=(env OPENSSL_CONF="$PWD/openssl.cnf.example" OPENSSL_MODULES="$module_dir")
# The server listens on a free loopback port (port 0) and prints it in its
# ACCEPT line; its stdin is a FIFO held open by `sleep`, so it does not shut
# down at end of input.
mkfifo "$tls_dir/stdin"
sleep 120 >"$tls_dir/stdin" &
stdin_pid=$!
"${with_example_cnf[@]}" "$speed_openssl" s_server -accept 127.0.0.1:0 -naccept 1 -tls1_3 \
    -cert "$tls_dir/server.crt" -key "$tls_dir/server.key" <"$tls_dir/stdin" >"$tls_dir/server.log" 2>&1 &
server_pid=$!
port=""
for _ in $(seq 100); do
    port=$(sed -n 's/^ACCEPT 127\.0\.0\.1:\([0-9][0-9]*\)$/\1/p' "$tls_dir/server.log")
    [ -n "$port" ] && break
    sleep 0.1
done
if [ -z "$port" ]; then
    echo "demo: s_server did not start:" >&2
    cat "$tls_dir/server.log" >&2
    exit 1
fi
echo "hello over X25519MLKEM768" |
    "${with_example_cnf[@]}" "$speed_openssl" s_client -connect "127.0.0.1:$port" -tls1_3 -brief \
        >"$out/tls-handshake.txt" 2>&1 || true
kill "$server_pid" 2>/dev/null || true
server_pid=""
cat "$out/tls-handshake.txt" >&2
if ! grep -q "Negotiated TLS1.3 group: X25519MLKEM768" "$out/tls-handshake.txt"; then
    echo "demo: the handshake did not negotiate X25519MLKEM768 (see $out/tls-handshake.txt)" >&2
    exit 1
fi

step "5/6 openssl speed, side by side"
if ((quick)); then
    speed_args=(--rounds 1 --seconds 1)
    report_args=(--quick)
else
    speed_args=(--rounds 3 --seconds 2)
    report_args=()
fi
cargo build --release -q -p test-tools --features profiling --bin speed-compare --bin report --bin charts
bin=${CARGO_TARGET_DIR:-target}/release
"$bin"/speed-compare --openssl "$speed_openssl" --provider-dir "$module_dir" "${speed_args[@]}" \
    --csv "$out/speed.csv" --json "$out/speed.json" --raw-dir "$out/speed-raw" \
    ML-KEM-512 ML-KEM-768 ML-KEM-1024 X25519MLKEM768 SecP256r1MLKEM768 |
    tee "$out/speed.txt"

# TLS 1.3 handshakes in process (tls-bench, on the system's libssl): ours,
# OpenSSL's own where the linked libssl has ML-KEM groups, and oqsprovider
# when its module is in OpenSSL's modules directory or in
# $MLKEM_OQSPROVIDER_DIR (a module you built; this project ships none).
tls_args=(--rounds 3)
((quick)) && tls_args=(--quick)
oqs_dir=${MLKEM_OQSPROVIDER_DIR:-$(openssl version -m | sed -n 's/^MODULESDIR: "\(.*\)"$/\1/p')}
if [ -f "$oqs_dir/oqsprovider.so" ]; then
    tls_args+=(--oqsprovider "$oqs_dir" --baseline oqsprovider)
    echo "demo: tls-bench beside oqsprovider ($oqs_dir/oqsprovider.so)" >&2
fi
cargo build --release -q -p test-tools --bin tls-bench
tls_groups=X25519,X25519MLKEM768,SecP256r1MLKEM768,SecP384r1MLKEM1024,MLKEM512,MLKEM768,MLKEM1024
"$bin"/tls-bench --provider-dir "$module_dir" "${tls_args[@]}" --groups "$tls_groups" \
    --csv "$out/tls.csv" --json "$out/tls.json" | tee "$out/tls.txt"
# Beside OpenSSL's own ML-KEM: the same binary on the OpenSSL 3.5 built above
# (libssl.so.3 keeps 3.0's ABI), where the system's is older.
if [ -n "${openssl_prefix:-}" ]; then
    ((quick)) && tls_args=(--quick) || tls_args=(--rounds 3)
    LD_LIBRARY_PATH=$openssl_prefix/lib "$bin"/tls-bench --provider-dir "$module_dir" \
        "${tls_args[@]}" --groups "$tls_groups" --baseline native \
        --csv "$out/tls-native.csv" --json "$out/tls-native.json" | tee "$out/tls-native.txt"
fi

step "6/6 measurement report and charts"
"$bin"/report --out "$out/report" --module "$module_dir/mlkem.so" \
    --openssl "$speed_openssl" --speed-csv "$out/speed.csv" "${report_args[@]}" >/dev/null
png=()
command -v rsvg-convert >/dev/null 2>&1 && png=(--png)
tls_csv=("$out/tls.csv")
[ -f "$out/tls-native.csv" ] && tls_csv+=("$out/tls-native.csv")
bash scripts/charts.sh "${png[@]}" "$out/charts" "$out/report/performance.csv" "$out/speed.csv" \
    "${tls_csv[@]}" >/dev/null

cat >&2 <<EOF

demo: done. Everything is in $out:
  ml-kem-768.key.pem, ml-kem-768.pub.pem   the key genpkey made
  tls-handshake.txt                        the X25519MLKEM768 handshake
  speed.txt, speed.csv, speed.json         openssl speed, side by side (raw runs in speed-raw/)
  tls.txt, tls.csv, tls.json               TLS 1.3 handshakes/s and per-side cost (tls-bench;
                                           tls-native.*: beside OpenSSL 3.5's own, where built)
  report/report.md                         the measurement report (evidence.jsonl, performance.csv)
  charts/                                  SVG (and PNG) charts with the CSV behind each
EOF
echo "$out"
