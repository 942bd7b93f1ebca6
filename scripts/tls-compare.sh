#!/usr/bin/env bash
# TLS side by side: the same stock Debian nginx (apt, system OpenSSL 3.0)
# under our provider and under oqsprovider, each enabled only through
# OPENSSL_CONF (a minimal config written here: providers default + that
# one, `module =` its .so, a system_default Groups line), driven by the same
# client with the same group names: tls-bench --connect, OpenSSL 3.0 with
# OUR provider for every group, so only the server side changes. Full
# TLS 1.3 handshakes (tickets and session cache off), each followed by a
# GET /, over X25519 (the baseline), X25519MLKEM768, SecP256r1MLKEM768,
# SecP384r1MLKEM1024, MLKEM512, MLKEM768 and MLKEM1024.
#
#   scripts/tls-compare.sh [--provider ours|oqsprovider|both] [--oqsprovider DIR]
#                          [--handshakes N] [--in-flight C] [--rounds R]
#
# DIR holds oqsprovider.so (build it yourself; with DIR the default is both,
# without it ours). N handshakes per group, provider and round (default
# 3,000), C connections in flight (default 8), R rounds (default 3). Both
# servers run at once on their own ports (the idle one costs nothing) and
# are measured in turn: every round runs every group on each, the provider
# that goes first alternating per group and round, so the machine's noise
# hits both alike; a row is the median over rounds. oqsprovider spells the
# pure groups mlkem512/768/1024, so its nginx's ssl_ecdh_curve and Groups
# do; the code points are ours, so the client's names are the same.
#
# Prints per group and provider: median handshakes/s, the ratio to X25519's
# with the same provider, ours / oqsprovider, the RSS of nginx's workers
# (summed over both, after the group's last round) and failures. Fails on a
# failed handshake, an access log that does not count every request, or an
# [error] (or worse) line in either nginx's error log.
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

usage() {
    echo "usage: $0 [--provider ours|oqsprovider|both] [--oqsprovider DIR]" \
        "[--handshakes N] [--in-flight C] [--rounds R]" >&2
    exit 2
}
provider=""
oqs_dir=""
handshakes=3000
in_flight=8
rounds=3
max_seconds=600
while (($#)); do
    case $1 in
    --provider) provider=${2:-}; shift 2 || usage ;;
    --oqsprovider) oqs_dir=${2:-}; shift 2 || usage ;;
    --handshakes) handshakes=${2:-}; shift 2 || usage ;;
    --in-flight) in_flight=${2:-}; shift 2 || usage ;;
    --rounds) rounds=${2:-}; shift 2 || usage ;;
    *) usage ;;
    esac
done
for n in "$handshakes" "$in_flight" "$rounds"; do
    [[ $n =~ ^[1-9][0-9]*$ ]] || usage
done
[ -n "$provider" ] || { [ -n "$oqs_dir" ] && provider=both || provider=ours; }
case $provider in
ours) providers=(ours) ;;
oqsprovider) providers=(oqsprovider) ;;
both) providers=(ours oqsprovider) ;;
*) usage ;;
esac
groups=(X25519 X25519MLKEM768 SecP256r1MLKEM768 SecP384r1MLKEM1024 MLKEM512 MLKEM768 MLKEM1024)
warmup=200

log() { echo "tls-compare: $*" >&2; }
fail() { log "FAIL: $*"; exit 1; }
command -v nginx >/dev/null || fail "no nginx (apt-get install nginx)"
if [ "$provider" != ours ]; then
    [ -n "$oqs_dir" ] || fail "--provider $provider needs --oqsprovider DIR (the directory holding oqsprovider.so)"
    [ -d "$oqs_dir" ] || fail "no directory $oqs_dir"
    oqs_dir=$(cd "$oqs_dir" && pwd)
    [ -f "$oqs_dir/oqsprovider.so" ] || fail "no $oqs_dir/oqsprovider.so"
fi

provider_dir=$(bash scripts/build-provider.sh | tail -1)
cargo build --release -q -p test-tools --bin tls-bench
tls_bench=${CARGO_TARGET_DIR:-target}/release/tls-bench

work=$(mktemp -d)
declare -A server_pid server_port
# Run by scripts/system-state.sh on every exit (signals included); a daemon
# a SIGKILL leaves is stopped by the next run that uses it.
state_cleanup() {
    local p
    for p in "${!server_pid[@]}"; do
        nginx_pid=${server_pid[$p]}
        nginx_stop || true
    done
    rm -rf "$work"
}
state_begin tls-compare --private || fail "the state of an earlier run could not be restored"

# A group as provider $1 spells it: oqsprovider's pure ML-KEM is lowercase.
spelled() {
    if [ "$1" = oqsprovider ] && [[ $2 == MLKEM* ]]; then echo "${2,,}"; else echo "$2"; fi
}
server_groups() {
    local g list=()
    for g in "${groups[@]}"; do list+=("$(spelled "$1" "$g")"); done
    (IFS=:; echo "${list[*]}")
}

# The minimal OPENSSL_CONF for provider $1: default + that one.
write_conf() {
    local name module
    case $1 in
    ours) name=mlkem module=$provider_dir/mlkem.so ;;
    oqsprovider) name=oqsprovider module=$oqs_dir/oqsprovider.so ;;
    esac
    cat <<CONF
openssl_conf = init

[init]
providers = provider_sect
ssl_conf = ssl_sect

[provider_sect]
default = default_sect
$name = this_sect

[default_sect]
activate = 1

[this_sect]
module = $module
activate = 1

[ssl_sect]
system_default = tls_defaults

[tls_defaults]
Groups = $(server_groups "$1")
CONF
}

# The workers' resident memory, KiB, summed (provider $1's nginx).
workers_rss() {
    local pid total=0
    for pid in $(ps --ppid "${server_pid[$1]}" -o pid=); do
        total=$((total + $(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status")))
    done
    echo "$total"
}
client() {
    local p=$1
    shift
    "$tls_bench" --provider-dir "$provider_dir" --connect "127.0.0.1:${server_port[$p]}" \
        --in-flight "$in_flight" "$@"
}

declare -A rss_first
for p in "${providers[@]}"; do
    write_conf "$p" >"$work/$p.cnf"
    module=$(awk '/^module/ { print $3 }' "$work/$p.cnf")
    # Below the ephemeral range nginx_start would pick from.
    free_port port || fail "no free port in 20000-32767"
    NGINX_PORT=$port OPENSSL_CONF=$work/$p.cnf nginx_start "$work/$p" "$(server_groups "$p")" \
        "ssl_session_tickets off; ssl_session_cache off;" || fail "nginx ($p) did not start"
    server_pid[$p]=$nginx_pid
    server_port[$p]=$nginx_port
    state_checkpoint "nginx-$p"
    log "nginx ($p) on 127.0.0.1:$port (pid $nginx_pid), OPENSSL_CONF=$p.cnf: module = $module"
    all=$(IFS=,; echo "${groups[*]}")
    client "$p" --groups "$all" --handshakes "$warmup" >"$work/$p.warmup.txt" 2>&1 ||
        fail "$p: warm-up handshakes failed: $(tail -1 "$work/$p.warmup.txt")"
    rss_first[$p]=$(workers_rss "$p")
    # The worker really has that provider (and not the other) mapped.
    for pid in $(ps --ppid "$nginx_pid" -o pid=); do
        grep -q " $module\$" "/proc/$pid/maps" || fail "nginx ($p) worker $pid has no $module mapped"
        ! grep -qE '/(mlkem|oqsprovider)\.so$' <(grep -v " $module\$" "/proc/$pid/maps") ||
            fail "nginx ($p) worker $pid has another provider mapped"
    done
done
log "$(nginx -v 2>&1 | sed 's/.*\///'), client $("$tls_bench" --version 2>/dev/null || echo tls-bench) with our provider for every group; $handshakes handshakes per group, provider and round, $rounds rounds, $in_flight in flight"

# provider,group,round,handshakes,failures,handshakes_per_sec,rss_kib
results=$work/results.csv
: >"$results"
start=$SECONDS
for ((round = 1; round <= rounds; round++)); do
    for i in "${!groups[@]}"; do
        group=${groups[$i]}
        order=("${providers[@]}")
        if (((round + i) % 2 == 0)) && ((${#order[@]} == 2)); then order=("${order[1]}" "${order[0]}"); fi
        for p in "${order[@]}"; do
            out=$work/$p.$group.$round
            status=0
            timeout "$max_seconds" "$tls_bench" --provider-dir "$provider_dir" \
                --connect "127.0.0.1:${server_port[$p]}" --in-flight "$in_flight" --groups "$group" \
                --handshakes "$handshakes" --csv "$out.csv" >"$out.txt" 2>&1 || status=$?
            ((status != 124)) || fail "$p $group: more than $max_seconds s for $handshakes handshakes"
            [ -s "$out.csv" ] || fail "$p $group: $(tail -1 "$out.txt")"
            ((status == 0)) || log "$p $group round $round: $(tail -1 "$out.txt")"
            # group,handshakes,failures,seconds,handshakes_per_sec,ratio_to_x25519
            IFS=, read -r _ n failed _ rate _ < <(tail -1 "$out.csv")
            echo "$p,$group,$round,$n,$failed,$rate,$(workers_rss "$p")" >>"$results"
        done
    done
    log "round $round of $rounds done ($((SECONDS - start)) s)"
done

python3 - "$results" "${providers[@]}" <<'PY'
import csv, statistics, sys
path, providers = sys.argv[1], sys.argv[2:]
rates, rss, fails, groups = {}, {}, {}, []
for p, g, r, n, failed, rate, kib in csv.reader(open(path)):
    if g not in groups:
        groups.append(g)
    rates.setdefault((p, g), []).append(float(rate))
    rss[(p, g)] = int(kib)  # after the group's last round
    fails[(p, g)] = fails.get((p, g), 0) + int(failed)
med = {k: statistics.median(v) for k, v in rates.items()}
short = {"ours": "ours", "oqsprovider": "oqs"}
head = ["group"]
for p in providers:
    s = short[p]
    head += [f"{s} hs/s", f"{s} vs X25519"]
if len(providers) == 2:
    head.append("ours/oqs")
head += [f"{short[p]} RSS KiB" for p in providers] + ["failures"]
rows = []
for g in groups:
    row = [g]
    for p in providers:
        row += [f"{med[(p, g)]:.0f}", f"{med[(p, g)] / med[(p, 'X25519')]:.2f}"]
    if len(providers) == 2:
        row.append(f"{med[('ours', g)] / med[('oqsprovider', g)]:.2f}")
    row += [str(rss[(p, g)]) for p in providers]
    row.append(str(sum(fails[(p, g)] for p in providers)))
    rows.append(row)
widths = [max(len(r[i]) for r in [head] + rows) for i in range(len(head))]
for r in [head] + rows:
    print("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))))
PY

problems_all=""
for p in "${providers[@]}"; do
    rss_last=$(workers_rss "$p")
    nginx_pid=${server_pid[$p]}
    nginx_stop || fail "nginx ($p) did not stop"
    unset "server_pid[$p]"
    requests=$(wc -l <"$work/$p/logs/access.log")
    expected=$((warmup * ${#groups[@]} + handshakes * ${#groups[@]} * rounds))
    failed=$(awk -F, -v p="$p" '$1 == p { s += $5 } END { print s + 0 }' "$results")
    problems=$(nginx_log_problems "$work/$p" || true)
    warnings=$(grep -c '\[warn\]' "$work/$p/logs/error.log" || true)
    echo "$p: $failed failed handshakes; workers' RSS ${rss_first[$p]} KiB after warm-up, $rss_last KiB at the end; access log $requests requests (expected $expected); error log $(grep -c . <<<"$problems" || true) [error]-or-worse lines, $warnings [warn]"
    ((failed == 0)) || problems_all+="$p: $failed failed handshakes. "
    ((requests == expected)) || problems_all+="$p: nginx logged $requests requests, expected $expected. "
    [ -z "$problems" ] || problems_all+="$p's error log: $problems. "
done
echo "client and nginx (${providers[*]}) share this machine's $(nproc) CPUs; $((SECONDS - start)) s measuring"
[ -z "$problems_all" ] || fail "$problems_all"
log "PASS"
