# shellcheck shell=bash
# What a test changes on this machine, saved before the change and put back
# on every exit (sourced by the scripts that change the system:
# scripts/deploy-test.sh, scripts/compat-test.sh, scripts/tls-compare.sh,
# scripts/nginx-soak.sh, and packages_ensure in scripts/packages.sh).
#
#   state_begin NAME [--private]
#                            the saved state goes to $MLKEM_STATE_ROOT/NAME
#                            (/var/lib/mlkem-provider-tests as root, else
#                            ~/.local/state/mlkem-provider-tests); what an
#                            earlier run that was killed left there is put
#                            back first; traps on EXIT, INT, TERM and HUP
#                            restore it all (a signal then exits 128+N);
#                            --private: the run changes nothing other runs
#                            share (it only starts processes), so it does
#                            not wait for them
#   state_save_file PATH     PATH comes back byte for byte (mode, owner), or
#                            is removed if it did not exist
#   state_note_package PKG   PKG comes back as it is now: installed (that
#                            version, its files and conffiles as they are),
#                            removed with its conffiles kept, or absent
#   state_note_new_services  before packages are installed: every package
#                            installed at restore that is not now (those
#                            asked for and what they pull in) has its
#                            services disabled (systemctl disable,
#                            update-rc.d disable), so that none starts at
#                            the next boot
#   state_note_pid PID       that process (and its group, when it leads
#                            one) is killed at restore; with its start time,
#                            so a later run kills no other process that got
#                            the same number
#   state_restore            all of it, newest first (the traps run it)
#   state_dpkg ARGS...       dpkg, waiting while apt or another test holds
#                            its lock (quiet unless it fails)
#   state_checkpoint NAME    for scripts/restore-test.sh: when
#                            MLKEM_STATE_PAUSE_AT is NAME, writes
#                            $MLKEM_STATE_PAUSE_FILE and waits there (for a
#                            signal)
#
#   bash scripts/system-state.sh restore   # puts back every leftover
#
# One run at a time per machine: state_begin waits (up to 15 minutes) while
# another live run outside this process's ancestry holds a state directory,
# since the tests share /etc/ssl/openssl.cnf and the mlkem-provider package.
#
# Why an installed package is kept as a .deb rebuilt from the installed
# files (state_note_package): the package this project makes comes from no
# archive (no /var/cache/apt copy to reinstall, and the tests build a newer
# one over it), and dpkg-repack is not installed. The rebuilt .deb has the
# installed control fields, maintainer scripts, conffiles list and files, so
# reinstalling it restores the same version and the same conffiles: the
# recorded hash of each conffile is that of its content when unmodified;
# a conffile an administrator edited comes back with the edited content
# (copied back after the reinstall), though dpkg then records that content
# as the shipped one.

MLKEM_STATE_ROOT=${MLKEM_STATE_ROOT:-}
if [ -z "$MLKEM_STATE_ROOT" ]; then
    if [ "$(id -u)" -eq 0 ]; then
        MLKEM_STATE_ROOT=/var/lib/mlkem-provider-tests
    else
        MLKEM_STATE_ROOT=${XDG_STATE_HOME:-$HOME/.local/state}/mlkem-provider-tests
    fi
fi
state_dir=""
state_restoring=false

state_log() { echo "system-state: $*" >&2; }

# The start time of PID (field 22 of /proc/PID/stat), empty when it is gone
# or a zombie (whose parent, or an init that reaps nothing, has yet to reap
# it: it runs no more).
state_pid_start() {
    local stat
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
    stat=${stat##*) }
    awk '$1 != "Z" { print $20 }' <<<"$stat"
}

# Is the owner recorded in DIR/owner (PID STARTTIME) alive?
state_owner_alive() {
    local pid start
    read -r pid start 2>/dev/null <"$1/owner" || return 1
    [ -n "$pid" ] && [ "$(state_pid_start "$pid")" = "$start" ]
}

# Is PID this process or one of its ancestors?
state_is_ancestor() {
    local pid=$BASHPID stat
    while [ -n "$pid" ] && [ "$pid" != 0 ]; do
        [ "$pid" = "$1" ] && return 0
        stat=$(cat "/proc/$pid/stat" 2>/dev/null) || return 1
        stat=${stat##*) }
        pid=$(awk '{ print $2 }' <<<"$stat")
    done
    return 1
}

# state_restore_dir DIR: puts back what DIR records, newest entry first;
# removes DIR when all went back, keeps it (and fails) otherwise.
state_restore_dir() {
    local dir=$1 failed=0 kind a b
    [ -f "$dir/journal" ] || { rm -rf "$dir"; return 0; }
    # b: the rest of the line (a path may hold blanks).
    while read -r kind a b; do
        case $kind in
            pid) state_restore_pid "$a" "$b" || failed=1 ;;
            file) state_restore_file "$dir" "$a" "$b" || failed=1 ;;
            package) state_restore_package "$dir" "$a" || failed=1 ;;
            services) state_disable_services "$dir" || failed=1 ;;
            *) state_log "unknown entry '$kind' in $dir/journal" ;;
        esac
    done < <(tac "$dir/journal")
    if ((failed)); then
        state_log "FAIL: could not put everything back; kept $dir"
        return 1
    fi
    rm -rf "$dir"
}

state_restore_pid() { # PID STARTTIME
    local pid=$1 start=$2 _
    [ "$(state_pid_start "$pid")" = "$start" ] || return 0
    # A process that leads its group (a daemon, a `setsid` child) takes its
    # children with it.
    if [ "$(ps -o pgid= -p "$pid" | tr -d ' ')" = "$pid" ]; then
        kill -TERM -- "-$pid" 2>/dev/null || true
    fi
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 50); do
        [ "$(state_pid_start "$pid")" = "$start" ] || return 0
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
}

state_restore_file() { # DIR INDEX PATH
    local saved=$1/files/$2 path=$3
    if [ -e "$saved.absent" ]; then
        rm -f "$path"
    elif ! cmp -s "$saved" "$path" ||
        [ "$(stat -c %a.%u.%g "$saved")" != "$(stat -c %a.%u.%g "$path" 2>/dev/null)" ]; then
        cp -a "$saved" "$path.mlkem-restore" && mv -f "$path.mlkem-restore" "$path" || return 1
        state_log "restored $path"
    fi
    if [ -e "$saved.absent" ]; then [ ! -e "$path" ]; else cmp -s "$saved" "$path"; fi
}

# state_package_now PKG: "installed VERSION", "config-files VERSION" or
# "absent".
state_package_now() {
    local status
    status=$(dpkg-query -W -f='${db:Status-Abbrev} ${Version}' "$1" 2>/dev/null || true)
    case $status in
        "ii "*) echo "installed ${status#ii  }" ;;
        "rc "*) echo "config-files ${status#rc  }" ;;
        "un "* | "pn "* | "") echo absent ;;
        *) echo "other $status" ;;
    esac
}

# The installed conffiles: "PATH HASH" lines as dpkg records them, then the
# content's hash.
state_conffiles() {
    local path hash _
    { dpkg-query -W -f='${Conffiles}\n' "$1" 2>/dev/null || true; } | while read -r path hash _; do
        [ -n "$path" ] || continue
        echo "$path $hash $(md5sum <"$path" 2>/dev/null | cut -d' ' -f1)"
    done
}

# state_dpkg ARGS...: dpkg, retried for up to two minutes while another
# process (apt, another test) holds its lock.
state_dpkg() {
    local tries=0 out status
    while :; do
        status=0
        out=$(dpkg "$@" 2>&1) || status=$?
        if ((status)) && grep -q 'lock' <<<"$out" && ((tries++ < 60)); then
            sleep 2
            continue
        fi
        ((status == 0)) || printf '%s\n' "$out" >&2
        return "$status"
    done
}

state_restore_package() { # DIR PKG
    local dir=$1 pkg=$2 want now
    want=$(cat "$dir/package-$pkg.status")
    now=$(state_package_now "$pkg")
    if [ "$now" = "$want" ] && [ "$(state_conffiles "$pkg")" = "$(cat "$dir/package-$pkg.conffiles")" ] &&
        [ "$(dpkg --verify "$pkg" 2>&1)" = "$(cat "$dir/package-$pkg.verify")" ]; then
        return 0
    fi
    if [ "$now" != absent ]; then
        state_dpkg --purge "$pkg" || { state_log "dpkg --purge $pkg failed"; return 1; }
    fi
    case $want in
        absent) ;;
        installed* | config-files*)
            state_dpkg -i "$dir/package-$pkg.deb" || { state_log "dpkg -i the saved $pkg failed"; return 1; }
            # Conffiles an administrator edited: the edited content back.
            tar -xpf "$dir/package-$pkg.conffiles.tar" -C / || return 1
            [[ $want != config-files* ]] || state_dpkg -r "$pkg" || return 1
            ;;
        *) state_log "cannot put back $pkg ($want)"; return 1 ;;
    esac
    now=$(state_package_now "$pkg")
    [ "$now" = "$want" ] || { state_log "$pkg is '$now' after restoring, not '$want'"; return 1; }
    state_log "put back $pkg ($want)"
}

# state_installed_packages: the installed packages, one per line.
state_installed_packages() {
    dpkg-query -W -f='${db:Status-Abbrev} ${binary:Package}\n' | awk '$1 == "ii" { print $2 }' | sort
}

# state_disable_services DIR: disables the services of every package
# installed now that was not when DIR/packages-before was written (the
# packages named and whatever they pulled in: nginx's unit is
# nginx-common's, PostgreSQL's postgresql-common's).
state_disable_services() {
    local pkg unit script
    [ -f "$1/packages-before" ] || return 0
    for pkg in $(comm -13 "$1/packages-before" <(state_installed_packages)); do
        while read -r unit; do
            [ -n "$unit" ] || continue
            if [ "$(systemctl is-enabled "$unit" 2>/dev/null)" = enabled ]; then
                systemctl disable --quiet "$unit" 2>/dev/null || systemctl disable "$unit" >&2 || return 1
                state_log "disabled $unit (installed by a test)"
            fi
        done < <(dpkg-query -L "$pkg" 2>/dev/null |
            sed -n 's#^\(/usr\)\{0,1\}/lib/systemd/system/\([^/@]*\.\(service\|socket\|timer\)\)$#\2#p')
        while read -r script; do
            [ -n "$script" ] || continue
            if compgen -G "/etc/rc[2-5].d/S??$script" >/dev/null; then
                update-rc.d "$script" disable >/dev/null 2>&1 || return 1
                state_log "disabled /etc/init.d/$script (installed by a test)"
            fi
        done < <(dpkg-query -L "$pkg" 2>/dev/null | sed -n 's#^/etc/init\.d/\([^/]*\)$#\1#p')
    done
}

# state_restore_leftovers [--private]: every state directory whose owner is
# dead is put back; waits for live ones of other runs (unless --private).
state_restore_leftovers() {
    local dir waited=0 busy private=${1:-}
    [ -d "$MLKEM_STATE_ROOT" ] || return 0
    while :; do
        busy=""
        for dir in "$MLKEM_STATE_ROOT"/*/; do
            dir=${dir%/}
            [ -d "$dir" ] || continue
            [ "$dir" != "$state_dir" ] || continue
            if state_owner_alive "$dir"; then
                [ "$private" = --private ] || state_is_ancestor "$(cut -d' ' -f1 "$dir/owner")" || busy=$dir
                continue
            fi
            state_log "a run that was killed left $dir: putting it back"
            state_restore_dir "$dir" || return 1
        done
        [ -n "$busy" ] || return 0
        ((waited < 900)) || { state_log "another run ($busy, pid $(cut -d' ' -f1 "$busy/owner")) still holds the machine"; return 1; }
        ((waited % 60)) || state_log "waiting for another run ($busy, pid $(cut -d' ' -f1 "$busy/owner"))"
        sleep 5
        waited=$((waited + 5))
    done
}

state_begin() { # NAME [--private]
    local name=$1
    mkdir -p "$MLKEM_STATE_ROOT"
    state_restore_leftovers "${2:-}" || return 1
    state_dir=$MLKEM_STATE_ROOT/$name
    # Two processes of the same name: the directory is the lock.
    local waited=0
    until mkdir "$state_dir" 2>/dev/null; do
        if ! state_owner_alive "$state_dir"; then
            state_log "a run that was killed left $state_dir: putting it back"
            state_restore_dir "$state_dir" || return 1
            continue
        fi
        ((waited < 900)) || { state_log "another $name run holds $state_dir"; return 1; }
        sleep 5
        waited=$((waited + 5))
    done
    mkdir -p "$state_dir/files"
    # $BASHPID taken here: inside $(...) it would be the subshell's.
    local me=$BASHPID
    echo "$me $(state_pid_start "$me")" >"$state_dir/owner"
    : >"$state_dir/journal"
    trap 'state_on_exit' EXIT
    trap 'state_on_signal 2' INT
    trap 'state_on_signal 15' TERM
    trap 'state_on_signal 1' HUP
    state_checkpoint "begin-$name"
}

state_on_exit() {
    local rc=$?
    trap - EXIT
    [ -z "${state_pause_pid:-}" ] || kill "$state_pause_pid" 2>/dev/null || true
    # The script's own cleanup (servers, temporary files) first.
    if declare -F state_cleanup >/dev/null; then state_cleanup || true; fi
    state_restore || { ((rc)) || rc=1; }
    exit "$rc"
}

state_on_signal() {
    trap - INT TERM HUP
    state_log "signal $1: restoring"
    exit $((128 + $1)) # the EXIT trap restores
}

state_restore() {
    [ -n "$state_dir" ] || return 0
    ! $state_restoring || return 0
    state_restoring=true
    local rc=0
    trap '' INT TERM HUP
    state_restore_dir "$state_dir" || rc=1
    state_dir=""
    state_restoring=false
    trap 'state_on_signal 2' INT
    trap 'state_on_signal 15' TERM
    trap 'state_on_signal 1' HUP
    return "$rc"
}

state_save_file() { # PATH
    local path=$1 index
    index=$(wc -l <"$state_dir/journal")
    if [ -e "$path" ]; then
        cp -a "$path" "$state_dir/files/$index"
    else
        : >"$state_dir/files/$index.absent"
    fi
    sync -f "$state_dir/files" 2>/dev/null || true
    echo "file $index $path" >>"$state_dir/journal"
}

state_note_pid() { # PID
    echo "pid $1 $(state_pid_start "$1")" >>"$state_dir/journal"
}

state_note_new_services() {
    state_installed_packages >"$state_dir/packages-before"
    echo "services" >>"$state_dir/journal"
}

state_note_package() { # PKG
    local pkg=$1 now stage path info
    now=$(state_package_now "$pkg")
    case $now in absent | installed* | config-files*) ;; *) state_log "$pkg is '$now'"; return 1 ;; esac
    echo "$now" >"$state_dir/package-$pkg.status"
    state_conffiles "$pkg" >"$state_dir/package-$pkg.conffiles"
    dpkg --verify "$pkg" >"$state_dir/package-$pkg.verify" 2>&1 || true
    if [ "$now" != absent ]; then
        # The installed package as a .deb (see the header).
        stage=$state_dir/package-$pkg.stage
        mkdir -p "$stage/DEBIAN"
        dpkg-query -s "$pkg" | awk '
            /^[^ \t]/ { skip = ($0 ~ /^(Status|Conffiles|Config-Version):/) }
            !skip' >"$stage/DEBIAN/control"
        for info in preinst postinst prerm postrm config templates triggers shlibs symbols md5sums; do
            [ ! -f "/var/lib/dpkg/info/$pkg.$info" ] || cp -p "/var/lib/dpkg/info/$pkg.$info" "$stage/DEBIAN/$info"
        done
        # The conffiles as dpkg's status has them (a removed package has no
        # info/PKG.conffiles), less the obsolete ones.
        dpkg-query -W -f='${Conffiles}\n' "$pkg" | awk 'NF >= 2 && $3 != "obsolete" { print $1 }' >"$stage/DEBIAN/conffiles"
        [ -s "$stage/DEBIAN/conffiles" ] || rm -f "$stage/DEBIAN/conffiles"
        while read -r path; do
            [ "$path" != /. ] || continue
            if [ -d "$path" ] && [ ! -L "$path" ]; then
                mkdir -p "$stage$path"
                chmod --reference="$path" "$stage$path"
            elif [ -e "$path" ] || [ -L "$path" ]; then
                mkdir -p "$stage$(dirname "$path")"
                cp -a "$path" "$stage$path"
            fi
        done < <(dpkg-query -L "$pkg")
        state_shipped_conffiles "$pkg" "$stage"
        dpkg-deb --root-owner-group -b "$stage" "$state_dir/package-$pkg.deb" >/dev/null || return 1
        rm -rf "$stage"
        # shellcheck disable=SC2046 # paths without blanks (dpkg's conffiles)
        tar -cpf "$state_dir/package-$pkg.conffiles.tar" -C / --files-from=<(cut -d' ' -f1 "$state_dir/package-$pkg.conffiles" |
            while read -r path; do [ ! -e "$path" ] || echo "${path#/}"; done)
    fi
    sync -f "$state_dir" 2>/dev/null || true
    echo "package $pkg" >>"$state_dir/journal"
}

# state_shipped_conffiles PKG STAGE: a conffile an administrator edited goes
# into the rebuilt package as shipped, so that dpkg records the same hash
# again (the edited content is copied back after the reinstall): the
# shipped content is looked for in the .debs of PKG at hand (apt's cache,
# this checkout's target/debian and target/package-test), by its hash.
state_shipped_conffiles() {
    local pkg=$1 stage=$2 path hash actual deb found here
    here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
    while read -r path hash actual; do
        [ "$hash" != "$actual" ] || continue
        found=""
        for deb in /var/cache/apt/archives/"${pkg}"_*.deb "$here"/target/debian/"${pkg}"_*.deb \
            "$here"/target/package-test/*/"${pkg}"_*.deb; do
            [ -f "$deb" ] || continue
            dpkg-deb --fsys-tarfile "$deb" 2>/dev/null | tar -xOf - ".$path" >"$stage/.conffile" 2>/dev/null || continue
            if [ "$(md5sum <"$stage/.conffile" | cut -d' ' -f1)" = "$hash" ]; then
                mv "$stage/.conffile" "$stage$path"
                found=$deb
                break
            fi
        done
        rm -f "$stage/.conffile"
        if [ -z "$found" ]; then
            state_log "note: $path was edited and no .deb at hand ships its original; dpkg will record the edited content as shipped"
        fi
    done <"$state_dir/package-$pkg.conffiles"
}

state_checkpoint() { # NAME
    [ "${MLKEM_STATE_PAUSE_AT:-}" = "$1" ] || return 0
    state_log "checkpoint $1: waiting"
    # In the background: a trap runs as soon as its signal comes. Noted
    # before the file says we are here (a SIGKILL may follow at once).
    sleep 600 &
    state_pause_pid=$!
    if [ -n "$state_dir" ]; then state_note_pid "$state_pause_pid"; fi
    echo "$1" >"${MLKEM_STATE_PAUSE_FILE:?}"
    wait "$state_pause_pid" || true
    state_pause_pid=""
}

# Run as a command: `restore` puts back every leftover.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -euo pipefail
    case ${1:-} in
        restore) state_restore_leftovers ;;
        *) echo "usage: $0 restore" >&2; exit 2 ;;
    esac
fi
