#!/usr/bin/env bash
# Installs the mlkem provider for an OpenSSL, or removes it again.
#
#   scripts/install.sh                  # for the system's OpenSSL (as root)
#   scripts/install.sh --prefix DIR     # under DIR, for any OpenSSL
#   scripts/install.sh [...] --uninstall
#
# What goes where (system layout; the OpenSSL asked is `openssl` on PATH, or
# --openssl BIN):
#   mlkem.so                  OpenSSL's modules directory (`openssl version -m`;
#                             Debian: /usr/lib/x86_64-linux-gnu/ossl-modules),
#                             so `-provider mlkem` needs no -provider-path
#                             (--modules-dir DIR names it instead: a package,
#                             perhaps for another architecture)
#   mlkem-provider-check      /usr/bin: says whether post-quantum TLS is in
#                             effect here or on a server
#   mlkem-provider-check.1.gz DATADIR/man/man1: its manual page
#   mlkem-provider.cnf        beside the system openssl.cnf (Debian: /etc/ssl):
#   mlkem-tls-groups.cnf      snippets an admin enables with `.include` lines
#                             (see docs/deploying.md); openssl.cnf
#                             itself is never edited (--confdir DIR names the
#                             directory of openssl.cnf instead)
#   openssl-service.cnf       DATADIR/mlkem-provider: the system configuration
#                             plus both snippets, for OPENSSL_CONF of one service
#   README.md, openssl.cnf.example, copyright
#                             DATADIR/doc/mlkem-provider
#   docs/deploying.md, docs/deploying-servers.md, docs/deploying-rhel.md,
#   docs/configuration.md, docs/mlkem-provider-check.md
#                             DATADIR/doc/mlkem-provider/docs: the guides the
#                             README links to for administrators
# DATADIR is /usr/local/share (--datadir to change it; the Debian package uses
# /usr/share). With --prefix DIR everything goes under DIR instead:
# DIR/lib/ossl-modules/mlkem.so, DIR/bin/mlkem-provider-check,
# DIR/etc/ssl/*.cnf (whose [mlkem_sect] then names the module's path) and
# DIR/share; point OPENSSL_CONF at
# DIR/share/mlkem-provider/openssl-service.cnf, or OPENSSL_MODULES at
# DIR/lib/ossl-modules.
#
# --destdir DIR stages the files under DIR (for packaging: the paths inside
# them stay those of the real install). --module FILE installs that mlkem.so
# instead of building one (scripts/build-provider.sh), --check-bin FILE that
# mlkem-provider-check instead of building it (cargo build --release -p
# mlkem-provider-check). The installed files are listed on stdout, one per
# line.
set -euo pipefail
script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
prog=${0##*/}

usage() {
    cat <<EOF
usage: $prog [--prefix DIR] [--datadir DIR] [--destdir DIR] [--openssl BIN]
                  [--modules-dir DIR] [--confdir DIR] [--module FILE]
                  [--check-bin FILE]
                  [--uninstall]
Installs mlkem.so, its configuration snippets and mlkem-provider-check (with
its manual page) for the system's OpenSSL (or under --prefix DIR);
--uninstall removes the same files. See the header of this script for the
layout.
EOF
}

log() { echo "install: $*" >&2; }
die() { log "error: $*"; exit 1; }

prefix="" datadir="" destdir="" openssl=openssl module="" check_bin="" modules_dir=""
conf_dir="" uninstall=false
while (($#)); do
    case $1 in
        -h | --help) usage; exit 0 ;;
        --prefix | --datadir | --destdir | --openssl | --module | --check-bin | --modules-dir | --confdir)
            (($# >= 2)) || { usage >&2; exit 2; }
            case $1 in
                --prefix) prefix=$2 ;;
                --datadir) datadir=$2 ;;
                --destdir) destdir=$2 ;;
                --openssl) openssl=$2 ;;
                --module) module=$2 ;;
                --check-bin) check_bin=$2 ;;
                --modules-dir) modules_dir=$2 ;;
                --confdir) conf_dir=$2 ;;
            esac
            shift 2 ;;
        --uninstall) uninstall=true; shift ;;
        *) log "unknown argument: $1"; usage >&2; exit 2 ;;
    esac
done

# ---------------------------------------------------------------- layout
if [ -n "$prefix" ]; then
    case $prefix in /*) ;; *) prefix=$(pwd)/$prefix ;; esac
    modules_dir=${modules_dir:-$prefix/lib/ossl-modules}
    bin_dir=$prefix/bin
    conf_dir=${conf_dir:-$prefix/etc/ssl}
    system_conf=$conf_dir/openssl.cnf
    datadir=${datadir:-$prefix/share}
else
    # Asks the OpenSSL for what --modules-dir and --confdir do not name.
    if [ -z "$modules_dir" ] || [ -z "$conf_dir" ]; then
        command -v "$openssl" >/dev/null 2>&1 || die "no '$openssl' on PATH (or give --openssl BIN)"
    fi
    # `openssl version -m` prints MODULESDIR: "/path"; -d prints OPENSSLDIR.
    [ -n "$modules_dir" ] ||
        modules_dir=$("$openssl" version -m | sed -n 's/^MODULESDIR: "\(.*\)"$/\1/p')
    [ -n "$modules_dir" ] || die "'$openssl version -m' did not name the modules directory"
    if [ -n "$conf_dir" ]; then
        system_conf=$conf_dir/openssl.cnf
    else
        openssl_dir=$("$openssl" version -d | sed -n 's/^OPENSSLDIR: "\(.*\)"$/\1/p')
        [ -n "$openssl_dir" ] || die "'$openssl version -d' did not name the configuration directory"
        # Debian's /usr/lib/ssl/openssl.cnf is a link to /etc/ssl/openssl.cnf:
        # the snippets go beside the file itself, in /etc.
        system_conf=$(readlink -f "$openssl_dir/openssl.cnf" 2>/dev/null || echo "$openssl_dir/openssl.cnf")
        conf_dir=$(dirname "$system_conf")
    fi
    datadir=${datadir:-/usr/local/share}
    bin_dir=/usr/bin
fi
share_dir=$datadir/mlkem-provider
doc_dir=$datadir/doc/mlkem-provider
man_dir=$datadir/man/man1
# The administrators' guides, under the names the README's links use.
guides=(deploying.md deploying-servers.md deploying-rhel.md configuration.md mlkem-provider-check.md)
files=(
    "$modules_dir/mlkem.so"
    "$bin_dir/mlkem-provider-check"
    "$man_dir/mlkem-provider-check.1.gz"
    "$conf_dir/mlkem-provider.cnf"
    "$conf_dir/mlkem-tls-groups.cnf"
    "$share_dir/openssl-service.cnf"
    "$doc_dir/README.md"
    "$doc_dir/openssl.cnf.example"
    "$doc_dir/copyright"
    "${guides[@]/#/$doc_dir/docs/}"
)

if $uninstall; then
    for file in "${files[@]}"; do
        if [ -e "$destdir$file" ]; then
            rm -f "$destdir$file"
            echo "$file"
        fi
    done
    rmdir "$destdir$share_dir" "$destdir$doc_dir/docs" "$destdir$doc_dir" 2>/dev/null || true
    log "removed; delete any '.include $conf_dir/mlkem-*.cnf' line you added to $system_conf"
    exit 0
fi

# ---------------------------------------------------------------- binaries
if [ -z "$module" ]; then
    module=$(bash "$script_dir/build-provider.sh" | tail -1)/mlkem.so
fi
[ -f "$module" ] || die "no module at $module"
if [ -z "$check_bin" ]; then
    (cd "$script_dir/.." && cargo build --release -q -p mlkem-provider-check) >&2
    check_bin=${CARGO_TARGET_DIR:-$script_dir/../target}/release/mlkem-provider-check
fi
[ -f "$check_bin" ] || die "no mlkem-provider-check at $check_bin"

# ---------------------------------------------------------------- files
put() { # put MODE SOURCE DEST
    install -D -m "$1" "$2" "$destdir$3"
    echo "$3"
}
put 0644 "$module" "$modules_dir/mlkem.so"
put 0755 "$check_bin" "$bin_dir/mlkem-provider-check"

staging=$(mktemp -d)
trap 'rm -rf "$staging"' EXIT
cp "$script_dir/package/mlkem-provider.cnf" "$staging/mlkem-provider.cnf"
if [ -n "$prefix" ]; then
    # Not OpenSSL's modules directory: the snippet names the module.
    sed -i "s|^\[mlkem_sect\]$|&\nmodule = $modules_dir/mlkem.so|" "$staging/mlkem-provider.cnf"
fi
sed -e "s|@OPENSSLDIR@/openssl.cnf|$system_conf|" -e "s|@CONFDIR@|$conf_dir|g" \
    "$script_dir/package/openssl-service.cnf.in" >"$staging/openssl-service.cnf"
if [ -n "$prefix" ] && [ ! -e "$system_conf" ]; then
    # A prefix has no system configuration of its own: include nothing.
    sed -i "\|^\.include $system_conf$|d" "$staging/openssl-service.cnf"
fi
put 0644 "$staging/mlkem-provider.cnf" "$conf_dir/mlkem-provider.cnf"
put 0644 "$script_dir/package/mlkem-tls-groups.cnf" "$conf_dir/mlkem-tls-groups.cnf"
put 0644 "$staging/openssl-service.cnf" "$share_dir/openssl-service.cnf"
put 0644 "$script_dir/../README.md" "$doc_dir/README.md"
put 0644 "$script_dir/../openssl.cnf.example" "$doc_dir/openssl.cnf.example"
put 0644 "$script_dir/package/copyright" "$doc_dir/copyright"
for guide in "${guides[@]}"; do
    put 0644 "$script_dir/../docs/$guide" "$doc_dir/docs/$guide"
done
# gzip -n: no name or time stamp in the header, so the same page gives the
# same bytes (reproducible packages).
gzip -9n <"$script_dir/package/mlkem-provider-check.1" >"$staging/mlkem-provider-check.1.gz"
put 0644 "$staging/mlkem-provider-check.1.gz" "$man_dir/mlkem-provider-check.1.gz"
if [ -z "$destdir" ]; then
    log "installed; enable it system-wide with these lines at the end of $system_conf:"
    log "    .include $conf_dir/mlkem-provider.cnf"
    log "    .include $conf_dir/mlkem-tls-groups.cnf   (optional: hybrid TLS groups first)"
    log "or for one service: OPENSSL_CONF=$share_dir/openssl-service.cnf"
fi
