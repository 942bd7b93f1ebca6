#!/usr/bin/env bash
# Runs `openssl speed` on OpenSSL 3.5 for the mlkem provider and for
# OpenSSL's own ML-KEM, alternating (ours, native, ours, native, ...) so both
# see the same machine state, and prints the median ops/s of each and their
# ratio per operation.
#
#   scripts/speed-vs-native.sh [--rounds N] [--seconds S] [--backend NAME] [ALGORITHM...]
#
# Defaults: 3 rounds of 2 seconds per operation, ML-KEM-512 ML-KEM-768
# ML-KEM-1024 (the hybrids X25519MLKEM768 SecP256r1MLKEM768
# SecP384r1MLKEM1024 work too), and the kem-core backend the provider detects (--backend
# portable|avx2|avx512 forces one, through MLKEM_BACKEND). OpenSSL 3.5
# comes from scripts/build-openssl.sh (built if missing); the provider from
# scripts/build-provider.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=3
seconds=2
algorithms=()
backend=""
while (($#)); do
    case $1 in
        --backend) backend=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        --seconds) seconds=$2; shift 2 ;;
        -h | --help) sed -n '2,13p' "$0"; exit 0 ;;
        *) algorithms+=("$1"); shift ;;
    esac
done
((${#algorithms[@]})) || algorithms=(ML-KEM-512 ML-KEM-768 ML-KEM-1024)

prefix=$(bash scripts/build-openssl.sh 3.5 | tail -1)
openssl=$prefix/bin/openssl
module_dir=$(bash scripts/build-provider.sh | tail -1)
raw=$(mktemp)
trap 'rm -f "$raw"' EXIT

echo "openssl speed, $("$openssl" version | cut -d' ' -f1-2), $rounds rounds x ${seconds}s, alternating, backend: ${backend:-detected}" >&2
for ((round = 1; round <= rounds; round++)); do
    for impl in ours native; do
        if [ $impl = ours ]; then
            flags=(-provider-path "$module_dir" -provider mlkem -provider default -propquery provider=mlkem)
        else
            flags=()
        fi
        echo "  round $round/$rounds: $impl" >&2
        OPENSSL_CONF=/dev/null MLKEM_BACKEND=$backend "$openssl" speed "${flags[@]}" -seconds "$seconds" "${algorithms[@]}" 2>/dev/null |
            awk -v impl=$impl -v wanted=" ${algorithms[*]} " \
                'NF == 7 && index(wanted, " " $1 " ") { print impl, $1, $5, $6, $7 }' >>"$raw"
    done
done

# Median of each (implementation, algorithm, operation), then the table.
awk -v order="${algorithms[*]}" '
function median(list,   n, a, i, j, t) {
    n = split(list, a, " ")
    for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] + 0 > t + 0; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{ for (op = 1; op <= 3; op++) v[$1 SUBSEP $2 SUBSEP op] = v[$1 SUBSEP $2 SUBSEP op] " " $(op + 2); algs[$2] = 1 }
END {
    split("keygen encaps decaps", name, " ")
    printf "%-19s %-7s %14s %14s %8s\n", "algorithm", "op", "ours ops/s", "native ops/s", "ratio"
    n = split(order, sorted, " ")
    for (i = 1; i <= n; i++) for (op = 1; op <= 3; op++) {
        a = sorted[i]; if (!(a in algs)) continue; o = median(v["ours" SUBSEP a SUBSEP op]); t = median(v["native" SUBSEP a SUBSEP op])
        printf "%-19s %-7s %14.1f %14.1f %7.2fx\n", a, name[op], o, t, (t > 0 ? o / t : 0)
    }
}' "$raw"
