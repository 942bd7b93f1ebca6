#!/usr/bin/env bash
# Tests the RPMs that scripts/package-rpm.sh builds, on this Debian machine
# (nothing system-wide changes but missing tools):
#
#   scripts/package-rpm-test.sh
#
#   1. x86_64 and aarch64 (cross-built): each built twice, the second time
#      from another scratch directory, and compared byte for byte; the
#      objects are those scripts/package-test.sh builds, with the same
#      toolchain set-up, in target/package-amd64 and target/package-arm64
#      (it checks that a fresh amd64 build gives the same bytes).
#   2. rpm -qpl: the files in their places (the module in
#      /usr/lib64/ossl-modules, the drop-in in /etc/pki/tls/openssl.d as
#      %config(noreplace), the snippets under /usr/share/mlkem-provider, the
#      licences as %license), the same for both architectures.
#   3. rpm -qp --requires: libcrypto.so.3()(64bit), no glibc symbol version
#      above 2.34, (64bit) on every library, no package name.
#   4. rpmlint (with scripts/package/rpm/rpmlint.toml): exit 0, no error, no
#      warning (two filtered there, with their reasons).
#   5. The aarch64 package's mlkem.so and mlkem-provider-check are AArch64.
#   6. The x86_64 package installs into a scratch root (rpm --root DIR
#      --nodeps -i) and leaves it again (rpm -e --root DIR).
#   7. Its configuration files do what they say, on this machine's OpenSSL
#      3.0 and the packaged objects: in an openssl.cnf laid out like RHEL
#      9.4's (the providers section includes the openssl.d directory, a
#      provider line follows the include), the drop-in activates mlkem
#      beside default and that line's provider; mlkem-provider-check says
#      post-quantum TLS is not in effect under the policy's groups alone,
#      and is once the crypto-policies file is appended to the back-end as
#      update-crypto-policies does.
#
# Needs rpm (rpmbuild), rpmlint, rpm2cpio, cpio, file, binutils and the
# AArch64 toolchain (scripts/packages.sh); outside CI it installs what is
# missing, under CI (where scripts/test.sh installed them) a missing tool
# fails. Work files: target/package-rpm-test.
#
# Time (2 busy cores): about 30 s when scripts/package-test.sh has built
# target/package-amd64 and target/package-arm64 (scripts/test.sh runs it
# first): four rpmbuild runs of about 5 s, the rest in seconds; each cold
# target directory adds a release build.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/common.sh
source scripts/packages.sh
source scripts/package-build.sh
started=$SECONDS

log() { echo "package-rpm-test: $*"; }
ok() { echo "package-rpm-test: ok: $*"; }
fail() { echo "package-rpm-test: FAIL: $*" >&2; exit 1; }

work=$PWD/target/package-rpm-test
rm -rf "$work"
mkdir -p "$work"
tools_ensure package-rpm-test "$(packages_policy)" rpm rpmbuild rpmlint rpm2cpio cpio file readelf cmp ||
    fail "missing tools"
# The toolchain set-up of scripts/package-test.sh (scripts/aarch64-env.sh,
# which exports RUSTC=/usr/bin/rustc for both architectures): the objects
# that test built in target/package-amd64 and target/package-arm64 are
# then this test's, with nothing to rebuild.
source scripts/aarch64-env.sh
aarch64_toolchain package-rpm-test "$(packages_policy)" || fail "the AArch64 toolchain is missing"

# package ARCH OUT: builds the .rpm into OUT (from a scratch directory of
# its own under OUT), prints its path.
package() {
    mkdir -p "$2/tmp"
    TMPDIR=$2/tmp timeout 1800 bash scripts/package-rpm.sh --arch "$1" --out "$2" | tail -1
}

# extract RPM DIR: the payload's files under DIR.
extract() {
    mkdir -p "$2"
    rpm2cpio "$1" | (cd "$2" && cpio -idm --quiet --no-absolute-filenames)
}

declare -A rpms
for arch in x86_64 aarch64; do
    log "$arch: build 1 and 2"
    first=$(package "$arch" "$work/$arch-1")
    second=$(package "$arch" "$work/$arch-2")
    [ "${first##*/}" = "${second##*/}" ] || fail "HEAD moved during the test (${first##*/}, ${second##*/}); run it again"
    cmp "$first" "$second" || fail "$arch: the two builds differ ($first, $second)"
    ok "$arch: two builds are byte-identical ($(sha256sum <"$first" | cut -c1-16))"
    rpms[$arch]=$first
    [ "$(rpm -qp --qf '%{ARCH}' "$first" 2>/dev/null)" = "$arch" ] || fail "${first##*/}: ARCH is not $arch"
done

# ---------------------------------------------------------------- files
places=(
    /usr/lib64/ossl-modules/mlkem.so
    /usr/bin/mlkem-provider-check
    /usr/share/man/man1/mlkem-provider-check.1.gz
    /etc/pki/tls/openssl.d/mlkem-provider.cnf
    /usr/share/mlkem-provider/mlkem-provider.cnf
    /usr/share/mlkem-provider/crypto-policies/opensslcnf-mlkem.config
    /usr/share/doc/mlkem-provider/README.md
    /usr/share/doc/mlkem-provider/docs/deploying-rhel.md
    /usr/share/licenses/mlkem-provider/LICENSE-APACHE
    /usr/share/licenses/mlkem-provider/LICENSE-MIT
)
rpm_x86=${rpms[x86_64]} rpm_arm=${rpms[aarch64]}
rpm -qpl "$rpm_x86" 2>/dev/null >"$work/files-x86_64"
rpm -qpl "$rpm_arm" 2>/dev/null >"$work/files-aarch64"
sed 's/^/    /' "$work/files-x86_64"
for place in "${places[@]}"; do
    grep -qx "$place" "$work/files-x86_64" || fail "rpm -qpl: no $place"
done
diff "$work/files-x86_64" "$work/files-aarch64" || fail "the x86_64 and aarch64 packages hold different files"
# Flags: c config, n noreplace, l licence, d doc.
flags() { rpm -qp --qf '[%{FILEFLAGS:fflags} %{FILENAMES}\n]' "$1" 2>/dev/null; }
flags "$rpm_x86" | grep -qx 'cn /etc/pki/tls/openssl.d/mlkem-provider.cnf' ||
    fail "the drop-in is not %config(noreplace): $(flags "$rpm_x86" | grep /etc/)"
[ "$(flags "$rpm_x86" | grep -c '^l /usr/share/licenses/mlkem-provider/')" = 2 ] ||
    fail "the licences are not %license files"
[ -z "$(flags "$rpm_x86" | grep -v '^l ' | grep /etc/ | grep -v '^cn ')" ] || fail "a file in /etc that is not %config(noreplace)"
ok "rpm -qpl: ${#places[@]} places checked, the drop-in %config(noreplace), the licences %license; aarch64 the same"

# ---------------------------------------------------------------- requires
for arch in x86_64 aarch64; do
    requires=$(rpm -qp --requires "${rpms[$arch]}" 2>/dev/null)
    sed "s/^/    $arch requires: /" <<<"$requires"
    grep -qx 'libcrypto.so.3()(64bit)' <<<"$requires" || fail "$arch: no libcrypto.so.3()(64bit)"
    newest=$(grep -o 'GLIBC_[0-9.]*' <<<"$requires" | sed 's/GLIBC_//' | sort -V | tail -1)
    [ "$(printf '%s\n' "$newest" 2.34 | sort -V | tail -1)" = 2.34 ] || fail "$arch: requires GLIBC_$newest, above 2.34"
    # Sonames with (64bit), rpm's own features (rpmlib(), rtld(GNU_HASH)) and
    # the package's config() self-reference; no package name.
    others=$(grep -v -e '^[^ ]*\.so[^ ]*(64bit)$' -e '^rpmlib(' -e '^rtld(' \
        -e '^config(mlkem-provider) = ' <<<"$requires" || true)
    [ -z "$others" ] || fail "$arch: requires that are not a 64-bit soname or rpm's own: $others"
    ok "$arch requires: libcrypto.so.3()(64bit), glibc up to GLIBC_$newest, every library (64bit), no package name"
done

# ---------------------------------------------------------------- rpmlint
for arch in x86_64 aarch64; do
    status=0
    rpmlint -c scripts/package/rpm/rpmlint.toml "${rpms[$arch]}" >"$work/rpmlint-$arch" 2>&1 || status=$?
    sed 's/^/    rpmlint: /' "$work/rpmlint-$arch"
    ((status == 0)) || fail "rpmlint exited $status on ${rpms[$arch]##*/}"
    ! grep -Eq ': [EW]: ' "$work/rpmlint-$arch" || fail "rpmlint reports errors or warnings on ${rpms[$arch]##*/}"
    ok "rpmlint: exit 0, no error, no warning on ${rpms[$arch]##*/}"
done

# ---------------------------------------------------------------- aarch64
extract "$rpm_arm" "$work/aarch64-root"
for object in usr/lib64/ossl-modules/mlkem.so usr/bin/mlkem-provider-check; do
    what=$(package_aarch64_object "$work/aarch64-root/$object") ||
        fail "aarch64 rpm: /$object is not AArch64 ($what)"
    ok "aarch64 rpm: /$object is $what"
done

# ---------------------------------------------------------------- install
# The database where RHEL keeps it (Debian's rpm would use ~/.rpmdb); rpm's
# advice to use alien instead, for Debian's own root, is filtered out.
scratch=$work/scratch-root
mkdir -p "$scratch"
scratch_rpm() {
    rpm --root "$scratch" --dbpath /var/lib/rpm "$@" 2> >(grep -v -e 'use Alien instead' -e 'assuming you know what you are doing' >&2)
}
scratch_rpm --initdb
scratch_rpm --nodeps -i "$rpm_x86"
scratch_rpm -q mlkem-provider >/dev/null || fail "rpm -q mlkem-provider in the scratch root"
for place in "${places[@]}"; do
    [ -f "$scratch$place" ] || fail "after rpm -i: no $place in the scratch root"
done
scratch_rpm -V --nodeps mlkem-provider || fail "rpm -V: the installed files differ from the package"
scratch_rpm -e mlkem-provider
scratch_rpm -q mlkem-provider >/dev/null 2>&1 && fail "rpm -q still finds mlkem-provider after rpm -e"
left=$(cd "$scratch" && find . -path ./var/lib/rpm -prune -o -type f -print | head)
[ -z "$left" ] || fail "after rpm -e, files are left: $left"
ok "x86_64 rpm: rpm --root --nodeps -i installs every file, rpm -V agrees, rpm -e removes them all"

# ---------------------------------------------------------------- configuration
# A root laid out like RHEL 9.4's: /etc/pki/tls/openssl.cnf whose providers
# section includes openssl.d, with a provider line after the include (base,
# built into libcrypto: no module to find), and the crypto-policies back-end
# included in [ crypto_policy ], ending in another section as the real one
# does. The packaged files and objects; this machine's OpenSSL 3.0.
extract "$rpm_x86" "$work/x86_64-root"
rhel=$work/x86_64-root
mkdir -p "$rhel/etc/crypto-policies/back-ends"
cat >"$rhel/etc/pki/tls/openssl.cnf" <<EOF
openssl_conf = openssl_init
config_diagnostics = 1

[openssl_init]
providers = provider_sect
ssl_conf = ssl_module
alg_section = evp_properties

[evp_properties]

[provider_sect]
default = default_sect
.include $rhel/etc/pki/tls/openssl.d
base = base_sect

[default_sect]
activate = 1

[base_sect]
activate = 1

[ssl_module]
system_default = crypto_policy

[crypto_policy]
.include = $rhel/etc/crypto-policies/back-ends/opensslcnf.config
EOF
# The DEFAULT policy's back-end, in short: its Groups, then its own sections.
policy_backend() {
    cat <<'EOF'
MinProtocol = TLSv1.2
Groups = X25519:secp256r1:X448:secp521r1:secp384r1:ffdhe2048:ffdhe3072:ffdhe4096:ffdhe6144:ffdhe8192
[openssl_init]
alg_section = evp_properties
[evp_properties]
EOF
}
policy_backend >"$rhel/etc/crypto-policies/back-ends/opensslcnf.config"
in_rhel() { OPENSSL_CONF=$rhel/etc/pki/tls/openssl.cnf OPENSSL_MODULES=$rhel/usr/lib64/ossl-modules "$@"; }
providers=$(in_rhel openssl list -providers) || fail "openssl list -providers with the RHEL-like openssl.cnf"
for provider in mlkem default base; do
    grep -q "^  $provider\$" <<<"$providers" || fail "the RHEL-like openssl.cnf does not activate $provider: $providers"
done
ok "RHEL-like openssl.cnf + the drop-in: mlkem, default and base (the line after the include) active"

status=0
in_rhel "$rhel/usr/bin/mlkem-provider-check" >"$work/check-policy.out" 2>&1 || status=$?
((status == 1)) || { cat "$work/check-policy.out" >&2; fail "mlkem-provider-check under the policy's groups exited $status, not 1"; }
ok "mlkem-provider-check, the policy's groups alone: post-quantum TLS not in effect (exit 1: groups off until the admin's step)"

# update-crypto-policies: the back-end, then local.d's opensslcnf-*.config.
{
    policy_backend
    cat "$rhel/usr/share/mlkem-provider/crypto-policies/opensslcnf-mlkem.config"
} >"$rhel/etc/crypto-policies/back-ends/opensslcnf.config"
status=0
in_rhel "$rhel/usr/bin/mlkem-provider-check" >"$work/check-groups.out" 2>&1 || status=$?
sed 's/^/    /' "$work/check-groups.out"
{ ((status == 0)) && grep -q '^post-quantum TLS is in effect' "$work/check-groups.out"; } ||
    fail "mlkem-provider-check with opensslcnf-mlkem.config in the back-end exited $status"
ok "mlkem-provider-check with opensslcnf-mlkem.config appended: post-quantum TLS is in effect"

# One list of hybrids: the crypto-policies file leads with the hybrid groups
# of the Debian snippet, in its order.
hybrids() { sed -n 's/^Groups = //p' "$1" | tr : '\n' | grep -E '^(X25519|SecP[0-9]+r1)MLKEM' | paste -sd:; }
[ "$(hybrids scripts/package/opensslcnf-mlkem.config)" = "$(hybrids scripts/package/mlkem-tls-groups.cnf)" ] ||
    fail "the hybrid groups of opensslcnf-mlkem.config and mlkem-tls-groups.cnf differ"
ok "opensslcnf-mlkem.config leads with mlkem-tls-groups.cnf's hybrids ($(hybrids scripts/package/opensslcnf-mlkem.config))"

log "passed in $((SECONDS - started)) s; packages: $rpm_x86 $rpm_arm"
