# shellcheck shell=bash
# What the package scripts share (sourced by scripts/package-deb.sh and
# scripts/package-rpm.sh): the version, the reproducible cargo build of
# mlkem.so and mlkem-provider-check for one architecture, their stripping,
# and the symbol versions the stripped objects need. The callers run from
# the checkout's root with scripts/common.sh sourced; WHO prefixes messages.
# Sourcing it sets umask 022 and LC_ALL=C TZ=UTC0: the files' modes, sort
# orders and dates do not depend on who builds.
#
#   package_args ARG...           --out DIR, --arch ARCH, --help into out
#                                 and arch (the caller sets their defaults
#                                 and defines usage)
#   package_version WHO           sets base_version, commit and version,
#                                 exports SOURCE_DATE_EPOCH
#   package_build WHO ARCH        builds for ARCH (Debian's name: amd64,
#                                 arm64; arm64 is cross-built on amd64);
#                                 sets triplet, release_dir and strip
#   package_strip DIR             strips both objects into DIR/mlkem.so and
#                                 DIR/mlkem-provider-check
#   package_symbol_versions PREFIX OBJECT...
#                                 the highest PREFIX_x.y (GLIBC, GCC) the
#                                 objects need, x.y only
#   package_aarch64_object FILE   for the tests: prints the machine and
#                                 file's description of an AArch64 ELF
#                                 object; fails, printing what it is, for
#                                 anything else
#
# Version: Cargo's, plus the commit it is built from when there is git,
# 0.1.0+git<YYYYMMDD>.<HHMMSS>.<hash> (the commit's date and time in UTC, so
# later commits sort higher, for dpkg and rpm alike); plain 0.1.0 outside
# git. SOURCE_DATE_EPOCH defaults to the commit's date.
#
# Reproducible: the compiler sees the checkout, the target directory and
# $CARGO_HOME under fixed names (--remap-path-prefix), and the objects are
# stripped. The build has its own target directory, target/package-<ARCH>
# (MLKEM_PACKAGE_TARGET_DIR), so its RUSTFLAGS do not rebuild the other
# scripts' target/; the .deb and the .rpm of one architecture share it.

umask 022
export LC_ALL=C TZ=UTC0

package_args() {
    while (($#)); do
        case $1 in
            --out | --arch)
                (($# >= 2)) || { usage >&2; exit 2; }
                case $1 in --out) out=$2 ;; --arch) arch=$2 ;; esac
                shift 2 ;;
            -h | --help) usage; exit 0 ;;
            *) echo "unknown argument: $1" >&2; usage >&2; exit 2 ;;
        esac
    done
}

package_version() {
    local who=$1
    base_version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)
    [ -n "$base_version" ] || { echo "$who: no version in Cargo.toml" >&2; return 1; }
    commit=""
    if git rev-parse --verify -q HEAD >/dev/null 2>&1; then
        commit=$(git rev-parse HEAD)
        local stamp
        stamp=$(git log -1 --date=format-local:%Y%m%d.%H%M%S --format=%cd HEAD)
        version=$base_version+git$stamp.$(git rev-parse --short=10 HEAD)
        export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct HEAD)}
        if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
            echo "$who: warning: tracked files differ from commit ${commit:0:10}; the package holds them as they are now" >&2
        fi
    else
        version=$base_version
        export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(stat -c %Y Cargo.toml)}
    fi
}

package_build() {
    local who=$1 arch=$2 root
    root=$(pwd)
    local host_arch
    host_arch=$(dpkg --print-architecture 2>/dev/null || uname -m)
    case $host_arch in x86_64) host_arch=amd64 ;; aarch64) host_arch=arm64 ;; esac
    case $arch in
        amd64) triplet=x86_64-linux-gnu ;;
        arm64) triplet=aarch64-linux-gnu ;;
        *) echo "$who: unsupported architecture $arch (amd64, arm64)" >&2; return 1 ;;
    esac
    export CARGO_TARGET_DIR=${MLKEM_PACKAGE_TARGET_DIR:-$root/target/package-$arch}
    local cargo target_args
    if [ "$arch" = "$host_arch" ]; then
        cargo=cargo target_args=() release_dir=$CARGO_TARGET_DIR/release strip=strip
    elif [ "$arch" = arm64 ] && [ "$host_arch" = amd64 ]; then
        source scripts/aarch64-env.sh
        aarch64_toolchain "$who" "$(packages_policy)" || return 1
        cargo=$aarch64_cargo target_args=(--target "$aarch64_target")
        release_dir=$CARGO_TARGET_DIR/$aarch64_target/release strip=aarch64-linux-gnu-strip
    else
        echo "$who: cannot build for $arch on $host_arch" >&2
        return 1
    fi

    # No build path in the objects: the checkout, the target directory and
    # the crates' sources ($CARGO_HOME/registry, git) under fixed names (the
    # last matching prefix wins: the target directory may lie in the
    # checkout). CARGO_ENCODED_RUSTFLAGS (0x1f between flags) keeps paths
    # with spaces whole.
    local cargo_home=${CARGO_HOME:-$HOME/.cargo} sep=$'\x1f'
    export CARGO_ENCODED_RUSTFLAGS="--remap-path-prefix=$cargo_home=/cargo${sep}--remap-path-prefix=$root=/mlkem-provider${sep}--remap-path-prefix=$CARGO_TARGET_DIR=/mlkem-provider/target"
    unset RUSTFLAGS
    echo "$who: building mlkem-provider $version for $arch ($CARGO_TARGET_DIR)" >&2
    "$cargo" build --release -q "${target_args[@]}" -p mlkem-provider -p mlkem-provider-check >&2
}

package_strip() {
    local dir=$1 pair
    # As distributions ship objects: without the symbol table, debug info
    # (the release profile has debug = 1) and the compilers' .comment. The
    # GNU build ID stays: a hash of the rest, the same for the same build.
    for pair in libmlkem.so:mlkem.so mlkem-provider-check:mlkem-provider-check; do
        "$strip" --strip-unneeded --remove-section=.comment --remove-section=.note \
            -o "$dir/${pair#*:}" "$release_dir/${pair%%:*}"
    done
}

package_symbol_versions() {
    local prefix=$1 object
    shift
    for object in "$@"; do readelf -V -W "$object"; done |
        grep -o "Name: ${prefix}_[0-9.]*" | sed "s/^Name: ${prefix}_//" | sort -uV | tail -1
}

package_aarch64_object() {
    local description machine
    description=$(file -b "$1")
    machine=$(readelf -h "$1" | sed -n 's/^ *Machine: *//p')
    if [[ $description == *"ARM aarch64"* ]] && [ "$machine" = AArch64 ]; then
        echo "$machine ($(cut -d, -f1-2 <<<"$description"))"
    else
        echo "$description; $machine"
        return 1
    fi
}
