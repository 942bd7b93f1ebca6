# The TLS groups, read from the table the provider and its tools share
# (tls-groups/groups.tsv, written from tls-groups/src/lib.rs): sourced by
# the scripts that name groups, so that a new group or spelling is one edit
# there. Paths are relative to the repository root, where the scripts run.

groups_tsv=tls-groups/groups.tsv

# The post-quantum groups the mlkem provider offers on every OpenSSL 3, in
# the order of preference (hybrids first), one per line.
pq_group_names() {
    awk -F'\t' '!/^#/ && $3 != "classical" && $4 == 3 { print $1 }' "$groups_tsv"
}

# The first other spelling of the group OpenSSL names NAME (the one the
# provider registers for oqsprovider's and crypto-policies' configurations:
# x25519_mlkem768, mlkem768); nothing for a group without one.
group_alias() { # NAME
    awk -F'\t' -v want="$1" '!/^#/ && $1 == want && $5 != "-" { split($5, a, ","); print a[1]; exit }' "$groups_tsv"
}

# The code point (0x11ec) of the group NAME (any spelling, any case).
group_code_point() { # NAME
    awk -F'\t' -v want="${1,,}" '
        /^#/ { next }
        { n = split(tolower($1) "," $5, names, ",")
          for (i = 1; i <= n; i++) if (names[i] == want) { print $2; exit } }' "$groups_tsv"
}

# OpenSSL's name of the group spelled NAME (any spelling, any case) or with
# code point 0xNNNN (any number of digits); NAME itself when unknown.
norm_group() { # NAME
    local want=${1,,}
    case $want in
        0x[0-9a-f]*) want=$(printf '0x%04x' "$want") ;;
    esac
    awk -F'\t' -v want="$want" -v given="$1" '
        /^#/ { next }
        $2 == want { print $1; found = 1; exit }
        { n = split(tolower($1) "," $5, names, ",")
          for (i = 1; i <= n; i++) if (names[i] == want) { print $1; found = 1; exit } }
        END { if (!found) print given }' "$groups_tsv"
}
