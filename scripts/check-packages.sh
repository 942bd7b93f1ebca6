#!/usr/bin/env bash
# Keeps scripts/packages.sh the whole list of what the scripts need from
# apt, so that scripts/test.sh installs all of it on a fresh machine:
#
#   scripts/check-packages.sh [--root DIR]   every tool a script needs is listed
#   scripts/check-packages.sh --installed    and every listed tool of an
#                                            installed package is on PATH
#   scripts/check-packages.sh --self-test    the check fails on a script that
#                                            needs a tool the list lacks
#
# A script needs a tool where it tests for it (`command -v NAME`) or asks for
# it (`tools_ensure WHO POLICY NAME...`). A tool is listed when a package of
# scripts/packages.sh brings it, or it is one of $mlkem_tools_not_from_apt.
# Names in variables (`command -v "$tool"`) are not followed. Exit status:
# 0 when every need is listed, 1 with a line per script and tool otherwise.
set -euo pipefail

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit "${1:-2}"; }

root=$(cd "$(dirname "$0")/.." && pwd)
mode=scripts
while (($#)); do
    case $1 in
        --root) (($# >= 2)) || usage; root=$(cd "$2" && pwd); shift 2 ;;
        --installed) mode=installed; shift ;;
        --self-test) mode=self-test; shift ;;
        -h | --help) usage 0 ;;
        *) usage ;;
    esac
done

# needs FILE: "LINE TOOL" for each tool the file tests for or asks for.
needs() {
    awk '
        {
            line = $0
            sub(/^[ \t]*#.*/, "", line)
            rest = line
            while (match(rest, /command -v +"?[A-Za-z\/][A-Za-z0-9_.+\/-]*/)) {
                word = substr(rest, RSTART, RLENGTH)
                sub(/^command -v +"?/, "", word)
                print NR, word
                rest = substr(rest, RSTART + RLENGTH)
            }
            if (line ~ /tools_ensure[ \t]/ && line !~ /tools_ensure\(\)/) {
                n = split(substr(line, index(line, "tools_ensure")), w, /[ \t]+/)
                # w[1] tools_ensure, w[2] WHO, w[3] POLICY, then the tools
                for (i = 4; i <= n; i++) {
                    if (w[i] !~ /^[A-Za-z\/][A-Za-z0-9_.+\/-]*$/) break
                    print NR, w[i]
                }
            }
        }' "$1"
}

check_scripts() { # ROOT: prints a line per unlisted need, fails if any
    local root=$1 file rel line tool failures=0
    # shellcheck source=scripts/packages.sh
    source "$root/scripts/packages.sh"
    while IFS= read -r -d '' file; do
        rel=${file#"$root"/}
        while read -r line tool; do
            [ -n "$(package_of "$tool")" ] && continue
            [[ " $mlkem_tools_not_from_apt " == *" $tool "* ]] && continue
            echo "check-packages: FAIL: $rel:$line needs $tool, which no package of scripts/packages.sh brings"
            failures=$((failures + 1))
        done < <(needs "$file")
    done < <(find "$root/scripts" "$root/.ci" -type f \( -name '*.sh' -o -name run \) -print0 2>/dev/null | sort -z)
    ((failures == 0))
}

check_installed() { # every tool of an installed package resolves
    local pkg group tools tool failures=0
    # shellcheck source=scripts/packages.sh
    source "$root/scripts/packages.sh"
    while read -r pkg group tools; do
        [ -n "$pkg" ] && [ "$tools" != - ] || continue
        [ -z "$(packages_missing "$pkg")" ] || continue
        for tool in $tools; do
            # Servers live in /usr/sbin, off a non-root user's PATH on Debian.
            PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin" command -v "$tool" >/dev/null 2>&1 && continue
            echo "check-packages: FAIL: $pkg is installed but $tool is not on PATH (scripts/packages.sh)"
            failures=$((failures + 1))
        done
    done <<<"$mlkem_package_table"
    ((failures == 0))
}

self_test() {
    local tmp out rc
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' RETURN
    mkdir -p "$tmp/scripts"
    cp "$root/scripts/packages.sh" "$tmp/scripts/"
    printf '#!/usr/bin/env bash\ncommand -v lintian >/dev/null || exit 1\n' >"$tmp/scripts/needs-lintian.sh"
    printf '#!/usr/bin/env bash\ntools_ensure me install dpkg-deb lintian || exit 1\n' >"$tmp/scripts/asks-lintian.sh"
    # With lintian listed, both scripts pass.
    check_scripts "$tmp" >"$tmp/out" || {
        cat "$tmp/out"
        echo "check-packages: self-test FAIL: a listed tool was reported"
        return 1
    }
    # Without it (as before issue 47), both fail, naming script, line and tool.
    grep -v '^lintian ' "$tmp/scripts/packages.sh" >"$tmp/packages.sh"
    mv "$tmp/packages.sh" "$tmp/scripts/packages.sh"
    rc=0
    out=$(check_scripts "$tmp") || rc=$?
    printf '%s\n' "$out"
    if ((rc == 0)) ||
        ! grep -qx 'check-packages: FAIL: scripts/needs-lintian.sh:2 needs lintian, which no package of scripts/packages.sh brings' <<<"$out" ||
        ! grep -qx 'check-packages: FAIL: scripts/asks-lintian.sh:2 needs lintian, which no package of scripts/packages.sh brings' <<<"$out" ||
        [ "$(wc -l <<<"$out")" -ne 2 ]; then
        echo "check-packages: self-test FAIL: an unlisted tool was not reported as expected"
        return 1
    fi
    echo "check-packages: self-test ok: the check fails on an unlisted tool (the two lines above)"
}

case $mode in
    scripts)
        check_scripts "$root"
        echo "check-packages: ok: every tool the scripts need is in scripts/packages.sh"
        ;;
    installed)
        check_scripts "$root"
        check_installed
        echo "check-packages: ok: every tool the scripts need is listed, and every listed tool is on PATH"
        ;;
    self-test) self_test ;;
esac
