#!/usr/bin/env bash
# Tests the software people run on a real server with the mlkem provider
# enabled system-wide: everything from apt (the only traffic off this
# machine: apt-get, for what is missing), the tests on loopback only. It
# builds and installs the Debian package, appends the two .include lines of the README
# to /etc/ssl/openssl.cnf (restored byte for byte on every exit), and then
#
#   servers: nginx, Apache httpd (mod_ssl), HAProxy, Postfix (SMTP STARTTLS),
#            PostgreSQL and MariaDB, each reached by OpenSSL 3.5's s_client
#            (post-quantum), the system's own client for the protocol (curl,
#            openssl s_client -starttls smtp, psql, mariadb) and two
#            classical-only clients (gnutls-cli; the system openssl with
#            OPENSSL_CONF=/dev/null, which loads no provider);
#   clients: curl, wget, Python's urllib and the system openssl s_client
#            against OpenSSL 3.5's s_server offering X25519MLKEM768:X25519,
#            and against one offering X25519 only (psql and mariadb: the
#            server rows).
#
# Every connection goes through scripts/compat/tlswatch.py, a loopback relay
# that reads the ServerHello: the group and whether a HelloRetryRequest came
# first are taken from the wire, and checked against what the server logs
# (nginx $ssl_curve, Postfix's "key-exchange") or the client prints
# (s_client, gnutls-cli) where they show it.
#
#   scripts/compat-test.sh [--quick] [--out DIR]
#
# --quick (CI): X25519MLKEM768 only. The full form also reaches every server
# over each of the six post-quantum groups. Writes compat.md and compat.csv
# to DIR (default: a new temporary directory, printed) and prints the table;
# exits non-zero when a row fails, or when the package's mlkem-provider-check
# is missing or fails. Needs root (dpkg -i, apt-get, running the daemons);
# outside CI (scripts/common.sh) it skips, with a reason, when not root.
# Daemons run in the foreground from their own configuration in a temporary
# directory (never through systemd or init scripts), on 127.0.0.1 ports
# below 32768, each under `timeout`.
#
# What it changes goes back on every exit, signals included, and after a
# SIGKILL at the start of the next run of any test that uses
# scripts/system-state.sh: /etc/ssl/openssl.cnf byte for byte, an
# mlkem-provider installed before (purged here first) reinstalled as it was,
# conffiles included, every daemon stopped. The servers it installs from apt
# (scripts/packages.sh) stay installed, with their services disabled: apt
# starts none of them, and none starts at the next boot.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/common.sh
source scripts/common.sh
source scripts/packages.sh
# shellcheck source=scripts/groups.sh
source scripts/groups.sh # norm_group, pq_group_names: tls-groups/groups.tsv
source scripts/system-state.sh

log() { echo "compat-test: $*" >&2; }
die() { log "FAIL: $*"; exit 1; }

mode=full
out=""
while (($#)); do
    case $1 in
        --quick) mode=quick; shift ;;
        --out) (($# >= 2)) || die "usage: $0 [--quick] [--out DIR]"; out=$2; shift 2 ;;
        -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "unknown argument: $1" >&2; exit 2 ;;
    esac
done

if [ "$(id -u)" -ne 0 ]; then
    in_ci && die "needs root (dpkg -i, apt-get, /etc/ssl/openssl.cnf, daemons)"
    log "skipped: needs root (dpkg -i, apt-get, /etc/ssl/openssl.cnf, daemons)"
    exit 0
fi

started=$(date +%s)
work=$(mktemp -d /tmp/compat-test.XXXXXX)
chmod 755 "$work" # Apache's and PostgreSQL's users read their files here
if [ -z "$out" ]; then
    out=$(mktemp -d /tmp/compat-out.XXXXXX)
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
log "output: $out ($mode)"

system_cnf=/etc/ssl/openssl.cnf
declare -A svc_pid=()
# No daemon outlives the script, even if its trap never runs.
svc_limit=1800

stop_service() { # NAME [SIGNAL]
    local name=$1 sig=${2:-TERM} pid=${svc_pid[$1]:-} _
    [ -n "$pid" ] || return 0
    kill "-$sig" "$pid" 2>/dev/null || true
    for _ in $(seq 100); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
        log "$name (pid $pid) did not stop on SIG$sig; killing it"
        kill -KILL "$pid" 2>/dev/null || true
    fi
    wait "$pid" 2>/dev/null || true
    unset "svc_pid[$name]"
}

# Run by scripts/system-state.sh on every exit, before it puts back
# /etc/ssl/openssl.cnf and the package.
state_cleanup() {
    local name
    for name in "${!svc_pid[@]}"; do
        stop_service "$name" || true
    done
    rm -rf "$work"
}
state_begin compat-test || die "the state of an earlier run could not be restored"

# ------------------------------------------------------------------ helpers
start_service() { # NAME CMD... (foreground daemon, output to $work/NAME.out)
    local name=$1
    shift
    timeout -k 5 "$svc_limit" "$@" >"$work/$name.out" 2>&1 </dev/null &
    svc_pid[$name]=$!
    state_note_pid "${svc_pid[$name]}"
    state_checkpoint "service-$name"
}

wait_port() { # PORT NAME [SECONDS]
    local port=$1 name=$2 tries=$((${3:-30} * 5)) _
    for _ in $(seq "$tries"); do
        if timeout 1 bash -c "exec 3<>/dev/tcp/127.0.0.1/$port" 2>/dev/null; then
            return 0
        fi
        kill -0 "${svc_pid[$name]}" 2>/dev/null || break
        sleep 0.2
    done
    log "$name did not listen on 127.0.0.1:$port; its output:"
    tail -20 "$work/$name.out" >&2 || true
    return 1
}

# tlswatch in front of TARGET: sets watch_port, logs to $work/NAME.wire.
watch_port=""
watch() { # NAME TARGET_PORT
    free_port watch_port || die "no free port"
    : >"$work/$1.wire"
    start_service "watch-$1" /usr/bin/python3 scripts/compat/tlswatch.py "$watch_port" "$2" "$work/$1.wire"
    wait_port "$watch_port" "watch-$1" 10
}

# The group an OpenSSL s_client or gnutls-cli printed, normalised.
client_group() { # FILE
    local g
    g=$(sed -n -e 's/^Negotiated TLS1.3 group: \([^ ]*\).*/\1/p' \
        -e 's/^\(Peer\|Server\) Temp Key: ECDH, \([^,]*\),.*/\2/p' \
        -e 's/^\(Peer\|Server\) Temp Key: \([^,]*\),.*/\2/p' \
        -e 's/^- Description: ([^)]*)-(ECDHE-\([^)]*\)).*/\1/p' \
        -e 's/^- Description: ([^)]*)-(\(HYBRID-[^)]*\|MLKEM[^)]*\)).*/\1/p' "$1" | head -1)
    [ -n "$g" ] && norm_group "$g"
}

# Runs a client (stdin from $probe_in, output to $work/last.out) through a
# watch; sets probe_rc, wire_group, wire_hrr.
probe_in=/dev/null
probe() { # WIRE_NAME CMD...
    local wire=$work/$1.wire n line _
    shift
    n=$(wc -l <"$wire")
    set +e
    timeout -k 2 30 "$@" <"$probe_in" >"$work/last.out" 2>&1
    probe_rc=$?
    set -e
    probe_in=/dev/null
    line=""
    for _ in $(seq 50); do
        line=$(sed -n "$((n + 1))p" "$wire")
        [ -n "$line" ] && break
        sleep 0.1
    done
    wire_group=$(sed -n 's/.* group=\([^ ]*\).*/\1/p' <<<"$line")
    wire_hrr=$(sed -n 's/.* hrr=\([^ ]*\).*/\1/p' <<<"$line")
    wire_group=${wire_group:-none}
    wire_hrr=${wire_hrr:-n/a}
    cp "$work/last.out" "$out/logs/$(printf '%03d' "$((${#rows[@]} + 1))").log"
    printf '# %s\n# wire: %s\n' "$*" "${line:-nothing}" >>"$out/logs/$(printf '%03d' "$((${#rows[@]} + 1))").log"
}

# One table row from the last probe: passes when the client exited 0, the
# wire shows WANT (and HRR as given: yes/no, or - for either) and every
# SEEN (label=group) agrees.
rows=()
failures=0
record() { # SOFTWARE ROLE PEER WANT WANT_HRR [LABEL=GROUP]...
    local software=$1 role=$2 peer=$3 want hrr_want=$5 result=pass why="" seen="wire" s label g
    want=$(norm_group "$4")
    shift 5
    [ "$probe_rc" -eq 0 ] || why+=" exit $probe_rc;"
    [ "$wire_group" = "$want" ] || why+=" wire $wire_group, want $want;"
    [ "$hrr_want" = - ] || [ "$wire_hrr" = "$hrr_want" ] || why+=" HRR $wire_hrr, want $hrr_want;"
    for s in "$@"; do
        if [ "${s#note=}" != "$s" ]; then
            row_note+="${row_note:+; }${s#note=}"
            continue
        fi
        label=${s%%=*}
        g=${s#*=}
        if [ -z "$g" ] && [ "${label%\?}" != "$label" ]; then
            : # LABEL?=: that side does not show this group
        elif [ -z "$g" ]; then
            why+=" $label shows no group;"
        elif [ "$(norm_group "$g")" != "$want" ]; then
            why+=" $label shows $g;"
        else
            seen+=", ${label%\?}"
        fi
    done
    if [ -n "$why" ]; then
        result="FAIL:${why%;}"
        failures=$((failures + 1))
        log "FAIL $software / $peer:${why%;} (log: $out/logs/$(printf '%03d' "$((${#rows[@]} + 1))").log)"
        tail -5 "$work/last.out" | sed 's/^/    /' >&2
    else
        log "ok   $software / $peer: $wire_group (HRR $wire_hrr; $seen)"
    fi
    rows+=("$software|$role|$peer|$wire_group|$wire_hrr|$seen|$result|$row_note")
    row_note=""
}
row_note=""

run_check() { # the package's own check, which it must ship
    if [ -n "$check_bin" ]; then
        log "mlkem-provider-check ($1):"
        timeout 60 "$check_bin" 2>&1 | sed 's/^/    /' >&2 ||
            { log "FAIL: mlkem-provider-check exited non-zero ($1)"; failures=$((failures + 1)); }
    else
        log "FAIL: the package installed no mlkem-provider-check ($1)"
        failures=$((failures + 1))
    fi
}

# ------------------------------------------------------------------ packages
# The `servers` group of scripts/packages.sh; apt starts none of their
# services: this test runs its own instances.
mapfile -t server_packages < <(packages_in servers)
packages_ensure compat-test "$(packages_policy)" "${server_packages[@]}" python3 ||
    die "missing packages"
pg_bin=$(printf '%s\n' /usr/lib/postgresql/*/bin | sort -V | tail -1)

# ------------------------------------------------------------------ OpenSSL 3.5
prefix35=$(openssl_find 3.5) || die "no OpenSSL 3.5 at $(openssl_prefix 3.5) (MLKEM_SKIP_OPENSSL_BUILD=1?)"
openssl35=$prefix35/bin/openssl

# ------------------------------------------------------------------ package
deb=$(bash scripts/package-deb.sh | tail -1)
# Reinstalled as it is on any exit (scripts/system-state.sh).
state_note_package mlkem-provider || die "could not save the installed mlkem-provider"
if dpkg -s mlkem-provider >/dev/null 2>&1; then
    log "purging an installed mlkem-provider first (put back on exit)"
    state_dpkg --purge mlkem-provider
fi
state_dpkg -i "$deb"
# The package's own (not one scripts/install.sh put under /usr/local).
check_bin=$(dpkg -L mlkem-provider | grep -m1 '/bin/mlkem-provider-check$' || true)
[ -z "$check_bin" ] || [ -x "$check_bin" ] || check_bin=""
log "installed $(dpkg-query -W -f='${Package} ${Version}' mlkem-provider)"
modules_dir=$(openssl version -m | sed -n 's/^MODULESDIR: "\(.*\)"$/\1/p')

# Certificates (P-256, self-signed, for localhost and 127.0.0.1), made before
# the system file changes.
make_cert "$work"
chmod 644 "$work/cert.pem"
cat "$work/cert.pem" "$work/key.pem" >"$work/combined.pem"
mkdir -p "$out/logs"

# ------------------------------------------------------------------ system-wide
state_save_file "$system_cnf"
printf '.include /etc/ssl/mlkem-provider.cnf\n.include /etc/ssl/mlkem-tls-groups.cnf\n' >>"$system_cnf"
log "appended the two .include lines to $system_cnf (restored on exit)"
openssl list -providers | grep -q 'name: mlkem' || die "openssl list -providers: no mlkem with the .include lines"
run_check start

pq_groups=$(pq_group_names | paste -sd" ")
if [ "$mode" = quick ]; then
    client_groups=X25519MLKEM768
    server_groups=X25519MLKEM768:X25519
else
    client_groups=$pq_groups
    server_groups=${pq_groups// /:}:X25519:P-256
fi
sys_openssl="openssl $(openssl version | awk '{print $2}')"
o35="openssl $("$openssl35" version | awk '{print $2}')"
gnutls="gnutls-cli $(gnutls-cli --version | sed -n 's/^gnutls-cli \([^ ]*\).*/\1/p')"
curl_v="curl $(curl --version | awk 'NR==1 {print $2}')"
printf 'GET / HTTP/1.0\r\nHost: localhost\r\n\r\n' >"$work/http-get"

# The four clients of a server row set: OpenSSL 3.5 per post-quantum group,
# the system client (caller), gnutls-cli and the system openssl without the
# provider. s_client args: -connect, -starttls, ...
pq_clients() { # NAME SOFTWARE SERVER_SEEN_FN S_CLIENT_ARGS...
    local name=$1 software=$2 seen_fn=$3 g seen
    shift 3
    for g in $client_groups; do
        [ -n "$http" ] && probe_in=$work/http-get
        probe "$name" "$openssl35" s_client "$@" -CAfile "$work/cert.pem" -verify_return_error \
            -groups "$g" ${http:+-ign_eof}
        mapfile -t seen < <($seen_fn)
        record "$software" server "$o35 s_client -groups $g" "$g" no \
            "client=$(client_group "$work/last.out")" "${seen[@]}"
    done
}
# The package's own check in remote mode, as one more post-quantum client:
# its first connection offers X25519MLKEM768 alone (the wire row), and its
# conclusion must name the same group.
check_client() { # NAME SOFTWARE [CHECK ARGS...]
    local name=$1 software=$2
    shift 2
    [ -n "$check_bin" ] || return 0 # run_check has failed the run
    probe "$name" "$check_bin" "$@"
    record "$software" server "mlkem-provider-check $*" X25519MLKEM768 no \
        "client=$(sed -n 's/^127\.0\.0\.1 negotiates \([^ ]*\).*/\1/p' "$work/last.out")"
}
classical_clients() { # NAME SOFTWARE SERVER_SEEN_FN GNUTLS_ARGS(- to skip) -- S_CLIENT_ARGS...
    local name=$1 software=$2 seen_fn=$3 gargs=() g seen
    shift 3
    while [ "$1" != -- ]; do gargs+=("$1"); shift; done
    shift
    if [ "${gargs[0]}" != - ]; then
        [ -n "$http" ] && probe_in=$work/http-get
        probe "$name" gnutls-cli --x509cafile="$work/cert.pem" "${gargs[@]}"
        mapfile -t seen < <($seen_fn)
        record "$software" server "$gnutls (classical)" "$cl_want_gnutls" "$cl_hrr_gnutls" \
            "client=$(client_group "$work/last.out")" "${seen[@]}"
    fi
    [ -n "$http" ] && probe_in=$work/http-get
    probe "$name" env OPENSSL_CONF=/dev/null openssl s_client "$@" -CAfile "$work/cert.pem" \
        -verify_return_error ${http:+-ign_eof}
    mapfile -t seen < <($seen_fn)
    record "$software" server "$sys_openssl s_client, OPENSSL_CONF=/dev/null (classical)" "$cl_want" "$cl_hrr_openssl" \
        "client=$(client_group "$work/last.out")" "${seen[@]}"
}
no_seen() { :; }
# What the classical clients get. The system openssl without the provider
# sends an X25519 key share; gnutls-cli sends P-256 and X25519 shares, and
# libssl 3.0 takes the first of the client's shares that it supports: P-256
# where the server's list has it.
classical_defaults() { # SERVER_GROUPS
    cl_want=X25519 cl_hrr_gnutls=no cl_hrr_openssl=no cl_want_gnutls=X25519
    case :$1: in *:P-256:*) cl_want_gnutls=P-256 ;; esac
}
classical_defaults "$server_groups"
# An HTTP server's body line "TLSv1.3 GROUP".
http_seen() { echo "server=$(sed -n 's/^TLSv1\.3 \([^ \r]*\).*/\1/p' "$work/last.out" | tail -1)"; }
http=""

# ------------------------------------------------------------------ nginx
server_nginx() {
    local d=$work/nginx port sw
    sw="nginx $(nginx -v 2>&1 | sed 's/.*nginx\///')"
    mkdir -p "$d/logs"
    free_port port || die "no free port"
    cat >"$d/nginx.conf" <<CONF
daemon off;
pid $d/nginx.pid;
error_log $d/logs/error.log notice;
worker_processes 1;
events { worker_connections 64; }
http {
    log_format compat '\$remote_addr \$ssl_protocol \$ssl_curve';
    access_log $d/logs/access.log compat;
    client_body_temp_path $d/body;
    proxy_temp_path $d/proxy;
    fastcgi_temp_path $d/fastcgi;
    uwsgi_temp_path $d/uwsgi;
    scgi_temp_path $d/scgi;
    server {
        listen 127.0.0.1:$port ssl;
        server_name localhost;
        ssl_certificate $work/cert.pem;
        ssl_certificate_key $work/key.pem;
        ssl_protocols TLSv1.3;
        ssl_ecdh_curve $server_groups;
        location / { return 200 "\$ssl_protocol \$ssl_curve\n"; }
    }
}
CONF
    start_service nginx nginx -p "$d" -c "$d/nginx.conf"
    wait_port "$port" nginx || { record_down "$sw"; return; }
    watch nginx "$port"
    http=1
    pq_clients nginx "$sw" http_seen -connect "127.0.0.1:$watch_port" -servername localhost
    check_client nginx "$sw" "127.0.0.1:$watch_port"
    # libssl 3.0 as a server takes a key share the client sent over asking
    # for its own first choice: a client that lists X25519MLKEM768 but sends
    # an X25519 share gets X25519, whatever ssl_ecdh_curve's order.
    probe_in=$work/http-get
    probe nginx "$openssl35" s_client -connect "127.0.0.1:$watch_port" -servername localhost \
        -CAfile "$work/cert.pem" -verify_return_error -groups X25519:X25519MLKEM768 -ign_eof
    row_note="libssl 3.0 server: the client's key share wins over the server's order"
    record "$sw" server "$o35 s_client -groups X25519:X25519MLKEM768" X25519 no \
        "client=$(client_group "$work/last.out")" "$(http_seen)"
    probe nginx curl -sS --cacert "$work/cert.pem" "https://localhost:$watch_port/" \
        --resolve "localhost:$watch_port:127.0.0.1"
    record "$sw" server "$curl_v (system config)" X25519MLKEM768 no "server=$(http_seen | cut -d= -f2)"
    classical_clients nginx "$sw" http_seen -p "$watch_port" localhost -- \
        -connect "127.0.0.1:$watch_port" -servername localhost
    http=""
    stop_service nginx QUIT
    stop_service watch-nginx
    if grep -E '\[(error|crit|alert|emerg)\]' "$d/logs/error.log" >&2; then
        log "FAIL: nginx's error log has the errors above"
        failures=$((failures + 1))
    fi
}

record_down() { # SOFTWARE: the server did not start
    probe_rc=1 wire_group=none wire_hrr=n/a
    : >"$work/last.out"
    record "$1" server "(server did not start: $work)" X25519MLKEM768 -
}


# The rows of an HTTPS server that shows no group itself, behind its watch:
# OpenSSL 3.5 per group, the system's curl, and the classical clients.
https_rows() { # NAME SOFTWARE
    local name=$1 sw=$2
    http=1
    pq_clients "$name" "$sw" no_seen -connect "127.0.0.1:$watch_port" -servername localhost
    probe "$name" curl -sS --cacert "$work/cert.pem" "https://localhost:$watch_port/" \
        --resolve "localhost:$watch_port:127.0.0.1"
    record "$sw" server "$curl_v (system config)" X25519MLKEM768 no
    classical_clients "$name" "$sw" no_seen -p "$watch_port" localhost -- \
        -connect "127.0.0.1:$watch_port" -servername localhost
    http=""
}
# ------------------------------------------------------------------ Apache
server_apache() {
    local d=$work/apache port sw
    sw="Apache $(apache2 -v | sed -n 's/^Server version: Apache\/\([^ ]*\).*/\1/p') mod_ssl"
    mkdir -p "$d/htdocs"
    free_port port || die "no free port"
    echo ok >"$d/htdocs/index.html"
    # mod_ssl has no variable for the group (SSL_CURVE is not one of its
    # variables in 2.4): the wire says which.
    cat >"$d/httpd.conf" <<CONF
ServerRoot $d
ServerName localhost
Listen 127.0.0.1:$port https
PidFile $d/httpd.pid
DefaultRuntimeDir $d
Mutex file:$d default
User www-data
Group www-data
ErrorLog $d/error.log
LogLevel warn ssl:info
LoadModule mpm_event_module /usr/lib/apache2/modules/mod_mpm_event.so
LoadModule authz_core_module /usr/lib/apache2/modules/mod_authz_core.so
LoadModule socache_shmcb_module /usr/lib/apache2/modules/mod_socache_shmcb.so
LoadModule ssl_module /usr/lib/apache2/modules/mod_ssl.so
LogFormat "%h %{SSL_PROTOCOL}x %{SSL_CIPHER}x \"%r\" %>s" compat
CustomLog $d/access.log compat
DocumentRoot $d/htdocs
<Directory $d/htdocs>
    Require all granted
</Directory>
SSLSessionCache shmcb:$d/ssl_scache(512000)
<VirtualHost 127.0.0.1:$port>
    SSLEngine on
    SSLCertificateFile $work/cert.pem
    SSLCertificateKeyFile $work/key.pem
    SSLProtocol -all +TLSv1.3
    SSLOpenSSLConfCmd Groups $server_groups
</VirtualHost>
CONF
    start_service apache apache2 -d "$d" -f "$d/httpd.conf" -DFOREGROUND
    wait_port "$port" apache || { record_down "$sw"; return; }
    watch apache "$port"
    https_rows apache "$sw"
    stop_service apache
    stop_service watch-apache
    if grep -E ':(error|crit|alert|emerg)\]' "$d/error.log" >&2; then
        log "FAIL: Apache's error log has the errors above"
        failures=$((failures + 1))
    fi
}

# ------------------------------------------------------------------ HAProxy
server_haproxy() {
    local d=$work/haproxy port sw
    sw="HAProxy $(haproxy -v | sed -n 's/^HAProxy version \([^ ]*\).*/\1/p')"
    mkdir -p "$d"
    free_port port || die "no free port"
    # HAProxy 2.6 has no sample fetch for the group (ssl_fc_curve is newer):
    # the wire says which.
    cat >"$d/haproxy.cfg" <<CONF
global
    log stdout format raw local0 info
defaults
    mode http
    log global
    timeout connect 5s
    timeout client 10s
    timeout server 10s
frontend compat
    bind 127.0.0.1:$port ssl crt $work/combined.pem ssl-min-ver TLSv1.3 curves $server_groups
    log-format "%ci %[ssl_fc_protocol] %[ssl_fc_cipher] %ST"
    http-request return status 200 content-type text/plain lf-string "%[ssl_fc_protocol] %[ssl_fc_cipher]\n"
CONF
    start_service haproxy haproxy -db -f "$d/haproxy.cfg"
    wait_port "$port" haproxy || { record_down "$sw"; return; }
    watch haproxy "$port"
    https_rows haproxy "$sw"
    stop_service haproxy
    stop_service watch-haproxy
    if grep -iE 'alert|error' "$work/haproxy.out" >&2; then
        log "FAIL: HAProxy's output has the errors above"
        failures=$((failures + 1))
    fi
}

# ------------------------------------------------------------------ Postfix
# Postfix's master in the foreground (master -d) with its own configuration
# directory, queue and log file; smtpd on a loopback port only.
# Postfix's "key-exchange" of the connection just made: X25519, ECDHE
# (prime256v1), or UNDEF for a provider's group (it has no NID).
postfix_seen() {
    local lines line kex _
    for _ in $(seq 20); do
        lines=$(grep -c 'TLS connection established' "$work/postfix/maillog" || true)
        ((lines > $(cat "$work/postfix/seen"))) && break
        sleep 0.1
    done
    ((lines > $(cat "$work/postfix/seen"))) || { echo "server="; return; }
    echo "$lines" >"$work/postfix/seen"
    line=$(grep 'TLS connection established' "$work/postfix/maillog" | tail -1)
    kex=$(sed -n -e 's/.* key-exchange ECDHE (\([^)]*\)).*/\1/p' -e 's/.* key-exchange \([^ ]*\).*/\1/p' <<<"$line" | head -1)
    if [ "$kex" = UNDEF ]; then
        echo "server?="
        echo "note=Postfix logs key-exchange UNDEF"
    else
        echo "server=$kex"
    fi
}
server_postfix() {
    local d=$work/postfix port sw seen g
    sw="Postfix $(postconf -d -h mail_version 2>/dev/null)"
    mkdir -p "$d/conf" "$d/queue/pid" "$d/queue/private" "$d/queue/public" "$d/data"
    chown postfix "$d/queue/private" "$d/data"
    chown postfix:postdrop "$d/queue/public"
    chmod 700 "$d/queue/private"
    chmod 710 "$d/queue/public"
    free_port port || die "no free port"
    : >"$d/maillog"
    echo 0 >"$d/seen"
    # tls_eecdh_auto_curves: Postfix 3.7 looks each name up as a NID
    # (EC_curve_nist2nid, OBJ_sn2nid) and drops, with a warning, the
    # provider's names ("ignoring unknown ECDHE curve"); the NIDs left
    # replace the groups of OpenSSL's configuration. A list of provider names
    # only leaves nothing to set, and the system configuration's Groups line
    # (mlkem-tls-groups.cnf) chooses; any classical name in it (the default
    # list is all classical) would shut ML-KEM out.
    pf_curves=""
    for g in ${server_groups//:/ }; do
        case $g in X25519 | P-256) ;; *) pf_curves+="${pf_curves:+ }$g" ;; esac
    done
    classical_defaults "$(sed -n 's/^Groups = //p' /etc/ssl/mlkem-tls-groups.cnf)"
    cat >"$d/conf/main.cf" <<CONF
compatibility_level = 3.6
queue_directory = $d/queue
data_directory = $d/data
mail_owner = postfix
myhostname = localhost
mydestination =
inet_interfaces = 127.0.0.1
inet_protocols = ipv4
maillog_file = $d/maillog
maillog_file_prefixes = $d
local_recipient_maps =
alias_maps =
alias_database =
notify_classes =
smtpd_tls_chain_files = $work/key.pem, $work/cert.pem
smtpd_tls_security_level = may
smtpd_tls_loglevel = 1
smtpd_tls_session_cache_database =
tls_eecdh_auto_curves = $pf_curves
CONF
    cat >"$d/conf/master.cf" <<CONF
127.0.0.1:$port inet n - n - - smtpd
postlog unix-dgram n - n - 1 postlogd
tlsmgr unix - - n 1000? 1 tlsmgr
CONF
    # setsid: master signals its own process group when it stops.
    start_service postfix setsid /usr/lib/postfix/sbin/master -d -c "$d/conf"
    wait_port "$port" postfix || { record_down "$sw"; return; }
    watch postfix "$port"
    pq_clients postfix "$sw" postfix_seen -connect "127.0.0.1:$watch_port" -starttls smtp
    check_client postfix "$sw" --starttls smtp "127.0.0.1:$watch_port"
    probe postfix openssl s_client -connect "127.0.0.1:$watch_port" -starttls smtp \
        -CAfile "$work/cert.pem" -verify_return_error
    mapfile -t seen < <(postfix_seen)
    record "$sw" server "$sys_openssl s_client -starttls smtp (system config)" X25519MLKEM768 no \
        "client?=$(client_group "$work/last.out")" "${seen[@]}"
    classical_clients postfix "$sw" postfix_seen --starttls-proto=smtp -p "$watch_port" localhost -- \
        -connect "127.0.0.1:$watch_port" -starttls smtp
    classical_defaults "$server_groups"
    stop_service postfix
    stop_service watch-postfix
    cp "$d/maillog" "$out/logs/postfix-maillog.txt"
    if grep -E 'warning|fatal|panic' "$d/maillog" | grep -v 'ignoring unknown ECDHE curve' >&2; then
        log "FAIL: Postfix's log has the warnings above"
        failures=$((failures + 1))
    fi
}

# ------------------------------------------------------------------ PostgreSQL
server_postgres() {
    local d=$work/postgres port sw
    sw="PostgreSQL $("$pg_bin/postgres" --version | awk '{print $3}')"
    mkdir -p "$d"
    install -o postgres -m 600 "$work/key.pem" "$d/key.pem"
    chown postgres "$d"
    free_port port || die "no free port"
    timeout 120 setpriv --reuid=postgres --regid=postgres --init-groups \
        "$pg_bin/initdb" -D "$d/data" -A trust -U postgres >"$work/initdb.out" 2>&1 ||
        { cat "$work/initdb.out" >&2; record_down "$sw"; return; }
    # PostgreSQL before 18 takes one EC curve name in ssl_ecdh_curve
    # (OBJ_sn2nid, then SSL_CTX_set_tmp_ecdh, which replaces the group list
    # with that curve): the server offers P-256 (the default, prime256v1)
    # and nothing else, whatever the system configuration's Groups line says.
    # A provider group's name is refused at start.
    probe_rc=0
    set +e
    timeout 30 setpriv --reuid=postgres --regid=postgres --init-groups \
        "$pg_bin/postgres" -D "$d/data" -k "$d" -p "$port" -c listen_addresses=127.0.0.1 \
        -c ssl=on -c ssl_cert_file="$work/cert.pem" -c ssl_key_file="$d/key.pem" \
        -c ssl_ecdh_curve=X25519MLKEM768 >"$work/last.out" 2>&1
    local rc=$?
    set -e
    cp "$work/last.out" "$out/logs/postgres-ssl_ecdh_curve.log"
    if [ "$rc" -ne 0 ] && grep -q 'unrecognized curve name' "$work/last.out"; then
        log "ok   $sw: ssl_ecdh_curve=X25519MLKEM768 refused at start ($(grep -o 'FATAL: .*' "$work/last.out" | head -1))"
        rows+=("$sw|server|ssl_ecdh_curve = X25519MLKEM768|n/a|n/a|server log|pass|refused at start: ECDH: unrecognized curve name (expected before PostgreSQL 18)")
    else
        log "FAIL $sw: ssl_ecdh_curve=X25519MLKEM768: exit $rc, not the expected 'unrecognized curve name'"
        rows+=("$sw|server|ssl_ecdh_curve = X25519MLKEM768|n/a|n/a|server log|FAIL: exit $rc|expected a refusal at start")
        failures=$((failures + 1))
    fi
    start_service postgres setpriv --reuid=postgres --regid=postgres --init-groups \
        "$pg_bin/postgres" -D "$d/data" -k "$d" -p "$port" -c listen_addresses=127.0.0.1 \
        -c ssl=on -c ssl_cert_file="$work/cert.pem" -c ssl_key_file="$d/key.pem" \
        -c ssl_min_protocol_version=TLSv1.3
    wait_port "$port" postgres || { record_down "$sw"; return; }
    watch postgres "$port"
    probe postgres "$openssl35" s_client -connect "127.0.0.1:$watch_port" -starttls postgres \
        -CAfile "$work/cert.pem" -verify_return_error -groups X25519MLKEM768:P-256
    row_note="PostgreSQL 15: P-256 only (ssl_ecdh_curve)"
    record "$sw" server "$o35 s_client -groups X25519MLKEM768:P-256" P-256 yes \
        "client=$(client_group "$work/last.out")"
    probe postgres psql "host=127.0.0.1 port=$watch_port user=postgres dbname=postgres sslmode=verify-ca sslrootcert=$work/cert.pem" \
        -Atc "select version, cipher from pg_stat_ssl where pid = pg_backend_pid()"
    row_note="PostgreSQL 15: P-256 only (ssl_ecdh_curve)"
    record "$sw" server "psql $(psql --version | awk '{print $3}') (system config)" P-256 yes
    cl_want=P-256 cl_want_gnutls=P-256 cl_hrr_gnutls=no cl_hrr_openssl=yes
    classical_clients postgres "$sw" no_seen --starttls-proto=postgres -p "$watch_port" localhost -- \
        -connect "127.0.0.1:$watch_port" -starttls postgres
    classical_defaults "$server_groups"
    stop_service postgres INT
    stop_service watch-postgres
}

# ------------------------------------------------------------------ MariaDB
server_mariadb() {
    local d=$work/mariadb port sw
    sw="MariaDB $(mariadbd --version | sed -n 's/.* Ver \([^-]*\)-.*/\1/p')"
    mkdir -p "$d"
    chown mysql "$d"
    install -o mysql -m 600 "$work/key.pem" "$d/key.pem"
    free_port port || die "no free port"
    timeout 120 mariadb-install-db --no-defaults --datadir="$d/data" --user=mysql \
        --auth-root-authentication-method=normal --skip-test-db >"$work/mariadb-install.out" 2>&1 ||
        { cat "$work/mariadb-install.out" >&2; record_down "$sw"; return; }
    # MariaDB has no groups setting: the system configuration's Groups line
    # (mlkem-tls-groups.cnf) chooses.
    start_service mariadb mariadbd --no-defaults --datadir="$d/data" --socket="$d/mysqld.sock" \
        --pid-file="$d/mysqld.pid" --port="$port" --bind-address=127.0.0.1 --user=mysql \
        --skip-grant-tables --skip-name-resolve --log-error="$d/error.log" \
        --ssl-cert="$work/cert.pem" --ssl-key="$d/key.pem" --tls-version=TLSv1.3
    wait_port "$port" mariadb 60 || { cat "$d/error.log" >&2 || true; record_down "$sw"; return; }
    watch mariadb "$port"
    pq_clients mariadb "$sw" no_seen -connect "127.0.0.1:$watch_port" -starttls mysql
    check_client mariadb "$sw" --starttls mysql "127.0.0.1:$watch_port"
    probe mariadb mariadb --no-defaults -h 127.0.0.1 -P "$watch_port" -u root --ssl \
        --ssl-ca="$work/cert.pem" -e "show session status like 'Ssl_version'"
    record "$sw" server "mariadb $(mariadb --version | sed -n 's/.*Distrib \([^-,]*\).*/\1/p') (system config)" X25519MLKEM768 no
    classical_clients mariadb "$sw" no_seen - -- -connect "127.0.0.1:$watch_port" -starttls mysql
    stop_service mariadb
    # The mariadb client against a classical server: the same MariaDB
    # started without the provider (OPENSSL_CONF=/dev/null).
    start_service mariadb env OPENSSL_CONF=/dev/null mariadbd --no-defaults --datadir="$d/data" \
        --socket="$d/mysqld.sock" --pid-file="$d/mysqld.pid" --port="$port" --bind-address=127.0.0.1 \
        --user=mysql --skip-grant-tables --skip-name-resolve --log-error="$d/error.log" \
        --ssl-cert="$work/cert.pem" --ssl-key="$d/key.pem" --tls-version=TLSv1.3
    wait_port "$port" mariadb 60 || { record_down "$sw (OPENSSL_CONF=/dev/null)"; return; }
    probe mariadb mariadb --no-defaults -h 127.0.0.1 -P "$watch_port" -u root --ssl \
        --ssl-ca="$work/cert.pem" -e "show session status like 'Ssl_version'"
    record "mariadb $(mariadb --version | sed -n 's/.*Distrib \([^-,]*\).*/\1/p') (system config)" client \
        "$sw, OPENSSL_CONF=/dev/null (classical)" X25519 yes
    stop_service mariadb
    stop_service watch-mariadb
    if grep -E '\[ERROR\]' "$d/error.log" >&2; then
        log "FAIL: MariaDB's error log has the errors above"
        failures=$((failures + 1))
    fi
}

# ------------------------------------------------------------------ clients
# OpenSSL 3.5's s_server: post-quantum (X25519MLKEM768:X25519) and classical
# (X25519 only: a client leading with an ML-KEM key share gets a
# HelloRetryRequest).
client_rows() { # NAME SERVER_LABEL WANT HRR_WANT WANT_CLASSICAL
    local name=$1 label=$2 want=$3 hrr=$4 py
    probe "$name" curl -sS -o /dev/null --cacert "$work/cert.pem" "https://localhost:$watch_port/" \
        --resolve "localhost:$watch_port:127.0.0.1"
    record "$curl_v" client "$label" "$want" "$hrr"
    probe "$name" wget -q -O /dev/null --ca-certificate="$work/cert.pem" "https://localhost:$watch_port/"
    # Debian's wget is built on GnuTLS: classical only.
    record "wget $(wget --version | awk 'NR==1 {print $3}') (GnuTLS)" client "$label" X25519 no
    py=$(/usr/bin/python3 -c 'import platform, ssl; print(platform.python_version(), ssl.OPENSSL_VERSION.split()[1])')
    # http.client (what urllib.request uses), so the SSLSocket is at hand.
    # Python 3.11's ssl module has no call for the group: the wire says.
    probe "$name" /usr/bin/python3 -c '
import http.client, ssl, sys
ctx = ssl.create_default_context(cafile=sys.argv[2])
conn = http.client.HTTPSConnection("localhost", int(sys.argv[1]), context=ctx, timeout=10)
conn.connect()
group = getattr(conn.sock, "group", None)
print(conn.sock.version(), conn.sock.cipher()[0], "group:", group() if callable(group) else "n/a")
conn.request("GET", "/")
conn.getresponse().read()
' "$watch_port" "$work/cert.pem"
    record "Python ${py% *} http.client (OpenSSL ${py#* })" client "$label" "$want" "$hrr"
    probe "$name" openssl s_client -connect "127.0.0.1:$watch_port" -servername localhost \
        -CAfile "$work/cert.pem" -verify_return_error
    record "$sys_openssl s_client" client "$label" "$want" "$hrr" "client?=$(client_group "$work/last.out")"
    # Node.js where installed (not from this script): its own OpenSSL reads
    # the system file only with --openssl-shared-config, and finds mlkem.so
    # through OPENSSL_MODULES when its modules directory is not the system's.
    if command -v node >/dev/null 2>&1; then
        probe "$name" env OPENSSL_CONF="$system_cnf" OPENSSL_MODULES="$modules_dir" \
            node --openssl-shared-config -e '
const tls = require("tls"), fs = require("fs");
const s = tls.connect({host: "127.0.0.1", port: +process.argv[1], servername: "localhost",
                       ca: fs.readFileSync(process.argv[2])}, () => {
  console.log(s.getProtocol(), s.getCipher().name, JSON.stringify(s.getEphemeralKeyInfo()));
  s.end();
});
s.on("error", e => { console.error(e.message); process.exit(1); });
' "$watch_port" "$work/cert.pem"
        record "Node.js $(node --version | tr -d v) (OpenSSL $(node -p process.versions.openssl))" client \
            "$label" "$want" "$hrr"
    fi
}
clients() {
    local port
    free_port port || die "no free port"
    start_service s_server-pq "$openssl35" s_server -accept "127.0.0.1:$port" -cert "$work/cert.pem" \
        -key "$work/key.pem" -groups X25519MLKEM768:X25519 -www -naccept 100
    wait_port "$port" s_server-pq || { record_down "$o35 s_server"; return; }
    watch s_server-pq "$port"
    client_rows s_server-pq "$o35 s_server -groups X25519MLKEM768:X25519" X25519MLKEM768 no
    stop_service s_server-pq
    stop_service watch-s_server-pq
    free_port port || die "no free port"
    start_service s_server-classic "$openssl35" s_server -accept "127.0.0.1:$port" -cert "$work/cert.pem" \
        -key "$work/key.pem" -groups X25519 -www -naccept 100
    wait_port "$port" s_server-classic || { record_down "$o35 s_server"; return; }
    watch s_server-classic "$port"
    client_rows s_server-classic "$o35 s_server -groups X25519 (classical)" X25519 yes
    stop_service s_server-classic
    stop_service watch-s_server-classic
}

for s in ${COMPAT_ONLY:-nginx apache haproxy postfix postgres mariadb clients}; do
    case $s in
        clients) clients ;;
        *) "server_$s" ;;
    esac
done

# ------------------------------------------------------------------ summary
elapsed=$(($(date +%s) - started))
run_check end
{
    echo "# compat-test ($mode), $(date -u +%Y-%m-%dT%H:%MZ), $(sed -n 's/^PRETTY_NAME="\(.*\)"$/\1/p' /etc/os-release), $sys_openssl + mlkem-provider $(dpkg-query -W -f='${Version}' mlkem-provider), ${elapsed}s"
    echo
    echo "| Software | Role | Peer | Group | HRR | Group seen by | Result | Note |"
    echo "|---|---|---|---|---|---|---|---|"
    for r in "${rows[@]}"; do
        echo "| ${r//|/ | } |"
    done
} >"$out/compat.md"
{
    echo "software,role,peer,group,hrr,seen_by,result,note"
    for r in "${rows[@]}"; do
        IFS='|' read -r -a f <<<"$r"
        printf '"%s","%s","%s","%s","%s","%s","%s","%s"\n' "${f[0]}" "${f[1]}" "${f[2]}" "${f[3]}" \
            "${f[4]}" "${f[5]}" "${f[6]}" "${f[7]:-}"
    done
} >"$out/compat.csv"
cat "$out/compat.md"
log "wrote $out/compat.md, $out/compat.csv and $out/logs/ (${#rows[@]} rows, $failures failed, ${elapsed}s)"
((failures == 0)) || die "$failures failed"
log "PASS"
