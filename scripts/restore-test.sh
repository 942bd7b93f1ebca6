#!/usr/bin/env bash
# Kills each script that changes this machine in the middle of its run and
# checks that the machine is as before (scripts/system-state.sh):
#
#   scripts/restore-test.sh [--quick]
#
# Each case runs a script until it reaches a checkpoint where its changes
# are in place (state_checkpoint: the script waits there, so the kill lands
# at a known point, not after a guessed sleep), sends it a signal, waits
# for it to end and compares the machine with a snapshot taken before:
#
#   - /etc/ssl/openssl.cnf, byte for byte (sha256, mode, owner);
#   - the mlkem-provider package: status, version, each conffile's recorded
#     and actual hash, dpkg --verify, and its files (mlkem.so in OpenSSL's
#     modules directory, the snippets in /etc/ssl, /usr/bin's check);
#   - /usr/sbin/policy-rc.d;
#   - the services enabled for the next boot (the links in /etc/rc?.d and
#     /etc/systemd/system);
#   - no process left: every process the script started carries a marker in
#     its environment (MLKEM_RESTORE_RUN) or works in this checkout (nginx
#     writes its title over its environment) and did not before the test
#     began (the pipeline that runs it, an editor), and none may remain.
#
# The cases: deploy-test.sh with mlkem-provider installed beforehand, SIGTERM
# while the module is moved aside; deploy-test.sh without the package,
# SIGTERM while nginx serves; compat-test.sh --quick with the package
# installed, SIGTERM while nginx runs with /etc/ssl/openssl.cnf edited;
# compat-test.sh --quick, SIGKILL there (the machine is then left changed,
# which the test checks too), and a rerun, which puts the leftover back
# before it starts (SIGTERM at its first checkpoint); tls-compare.sh and
# nginx-soak.sh, SIGTERM and SIGKILL + rerun with nginx running. --quick
# (CI) leaves out the second deploy-test.sh case and nginx-soak.sh.
#
# Needs root (dpkg, /etc/ssl/openssl.cnf); outside CI it skips, with a
# reason, when not root. What this test itself changes (the package it
# installs for the "installed beforehand" cases) goes back on every exit
# too. OpenSSL 3.5 as scripts/compat-test.sh finds it
# (MLKEM_SKIP_OPENSSL_BUILD=1 is passed on).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh >/dev/null
source scripts/system-state.sh

quick=0
case ${1:-} in
    --quick) quick=1 ;;
    "") ;;
    *) echo "usage: $0 [--quick]" >&2; exit 2 ;;
esac

log() { echo "restore-test: $*" >&2; }
fail() { log "FAIL: $*"; exit 1; }
if [ "$(id -u)" -ne 0 ]; then
    in_ci && fail "needs root (dpkg, /etc/ssl/openssl.cnf)"
    log "skipped: needs root (dpkg, /etc/ssl/openssl.cnf)"
    exit 0
fi
started=$SECONDS

work=$(mktemp -d)
run_pid=""
state_cleanup() {
    [ -z "$run_pid" ] || kill -KILL "$run_pid" 2>/dev/null || true
    rm -rf "$work"
}
state_begin restore-test || fail "the state of an earlier run could not be restored"
state_note_package mlkem-provider

modules_dir=$(openssl version -m | sed -n 's/^MODULESDIR: "\(.*\)"$/\1/p')

# The machine as the scripts may change it.
snapshot() {
    local f path hash _
    echo "openssl.cnf $(sha256sum </etc/ssl/openssl.cnf | cut -c1-64) $(stat -c %a.%u.%g /etc/ssl/openssl.cnf)"
    echo "package $(dpkg-query -W -f='${db:Status-Abbrev} ${Version}' mlkem-provider 2>/dev/null || echo absent)"
    { dpkg-query -W -f='${Conffiles}\n' mlkem-provider 2>/dev/null || true; } | while read -r path hash _; do
        [ -z "$path" ] || echo "conffile $path recorded $hash actual $(md5sum <"$path" 2>/dev/null | cut -c1-32)"
    done
    { dpkg --verify mlkem-provider 2>&1 || true; } | sed 's/^/verify /'
    for f in "$modules_dir/mlkem.so" /etc/ssl/mlkem-provider.cnf /etc/ssl/mlkem-tls-groups.cnf \
        /usr/bin/mlkem-provider-check /usr/share/mlkem-provider/openssl-service.cnf /usr/sbin/policy-rc.d; do
        if [ -e "$f" ]; then echo "file $f $(sha256sum <"$f" | cut -c1-64)"; else echo "file $f absent"; fi
    done
    find /etc/rc?.d /etc/systemd/system -type l -printf 'enabled %p -> %l\n' 2>/dev/null | sort
}

# A process as "PID:START" (START: its start time in clock ticks since
# boot, /proc/PID/stat field 22), which a reused PID does not repeat.
proc_id() { # PID
    local stat fields
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
    read -r -a fields <<<"${stat##*) }" # from field 3 on
    echo "$1:${fields[19]}"
}

# Does process PID work in this checkout?
works_here() { # PID
    [ "$(readlink "/proc/$1/cwd" 2>/dev/null)" = "$PWD" ]
}

# The processes working in this checkout: PID:START per line.
in_checkout() {
    local cwd pid
    for cwd in /proc/[0-9]*/cwd; do
        pid=${cwd#/proc/}
        pid=${pid%/cwd}
        ! works_here "$pid" || proc_id "$pid" || true
    done
}

# Those already there when this test began (the shell or pipeline that
# started it, an editor): never a run's leftover.
in_checkout_before=$(in_checkout)

# The processes a run left: those with its marker in their environment,
# and those working in this checkout (nginx, like other daemons that set
# their process title, writes over its environment) other than this test,
# its callers and what was there before it began.
leftovers() { # RUN_ID
    local env pid
    for env in /proc/[0-9]*/environ; do
        pid=${env#/proc/}
        pid=${pid%/environ}
        [ "$pid" != "$BASHPID" ] || continue
        if tr '\0' '\n' 2>/dev/null <"$env" | grep -qx "MLKEM_RESTORE_RUN=$1" ||
            { works_here "$pid" && ! state_is_ancestor "$pid" &&
                ! grep -qxF "$(proc_id "$pid")" <<<"$in_checkout_before"; }; then
            echo "$pid $(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" | cut -c1-120)"
        fi
    done
}

# run_until NAME CHECKPOINT SIGNAL SCRIPT [ARGS...]: starts the script, waits
# for CHECKPOINT (300 s at most: it may build first), sends SIGNAL, waits
# for the script to end (60 s at most).
run_until() {
    local name=$1 checkpoint=$2 signal=$3 _ t0=$SECONDS
    shift 3
    rm -f "$work/pause"
    MLKEM_RESTORE_RUN=$name MLKEM_STATE_PAUSE_AT=$checkpoint MLKEM_STATE_PAUSE_FILE=$work/pause \
        bash "$@" </dev/null >"$work/$name.log" 2>&1 &
    run_pid=$!
    for _ in $(seq 3000); do
        [ ! -s "$work/pause" ] || break
        kill -0 "$run_pid" 2>/dev/null || break
        sleep 0.1
    done
    if [ ! -s "$work/pause" ]; then
        tail -20 "$work/$name.log" >&2
        fail "$name: $* ended or took over 300 s before its checkpoint $checkpoint"
    fi
    kill "-$signal" "$run_pid"
    for _ in $(seq 600); do
        kill -0 "$run_pid" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$run_pid" 2>/dev/null; then
        tail -20 "$work/$name.log" >&2
        fail "$name: still running 60 s after SIG$signal"
    fi
    wait "$run_pid" 2>/dev/null || true
    run_pid=""
    log "$name: SIG$signal at $checkpoint after $((SECONDS - t0)) s"
}

# expect_same NAME: the machine as in $work/before.txt, no process left.
expect_same() {
    local name=$1 left
    snapshot >"$work/after.txt"
    if ! diff -u "$work/before.txt" "$work/after.txt" >"$work/$name.diff"; then
        cat "$work/$name.diff" >&2
        tail -30 "$work/$name.log" >&2
        fail "$name: the machine differs from before (above)"
    fi
    # Processes that were being killed may take a moment to go.
    for _ in $(seq 50); do
        left=$(leftovers "$name")
        [ -n "$left" ] || break
        sleep 0.1
    done
    [ -z "$left" ] || fail "$name: processes left: $left"
    [ -z "$(ls -A "$MLKEM_STATE_ROOT" | grep -vx restore-test)" ] ||
        fail "$name: state left in $MLKEM_STATE_ROOT: $(ls "$MLKEM_STATE_ROOT")"
    log "ok: $name: the machine is as before (openssl.cnf, package, services, no process)"
}

# The package installed beforehand: the one scripts/package-deb.sh builds
# now (the scripts purge it, install their own, and must put it back).
deb=$(bash scripts/package-deb.sh | tail -1)
with_package() {
    state_dpkg -i "$deb"
    snapshot >"$work/before.txt"
    grep -q '^package ii ' "$work/before.txt" || fail "mlkem-provider did not install"
}
without_package() {
    state_dpkg --purge mlkem-provider
    snapshot >"$work/before.txt"
}

export MLKEM_SKIP_OPENSSL_BUILD=${MLKEM_SKIP_OPENSSL_BUILD:-0}

with_package
run_until deploy-term-aside module-aside TERM scripts/deploy-test.sh
expect_same deploy-term-aside

if ((!quick)); then
    without_package
    run_until deploy-term-nginx nginx TERM scripts/deploy-test.sh
    expect_same deploy-term-nginx
fi

with_package
run_until compat-term service-nginx TERM scripts/compat-test.sh --quick --out "$work/compat-out"
expect_same compat-term

run_until compat-kill service-nginx KILL scripts/compat-test.sh --quick --out "$work/compat-out"
snapshot >"$work/killed.txt"
! cmp -s "$work/before.txt" "$work/killed.txt" ||
    fail "compat-kill: SIGKILL left the machine unchanged (the case tests nothing)"
[ -n "$(leftovers compat-kill)" ] || fail "compat-kill: SIGKILL left no process (the case tests nothing)"
log "compat-kill: as expected, SIGKILL left changes ($(diff "$work/before.txt" "$work/killed.txt" | grep -c '^>') lines) and processes"
run_until compat-kill begin-compat-test TERM scripts/compat-test.sh --quick --out "$work/compat-out"
expect_same compat-kill

run_until tls-compare-term nginx-ours TERM scripts/tls-compare.sh --handshakes 10 --rounds 1
expect_same tls-compare-term

if ((!quick)); then
    run_until nginx-soak-kill nginx KILL scripts/nginx-soak.sh --handshakes 10
    [ -n "$(leftovers nginx-soak-kill)" ] || fail "nginx-soak-kill: SIGKILL left no nginx (the case tests nothing)"
    run_until nginx-soak-kill begin-nginx-soak TERM scripts/nginx-soak.sh --handshakes 10
    expect_same nginx-soak-kill
fi

log "PASS in $((SECONDS - started)) s"
