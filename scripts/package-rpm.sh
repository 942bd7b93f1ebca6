#!/usr/bin/env bash
# Builds the RPM of the mlkem provider, for RHEL 9 and its rebuilds, CentOS
# Stream, Fedora, Amazon Linux 2023 and SLES 15 / openSUSE, on this Debian
# machine (Debian's rpm package has rpmbuild):
#
#   scripts/package-rpm.sh [--out DIR] [--arch x86_64|aarch64]
#
# DIR: where the .rpm goes (default target/rpm). The architecture is this
# machine's by default; aarch64 is cross-built on x86_64 with the toolchain
# of scripts/aarch64-env.sh, as scripts/package-deb.sh --arch arm64 does
# (the two share scripts/package-build.sh: version, cargo build, strip, and
# the target directory target/package-<amd64|arm64>).
#
# Prints the path of the .rpm, mlkem-provider-<version>-1.<arch>.rpm, as the
# last line of stdout. The files, in the places these distributions use:
#   /usr/lib64/ossl-modules/mlkem.so          OpenSSL's modules directory
#   /usr/bin/mlkem-provider-check, its manual page in /usr/share/man/man1
#   /etc/pki/tls/openssl.d/mlkem-provider.cnf the drop-in RHEL 9.4+ and
#       Fedora include in their providers section (%config(noreplace)):
#       adds mlkem to [provider_sect] (scripts/package/mlkem-provider-sect.cnf)
#   /usr/share/mlkem-provider/mlkem-provider.cnf  the same lines, for systems
#       without openssl.d, with the one line to add documented in it
#   /usr/share/mlkem-provider/crypto-policies/opensslcnf-mlkem.config  the
#       hybrid groups first, for /etc/crypto-policies/local.d (the admin's
#       step; scripts/package/opensslcnf-mlkem.config)
#   /usr/share/doc/mlkem-provider             README, guides (install.sh's,
#       docs/deploying-rhel.md among them), openssl.cnf.example
#   /usr/share/licenses/mlkem-provider        LICENSE-APACHE, LICENSE-MIT
# Not the .deb's /etc/ssl snippets and openssl-service.cnf: they set
# [openssl_init] themselves, which the RHEL and SUSE files set already.
# The spec is scripts/package/rpm/mlkem-provider.spec; its dependencies come
# from the ELF objects (libcrypto.so.3()(64bit), libc.so.6(GLIBC_2.x)...):
# the build fails if the objects need a glibc symbol version above 2.34
# (RHEL 9's), or if the aarch64 requires lack the (64bit) mark.
#
# Reproducible: two builds of the same commit give the same bytes
# (SOURCE_DATE_EPOCH, the build time and host fixed, mtimes clamped, no
# build-id links, single-threaded xz; see the spec). Needs rpmbuild (the
# `rpm` package); installed outside CI when missing (scripts/packages.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/common.sh
source scripts/packages.sh
source scripts/package-build.sh

usage() { echo "usage: $0 [--out DIR] [--arch x86_64|aarch64]"; }
die() { echo "package-rpm: $*" >&2; exit 1; }

out=target/rpm
arch=$(uname -m)
package_args "$@"
case $arch in
    x86_64) build_arch=amd64 ;;
    aarch64) build_arch=arm64 ;;
    *) die "unsupported architecture $arch (x86_64, aarch64)" ;;
esac
tools_ensure package-rpm "$(packages_policy)" rpmbuild rpm readelf || die "missing tools"

# ---------------------------------------------------------------- build
package_version package-rpm || exit 1
package_build package-rpm "$build_arch" || exit 1

# ---------------------------------------------------------------- files
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
stage=$work/root
package_strip "$work"
modules_dir=/usr/lib64/ossl-modules share_dir=/usr/share/mlkem-provider
doc_dir=/usr/share/doc/mlkem-provider license_dir=/usr/share/licenses/mlkem-provider
# install.sh's layout with /usr/share as the data directory; its Debian
# snippets (in a scratch confdir), per-service file and copyright go.
bash scripts/install.sh --destdir "$stage" --datadir /usr/share \
    --modules-dir "$modules_dir" --confdir /mlkem-deb-conf \
    --module "$work/mlkem.so" --check-bin "$work/mlkem-provider-check" >/dev/null
rm -r "$stage/mlkem-deb-conf" "$stage$share_dir/openssl-service.cnf" "$stage$doc_dir/copyright"
install -D -m 0644 scripts/package/mlkem-provider-sect.cnf "$stage/etc/pki/tls/openssl.d/mlkem-provider.cnf"
install -D -m 0644 scripts/package/mlkem-provider-sect.cnf "$stage$share_dir/mlkem-provider.cnf"
install -D -m 0644 scripts/package/opensslcnf-mlkem.config \
    "$stage$share_dir/crypto-policies/opensslcnf-mlkem.config"
install -D -m 0644 -t "$stage$license_dir" LICENSE-APACHE LICENSE-MIT
objects=("$stage$modules_dir/mlkem.so" "$stage/usr/bin/mlkem-provider-check")

# glibc 2.34 at most (RHEL 9, the oldest we build for); readelf reads any
# architecture's objects.
glibc=$(package_symbol_versions GLIBC "${objects[@]}")
[ -n "$glibc" ] || die "no GLIBC_ symbol version in the objects"
[ "$(printf '%s\n' "$glibc" 2.34 | sort -V | tail -1)" = 2.34 ] ||
    die "the objects need GLIBC_$glibc, above RHEL 9's 2.34 ($(for o in "${objects[@]}"; do
        readelf -V -W "$o" | grep -o "Name: GLIBC_$glibc" >/dev/null && echo "${o##*/}"; done | xargs))"

# %files: what the stage holds, the directories the package owns
# (/usr/lib64/ossl-modules and /etc/pki/tls/openssl.d belong to OpenSSL).
{
    for dir in "$share_dir" "$share_dir/crypto-policies" "$doc_dir" "$doc_dir/docs" "$license_dir"; do
        echo "%dir $dir"
    done
    (cd "$stage" && find . -type f -printf '/%P\n' | sort) | while read -r file; do
        case $file in
            /etc/*) echo "%config(noreplace) $file" ;;
            "$license_dir"/*) echo "%license $file" ;;
            "$doc_dir"/*) echo "%doc $file" ;;
            *) echo "$file" ;;
        esac
    done
} >"$work/files"

# ---------------------------------------------------------------- rpmbuild
if [ -n "$commit" ]; then
    entry="Built from git commit $commit."
else
    entry="Built from the sources of version $base_version (no git history)."
fi
packager="mlkem-provider developers <mlkem-provider@example.invalid>"
mkdir -p "$out"
out=$(cd "$out" && pwd)
for dir in BUILD BUILDROOT SPECS SOURCES SRPMS tmp; do mkdir -p "$work/top/$dir"; done
# rpmbuild names the file itself (N-V-R.A); the macros fill the template.
rpmbuild -bb --quiet --target "$arch-linux" \
    --define "_topdir $work/top" --define "_tmppath $work/top/tmp" \
    --define "_rpmdir $out" --define "_build_name_fmt %%{NAME}-%%{VERSION}-%%{RELEASE}.%%{ARCH}.rpm" \
    --define "pkg_version $version" --define "pkg_changelog $entry" \
    --define "pkg_changelog_date $(date -u -d "@$SOURCE_DATE_EPOCH" '+%a %b %d %Y')" \
    --define "pkg_packager $packager" \
    --define "stage_dir $stage" --define "files_list $work/files" \
    scripts/package/rpm/mlkem-provider.spec >&2
rpm=$out/mlkem-provider-$version-1.$arch.rpm
[ -f "$rpm" ] || die "rpmbuild made no $rpm"

# The requires rpmbuild found: libcrypto's soname, and (64bit) on every
# library dependency, whichever architecture this host is.
requires=$(rpm -qp --requires "$rpm" 2>/dev/null)
grep -qx 'libcrypto.so.3()(64bit)' <<<"$requires" || die "no libcrypto.so.3()(64bit) among the requires: $requires"
if grep '\.so' <<<"$requires" | grep -qv '(64bit)$'; then
    die "a library requirement without the (64bit) mark: $requires"
fi
echo "package-rpm: $(basename "$rpm"): $(wc -l <"$work/files") entries, glibc $glibc, sha256 $(sha256sum "$rpm" | cut -c1-16)" >&2
echo "$rpm"
