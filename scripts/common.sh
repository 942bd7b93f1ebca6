# Shell helpers shared by the scripts (sourced; scripts/setup.sh sources it).

# The one rule for "running in CI", as test_tools::ci::running_in_ci has it
# for the Rust tests: CI is `true` (any case) or `1`. Under CI, what a check
# needs and lacks (vectors, an OpenSSL build, root, qemu) fails it instead of
# skipping it.
in_ci() {
    local value=${CI:-}
    [ "${value,,}" = true ] || [ "$value" = 1 ]
}

# openssl_prefix SERIES: where scripts/build-openssl.sh installs SERIES (3.5,
# 3.0.2...), from its pin, built or not.
openssl_prefix() {
    local here version
    here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
    version=$(sed -n "s/^ *\[$1\]=\"[^+\"]*+\([^\"]*\)\"\$/\1/p" "$here/build-openssl.sh")
    [ -n "$version" ] || { echo "openssl_prefix: no series $1 in scripts/build-openssl.sh" >&2; return 1; }
    echo "${MLKEM_OPENSSL_CACHE:-$HOME/.cache/mlkem-provider/openssl}/openssl-$version"
}

# openssl_find SERIES: the prefix of a working build of SERIES, built by
# scripts/build-openssl.sh unless MLKEM_SKIP_OPENSSL_BUILD=1; when that is
# set and it is not built: nothing and status 1 (callers skip, or fail
# under CI).
openssl_find() {
    local prefix here
    if [ "${MLKEM_SKIP_OPENSSL_BUILD:-0}" = 1 ]; then
        prefix=$(openssl_prefix "$1") || return 1
        [ -x "$prefix/bin/openssl" ] || return 1
        echo "$prefix"
    else
        here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
        prefix=$(timeout 3600 bash "$here/build-openssl.sh" "$1" | tail -1)
        [ -x "$prefix/bin/openssl" ] || return 1
        echo "$prefix"
    fi
}

# free_port VAR [LOW HIGH]: sets VAR to a 127.0.0.1 port in LOW-HIGH
# (default 20000-32767, below Linux's ephemeral range) that binds now and
# that this script has not handed out before. Another process can still
# take it before the caller binds it: servers that can, retry.
declare -A mlkem_used_port=()
free_port() {
    # Underscored names: the caller's variable may be called port.
    local _fp_port _fp_low=${2:-20000} _fp_high=${3:-32767}
    for _fp_port in $(shuf -i "$_fp_low-$_fp_high" -n 200); do
        [ -z "${mlkem_used_port[$_fp_port]:-}" ] || continue
        if python3 -c 'import socket, sys; s = socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1])))' \
            "$_fp_port" 2>/dev/null; then
            mlkem_used_port[$_fp_port]=1
            printf -v "$1" '%s' "$_fp_port"
            return 0
        fi
    done
    echo "free_port: no free port in $_fp_low-$_fp_high" >&2
    return 1
}

# make_cert DIR: DIR/key.pem and DIR/cert.pem, a self-signed P-256
# certificate for localhost and 127.0.0.1 (two days), by the system openssl
# with no configuration of its own (so no provider the system file enables).
make_cert() {
    mkdir -p "$1"
    OPENSSL_CONF=/dev/null openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
        -subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1 \
        -keyout "$1/key.pem" -out "$1/cert.pem" 2>/dev/null
}
