#!/usr/bin/env bash
# Builds a chosen OpenSSL release from the source carried by the openssl-src
# crate and installs it into a cache directory outside the work tree, for the
# provider tests (matrix: system OpenSSL 3.0, 3.5 LTS, 3.6, 4.0; 3.4 for the
# oqsprovider comparisons) and for the releases distributions ship
# (scripts/openssl-matrix.sh: 3.0.2, 3.0.7, 3.0.8, 3.1.4, 3.2.1, 3.3.2).
#
#   scripts/build-openssl.sh SERIES [--prefix-root DIR] [--layout rhel|suse]
#   SERIES: 3.0.2|3.0.7|3.0.8|3.1|3.2|3.3|3.4|3.5|3.6|4.0
#
# The install prefix is <root>/openssl-<full version>, e.g.
# ~/.cache/mlkem-provider/openssl/openssl-3.5.5, where <root> is --prefix-root,
# else $MLKEM_OPENSSL_CACHE, else $HOME/.cache/mlkem-provider/openssl.
# The prefix is the last line on stdout (progress goes to stderr), so
#   prefix=$(scripts/build-openssl.sh 3.5 | tail -1)
#   LD_LIBRARY_PATH=$prefix/lib "$prefix/bin/openssl" version
# A prefix that already holds a working openssl is reused as is.
#
# The install has a configuration file, <prefix>/ssl/openssl.cnf, as a
# distribution's OpenSSL has (the crate's source carries none, and without
# one `openssl req` fails): scripts/openssl-minimal.cnf. A prefix installed
# before this gets it when reused.
#
# --layout rhel|suse builds the release with a distribution's directories
# instead, as RHEL/Fedora/Amazon Linux and SUSE configure theirs:
# --prefix=/usr --libdir=lib64 --openssldir=/etc/pki/tls (rhel) or /etc/ssl
# (suse), so MODULESDIR is /usr/lib64/ossl-modules; no rpath. It is installed
# DESTDIR-style into its own cache entry, <root>/openssl-<version>-<layout>,
# a tree to copy into a root (usr/bin/openssl, usr/lib64/lib*.so*,
# usr/lib64/ossl-modules/, usr/lib64/pkgconfig, usr/include/openssl and an
# empty openssldir: the configuration file is the root's to write), and
# that tree is the last line on stdout. Check it with
#   LD_LIBRARY_PATH=$tree/usr/lib64 $tree/usr/bin/openssl version
# (scripts/rpm-distro-test.sh does this for each distribution shape).
#
# The build is a shared one (./Configure shared no-legacy no-tests; the
# shared libraries, the openssl program, headers and pkg-config files: no
# static library, engine or manual page), built in a
# temporary directory under <root> and removed after success; its log is
# <root>/openssl-<version>.build.log.  OpenSSL's util/mkdef.pl, which the
# crate leaves out of some releases, is supplied by scripts/openssl-mkdef.pl.
set -euo pipefail

# openssl-src crate version for each OpenSSL series.  The crate version's build
# metadata (+3.5.5) is the OpenSSL release it carries.  To move to a newer
# release, change the pin here (`cargo info openssl-src@300.5` shows the latest).
# The old releases are those Linux distributions ship (Ubuntu 22.04: 3.0.2;
# RHEL 9.2-9.4: 3.0.7; Amazon Linux 2023: 3.0.8; SLES 15 SP6: 3.1.4); for
# 3.2 and 3.3 the crate stops at 3.2.1 and 3.3.2, the nearest to RHEL 9.5's
# and SLES 15 SP7's 3.2.2 and 3.2.3.
declare -A CRATE_VERSION=(
    [3.0.2]="300.0.5+3.0.2"
    [3.0.7]="300.0.11+3.0.7"
    [3.0.8]="300.0.13+3.0.8"
    [3.1]="300.1.6+3.1.4"
    [3.2]="300.2.3+3.2.1"
    [3.3]="300.3.2+3.3.2"
    [3.4]="300.4.2+3.4.1"
    [3.5]="300.5.5+3.5.5"
    [3.6]="300.6.1+3.6.3"
    [4.0]="400.0.2+4.0.3"
)

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
prog=${0##*/}

usage() {
    cat <<EOF
usage: $prog SERIES [--prefix-root DIR] [--layout rhel|suse]

Builds OpenSSL from the openssl-src crate's source and installs it under
DIR/openssl-<version>. SERIES: 3.0.2 3.0.7 3.0.8 3.1 3.2 3.3 3.4 3.5 3.6 4.0
(default DIR: \${MLKEM_OPENSSL_CACHE:-\$HOME/.cache/mlkem-provider/openssl}).
Prints the install prefix as the last line of stdout.

--layout rhel|suse: configure with a distribution's directories
(--prefix=/usr --libdir=lib64, openssldir /etc/pki/tls or /etc/ssl) and
install DESTDIR-style into DIR/openssl-<version>-<layout>, printed instead.
EOF
}

log() { echo "build-openssl: $*" >&2; }
die() { log "error: $*"; exit 1; }

# ---------------------------------------------------------------- arguments
series=""
layout=""
root=${MLKEM_OPENSSL_CACHE:-$HOME/.cache/mlkem-provider/openssl}
while (($#)); do
    case $1 in
        -h | --help) usage; exit 0 ;;
        --prefix-root)
            (($# >= 2)) || { usage >&2; exit 2; }
            root=$2; shift 2 ;;
        --prefix-root=*) root=${1#*=}; shift ;;
        --layout)
            (($# >= 2)) || { usage >&2; exit 2; }
            layout=$2; shift 2 ;;
        --layout=*) layout=${1#*=}; shift ;;
        -*) log "unknown argument: $1"; usage >&2; exit 2 ;;
        *)
            [ -z "$series" ] && [ -n "${CRATE_VERSION[$1]:-}" ] ||
                { log "unknown series: $1"; usage >&2; exit 2; }
            series=$1; shift ;;
    esac
done
[ -n "$series" ] || { usage >&2; exit 2; }
case $layout in
    "" | rhel | suse) ;;
    *) log "unknown layout: $layout (rhel or suse)"; usage >&2; exit 2 ;;
esac
[ -n "$root" ] || { log "empty --prefix-root"; exit 2; }
# make(1) and OpenSSL's Makefile cannot cope with blanks in paths.
case $root in *[[:space:]]*) log "--prefix-root must not contain blanks: '$root'"; exit 2 ;; esac

crate_version=${CRATE_VERSION[$series]}
version=${crate_version#*+}                 # 300.5.5+3.5.5 -> 3.5.5
mkdir -p "$root"
root=$(cd "$root" && pwd)                   # absolute: it is baked into the build
# name: the cache entry. With a layout, $prefix is a DESTDIR tree and the
# configured directories ($conf_*) are those inside it.
if [ -n "$layout" ]; then
    name=openssl-$version-$layout
    conf_prefix=/usr
    conf_libdir=lib64
    case $layout in
        rhel) conf_openssldir=/etc/pki/tls ;;
        suse) conf_openssldir=/etc/ssl ;;
    esac
    prefix=$root/$name
    destdir=$prefix
    rpath=()
else
    name=openssl-$version
    prefix=$root/$name
    conf_prefix=$prefix
    conf_libdir=lib
    conf_openssldir=$prefix/ssl
    destdir=""
    rpath=("-Wl,-rpath,$prefix/lib")
fi
bindir=$destdir$conf_prefix/bin
libdir=$destdir$conf_prefix/$conf_libdir
logfile=$root/$name.build.log

# The configuration file, in the openssldir of the build (<dir>/ssl); a
# layout's tree gets none (the distribution shape writes its own).
install_config() {
    [ -z "$layout" ] || return 0
    mkdir -p "$1/ssl"
    cp "$script_dir/openssl-minimal.cnf" "$1/ssl/openssl.cnf"
}
config_missing() {
    [ -z "$layout" ] && [ ! -e "$prefix/ssl/openssl.cnf" ]
}

# Does $prefix hold a working openssl of the expected version?
installed_ok() {
    local out
    [ -x "$bindir/openssl" ] &&
        out=$(LD_LIBRARY_PATH=$libdir "$bindir/openssl" version 2>/dev/null) &&
        [[ $out == "OpenSSL $version "* ]]
}

if installed_ok; then
    log "OpenSSL $version already installed in $prefix"
    ! config_missing || install_config "$prefix"
    echo "$prefix"
    exit 0
fi

# One build per version at a time (tests may start several runs at once);
# whoever gets the lock second finds the install done and reuses it.
locked=false
if command -v flock >/dev/null 2>&1; then
    exec 9>"$root/.$name.lock"
    flock 9
    locked=true
    if installed_ok; then
        log "OpenSSL $version installed in $prefix (by a concurrent run)"
        ! config_missing || install_config "$prefix"
        echo "$prefix"
        exit 0
    fi
fi

# ---------------------------------------------------------------- build tools
# perl (with its core modules: Configure needs IPC::Cmd, File::Compare...),
# make and a C compiler; installed with apt-get when run as root.
missing=()
perl -MIPC::Cmd -MFile::Compare -MGetopt::Long -e 1 >/dev/null 2>&1 || missing+=(perl)
command -v make >/dev/null 2>&1 || missing+=(make)
command -v gcc >/dev/null 2>&1 || command -v cc >/dev/null 2>&1 || missing+=(gcc)
if ((${#missing[@]})); then
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
        log "installing ${missing[*]}"
        apt-get update -qq >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
    else
        die "missing build tools: ${missing[*]} (install them, or run as root to have apt-get do it)"
    fi
fi
if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
fi
command -v cargo >/dev/null 2>&1 || die "cargo not found (needed to fetch the openssl-src crate); see scripts/setup.sh"

# ---------------------------------------------------------------- build dir
# Trees of earlier failed builds of this version (kept for inspection) go now,
# if we hold the lock: then no other run is using them.
if $locked; then
    rm -rf "$root/build-$name".*
fi
build=$(mktemp -d "$root/build-$name.XXXXXX")
: >"$logfile"
log "building OpenSSL $version${layout:+ ($layout layout)} (openssl-src $crate_version) in $build"
log "log: $logfile"

# Run a build step with its output in the log; on failure show the log's tail.
step() {
    local what=$1; shift
    log "$what"
    echo "==> $what: $*" >>"$logfile"
    if ! "$@" >>"$logfile" 2>&1; then
        log "error: $what failed; last 40 lines of $logfile:"
        tail -n 40 "$logfile" >&2
        log "build tree kept in $build"
        exit 1
    fi
}

# ---------------------------------------------------------------- source
# Cargo unpacks crates to $CARGO_HOME/registry/src/<index>/<name>-<version>/
# and writes .cargo-ok there once unpacked.
cargo_home=${CARGO_HOME:-$HOME/.cargo}
find_source() {
    local dir
    for dir in "$cargo_home"/registry/src/*/"openssl-src-$crate_version"; do
        if [ -e "$dir/.cargo-ok" ] && [ -x "$dir/openssl/Configure" ]; then
            echo "$dir/openssl"
            return 0
        fi
    done
    return 1
}
if ! src=$(find_source); then
    # Fetch the exact crate version through a throwaway project, so that the
    # work tree's Cargo.toml and Cargo.lock stay untouched.  "[workspace]"
    # keeps cargo from attaching it to an enclosing workspace.
    mkdir -p "$build/fetch/src"
    cat >"$build/fetch/Cargo.toml" <<EOF
[package]
name = "fetch-openssl-src"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
openssl-src = "=${crate_version%%+*}"

[workspace]
EOF
    : >"$build/fetch/src/lib.rs"
    step "fetching openssl-src $crate_version" cargo fetch --manifest-path "$build/fetch/Cargo.toml"
    src=$(find_source) || die "openssl-src $crate_version not found under $cargo_home/registry/src after cargo fetch"
fi
log "source: $src"

# Build in a copy: the registry's sources are shared and must stay pristine.
step "copying the source" cp -a "$src/." "$build/openssl"
cd "$build/openssl"
if [ ! -e util/mkdef.pl ]; then
    # The crate drops util/mkdef.pl (it builds static libraries only), but a
    # shared build needs it to write the linker version scripts.
    log "supplying util/mkdef.pl from scripts/openssl-mkdef.pl"
    cp "$script_dir/openssl-mkdef.pl" util/mkdef.pl
fi

# ---------------------------------------------------------------- build
# Without a layout, --openssldir and the modules directory sit inside the
# prefix, so nothing outside it is read by default, and the rpath lets
# bin/openssl find its own libraries even without LD_LIBRARY_PATH (which, if
# set, still comes first). With one, the directories are the distribution's
# and the libraries are found as there, in /usr/lib64 (the root's
# ld.so.cache), so no rpath.
step "configuring" ./Configure shared no-legacy no-tests \
    --prefix="$conf_prefix" --openssldir="$conf_openssldir" --libdir="$conf_libdir" \
    ${rpath[@]+"${rpath[@]}"}
jobs=$(nproc 2>/dev/null || echo 2)
# Only what the tests run: the shared libraries, the openssl program, the
# headers and pkg-config files. OpenSSL's own targets (build_sw,
# install_sw) also build the static libraries, every object of libcrypto a
# second time: twice the minutes.
step "generating headers" make -j"$jobs" build_generated
step "compiling (make -j$jobs; several minutes)" \
    make -j"$jobs" libcrypto.so libssl.so apps/openssl libcrypto.pc libssl.pc openssl.pc
# Install into a staging directory first and move it into place at the end,
# so that an interrupted run never leaves a half-filled prefix behind.
# stage: where $prefix's content is assembled; s_*: the configured
# directories inside it.
stage=$build/stage
if [ -n "$layout" ]; then
    s_prefix=$stage$conf_prefix
    step "installing" mkdir -p "$stage$conf_openssldir" "$s_prefix/$conf_libdir/ossl-modules"
else
    s_prefix=$stage
fi
s_lib=$s_prefix/$conf_libdir
step "installing" mkdir -p "$s_prefix/bin" "$s_lib/pkgconfig" "$s_prefix/include"
step "installing the program" install -m 0755 apps/openssl "$s_prefix/bin/openssl"
step "installing the libraries" cp -P libcrypto.so* libssl.so* "$s_lib/"
step "installing pkg-config files" cp libcrypto.pc libssl.pc openssl.pc "$s_lib/pkgconfig/"
step "installing the headers" cp -R include/openssl "$s_prefix/include/"
install_config "$stage"
rm -rf "$prefix"
mv "$stage" "$prefix"

# ---------------------------------------------------------------- checks
if ! installed_ok; then
    LD_LIBRARY_PATH=$libdir "$bindir/openssl" version >&2 || true
    die "the installed $bindir/openssl does not report OpenSSL $version"
fi
log "installed: $(LD_LIBRARY_PATH=$libdir "$bindir/openssl" version)"
case $series in
    3.5 | 3.6 | 4.0)
        # Native ML-KEM arrived in 3.5: a quick sanity check of the build.
        kems=$(LD_LIBRARY_PATH=$libdir "$bindir/openssl" list -kem-algorithms)
        log "KEM algorithms:"
        printf '%s\n' "$kems" >&2
        grep -q 'ML-KEM-768' <<<"$kems" || die "ML-KEM-768 missing from 'openssl list -kem-algorithms'"
        ;;
esac

cd "$root"
rm -rf "$build"
log "done: $prefix"
echo "$prefix"
