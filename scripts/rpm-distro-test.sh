#!/usr/bin/env bash
# Installs the provider's RPM into roots shaped like RPM distributions and
# checks, inside each root, the deployment steps of docs/deploying-rhel.md:
# install, turn the post-quantum groups on, check, roll back.
#
#   scripts/rpm-distro-test.sh [--rpm FILE] [--keep] [SHAPE...]
#
# SHAPE (default: all four; CI runs rhel9.0, see scripts/test.sh):
#   rhel9.4    RHEL 9.4-9.6: OpenSSL 3.2.1 (RHEL 9.5/9.6 ship 3.2.2, 9.4
#              3.0.7; openssl-src stops at 3.2.1), /etc/pki/tls with the
#              provider drop-in directory /etc/pki/tls/openssl.d
#   rhel9.0    RHEL 9.0-9.3: OpenSSL 3.0.7, /etc/pki/tls, no openssl.d (the
#              provider's .include line is added to openssl.cnf)
#   al2023     Amazon Linux 2023: OpenSSL 3.0.8, /etc/pki/tls, no openssl.d
#   sles15sp6  SLES 15 SP6: OpenSSL 3.1.4, /etc/ssl (engines3.d/engdef3.d
#              engine drop-ins, no provider drop-in: the line is added)
# All four use crypto-policies' DEFAULT back-end for their TLS settings.
#
# --rpm FILE: the package to test (default: scripts/package-rpm.sh's, built
# now).
# --keep: leave the roots in target/rpm-distro/<shape>/root.
#
# For each shape: scripts/build-openssl.sh SERIES --layout rhel|suse builds
# the release with the distribution's directories (--prefix=/usr
# --libdir=lib64, --openssldir /etc/pki/tls or /etc/ssl); the root gets that
# tree, the shape's openssl.cnf (scripts/distro/<shape>-openssl.cnf, written
# from the distribution's documented structure: its header says from what),
# crypto-policies' DEFAULT OpenSSL back-end with the classical Groups line
# (scripts/distro/crypto-policies-DEFAULT-opensslcnf.txt, as the symbolic
# link /etc/crypto-policies/back-ends/opensslcnf.config points to), and a
# STAND-IN /usr/bin/update-crypto-policies (scripts/distro/
# update-crypto-policies: the real tool is not available here; the stand-in
# does what the real one does for this back-end, the generated content
# followed by the local.d/opensslcnf-*.config files in name order). The
# package goes in with `rpm --root ROOT -i --nodeps` (the root has no RPM
# database of the distribution's packages to satisfy its dependencies) and
# leaves with `rpm --root ROOT -e`. Then, inside the root (bubblewrap: the
# root as /, its own network namespace with loopback only, its own PID
# namespace), with OpenSSL 3.5 as the peer (scripts/build-openssl.sh 3.5,
# bound read-only at /opt/openssl-peer):
#   installed  `openssl list -providers` shows mlkem; genpkey ML-KEM-768;
#              3.5's `s_client -groups X25519MLKEM768:X25519` against the
#              root's s_server gets X25519; the root's s_client offers the
#              policy's groups; mlkem-provider-check exits non-zero
#   enabled    (after the documented step: the package's crypto-policies
#              snippet copied to /etc/crypto-policies/local.d,
#              update-crypto-policies) the same handshake gets
#              X25519MLKEM768, the root's s_client offers it first, a
#              classical-only client (-groups X25519) still connects, the
#              check exits 0
#   both       TLS 1.0 refused, and SHA-1 signatures refused (a TLS 1.2
#              client offering only RSA+SHA1), as DEFAULT's MinProtocol and
#              SignatureAlgorithms say
#   removed    (after the documented roll-back and `rpm -e`) the root's
#              openssl works, lists no mlkem, and the handshake is classical
# A table of the results ends the output; the exit status is 0 when every
# cell is as expected.
#
# What the roots cannot reproduce: the distributions' own OpenSSL builds
# (their patches: RHEL's and SUSE's FIPS changes, the TLS./DTLS. prefixed
# protocol keys that RHEL's newer crypto-policies write, the SHA-1 switch
# rh-allow-sha1-signatures, PROFILE=SYSTEM); their glibc (the roots run
# this Debian machine's glibc and shell tools, copied into the root's
# /usr/lib/x86_64-linux-gnu next to the distribution's /usr/lib64); SELinux
# labels and policy; FIPS mode (fips=1 kernels, the FIPS provider); the real
# update-crypto-policies and its other back-ends; rpm's dependency checks
# against the distribution's packages (--nodeps); dnf/zypper. Each shape's
# openssl.cnf header says what its structure rests on.
#
# Changes nothing on this machine: each root is a directory under
# target/rpm-distro, the processes run in bubblewrap's namespaces; root is
# needed for rpm --root (chroot for the package's scriptlets). Tools:
# bwrap, rpm, rpm2cpio and cpio, ldconfig.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
umask 022
export LC_ALL=C

log() { echo "rpm-distro-test: $*" >&2; }
die() { log "error: $*"; exit 1; }

# ---------------------------------------------------------------- shapes
all_shapes=(rhel9.4 rhel9.0 al2023 sles15sp6)
declare -A SERIES=([rhel9.4]=3.2 [rhel9.0]=3.0.7 [al2023]=3.0.8 [sles15sp6]=3.1)
declare -A LAYOUT=([rhel9.4]=rhel [rhel9.0]=rhel [al2023]=rhel [sles15sp6]=suse)
declare -A OPENSSLDIR=([rhel9.4]=/etc/pki/tls [rhel9.0]=/etc/pki/tls [al2023]=/etc/pki/tls [sles15sp6]=/etc/ssl)
# yes: the distribution reads provider drop-ins from $OPENSSLDIR/openssl.d.
declare -A DROPIN=([rhel9.4]=yes [rhel9.0]=no [al2023]=no [sles15sp6]=no)
# yes: [default_sect]'s "activate = 1" is commented out, as upstream has it.
declare -A DEFAULT_COMMENTED=([rhel9.4]=no [rhel9.0]=no [al2023]=no [sles15sp6]=yes)

# The package's files (scripts/package-rpm.sh's layout).
MODULE=/usr/lib64/ossl-modules/mlkem.so
CHECK=/usr/bin/mlkem-provider-check
DROPIN_FILE=/etc/pki/tls/openssl.d/mlkem-provider.cnf
PROVIDER_SNIPPET=/usr/share/mlkem-provider/mlkem-provider.cnf
POLICY_SNIPPET=/usr/share/mlkem-provider/crypto-policies/opensslcnf-mlkem.config
LOCAL_D=/etc/crypto-policies/local.d

usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//'; }

rpm_file=""
keep=false
shapes=()
while (($#)); do
    case $1 in
        --rpm) (($# >= 2)) || { usage >&2; exit 2; }; rpm_file=$2; shift 2 ;;
        --rpm=*) rpm_file=${1#*=}; shift ;;
        --keep) keep=true; shift ;;
        -h | --help) usage; exit 0 ;;
        -*) log "unknown argument: $1"; exit 2 ;;
        *) [ -n "${SERIES[$1]:-}" ] || { log "unknown shape: $1 (${all_shapes[*]})"; exit 2; }
           shapes+=("$1"); shift ;;
    esac
done
((${#shapes[@]})) || shapes=("${all_shapes[@]}")

[ "$(id -u)" -eq 0 ] || die "run as root (rpm --root chroots into the root for the package's scriptlets)"
source scripts/common.sh
source scripts/packages.sh
tools_ensure rpm-distro-test "$(packages_policy)" bwrap rpm rpm2cpio cpio ||
    die "missing tools (scripts/packages.sh)"
command -v ldconfig >/dev/null 2>&1 || die "ldconfig not found"

work=$repo/target/rpm-distro
mkdir -p "$work"

# Roots are removed on every exit unless --keep; the processes inside them
# die with bwrap (--die-with-parent, their own PID namespace).
cleanup() {
    local rc=$?
    if ! $keep; then
        local s
        for s in "${shapes[@]}"; do rm -rf "${work:?}/$s/root"; done
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# ---------------------------------------------------------------- the package
if [ -z "$rpm_file" ]; then
    log "building the package with scripts/package-rpm.sh"
    rpm_file=$(bash scripts/package-rpm.sh | tail -1)
fi
[ -f "$rpm_file" ] || die "no package: $rpm_file"
rpm_file=$(cd "$(dirname "$rpm_file")" && pwd)/$(basename "$rpm_file")
rpm_name=$(rpm -qp --qf '%{NAME}' "$rpm_file" 2>/dev/null)
log "package: $rpm_file"
rpm -qlp "$rpm_file" >&2

# ---------------------------------------------------------------- OpenSSL 3.5 peer
peer=$(bash scripts/build-openssl.sh 3.5 | tail -1)

# ---------------------------------------------------------------- a root
# Host programs the roots need (the distribution's glibc and coreutils are
# not available here: Debian's are copied, with their libraries).
host_tools=(bash cat cp mv rm ln mkdir ls grep sed sort head tail sleep timeout
    env readlink chmod tr cut wc dirname basename seq)

# copy_libs ROOT FILE...: the shared libraries FILE needs, into ROOT's
# /usr/lib/x86_64-linux-gnu (the loader into /usr/lib64, as on RHEL), never
# libssl or libcrypto (those are the root's OpenSSL's).
copy_libs() {
    local root=$1 lib; shift
    while read -r lib; do
        case ${lib##*/} in
            libssl.so* | libcrypto.so*) continue ;;
            ld-linux*) cp -L "$lib" "$root/usr/lib64/" ;;
            *) [ -e "$root/usr/lib/x86_64-linux-gnu/${lib##*/}" ] ||
                cp -L "$lib" "$root/usr/lib/x86_64-linux-gnu/" ;;
        esac
    done < <(ldd "$@" 2>/dev/null | sed -n -e 's/.*=> \(\/[^ ]*\) .*/\1/p' -e 's/^[[:space:]]*\(\/[^ ]*\) .*/\1/p' | sort -u)
}

make_root() {
    local shape=$1 tree=$2 root=$3 dir=${OPENSSLDIR[$1]} t
    rm -rf "$root"
    mkdir -p "$root"/{usr/bin,usr/lib64,usr/lib/x86_64-linux-gnu,etc,tmp,root,proc,dev,var/lib/rpm,opt/openssl-peer}
    chmod 1777 "$root/tmp"
    # The usr-merged layout of RHEL 9, SLES 15 has real /bin and /lib64
    # but the same paths resolve.
    ln -s usr/bin "$root/bin"
    ln -s usr/bin "$root/sbin"
    ln -s usr/lib "$root/lib"
    ln -s usr/lib64 "$root/lib64"
    cp -a "$tree/." "$root/"
    for t in "${host_tools[@]}"; do
        cp -L "$(command -v "$t")" "$root/usr/bin/"
    done
    ln -sf bash "$root/usr/bin/sh"
    copy_libs "$root" "${host_tools[@]/#/$root/usr/bin/}"
    # What the package's programs need besides libssl/libcrypto.
    local x
    x=$(mktemp -d "$work/rpm2cpio.XXXXXX")
    (cd "$x" && rpm2cpio "$rpm_file" | cpio -idm --quiet)
    copy_libs "$root" "$x$MODULE" "$x$CHECK"
    rm -rf "$x"
    printf '/usr/lib64\n/usr/lib/x86_64-linux-gnu\n' >"$root/etc/ld.so.conf"
    ldconfig -r "$root"
    echo 'root:x:0:0:root:/root:/bin/bash' >"$root/etc/passwd"
    echo 'root:x:0:' >"$root/etc/group"
    # OpenSSL configuration: the shape's file.
    mkdir -p "$root$dir/certs" "$root$dir/private"
    cp "scripts/distro/$shape-openssl.cnf" "$root$dir/openssl.cnf"
    [ "${DROPIN[$shape]}" = yes ] && mkdir -p "$root$dir/openssl.d"
    [ "${LAYOUT[$shape]}" = suse ] && mkdir -p "$root/etc/ssl/engines3.d" "$root/etc/ssl/engdef3.d"
    # crypto-policies, DEFAULT.
    mkdir -p "$root/usr/share/crypto-policies/DEFAULT" "$root/etc/crypto-policies/back-ends" "$root$LOCAL_D"
    cp scripts/distro/crypto-policies-DEFAULT-opensslcnf.txt "$root/usr/share/crypto-policies/DEFAULT/opensslcnf.txt"
    echo DEFAULT >"$root/etc/crypto-policies/config"
    install -m0755 scripts/distro/update-crypto-policies "$root/usr/bin/update-crypto-policies"
    ln -s /usr/share/crypto-policies/DEFAULT/opensslcnf.txt "$root/etc/crypto-policies/back-ends/opensslcnf.config"
    # The server's certificate (RSA, SHA-256), made by the peer.
    mkdir -p "$root/root/pki"
    LD_LIBRARY_PATH=$peer/lib OPENSSL_CONF=$peer/ssl/openssl.cnf "$peer/bin/openssl" req -x509 \
        -newkey rsa:2048 -nodes -keyout "$root/root/pki/key.pem" -out "$root/root/pki/cert.pem" \
        -subj /CN=localhost -days 2 2>/dev/null
    # The RPM database.
    rpm --root "$root" --dbpath /var/lib/rpm --initdb
}

# in_root ROOT SCRIPT: run SCRIPT (bash text) as root inside ROOT.
in_root() {
    local root=$1 script=$2
    printf '%s\n' "$script" >"$root/tmp/step.sh"
    env -i PATH=/usr/bin:/bin HOME=/root TERM=dumb \
        timeout 300 bwrap --bind "$root" / --proc /proc --dev /dev \
        --ro-bind "$peer" /opt/openssl-peer \
        --unshare-net --unshare-pid --unshare-ipc --unshare-uts  --hostname "$(basename "$(dirname "$root")")" \
        --die-with-parent --chdir /root \
        /bin/bash /tmp/step.sh
}

# The functions every step inside the root uses. Each result is a line
# "key value" in /root/results.
read -r -d '' root_lib <<'LIB' || true
set -u
res() { echo "$1 $2" >>/root/results; echo "  $1 = $2"; }
peer() { LD_LIBRARY_PATH=/opt/openssl-peer/lib OPENSSL_CONF=/opt/openssl-peer/ssl/openssl.cnf \
    timeout 20 /opt/openssl-peer/bin/openssl "$@"; }
wait_accept() { # LOG: until the server says ACCEPT
    local i
    for i in $(seq 1 100); do
        grep -q ACCEPT "$1" 2>/dev/null && return 0
        sleep 0.2
    done
    echo "server did not start:"; cat "$1"; return 1
}
# The root's server, with the root's configuration (its groups: the policy's).
root_server() { # PORT
    rm -f "/tmp/server-$1.log"
    openssl s_server -accept "127.0.0.1:$1" -cert /root/pki/cert.pem -key /root/pki/key.pem \
        -www >"/tmp/server-$1.log" 2>&1 &
    wait_accept "/tmp/server-$1.log"
}
peer_server() { # PORT ARGS...
    local port=$1; shift
    rm -f "/tmp/peer-$port.log"
    LD_LIBRARY_PATH=/opt/openssl-peer/lib OPENSSL_CONF=/opt/openssl-peer/ssl/openssl.cnf \
        /opt/openssl-peer/bin/openssl s_server -accept "127.0.0.1:$port" \
        -cert /root/pki/cert.pem -key /root/pki/key.pem -www "$@" >"/tmp/peer-$port.log" 2>&1 &
    wait_accept "/tmp/peer-$port.log"
}
# group PORT ARGS...: the group 3.5's s_client negotiates with the root's
# server ("Negotiated TLS1.3 group" for a KEM group, "Peer Temp Key" for a
# classical one), prefixed "TLSv1.2:" when not TLS 1.3; "fail" when the
# handshake fails.
group() {
    local port=$1 out g p; shift
    out=$(peer s_client -connect "127.0.0.1:$port" "$@" </dev/null 2>&1) || true
    g=$(printf '%s\n' "$out" | sed -n -e 's/^Negotiated TLS1.3 group: //p' \
        -e 's/^Peer Temp Key: \([^,]*\),.*/\1/p' | head -1)
    p=$(printf '%s\n' "$out" | sed -n 's/^New, \(TLSv1[.0-9]*\),.*/\1/p' | head -1)
    case $p in
        TLSv1.3) echo "${g:-unknown}" ;;
        TLSv1*) echo "$p:${g:-unknown}" ;;
        *) echo fail ;;
    esac
}
# handshake PORT ARGS...: ok or refused.
handshake() {
    local port=$1 out; shift
    out=$(peer s_client -connect "127.0.0.1:$port" "$@" </dev/null 2>&1) || true
    if printf '%s\n' "$out" | grep -q '^New, TLSv1'; then echo ok; else echo refused; fi
}
# The groups the root's own s_client offers, in its order, as the peer's
# status page shows them.
root_client_groups() { # PORT
    printf 'GET / HTTP/1.0\r\n\r\n' |
        timeout 20 openssl s_client -connect "127.0.0.1:$1" -quiet -ign_eof 2>/dev/null |
        sed -n 's/^Supported groups: //p' | head -1
}
# The common cells: TLS 1.0 and SHA-1 signatures against the root's server.
policy_cells() { # PORT PHASE
    res "$2.tls1_0" "$(handshake "$1" -tls1 -cipher DEFAULT@SECLEVEL=0)"
    res "$2.tls1_2_sha1_sig" "$(handshake "$1" -tls1_2 -sigalgs RSA+SHA1 -cipher DEFAULT@SECLEVEL=0)"
    res "$2.tls1_2_sha256_sig" "$(handshake "$1" -tls1_2 -sigalgs RSA+SHA256)"
}
check_cell() { # PHASE
    local rc=0
    mlkem-provider-check >"/root/check-$1.txt" 2>&1 || rc=$?
    res "$1.check_exit" "$rc"
    # Does its advice name crypto-policies' step (local.d)?
    if grep -q 'crypto-policies/local.d' "/root/check-$1.txt"; then
        res "$1.check_names_local_d" yes
    else
        res "$1.check_names_local_d" no
    fi
    sed 's/^/    check| /' "/root/check-$1.txt"
}
LIB

# ---------------------------------------------------------------- one shape
declare -A R   # R[shape.key] = value
run_shape() {
    local shape=$1 t0 tree root dir rpmq
    t0=$(date +%s)
    dir=${OPENSSLDIR[$shape]}
    log "=== $shape: OpenSSL ${SERIES[$shape]} (${LAYOUT[$shape]} layout)"
    tree=$(bash scripts/build-openssl.sh "${SERIES[$shape]}" --layout "${LAYOUT[$shape]}" | tail -1)
    root=$work/$shape/root
    mkdir -p "$work/$shape"
    make_root "$shape" "$tree" "$root"
    : >"$root/root/results"

    log "$shape: rpm --root $root -i --nodeps $(basename "$rpm_file")"
    rpm --root "$root" --dbpath /var/lib/rpm -i --nodeps "$rpm_file"
    # Install, as docs/deploying-rhel.md says for the shape: with openssl.d
    # the package's drop-in is read as it is; without, one line is added
    # right after "default = default_sect" (the package's snippet says so),
    # and where the default provider's activation is commented out, it is
    # uncommented.
    if [ "${DROPIN[$shape]}" = no ]; then
        in_root "$root" "set -ex
sed -i '/^default = default_sect\$/a .include $PROVIDER_SNIPPET' $dir/openssl.cnf
$([ "${DEFAULT_COMMENTED[$shape]}" = no ] || echo "sed -i 's/^# activate = 1\$/activate = 1/' $dir/openssl.cnf")
grep -n -e '^.include' -e 'activate' $dir/openssl.cnf"
    fi

    log "$shape: installed, groups not turned on"
    in_root "$root" "$root_lib
cd /root
res installed.openssl_version \"\$(openssl version | tr ' ' _)\"
if openssl list -providers | grep -q '^  mlkem'; then res installed.providers_mlkem yes; else res installed.providers_mlkem no; openssl list -providers; fi
if openssl genpkey -algorithm ML-KEM-768 >/tmp/k.pem 2>/tmp/genpkey.err; then res installed.genpkey_mlkem768 ok; else res installed.genpkey_mlkem768 fail; cat /tmp/genpkey.err; fi
root_server 4433
res before.group_pq_client \"\$(group 4433 -groups X25519MLKEM768:X25519)\"
res before.group_classical_client \"\$(group 4433 -groups X25519)\"
peer_server 4500 -groups X25519MLKEM768:X25519
res before.root_client_offers \"\$(root_client_groups 4500)\"
policy_cells 4433 before
check_cell before
# Controls: the peer itself can do what the root's server refuses.
peer_server 4502 -cipher DEFAULT@SECLEVEL=0
res control.tls1_0_peer_to_peer \"\$(handshake 4502 -tls1 -cipher DEFAULT@SECLEVEL=0)\"
res control.sha1_sig_peer_to_peer \"\$(handshake 4502 -tls1_2 -sigalgs RSA+SHA1 -cipher DEFAULT@SECLEVEL=0)\"
" || log "$shape: the checks inside the root exited $? (the table shows what they found)"

    log "$shape: the documented step (crypto-policies local.d, update-crypto-policies)"
    in_root "$root" "set -ex
cp $POLICY_SNIPPET $LOCAL_D/
update-crypto-policies
echo '  back-end now:'; sed 's/^/    | /' /etc/crypto-policies/back-ends/opensslcnf.config"

    log "$shape: groups turned on"
    in_root "$root" "$root_lib
cd /root
root_server 4433
res after.group_pq_client \"\$(group 4433 -groups X25519MLKEM768:X25519)\"
res after.group_classical_client \"\$(group 4433 -groups X25519)\"
peer_server 4500 -groups X25519MLKEM768:X25519
res after.root_client_offers \"\$(root_client_groups 4500)\"
peer_server 4501 -groups X25519
res after.root_client_to_classical_server \"\$(printf 'GET / HTTP/1.0\r\n\r\n' | timeout 20 openssl s_client -connect 127.0.0.1:4501 -quiet -ign_eof 2>/dev/null | grep -q '^Shared groups: x25519' && echo ok || echo fail)\"
policy_cells 4433 after
check_cell after
" || log "$shape: the checks inside the root exited $? (the table shows what they found)"

    log "$shape: roll back (docs/deploying-rhel.md), rpm -e"
    local unline=""
    [ "${DROPIN[$shape]}" = yes ] ||
        unline="sed -i '\\|^\\.include $PROVIDER_SNIPPET\$|d' $dir/openssl.cnf"
    in_root "$root" "set -ex
rm -f $LOCAL_D/$(basename "$POLICY_SNIPPET")
update-crypto-policies
$unline
if grep -n '^[^#]*mlkem' $dir/openssl.cnf; then exit 1; fi"
    rpm --root "$root" --dbpath /var/lib/rpm -e "$rpm_name"
    rpmq=$(rpm --root "$root" --dbpath /var/lib/rpm -q "$rpm_name" 2>&1 || true)
    in_root "$root" "$root_lib
cd /root
res removed.rpm_q \"\$(echo '$rpmq' | tr ' ' _)\"
res removed.module_gone \"\$([ -e $MODULE ] && echo no || echo yes)\"
if openssl version >/dev/null 2>&1; then res removed.openssl_works yes; else res removed.openssl_works no; openssl version; fi
if openssl list -providers 2>&1 | grep -q mlkem; then res removed.providers_mlkem yes; else res removed.providers_mlkem no; fi
root_server 4433
res removed.group_pq_client \"\$(group 4433 -groups X25519MLKEM768:X25519)\"
policy_cells 4433 removed
" || log "$shape: the checks inside the root exited $? (the table shows what they found)"
    local k v
    while read -r k v; do R[$shape.$k]=$v; done <"$root/root/results"
    R[$shape.seconds]=$(($(date +%s) - t0))
    log "$shape: done in ${R[$shape.seconds]} s"
}

for s in "${shapes[@]}"; do
    run_shape "$s"
done

# ---------------------------------------------------------------- the table
# expect KEY VALUE-PATTERN: the cell, marked when not as expected.
cell() { # SHAPE KEY PATTERN
    local v=${R[$1.$2]:-missing}
    # shellcheck disable=SC2053
    if [[ $v == $3 ]]; then printf '%s' "$v"; else printf '%s (!)' "$v"; fi
}
table() {
echo
echo "package: $(basename "$rpm_file")"
echo
printf '| shape | OpenSSL | phase | check exit | 3.5 client X25519MLKEM768:X25519 gets | classical client (X25519) | root s_client offers | TLS 1.0 | TLS 1.2 SHA-1 sig | seconds |\n'
printf '|---|---|---|---|---|---|---|---|---|---|\n'
for s in "${shapes[@]}"; do
    ver=${R[$s.installed.openssl_version]:-?}
    ver=${ver#OpenSSL_}; ver=${ver%%_*}
    printf '| %s | %s | installed (before) | %s | %s | %s | %s | %s | %s | %s |\n' "$s" "$ver" \
        "$(cell "$s" before.check_exit '[1-9]*')" \
        "$(cell "$s" before.group_pq_client '[Xx]25519')" \
        "$(cell "$s" before.group_classical_client '[Xx]25519')" \
        "$(cell "$s" before.root_client_offers '[Xx]25519:*')" \
        "$(cell "$s" before.tls1_0 refused)" \
        "$(cell "$s" before.tls1_2_sha1_sig refused)" \
        "${R[$s.seconds]:-?}"
    printf '| %s | %s | after the step | %s | %s | %s | %s | %s | %s | |\n' "$s" "$ver" \
        "$(cell "$s" after.check_exit 0)" \
        "$(cell "$s" after.group_pq_client X25519MLKEM768)" \
        "$(cell "$s" after.group_classical_client '[Xx]25519')" \
        "$(cell "$s" after.root_client_offers 'X25519MLKEM768:*')" \
        "$(cell "$s" after.tls1_0 refused)" \
        "$(cell "$s" after.tls1_2_sha1_sig refused)"
    printf '| %s | %s | removed (rpm -e) | - | %s | - | - | %s | %s | |\n' "$s" "$ver" \
        "$(cell "$s" removed.group_pq_client '[Xx]25519')" \
        "$(cell "$s" removed.tls1_0 refused)" \
        "$(cell "$s" removed.tls1_2_sha1_sig refused)"
done
echo
# Before the step, the check names crypto-policies' local.d step.
printf '| shape | list -providers: mlkem | genpkey ML-KEM-768 | root client -> classical server | controls: SHA-256 sig before/after; 3.5 to 3.5 TLS 1.0, SHA-1 sig | removed: openssl works, mlkem listed, module gone | check names the local.d step before |\n'
printf '|---|---|---|---|---|---|---|\n'
for s in "${shapes[@]}"; do
    printf '| %s | %s | %s | %s | %s / %s; %s, %s | %s, %s, %s | %s |\n' "$s" \
        "$(cell "$s" installed.providers_mlkem yes)" \
        "$(cell "$s" installed.genpkey_mlkem768 ok)" \
        "$(cell "$s" after.root_client_to_classical_server ok)" \
        "$(cell "$s" before.tls1_2_sha256_sig ok)" \
        "$(cell "$s" after.tls1_2_sha256_sig ok)" \
        "$(cell "$s" control.tls1_0_peer_to_peer ok)" \
        "$(cell "$s" control.sha1_sig_peer_to_peer ok)" \
        "$(cell "$s" removed.openssl_works yes)" \
        "$(cell "$s" removed.providers_mlkem no)" \
        "$(cell "$s" removed.module_gone yes)" \
        "$(cell "$s" before.check_names_local_d yes)"
done
echo
}
table_text=$(table)
printf '%s\n' "$table_text"
failures=$(grep -o '(!)' <<<"$table_text" | wc -l || true)
if ((failures)); then
    log "$failures cell(s) not as expected (marked (!))"
    exit 1
fi
log "every cell as expected"
