#!/usr/bin/env bash
# Tests the Debian packages that scripts/package-deb.sh builds, without
# installing them (nothing system-wide changes but missing tools):
#
#   scripts/package-test.sh
#
#   1. amd64: builds the .deb twice, the second time in a fresh target
#      directory, and compares them byte for byte (reproducible build);
#      lintian reports no error and no warning.
#   2. arm64 (cross-built, scripts/aarch64-env.sh): built twice and compared
#      too; mlkem.so and mlkem-provider-check in it are AArch64 objects; the
#      same files, dependencies and control data as the amd64 package;
#      lintian clean.
#      Both packages' objects need no glibc symbol version above 2.34 and
#      no OpenSSL symbol that 3.0.2 lacks (scripts/check-abi.sh, against
#      scripts/build-openssl.sh 3.0.2).
#   3. Under qemu-aarch64, in an arm64 root made of the package and Debian's
#      arm64 openssl, libssl3, libc6 and libgcc-s1 (apt-get download +
#      dpkg -x): the arm64 openssl (3.0) finds mlkem.so where the package
#      puts it, with no -provider-path; the packaged per-service
#      configuration activates mlkem and default; genpkey ML-KEM-768,
#      pkey -pubout and -text; an encapsulation round trip (pkeyutl -encap
#      where that openssl has it, else the cross-built evp-bench that
#      scripts/aarch64.sh uses); a TLS 1.3 handshake over X25519MLKEM768
#      between the arm64 s_server (on 127.0.0.1) and OpenSSL 3.5's s_client
#      on this machine (scripts/build-openssl.sh 3.5); the arm64
#      mlkem-provider-check --help, and its local mode on the packaged
#      per-service configuration (exit 0: post-quantum TLS in effect).
#
# Needs dpkg-deb, lintian, file, binutils, the AArch64 toolchain and
# qemu-user (scripts/packages.sh); outside CI it installs what is missing (as
# root or through sudo), under CI, where scripts/test.sh installed them
# first, a missing tool fails. OpenSSL 3.5 comes
# from scripts/build-openssl.sh (built if missing, unless
# MLKEM_SKIP_OPENSSL_BUILD=1: then the handshake is skipped when it is not
# built, or fails under CI). Work files: target/package-test.
#
# Time (2 cores): about 2 minutes with warm target directories
# (target/package-amd64, target/package-arm64, target/aarch64); the fresh
# amd64 build is most of it.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/common.sh
source scripts/aarch64-env.sh
source scripts/package-build.sh
started=$SECONDS

log() { echo "package-test: $*"; }
ok() { echo "package-test: ok: $*"; }
fail() { echo "package-test: FAIL: $*" >&2; exit 1; }

work=$PWD/target/package-test
server_pid=""
cleanup() {
    if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    rm -rf "$work/target-fresh"
}
trap cleanup EXIT
rm -rf "$work"
mkdir -p "$work"

# ---------------------------------------------------------------- tools
policy=$(packages_policy)
tools_ensure package-test "$policy" dpkg-deb lintian file readelf cmp || fail "missing tools"
aarch64_toolchain package-test "$policy" || fail "the AArch64 toolchain is missing"

# ---------------------------------------------------------------- helpers
# package ARCH OUT [ENV...]: builds the .deb into OUT, prints its path.
package() {
    local arch=$1 out=$2
    shift 2
    env "$@" timeout 1800 bash scripts/package-deb.sh --arch "$arch" --out "$out" | tail -1
}

# lint DEB: lintian's tags, shown; an error or a warning fails.
lint() {
    local deb=$1 tags
    tags=$(timeout 300 lintian --display-info "$deb" 2>&1 |
        grep -v '^running with root privileges is not recommended!$' || true)
    [ -z "$tags" ] || printf '%s\n' "$tags" | sed 's/^/    lintian: /'
    if grep -q '^[EW]: ' <<<"$tags"; then
        fail "lintian reports errors or warnings on ${deb##*/}"
    fi
    ok "lintian: no error, no warning on ${deb##*/}"
}

# same_bytes A B WHAT
same_bytes() {
    # A commit between the builds changes the version, not the build.
    [ "${1##*/}" = "${2##*/}" ] ||
        fail "$3: HEAD moved during the test (${1##*/}, then ${2##*/}); run it again"
    cmp "$1" "$2" || fail "$3: the two builds differ ($1, $2)"
    ok "$3: two builds are byte-identical ($(sha256sum <"$1" | cut -c1-16))"
}

# ---------------------------------------------------------------- amd64
log "amd64: build 1 (target/package-amd64)"
deb_amd64=$(package amd64 "$work/amd64-1")
log "amd64: build 2 (a fresh target directory)"
deb_amd64_2=$(package amd64 "$work/amd64-2" MLKEM_PACKAGE_TARGET_DIR="$work/target-fresh")
rm -rf "$work/target-fresh"
same_bytes "$deb_amd64" "$deb_amd64_2" "amd64 .deb"
lint "$deb_amd64"

# ---------------------------------------------------------------- arm64
log "arm64: build 1 and 2 (cross, target/package-arm64)"
deb_arm64=$(package arm64 "$work/arm64-1")
deb_arm64_2=$(package arm64 "$work/arm64-2")
same_bytes "$deb_arm64" "$deb_arm64_2" "arm64 .deb"
[ "$(dpkg-deb --field "$deb_arm64" Architecture)" = arm64 ] || fail "arm64 .deb: Architecture is not arm64"

arm_root=$work/arm64-root
mkdir -p "$arm_root"
dpkg-deb -x "$deb_arm64" "$arm_root"
modules_rel=usr/lib/aarch64-linux-gnu/ossl-modules
for object in "$modules_rel/mlkem.so" usr/bin/mlkem-provider-check; do
    [ -f "$arm_root/$object" ] || fail "arm64 .deb: no /$object"
    what=$(package_aarch64_object "$arm_root/$object") || fail "arm64 .deb: /$object is not AArch64 ($what)"
    ok "arm64 .deb: /$object is $what"
done

# Both packages' objects load on the oldest glibc (2.34) and libcrypto
# (3.0.2) of the distributions we support (scripts/check-abi.sh).
# The self-test first: a program needing glibc 2.36 and one needing
# OpenSSL 3.2 (linked against 3.5) must both fail it.
cache=${MLKEM_OPENSSL_CACHE:-$HOME/.cache/mlkem-provider/openssl}
if [ "${MLKEM_SKIP_OPENSSL_BUILD:-0}" = 1 ]; then
    oldest=$cache/openssl-3.0.2 newer=$cache/openssl-3.5.5
    [ -d "$oldest" ] && [ -d "$newer" ] || oldest=""
else
    oldest=$(timeout 3600 bash scripts/build-openssl.sh 3.0.2 | tail -1)
    newer=$(timeout 3600 bash scripts/build-openssl.sh 3.5 | tail -1)
fi
if [ -z "$oldest" ]; then
    in_ci && fail "no OpenSSL 3.0.2 and 3.5 for the ABI check"
    log "skipped: the ABI check (OpenSSL 3.0.2 or 3.5 not built, MLKEM_SKIP_OPENSSL_BUILD=1)"
else
    bash scripts/check-abi.sh --openssl-lib "$oldest/lib" --self-test "$newer/lib" |
        sed 's/^check-abi: /package-test: abi: /' || fail "the ABI check's self-test"
    amd_root=$work/amd64-root
    mkdir -p "$amd_root"
    dpkg-deb -x "$deb_amd64" "$amd_root"
    bash scripts/check-abi.sh --openssl-lib "$oldest/lib" \
        "$amd_root/usr/lib/x86_64-linux-gnu/ossl-modules/mlkem.so" "$amd_root/usr/bin/mlkem-provider-check" \
        "$arm_root/$modules_rel/mlkem.so" "$arm_root/usr/bin/mlkem-provider-check" |
        sed 's/^check-abi: /package-test: abi: /' ||
        fail "a packaged object needs a newer glibc or OpenSSL than the oldest we support"
fi

# The same package for either architecture: file names (modulo the
# triplet), conffiles and every control field but Architecture and
# Installed-Size.
names() { dpkg-deb --fsys-tarfile "$1" | tar -t | sed 's/x86_64-linux-gnu/TRIPLET/; s/aarch64-linux-gnu/TRIPLET/' | sort; }
control() { dpkg-deb --info "$1" control | grep -v -e '^Architecture:' -e '^Installed-Size:'; }
[ "$(dpkg-deb --field "$deb_amd64" Version)" = "$(dpkg-deb --field "$deb_arm64" Version)" ] ||
    fail "HEAD moved during the test (the amd64 and arm64 versions differ); run it again"
diff <(names "$deb_amd64") <(names "$deb_arm64") || fail "the amd64 and arm64 packages hold different files"
diff <(control "$deb_amd64") <(control "$deb_arm64") || fail "the amd64 and arm64 control data differ"
diff <(dpkg-deb --info "$deb_amd64" conffiles) <(dpkg-deb --info "$deb_arm64" conffiles) ||
    fail "the amd64 and arm64 conffiles differ"
ok "arm64 .deb: the amd64 package's files, conffiles and control data ($(dpkg-deb --field "$deb_arm64" Depends))"
lint "$deb_arm64"

# ---------------------------------------------------------------- under qemu
log "arm64 root: the package with Debian's arm64 openssl, libssl3, libc6, libgcc-s1"
mkdir -p "$work/arm64-debs"
(
    cd "$work/arm64-debs"
    timeout 300 apt-get download -q openssl:arm64 libssl3:arm64 libc6:arm64 libgcc-s1:arm64 2>&1 |
        grep -v -e '^W: Download is performed unsandboxed' -e '^Get:' -e '^Fetched' || true
)
for pkg in openssl libssl3 libc6 libgcc-s1; do
    debs=("$work"/arm64-debs/"${pkg}"_*_arm64.deb)
    [ -f "${debs[0]}" ] || fail "apt-get download $pkg:arm64 fetched nothing"
    dpkg -x "${debs[0]}" "$arm_root"
done
# Everything the emulated programs open by absolute path is looked up in the
# root first (qemu -L); OPENSSL_CONF names the root's openssl.cnf outright,
# since Debian's /usr/lib/ssl/openssl.cnf is an absolute link that would
# reach this machine's /etc/ssl/openssl.cnf. arm_conf and arm_modules set
# OPENSSL_CONF and OPENSSL_MODULES for the emulated program only.
arm_conf=$arm_root/etc/ssl/openssl.cnf arm_modules=""
arm() {
    local vars=(OPENSSL_CONF="$arm_conf")
    [ -z "$arm_modules" ] || vars+=(OPENSSL_MODULES="$arm_modules")
    env "${vars[@]}" timeout 120 qemu-aarch64 -L "$arm_root" "$@"
}
arm_openssl=$arm_root/usr/bin/openssl
modules=$arm_root/$modules_rel
log "arm64 $(arm "$arm_openssl" version)"

modules_dir=$(arm "$arm_openssl" version -m | sed -n 's/^MODULESDIR: "\(.*\)"$/\1/p')
[ "$modules_dir" = "/$modules_rel" ] ||
    fail "the arm64 openssl's modules directory is $modules_dir, the package's /$modules_rel"
arm "$arm_openssl" list -providers -provider mlkem | grep -q 'name: mlkem' ||
    fail "the arm64 openssl, no -provider-path: no mlkem provider"
ok "arm64 openssl finds mlkem.so in its modules directory /$modules_rel (no -provider-path)"

arm_conf=$arm_root/usr/share/mlkem-provider/openssl-service.cnf
providers=$(arm "$arm_openssl" list -providers)
arm_conf=$arm_root/etc/ssl/openssl.cnf
{ grep -q '^  mlkem$' <<<"$providers" && grep -q '^  default$' <<<"$providers"; } ||
    fail "OPENSSL_CONF=openssl-service.cnf does not activate mlkem and default: $providers"
ok "arm64 openssl, OPENSSL_CONF=/usr/share/mlkem-provider/openssl-service.cnf: mlkem and default active"

arm_modules=$modules
load=(-provider mlkem -provider default)
arm "$arm_openssl" genpkey "${load[@]}" -algorithm ML-KEM-768 -out "$work/mlkem768.pem"
arm "$arm_openssl" pkey "${load[@]}" -in "$work/mlkem768.pem" -pubout -out "$work/mlkem768.pub"
arm "$arm_openssl" pkey "${load[@]}" -pubin -in "$work/mlkem768.pub" -noout -text | grep -q 'ML-KEM-768' ||
    fail "arm64 pkey -pubin -text does not name ML-KEM-768"
ok "arm64 openssl (OPENSSL_MODULES): genpkey ML-KEM-768, pkey -pubout, pkey -pubin -text"

if arm "$arm_openssl" pkeyutl -help 2>&1 | grep -q -- '-encap'; then
    arm "$arm_openssl" pkeyutl "${load[@]}" -encap -pubin -inkey "$work/mlkem768.pub" \
        -out "$work/ct.bin" -secret "$work/ss1.bin"
    arm "$arm_openssl" pkeyutl "${load[@]}" -decap -inkey "$work/mlkem768.pem" \
        -in "$work/ct.bin" -out "$work/ss2.bin"
    cmp -s "$work/ss1.bin" "$work/ss2.bin" || fail "arm64 pkeyutl: -encap and -decap secrets differ"
    ok "arm64 pkeyutl -encap/-decap ML-KEM-768: the secrets match"
else
    log "the arm64 openssl's pkeyutl has no -encap (3.0): the round trip by evp-bench instead"
    bench_target=${CARGO_TARGET_DIR:-$PWD/target/aarch64}
    CARGO_TARGET_DIR=$bench_target timeout 1800 "$aarch64_cargo" build --release -q \
        --target "$aarch64_target" -p test-tools --bin evp-bench
    if ! arm "$bench_target/$aarch64_target/release/evp-bench" --provider-dir "$modules" \
        --trials 1 --iterations 1 ML-KEM-768 X25519MLKEM768 >"$work/evp-bench.out" 2>&1; then
        cat "$work/evp-bench.out" >&2
        fail "arm64 evp-bench round trip"
    fi
    ok "arm64 libcrypto + packaged mlkem.so, EVP_PKEY_encapsulate/decapsulate: ML-KEM-768, X25519MLKEM768 secrets match"
fi

# TLS 1.3: the arm64 s_server with the packaged module, OpenSSL 3.5's
# s_client on this machine.
openssl35=""
if [ "${MLKEM_SKIP_OPENSSL_BUILD:-0}" = 1 ]; then
    candidate=$HOME/.cache/mlkem-provider/openssl/openssl-3.5.5/bin/openssl
    [ -x "$candidate" ] && openssl35=$candidate
else
    openssl35=$(timeout 3600 bash scripts/build-openssl.sh 3.5 | tail -1)/bin/openssl
fi
if [ -z "$openssl35" ] || [ ! -x "$openssl35" ]; then
    in_ci && fail "no OpenSSL 3.5 for the handshake"
    log "skipped: the TLS handshake (no OpenSSL 3.5 built, MLKEM_SKIP_OPENSSL_BUILD=1)"
else
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
        -subj /CN=localhost -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null
    port=""
    for _ in 1 2 3 4 5; do
        try=$((20000 + RANDOM % 12000))
        # -www: answers HTTP, never reads its stdin (whose end would close
        # the connection before the handshake).
        arm "$arm_openssl" s_server "${load[@]}" -accept "127.0.0.1:$try" -naccept 1 -www \
            -tls1_3 -groups X25519MLKEM768 -cert "$work/cert.pem" -key "$work/key.pem" \
            </dev/null >"$work/s_server.log" 2>&1 &
        server_pid=$!
        for _ in $(seq 600); do # 60 s at most
            grep -q '^ACCEPT' "$work/s_server.log" && break
            kill -0 "$server_pid" 2>/dev/null || break
            sleep 0.1
        done
        if grep -q '^ACCEPT' "$work/s_server.log"; then
            port=$try
            break
        fi
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
        server_pid=""
        grep -qi 'address already in use\|bind' "$work/s_server.log" ||
            { cat "$work/s_server.log" >&2; fail "the arm64 s_server did not start"; }
    done
    [ -n "$port" ] || fail "the arm64 s_server found no free port"
    log "arm64 s_server on 127.0.0.1:$port; OpenSSL 3.5 s_client -groups X25519MLKEM768"
    timeout 60 "$openssl35" s_client -connect "127.0.0.1:$port" -tls1_3 \
        -groups X25519MLKEM768 </dev/null >"$work/s_client.log" 2>&1 || true
    # -naccept 1: the server ends after this connection.
    timeout 30 tail --pid="$server_pid" -f /dev/null || true
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
    if ! grep -q 'Negotiated TLS1.3 group: X25519MLKEM768' "$work/s_client.log"; then
        sed 's/^/    s_client: /' "$work/s_client.log" >&2
        sed 's/^/    s_server: /' "$work/s_server.log" >&2
        fail "no 'Negotiated TLS1.3 group: X25519MLKEM768' in OpenSSL 3.5 s_client's output"
    fi
    ok "TLS 1.3 arm64 s_server (packaged mlkem.so) <- OpenSSL 3.5 s_client: $(grep -o 'Negotiated TLS1.3 group: .*' "$work/s_client.log")"
fi

log "arm64 mlkem-provider-check --help:"
arm "$arm_root/usr/bin/mlkem-provider-check" --help >"$work/check-help.out" 2>&1 || {
    cat "$work/check-help.out" >&2
    fail "the arm64 mlkem-provider-check --help failed"
}
sed 's/^/    /' "$work/check-help.out" | head -20
ok "the arm64 mlkem-provider-check runs under qemu"

# Its local mode: no thread and no port (in-memory handshakes), so it runs
# under this emulation in full, on the arm64 libssl and the packaged module.
arm_conf=$arm_root/usr/share/mlkem-provider/openssl-service.cnf
status=0
arm "$arm_root/usr/bin/mlkem-provider-check" >"$work/check-local.out" 2>&1 || status=$?
arm_conf=$arm_root/etc/ssl/openssl.cnf
sed 's/^/    /' "$work/check-local.out"
{ [ "$status" = 0 ] && grep -q '^post-quantum TLS is in effect' "$work/check-local.out"; } ||
    fail "the arm64 mlkem-provider-check (local mode, openssl-service.cnf) exited $status"
ok "the arm64 mlkem-provider-check says post-quantum TLS is in effect (arm64 libssl, packaged module)"

log "passed in $((SECONDS - started)) s; packages: $deb_amd64 $deb_arm64"
