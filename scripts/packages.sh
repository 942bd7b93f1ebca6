# shellcheck shell=bash
# The Debian packages the scripts need: the one list (sourced by
# scripts/setup.sh, and so by every script that sources it).
#
# scripts/setup.sh installs the `build` group for every script;
# scripts/test.sh installs every group before its first check, so that a
# fresh machine runs the whole test command with nothing installed by hand.
# A script that needs a tool says so with `tools_ensure WHO POLICY TOOL...`
# (or tests for it with `command -v TOOL`); scripts/check-packages.sh fails
# when such a tool is not in this list.

# One line per package: PACKAGE GROUP TOOL... ("-": a library, no tool).
#   build    building the provider and the tools (scripts/setup.sh)
#   aarch64  the AArch64 cross toolchain and emulator (scripts/aarch64-env.sh)
#   package  building and checking the packages (package-deb, package-rpm,
#            package-test, package-rpm-test, rpm-distro-test)
#   servers  the real servers and clients the tests drive (deploy-test,
#            compat-test, nginx-soak, tls-compare)
#   demo     the demo's PNG charts
mlkem_package_table='
build-essential          build    cc gcc g++ make
pkg-config               build    pkg-config
libssl-dev               build    -
openssl                  build    openssl
ca-certificates          build    -
cmake                    build    cmake
libclang-dev             build    -
perl                     build    perl
valgrind                 build    valgrind
jq                       build    jq
python3                  build    python3
util-linux               build    flock
rustc-web                aarch64  /usr/bin/rustc
cargo-web                aarch64  /usr/bin/cargo
libstd-rust-web-dev:arm64 aarch64 -
gcc-aarch64-linux-gnu    aarch64  aarch64-linux-gnu-gcc aarch64-linux-gnu-strip
libc6-dev-arm64-cross    aarch64  -
qemu-user                aarch64  qemu-aarch64
libssl-dev:arm64         aarch64  -
dpkg                     package  dpkg-deb dpkg-query
lintian                  package  lintian
file                     package  file
binutils                 package  readelf objdump
diffutils                package  cmp
bubblewrap               package  bwrap
rpm                      package  rpm rpmbuild
rpmlint                  package  rpmlint
rpm2cpio                 package  rpm2cpio
cpio                     package  cpio
libc-bin                 package  ldconfig
nginx                    servers  nginx
apache2                  servers  apache2ctl
haproxy                  servers  haproxy
postfix                  servers  postfix
postgresql               servers  psql
mariadb-server           servers  mariadbd
mariadb-client           servers  mariadb
gnutls-bin               servers  gnutls-cli
curl                     servers  curl
wget                     servers  wget
nodejs                   servers  node
librsvg2-bin             demo     rsvg-convert
'

# Tools the scripts test for that no Debian package of this list brings:
# rustup's toolchain, the program our own package installs, and apt itself.
mlkem_tools_not_from_apt='cargo rustup mlkem-provider-check apt-get'

# packages_in GROUP...: the packages of these groups, one per line.
packages_in() {
    local group
    for group in "$@"; do
        awk -v g="$group" 'NF >= 2 && $2 == g { print $1 }' <<<"$mlkem_package_table"
    done
}

# package_groups: every group of the list, one per line.
package_groups() {
    awk 'NF >= 2 && !seen[$2]++ { print $2 }' <<<"$mlkem_package_table"
}

# package_of TOOL: the package that brings TOOL (nothing if none does).
package_of() {
    awk -v t="$1" 'NF >= 3 { for (i = 3; i <= NF; i++) if ($i == t) { print $1; exit } }' \
        <<<"$mlkem_package_table"
}

# packages_policy: `require` under CI, where scripts/test.sh has installed
# every group before the scripts run (a package missing then is a gap in
# this list, and fails); `install` elsewhere.
packages_policy() {
    if in_ci; then echo require; else echo install; fi
}

# packages_missing PACKAGE...: those not installed, one per line.
# A bare name means this machine's architecture (or `all`): with arm64 added
# (the aarch64 group), libssl-dev:arm64 does not stand for libssl-dev.
packages_missing() {
    local pkg want
    for pkg in "$@"; do
        case $pkg in
            *:*) want='^install ok installed' ;;
            *) want="^install ok installed ($(dpkg --print-architecture)|all)\$" ;;
        esac
        dpkg-query -W -f='${Status} ${Architecture}\n' "$pkg" 2>/dev/null | grep -Eq "$want" ||
            echo "$pkg"
    done
}

# packages_ensure WHO install|require PACKAGE...: installs the missing
# packages with apt-get (as root or through sudo), or fails naming them
# (require). No service a package brings is started (policy-rc.d) or left
# enabled for the next boot, and arm64 is added as a foreign architecture
# when a package needs it (packages_apt_install).
packages_ensure() {
    local who=$1 policy=$2
    shift 2
    local missing
    mapfile -t missing < <(packages_missing "$@")
    ((${#missing[@]})) || return 0
    if [ "$policy" != install ]; then
        echo "$who: missing packages: ${missing[*]} (scripts/packages.sh; scripts/test.sh installs them)" >&2
        return 1
    fi
    echo "$who: installing ${missing[*]}" >&2
    local sudo_cmd=()
    [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
    "${sudo_cmd[@]}" bash "$mlkem_packages_sh" apt-install "${missing[@]}" || {
        echo "$who: apt-get install ${missing[*]} failed" >&2
        return 1
    }
}

# packages_apt_install PACKAGE... (as root; `bash scripts/packages.sh
# apt-install PACKAGE...`): apt-get install with /usr/sbin/policy-rc.d in
# place and, once they are in, the services of these packages disabled: a
# test starts its own instances and none starts at the next boot. Both go
# through scripts/system-state.sh, so that a kill (even SIGKILL) leaves
# neither: the next test run puts them back.
packages_apt_install() {
    local missing=("$@")
    # shellcheck source=scripts/system-state.sh
    source "$(dirname "$mlkem_packages_sh")/system-state.sh"
    state_begin packages
    # exit 101: apt starts none of the packages' services; the tests run
    # their own instances. An existing policy-rc.d (a container's) stays.
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        state_save_file /usr/sbin/policy-rc.d
        printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
        chmod +x /usr/sbin/policy-rc.d
    fi
    state_note_new_services
    if printf '%s\n' "${missing[@]}" | grep -q ':arm64$' &&
        ! dpkg --print-foreign-architectures | grep -qx arm64; then
        dpkg --add-architecture arm64
    fi
    if printf '%s\n' "${missing[@]}" | grep -qx postfix; then
        echo "postfix postfix/main_mailer_type select No configuration" | debconf-set-selections
    fi
    timeout 900 apt-get -o DPkg::Lock::Timeout=600 update -qq >&2
    DEBIAN_FRONTEND=noninteractive timeout 1800 \
        apt-get -o DPkg::Lock::Timeout=600 install -y -qq "${missing[@]}" >&2
}

# tools_ensure WHO install|require TOOL...: packages_ensure for the packages
# that bring these tools; fails for a tool this list does not name.
tools_ensure() {
    local who=$1 policy=$2 tool pkg packages=()
    shift 2
    for tool in "$@"; do
        pkg=$(package_of "$tool")
        if [ -z "$pkg" ]; then
            echo "$who: no package for $tool in scripts/packages.sh" >&2
            return 1
        fi
        packages+=("$pkg")
    done
    packages_ensure "$who" "$policy" "${packages[@]}"
}

mlkem_packages_sh=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/packages.sh
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -euo pipefail
    case ${1:-} in
        apt-install) shift; packages_apt_install "$@" ;;
        *) echo "usage: $0 apt-install PACKAGE..." >&2; exit 2 ;;
    esac
fi
