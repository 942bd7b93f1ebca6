#!/usr/bin/env bash
# Builds the Debian package of the mlkem provider for the system's OpenSSL:
#
#   scripts/package-deb.sh [--out DIR]     # default DIR: target/debian
#
# Prints the path of the .deb as the last line of stdout. The files and
# their places are scripts/install.sh's system layout with /usr/share as
# the data directory: mlkem.so in OpenSSL's modules directory, the two
# configuration snippets in /etc/ssl (conffiles: an admin's edits survive
# upgrades), the per-service configuration in /usr/share/mlkem-provider,
# docs and licence in /usr/share/doc/mlkem-provider. The package never edits
# /etc/ssl/openssl.cnf; `dpkg -r mlkem-provider` leaves the system OpenSSL as
# it was (after the admin drops any `.include` line they added).
# dpkg-deb builds it (Debian's own tool, present wherever dpkg is).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

out=target/debian
while (($#)); do
    case $1 in
        --out) (($# >= 2)) || { echo "usage: $0 [--out DIR]" >&2; exit 2; }; out=$2; shift 2 ;;
        -h | --help) echo "usage: $0 [--out DIR]"; exit 0 ;;
        *) echo "unknown argument: $1" >&2; exit 2 ;;
    esac
done
command -v dpkg-deb >/dev/null 2>&1 || { echo "package-deb: dpkg-deb not found (not a Debian system?)" >&2; exit 1; }

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)
arch=$(dpkg --print-architecture)
[ -n "$version" ] || { echo "package-deb: no version in Cargo.toml" >&2; exit 1; }

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
module_dir=$(bash scripts/build-provider.sh | tail -1)
bash scripts/install.sh --destdir "$stage/root" --datadir /usr/share \
    --module "$module_dir/mlkem.so" >"$stage/files"
# As Debian ships shared objects: without the symbol table and debug info.
modules_path=$(grep '/mlkem\.so$' "$stage/files")
strip --strip-unneeded "$stage/root$modules_path"

# Dependencies: the oldest glibc with every symbol version mlkem.so uses, and
# OpenSSL 3 (libssl3 on Debian 12, libssl3t64 on later releases). The module
# links no libcrypto: it takes OpenSSL's functions from the one loading it.
glibc=$(objdump -T "$stage/root$modules_path" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -1)
size=$(du -sk "$stage/root" | cut -f1)
mkdir -p "$stage/root/DEBIAN"
grep '^/etc/' "$stage/files" >"$stage/root/DEBIAN/conffiles"
cat >"$stage/root/DEBIAN/control" <<EOF
Package: mlkem-provider
Version: $version
Architecture: $arch
Maintainer: mlkem-provider developers <mlkem-provider@localhost>
Installed-Size: $size
Depends: libc6 (>= $glibc), libssl3 (>= 3.0.0) | libssl3t64 (>= 3.0.0)
Section: libs
Priority: optional
Description: ML-KEM (FIPS 203) provider for OpenSSL 3
 An OpenSSL 3 provider, written in Rust, that brings ML-KEM-512/768/1024
 (FIPS 203) to every OpenSSL tool and application: genpkey, pkey, pkeyutl
 -encap/-decap, and the TLS 1.3 groups X25519MLKEM768, SecP256r1MLKEM768,
 SecP384r1MLKEM1024 and MLKEM512/768/1024, on the system's OpenSSL 3.0 and
 later. Enable it with one .include line in /etc/ssl/openssl.cnf, or per
 service with OPENSSL_CONF (see /usr/share/doc/mlkem-provider/README.md).
EOF

mkdir -p "$out"
deb=$out/mlkem-provider_${version}_${arch}.deb
dpkg-deb --root-owner-group -Zxz --build "$stage/root" "$deb" >&2
echo "package-deb: $(dpkg-deb --info "$deb" | sed -n 's/^ Package: //p') $version ($arch): $(wc -l <"$stage/files") files" >&2
(cd "$(dirname "$deb")" && echo "$(pwd)/$(basename "$deb")")
