#!/usr/bin/env bash
# A real server under sustained load: Debian's nginx (apt, system OpenSSL
# 3.0, not rebuilt) with the provider enabled only through OPENSSL_CONF=
# openssl.cnf.example and OPENSSL_MODULES, on loopback, driven by our client
# (tls-bench --connect: OpenSSL 3.0 with our provider) with full TLS 1.3
# handshakes (no resumption; nginx's tickets and session cache off), each
# followed by a GET /, over X25519MLKEM768, MLKEM768, SecP256r1MLKEM768 and
# X25519 alone as the baseline.
#
#   scripts/nginx-soak.sh [--handshakes N] [--in-flight C] [--max-seconds S]
#
# N handshakes per group (default 100,000; CI runs 2,000), C connections in
# flight (default 8), at most S seconds per group (default 600). Prints the
# table: group, handshakes, failures, seconds, handshakes/s, ratio to
# X25519's, and the RSS of nginx's workers (summed over both) before and
# after the group. Fails on any failed handshake, a group over its time, an
# access log that does not count every request, an [error] (or worse) line
# in nginx's error log, or worker RSS that grew by more than RSS_BOUND_KIB
# over the whole run (after a warm-up of 200 handshakes per group): 2 MiB,
# which a leak of one ML-KEM-768 ciphertext (1,088 bytes) per handshake
# passes after 1,900 handshakes, so both forms would see it.
#
# The machine's CPUs are shared: nginx's two workers and the client's
# threads compete for them, so handshakes/s measure the pair, not nginx.
#
# Nothing system-wide changes: nginx runs from a temporary directory on
# 127.0.0.1 only, stopped on every exit, signals included; one a SIGKILL
# leaves is stopped by the next run (scripts/system-state.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh >/dev/null
source scripts/nginx.sh
source scripts/system-state.sh

handshakes=100000
in_flight=8
max_seconds=600
while (($#)); do
    case $1 in
    --handshakes) handshakes=$2; shift 2 ;;
    --in-flight) in_flight=$2; shift 2 ;;
    --max-seconds) max_seconds=$2; shift 2 ;;
    *) echo "usage: $0 [--handshakes N] [--in-flight C] [--max-seconds S]" >&2; exit 2 ;;
    esac
done
readonly RSS_BOUND_KIB=2048
groups=(X25519 X25519MLKEM768 MLKEM768 SecP256r1MLKEM768)

log() { echo "nginx-soak: $*" >&2; }
fail() { log "FAIL: $*"; exit 1; }
if ! command -v nginx >/dev/null; then
    # scripts/deploy-test.sh installs it (as root), before this in CI.
    in_ci && fail "no nginx (apt-get install nginx)"
    log "skipped: no nginx (apt-get install nginx)"
    exit 0
fi

provider_dir=$(bash scripts/build-provider.sh | tail -1)
cargo build --release -q -p test-tools --bin tls-bench
tls_bench=${CARGO_TARGET_DIR:-target}/release/tls-bench

work=$(mktemp -d)
# Run by scripts/system-state.sh on every exit (signals included); a daemon
# a SIGKILL leaves is stopped by the next run that uses it.
state_cleanup() {
    nginx_stop || true
    rm -rf "$work"
}
state_begin nginx-soak --private || fail "the state of an earlier run could not be restored"

server_groups=$(IFS=:; echo "${groups[*]}")
OPENSSL_CONF=$PWD/openssl.cnf.example OPENSSL_MODULES=$provider_dir \
    nginx_start "$work/nginx" "$server_groups" "ssl_session_tickets off; ssl_session_cache off;" ||
    fail "nginx did not start"
state_checkpoint nginx
log "nginx $(nginx -v 2>&1 | sed 's/.*\///') on 127.0.0.1:$nginx_port (pid $nginx_pid, workers $(nginx_workers | xargs)), OPENSSL_CONF=openssl.cnf.example, OPENSSL_MODULES=$provider_dir"

# The workers' resident memory, KiB, summed.
workers_rss() {
    local pid total=0
    for pid in $(nginx_workers); do
        total=$((total + $(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status")))
    done
    echo "$total"
}
client() {
    "$tls_bench" --provider-dir "$provider_dir" --connect "127.0.0.1:$nginx_port" \
        --in-flight "$in_flight" "$@"
}

warmup=200
client --groups "${server_groups//:/,}" --handshakes "$warmup" >/dev/null || fail "warm-up handshakes failed"
rss_first=$(workers_rss)
rows=()
for group in "${groups[@]}"; do
    before=$(workers_rss)
    status=0
    timeout "$max_seconds" "$tls_bench" --provider-dir "$provider_dir" \
        --connect "127.0.0.1:$nginx_port" --in-flight "$in_flight" --groups "$group" \
        --handshakes "$handshakes" --csv "$work/$group.csv" >"$work/$group.txt" 2>&1 || status=$?
    ((status != 124)) || fail "$group: more than $max_seconds s for $handshakes handshakes"
    ((status == 0)) || fail "$group: $(tail -1 "$work/$group.txt")"
    after=$(workers_rss)
    # group,handshakes,failures,seconds,handshakes_per_sec,ratio_to_x25519
    rows+=("$(tail -1 "$work/$group.csv"),$before,$after")
done
rss_last=$(workers_rss)
nginx_stop || fail "nginx did not stop"

requests=$(wc -l <"$work/nginx/logs/access.log")
expected=$((warmup * ${#groups[@]} + handshakes * ${#groups[@]}))
printf '%s\n' "${rows[@]}" | awk -F, -v hs="$handshakes" -v c="$in_flight" '
    BEGIN { printf "%-18s %10s %8s %8s %12s %9s %13s %11s\n", "group", "handshakes",
            "failures", "seconds", "handshakes/s", "vs X25519", "RSS start KiB", "RSS end KiB" }
    { if ($1 == "X25519") base = $5; row[NR] = $0 }
    END { for (i = 1; i <= NR; i++) { split(row[i], f, ",")
            printf "%-18s %10d %8d %8.1f %12.0f %9.2f %13d %11d\n", f[1], f[2], f[3], f[4], f[5],
                f[5] / base, f[7], f[8] } }'
problems=$(nginx_log_problems "$work/nginx" || true)
warnings=$(grep -c '\[warn\]' "$work/nginx/logs/error.log" || true)
echo "nginx workers' RSS: $rss_first KiB after warm-up, $rss_last KiB at the end ($((rss_last - rss_first)) KiB; bound $RSS_BOUND_KIB)"
echo "nginx access log: $requests requests (expected $expected); error log: $(grep -c . <<<"$problems" || true) [error]-or-worse lines, $warnings [warn]"
echo "client and nginx share this machine's $(nproc) CPUs"
[ -z "$problems" ] || fail "nginx's error log: $problems"
((requests == expected)) || fail "nginx logged $requests requests, expected $expected"
((rss_last - rss_first <= RSS_BOUND_KIB)) || fail "nginx workers grew by $((rss_last - rss_first)) KiB"
log "PASS"
