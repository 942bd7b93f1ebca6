#!/usr/bin/env bash
# Tests the Debian package and the deployment guide (docs/deploying.md) on this machine,
# for real: builds the .deb (scripts/package-deb.sh), installs it, uses the
# system's OpenSSL with no -provider-path, serves TLS 1.3 from Debian's own
# nginx (from apt, not rebuilt) with the provider enabled only through
# OPENSSL_CONF, reaches it for every group with OpenSSL 3.5's s_client and
# with the system's curl, then stops nginx and removes the package, and
# checks that the system OpenSSL is as before.
#
#   scripts/deploy-test.sh
#
# Needs root (dpkg -i, apt-get install nginx). Outside CI it skips, with a
# reason, when not root; under CI (scripts/common.sh) that fails. OpenSSL 3.5 comes from
# scripts/build-openssl.sh (built if missing, unless
# MLKEM_SKIP_OPENSSL_BUILD=1: then its parts are skipped when it is not
# built, and fail under CI).
#
# What it changes on this machine goes back on every exit, signals
# included, and after a SIGKILL at the start of the next run of any test
# that uses scripts/system-state.sh: an mlkem-provider installed before
# (purged here first) is reinstalled as it was, conffiles included; the
# module the check's test moves aside returns; nginx and s_server, on
# 127.0.0.1 only, are stopped. /etc/ssl/openssl.cnf is only read (the
# .include lines go on a copy). nginx comes from apt if missing, with no
# service started or enabled (scripts/packages.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/common.sh
source scripts/packages.sh
# shellcheck source=scripts/groups.sh
source scripts/groups.sh # pq_group_names, group_code_point: tls-groups/groups.tsv
source scripts/nginx.sh
source scripts/system-state.sh

log() { echo "deploy-test: $*" >&2; }
fail() { log "FAIL: $*"; exit 1; }

if [ "$(id -u)" -ne 0 ]; then
    in_ci && fail "needs root (dpkg -i, apt-get)"
    log "skipped: needs root (dpkg -i, apt-get)"
    exit 0
fi

work=$(mktemp -d)
module_aside="" server_pid="" skipped=()
# Run by scripts/system-state.sh on every exit, before it restores the rest.
state_cleanup() {
    [ -z "$server_pid" ] || kill "$server_pid" 2>/dev/null || true
    # A module moved aside by the check's test goes back before anything else.
    [ -z "$module_aside" ] || mv "$module_aside" "$modules_dir/mlkem.so"
    nginx_stop || true
    rm -rf "$work"
}
state_begin deploy-test || fail "the state of an earlier run could not be restored"

# ---------------------------------------------------------------- packages
# nginx's service is not started by its install; this test runs its own.
tools_ensure deploy-test "$(packages_policy)" nginx curl || fail "missing tools"

# ---------------------------------------------------------------- install
deb=$(bash scripts/package-deb.sh | tail -1)
# Reinstalled as it is on any exit (scripts/system-state.sh).
state_note_package mlkem-provider || fail "could not save the installed mlkem-provider"
if dpkg -s mlkem-provider >/dev/null 2>&1; then
    log "removing an installed mlkem-provider first (put back on exit)"
    state_dpkg --purge mlkem-provider
fi
modules_dir=$(openssl version -m | sed -n 's/^MODULESDIR: "\(.*\)"$/\1/p')
snapshot() {
    openssl list -providers
    openssl list -kem-algorithms 2>/dev/null || true
    ls -l "$modules_dir"
    ls -l /etc/ssl
    md5sum /etc/ssl/openssl.cnf
}
snapshot >"$work/before.txt"

state_dpkg -i "$deb"
log "installed $(dpkg-query -W -f='${Package} ${Version}' mlkem-provider)"

# The system openssl finds the module with no path.
openssl list -providers -provider mlkem | grep -q 'name: mlkem' ||
    fail "openssl list -providers -provider mlkem does not list mlkem"
openssl genpkey -provider mlkem -provider default -algorithm ML-KEM-768 -out "$work/mlkem.pem"
openssl pkey -provider mlkem -provider default -in "$work/mlkem.pem" -pubout -out "$work/mlkem.pub"
openssl pkey -provider mlkem -provider default -pubin -in "$work/mlkem.pub" -noout -text |
    grep -q 'ML-KEM-768' || fail "pkey -text of the public key does not name ML-KEM-768"
log "ok: genpkey and pkey with -provider mlkem, no -provider-path"

# System-wide: the two .include lines of the guide, on a copy of
# /etc/ssl/openssl.cnf (the test leaves the real one alone).
cp /etc/ssl/openssl.cnf "$work/system.cnf"
printf '.include /etc/ssl/mlkem-provider.cnf\n.include /etc/ssl/mlkem-tls-groups.cnf\n' >>"$work/system.cnf"
OPENSSL_CONF=$work/system.cnf openssl list -providers | grep -q 'name: mlkem' ||
    fail "with the .include lines, openssl list -providers does not list mlkem"
OPENSSL_CONF=$work/system.cnf openssl genpkey -algorithm ML-KEM-512 -out /dev/null ||
    fail "with the .include lines, genpkey -algorithm ML-KEM-512 fails"
log "ok: system-wide through .include /etc/ssl/mlkem-provider.cnf"

# ---------------------------------------------------------------- the check
# mlkem-provider-check, as installed, on the configuration in effect: 0 with
# the lines in place; 1, naming the problem, without them, with the module
# gone, and with a providers section that lacks default.
check=/usr/bin/mlkem-provider-check
[ -x "$check" ] || fail "the package did not install $check"
expect_check() { # expect_check STATUS TEXT NAME [CHECK ARGS...]: OPENSSL_CONF set by the caller
    local want=$1 text=$2 name=$3 status=0
    shift 3
    timeout 60 "$check" "$@" >"$work/check-$name.txt" 2>&1 || status=$?
    { [ "$status" = "$want" ] && grep -qF -- "$text" "$work/check-$name.txt"; } || {
        cat "$work/check-$name.txt" >&2
        fail "mlkem-provider-check ($name): exit $status, expected $want and '$text'"
    }
    log "ok: mlkem-provider-check ($name): exit $status, '$(grep -m1 -F -- "$text" "$work/check-$name.txt" | sed 's/^ *//')'"
}
OPENSSL_CONF=$work/system.cnf expect_check 0 "post-quantum TLS is in effect" enabled
sed -n '/^post-quantum/p' "$work/check-enabled.txt" >&2
cp /etc/ssl/openssl.cnf "$work/plain.cnf"
OPENSSL_CONF=$work/plain.cnf expect_check 1 "mlkem is not active" lines-removed
sed '/^default = mlkem_default_sect$/d' /etc/ssl/mlkem-provider.cnf >"$work/no-default.cnf"
cp /etc/ssl/openssl.cnf "$work/no-default-system.cnf"
echo ".include $work/no-default.cnf" >>"$work/no-default-system.cnf"
OPENSSL_CONF=$work/no-default-system.cnf expect_check 1 "does not activate \`default\`" no-default
# Back from state_cleanup on any exit; after a SIGKILL, the package's
# restore (scripts/system-state.sh) reinstalls or purges it whole.
mv "$modules_dir/mlkem.so" "$work/mlkem.so.aside"
module_aside=$work/mlkem.so.aside
state_checkpoint module-aside
OPENSSL_CONF=$work/system.cnf expect_check 1 "no mlkem.so at $modules_dir/mlkem.so" module-removed
# What the check is for: OpenSSL itself fails open here, silently, even
# with Debian's config_diagnostics = 1 (docs/mlkem-provider-check.md). If
# this ever changes, the guide's advice changes with it.
providers=$(OPENSSL_CONF=$work/system.cnf openssl list -providers 2>"$work/fail-open.err") ||
    fail "openssl list -providers without mlkem.so now fails: update docs/mlkem-provider-check.md"
{ ! grep -q mlkem <<<"$providers" && [ ! -s "$work/fail-open.err" ]; } ||
    fail "openssl without mlkem.so: expected a silent fallback, got: $providers $(cat "$work/fail-open.err")"
log "ok: without mlkem.so, openssl runs on without it and says nothing (fail open, as documented)"
mv "$module_aside" "$modules_dir/mlkem.so"
module_aside=""

# ---------------------------------------------------------------- nginx
service_conf=/usr/share/mlkem-provider/openssl-service.cnf
groups=$(pq_group_names | paste -sd" ")
OPENSSL_CONF=$service_conf nginx_start "$work/nginx" "${groups// /:}:X25519" || fail "nginx did not start"
port=$nginx_port
state_checkpoint nginx
log "nginx $(nginx -v 2>&1 | sed 's/.*\///') on 127.0.0.1:$port (pid $nginx_pid), OPENSSL_CONF=$service_conf"

openssl35=""
if prefix35=$(openssl_find 3.5); then
    openssl35=$prefix35/bin/openssl
else
    in_ci && fail "no OpenSSL 3.5 ($(openssl_prefix 3.5))"
    log "skipped: the OpenSSL 3.5 client rows and the check's remote mode (no $(openssl_prefix 3.5), MLKEM_SKIP_OPENSSL_BUILD=1)"
    skipped+=("OpenSSL 3.5 rows and remote mode")
fi

results=()
for group in $groups; do
    want="TLSv1.3 $(group_code_point "$group")"  # as nginx's $ssl_curve shows it on 3.0
    # The system's curl (OpenSSL 3.0) with the provider for this command only.
    got=$(OPENSSL_CONF=$service_conf curl -sS --cacert "$work/nginx/cert.pem" \
        --curves "$group" "https://localhost:$port/" --resolve "localhost:$port:127.0.0.1") ||
        fail "curl --curves $group failed"
    [ "$got" = "$want" ] || fail "curl --curves $group: nginx reports '$got', expected '$want'"
    results+=("curl $group: $got")
    # OpenSSL 3.5's own ML-KEM as the client.
    if [ -n "$openssl35" ]; then
        out=$(printf 'GET / HTTP/1.0\r\nHost: localhost\r\n\r\n' |
            "$openssl35" s_client -connect "127.0.0.1:$port" -servername localhost \
                -CAfile "$work/nginx/cert.pem" -verify_return_error -groups "$group" -ign_eof 2>&1) ||
            fail "OpenSSL 3.5 s_client -groups $group failed: $(tail -5 <<<"$out")"
        grep -q "Negotiated TLS1.3 group: $group" <<<"$out" ||
            fail "OpenSSL 3.5 s_client -groups $group: no 'Negotiated TLS1.3 group: $group'"
        grep -q "^$want\$" <<<"$out" ||
            fail "OpenSSL 3.5 s_client -groups $group: nginx did not report '$want'"
        results+=("openssl 3.5 s_client $group: $want")
    fi
done
# A classical client still gets in (the server's list ends with X25519).
got=$(curl -sS --cacert "$work/nginx/cert.pem" --curves X25519 "https://localhost:$port/" \
    --resolve "localhost:$port:127.0.0.1") || fail "curl --curves X25519 failed"
[ "$got" = "TLSv1.3 X25519" ] || fail "curl --curves X25519: nginx reports '$got'"
results+=("curl (no provider) X25519: $got")

nginx_stop || fail "nginx did not stop"
if nginx_log_problems "$work/nginx" >&2; then
    fail "nginx's error log has the errors above"
fi
printf '  %s\n' "${results[@]}" >&2
log "ok: nginx served every group, error log clean ($(wc -l <"$work/nginx/logs/access.log") requests)"

# ---------------------------------------------------------------- the check, remote
# Against OpenSSL 3.5's own ML-KEM: a post-quantum server and a classical one.
if [ -n "$openssl35" ]; then
    for groups in X25519MLKEM768 X25519; do
        free_port port || fail "no free port for s_server"
        "$openssl35" s_server -accept "127.0.0.1:$port" -cert "$work/nginx/cert.pem" \
            -key "$work/nginx/key.pem" -groups "$groups" -naccept 7 -www \
            </dev/null >"$work/s_server-$groups.txt" 2>&1 &
        server_pid=$!
        state_note_pid "$server_pid"
        for _ in $(seq 100); do grep -qs ACCEPT "$work/s_server-$groups.txt" && break; sleep 0.1; done
        if [ "$groups" = X25519MLKEM768 ]; then
            expect_check 0 "127.0.0.1 negotiates X25519MLKEM768" remote-pq "127.0.0.1:$port"
        else
            expect_check 1 "127.0.0.1 stays classical (X25519)" remote-classical "127.0.0.1:$port"
        fi
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
        server_pid=""
    done
fi

# ---------------------------------------------------------------- remove
state_dpkg -r mlkem-provider
[ ! -e "$modules_dir/mlkem.so" ] || fail "dpkg -r left $modules_dir/mlkem.so"
openssl list -providers -provider mlkem >/dev/null 2>&1 &&
    fail "after dpkg -r, -provider mlkem still loads"
# dpkg -r keeps conffiles (Debian policy); --purge removes them too.
state_dpkg --purge mlkem-provider
snapshot >"$work/after.txt"
diff -u "$work/before.txt" "$work/after.txt" >&2 || fail "the system OpenSSL differs after dpkg --purge"
log "ok: dpkg -r and --purge restore the system OpenSSL"
if ((${#skipped[@]})); then
    log "PASS, with parts skipped: ${skipped[*]}"
else
    log "PASS"
fi
