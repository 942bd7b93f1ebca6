#!/usr/bin/env bash
# Builds the Debian package of the mlkem provider for the system's OpenSSL:
#
#   scripts/package-deb.sh [--out DIR] [--arch ARCH]
#
# DIR: where the .deb goes (default target/debian). ARCH: the Debian
# architecture, this machine's (dpkg --print-architecture) by default, or
# arm64 cross-built from amd64 with the toolchain of scripts/aarch64-env.sh
# (installed when missing, except under CI where that fails).
#
# Prints the path of the .deb as the last line of stdout. The files and
# their places are scripts/install.sh's system layout with /usr/share as
# the data directory: mlkem.so in OpenSSL's modules directory
# (/usr/lib/<triplet>/ossl-modules, as Debian's libssl3 has it),
# mlkem-provider-check in /usr/bin with its manual page, the two
# configuration snippets in /etc/ssl (conffiles: an admin's edits survive
# upgrades), the per-service configuration in /usr/share/mlkem-provider,
# docs, changelog and licence in /usr/share/doc/mlkem-provider. The package
# never edits /etc/ssl/openssl.cnf; `dpkg -r mlkem-provider` leaves the
# system OpenSSL as it was (after the admin drops any `.include` line they
# added). dpkg-deb builds it (Debian's own tool, present wherever dpkg is).
#
# Version: Cargo's plus the commit's date and hash, 0.1.0+git<YYYYMMDD>.
# <HHMMSS>.<hash> (scripts/package-build.sh, shared with
# scripts/package-rpm.sh); plain 0.1.0 outside git.
#
# Reproducible: two builds of the same commit (same toolchain) give the same
# bytes. SOURCE_DATE_EPOCH (default: the commit's date) dates the changelog
# and every file; gzip -n; the cargo build and the stripping are
# scripts/package-build.sh's (fixed paths in the objects, its own target
# directory target/package-<arch>, MLKEM_PACKAGE_TARGET_DIR). Maintainer:
# $DEBFULLNAME <$DEBEMAIL> when both are set.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/common.sh
source scripts/package-build.sh

usage() { echo "usage: $0 [--out DIR] [--arch ARCH]"; }
die() { echo "package-deb: $*" >&2; exit 1; }

out=target/debian
command -v dpkg-deb >/dev/null 2>&1 || die "dpkg-deb not found (not a Debian system?)"
host_arch=$(dpkg --print-architecture)
arch=$host_arch
package_args "$@"

# ---------------------------------------------------------------- build
package_version package-deb || exit 1
maintainer="mlkem-provider developers <mlkem-provider@example.invalid>"
if [ -n "${DEBFULLNAME:-}" ] && [ -n "${DEBEMAIL:-}" ]; then
    maintainer="$DEBFULLNAME <$DEBEMAIL>"
fi
package_build package-deb "$arch" || exit 1

# ---------------------------------------------------------------- files
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
package_strip "$stage"
bash scripts/install.sh --destdir "$stage/root" --datadir /usr/share \
    --modules-dir "/usr/lib/$triplet/ossl-modules" --confdir /etc/ssl \
    --module "$stage/mlkem.so" --check-bin "$stage/mlkem-provider-check" >"$stage/files"
module_path=$(grep '/mlkem\.so$' "$stage/files")
check_path=$(grep '/mlkem-provider-check$' "$stage/files")
objects=("$stage/root$module_path" "$stage/root$check_path")

# The Debian changelog (a native package's is changelog.gz): one entry for
# this build, dated SOURCE_DATE_EPOCH.
doc_dir=/usr/share/doc/mlkem-provider
if [ -n "$commit" ]; then
    entry="Built from git commit $commit."
else
    entry="Built from the sources of version $base_version (no git history)."
fi
{
    echo "mlkem-provider ($version) unstable; urgency=medium"
    echo
    echo "  * $entry"
    echo
    echo " -- $maintainer  $(date -u -R -d "@$SOURCE_DATE_EPOCH")"
} | gzip -9n >"$stage/root$doc_dir/changelog.gz"
echo "$doc_dir/changelog.gz" >>"$stage/files"

# ---------------------------------------------------------------- control
# Dependencies, from the objects themselves (readelf reads any
# architecture's): the oldest glibc with every symbol version they use,
# libgcc's unwinder, and OpenSSL 3 (libssl3 on Debian 12, libssl3t64 on later
# releases; the module takes OpenSSL's functions from the program loading it,
# the check links libssl and libcrypto). A library not mapped here fails the
# build instead of going undeclared.
needed=$(for object in "${objects[@]}"; do readelf -d -W "$object"; done |
    sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p' | sort -u)
symbol_versions() { package_symbol_versions "$1" "${objects[@]}"; }
depends=()
for lib in $needed; do
    case $lib in
        libc.so.6 | libm.so.6 | libdl.so.2 | libpthread.so.0 | librt.so.1 | ld-linux*.so.*) ;;
        libgcc_s.so.1) depends+=("libgcc-s1 (>= $(symbol_versions GCC | cut -d. -f1-2))") ;;
        libssl.so.3 | libcrypto.so.3) ;; # below
        *) die "no package known for $lib, which ${objects[*]##*/} need" ;;
    esac
done
glibc=$(symbol_versions GLIBC)
[ -n "$glibc" ] || die "no GLIBC_ symbol version in the objects"
depends=("libc6 (>= $glibc)" "${depends[@]}")
# The module needs OpenSSL 3 even where nothing links it.
depends+=("libssl3 (>= 3.0.0) | libssl3t64 (>= 3.0.0)")

# Every file dated SOURCE_DATE_EPOCH (dpkg-deb would clamp later ones too).
find "$stage/root" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
# Installed-Size as dpkg-gencontrol counts it: KiB per file, one per
# directory; not du, whose answer depends on the file system.
size=$(find "$stage/root" -mindepth 1 \( -type f -printf '%s\n' \) -o -printf 'other\n' |
    awk '{ t += ($1 == "other") ? 1 : int(($1 + 1023) / 1024) } END { print t }')
mkdir -p "$stage/root/DEBIAN"
grep '^/etc/' "$stage/files" >"$stage/root/DEBIAN/conffiles"
(cd "$stage/root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\n' | sort |
    xargs -d '\n' md5sum) >"$stage/root/DEBIAN/md5sums"
depends_field=$(printf '%s, ' "${depends[@]}")
cat >"$stage/root/DEBIAN/control" <<EOF
Package: mlkem-provider
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $size
Depends: ${depends_field%, }
Section: libs
Priority: optional
Description: ML-KEM (FIPS 203) provider for OpenSSL 3
 An OpenSSL 3 provider, written in Rust, that brings ML-KEM-512/768/1024
 (FIPS 203) to every OpenSSL tool and application: genpkey, pkey, pkeyutl
 -encap/-decap, and the TLS 1.3 groups X25519MLKEM768, SecP256r1MLKEM768,
 SecP384r1MLKEM1024 and MLKEM512/768/1024, on the system's OpenSSL 3.0 and
 later. Enable it with one .include line in /etc/ssl/openssl.cnf, or per
 service with OPENSSL_CONF (see /usr/share/doc/mlkem-provider/README.md).
 .
 mlkem-provider-check says whether post-quantum TLS is really in effect on
 this machine, or on a server.
EOF
find "$stage/root/DEBIAN" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +

mkdir -p "$out"
deb=$out/mlkem-provider_${version}_${arch}.deb
# One xz thread: the multi-threaded encoder's output differs from the
# single-threaded one, and dpkg-deb picks by the number of CPUs.
dpkg-deb --root-owner-group -Zxz --threads-max=1 --build "$stage/root" "$deb" >&2
echo "package-deb: $(dpkg-deb --field "$deb" Package) $version ($arch): $(wc -l <"$stage/files") files, sha256 $(sha256sum "$deb" | cut -c1-16)" >&2
(cd "$(dirname "$deb")" && echo "$(pwd)/$(basename "$deb")")
