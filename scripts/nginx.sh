# shellcheck shell=bash
# Debian's nginx on loopback for the tests (sourced by scripts/deploy-test.sh,
# scripts/nginx-soak.sh and scripts/tls-compare.sh, after scripts/common.sh):
# a TLS 1.3-only server with a self-signed P-256 certificate for localhost
# (make_cert), answering every request with
# "$ssl_protocol $ssl_curve" (on OpenSSL 3.0 the code point of a provider's
# group, e.g. 0x11ec for X25519MLKEM768). The caller's environment reaches
# nginx: OPENSSL_CONF (and OPENSSL_MODULES) enable the provider.
#
#   nginx_start DIR GROUPS [DIRECTIVES]   # sets nginx_port, nginx_pid
#   nginx_workers                         # the worker pids
#   nginx_stop
#   nginx_log_problems DIR                # [error] and worse, printed
#
# GROUPS is colon-separated (ssl_ecdh_curve); DIRECTIVES are added to the
# server block. The port is a free ephemeral one (free_port), or NGINX_PORT
# if set. A caller that ran state_begin (scripts/system-state.sh) has the
# daemon noted there, so that no exit, not even SIGKILL, leaves it running.

nginx_pid=""
nginx_port=""

nginx_start() {
    local dir=$1 groups=$2 directives=${3:-}
    mkdir -p "$dir/logs"
    make_cert "$dir"
    nginx_port=${NGINX_PORT:-}
    [ -n "$nginx_port" ] || free_port nginx_port 32768 60999 || return 1
    cat >"$dir/nginx.conf" <<CONF
daemon on;
pid $dir/nginx.pid;
error_log $dir/logs/error.log notice;
worker_processes 2;
events { worker_connections 64; }
http {
    access_log $dir/logs/access.log;
    client_body_temp_path $dir/body;
    proxy_temp_path $dir/proxy;
    fastcgi_temp_path $dir/fastcgi;
    uwsgi_temp_path $dir/uwsgi;
    scgi_temp_path $dir/scgi;
    server {
        listen 127.0.0.1:$nginx_port ssl;
        server_name localhost;
        ssl_certificate $dir/cert.pem;
        ssl_certificate_key $dir/key.pem;
        ssl_protocols TLSv1.3;
        ssl_ecdh_curve $groups;
        $directives
        location / { return 200 "\$ssl_protocol \$ssl_curve\n"; }
    }
}
CONF
    nginx -p "$dir" -c "$dir/nginx.conf" || {
        echo "nginx did not start; $(cat "$dir/logs/error.log" 2>/dev/null)" >&2
        return 1
    }
    local _
    for _ in $(seq 50); do
        [ -s "$dir/nginx.pid" ] && break
        sleep 0.1
    done
    nginx_pid=$(cat "$dir/nginx.pid")
    # A daemon: under scripts/system-state.sh, killed on any exit of the
    # caller, and by the next run after a SIGKILL.
    if [ -n "${state_dir:-}" ]; then state_note_pid "$nginx_pid"; fi
}

nginx_workers() {
    ps --ppid "$nginx_pid" -o pid= | tr -d ' '
}

nginx_stop() {
    [ -n "$nginx_pid" ] || return 0
    kill -QUIT "$nginx_pid" 2>/dev/null || true
    local _
    for _ in $(seq 50); do
        kill -0 "$nginx_pid" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$nginx_pid" 2>/dev/null; then
        echo "nginx (pid $nginx_pid) did not stop" >&2
        return 1
    fi
    nginx_pid=""
}

nginx_log_problems() {
    grep -E '\[(error|crit|alert|emerg)\]' "$1/logs/error.log"
}
