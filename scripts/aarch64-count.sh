#!/usr/bin/env bash
# Counts the AArch64 instructions kem-core executes per ML-KEM operation,
# under qemu-aarch64, for two CPU classes:
#
#   cortex-a76   Armv8.2 without SHA-3 (Graviton2, Ampere Altra, Neoverse N1
#                class): the Neon backend's Keccak on plain Neon
#   max          every extension qemu has, SHA-3 included (Graviton3/4,
#                Neoverse V1/V2, Apple M): Keccak on EOR3/RAX1/XAR/BCAX
#
# Method: `qemu-aarch64 -singlestep -d exec,nochain` logs one line per
# executed translation block, and single-stepping makes every block one
# instruction. The driver (test-tools' `op-loop SET OP N`) runs one
# operation N times on serialised inputs (keygen from the seed, encaps from
# ek bytes, decaps from dk bytes); (count(N=3) - count(N=1)) / 2 is one
# operation, without start-up and input preparation. Counts repeat exactly
# from run to run. They are instructions, not cycles: a Neon instruction
# can cost more or less than a scalar one, depending on the core.
#
# Usage: scripts/aarch64-count.sh [--cpu LIST] [--params LIST] [--ops LIST]
#            [--backend LIST] [--peer NAME=PROGRAM]... [--csv PATH]
#   --cpu      qemu CPU models (default: cortex-a76,max)
#   --params   512,768,1024 (default: all)
#   --ops      keygen,encaps,decaps (default: all)
#   --backend  kem-core backends, as MLKEM_BACKEND takes them (default: neon)
#   --peer     another AArch64 program with op-loop's command line (SET OP N;
#              built elsewhere, e.g. a driver around another implementation),
#              counted beside ours; its column is NAME, and the table gives
#              NAME/ours per cell
#   --csv      also write the counts as CSV
#
# Toolchain: scripts/aarch64-env.sh (installed when missing, as root).
# Time: about 2 minutes to build, then about 1 s per count.
set -euo pipefail
cd "$(dirname "$0")/.."

cpus=cortex-a76,max
params=512,768,1024
ops=keygen,encaps,decaps
backends=neon
peers=()
csv=
while [ $# -gt 0 ]; do
    case $1 in
    --cpu) cpus=${2:?--cpu needs a list}; shift 2 ;;
    --params) params=${2:?--params needs a list}; shift 2 ;;
    --ops) ops=${2:?--ops needs a list}; shift 2 ;;
    --backend) backends=${2:?--backend needs a list}; shift 2 ;;
    --peer)
        case ${2:-} in
        *=*) peers+=("$2") ;;
        *) echo "aarch64-count: --peer takes NAME=PROGRAM" >&2; exit 2 ;;
        esac
        shift 2 ;;
    --csv) csv=${2:?--csv needs a path}; shift 2 ;;
    -h | --help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "aarch64-count: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
for peer in "${peers[@]}"; do
    program=${peer#*=}
    [ -x "$program" ] || { echo "aarch64-count: --peer ${peer%%=*}: $program is not an executable" >&2; exit 2; }
done

# shellcheck source=scripts/aarch64-env.sh
source scripts/aarch64-env.sh
aarch64_toolchain aarch64-count.sh "$(packages_policy)"
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target/aarch64}
echo "== op-loop for $aarch64_target: build" >&2
"$aarch64_cargo" build --release -q --target "$aarch64_target" -p test-tools --bin op-loop
ours=$CARGO_TARGET_DIR/$aarch64_target/release/op-loop

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# count CPU PROGRAM SET OP [ENV...]: instructions of one operation.
count() {
    local cpu=$1 program=$2 set=$3 op=$4 n total=()
    shift 4
    for n in 1 3; do
        if ! env "$@" qemu-aarch64 -L "$aarch64_sysroot" -cpu "$cpu" -singlestep \
            -d exec,nochain -D "$work/log" "$program" "$set" "$op" "$n" >"$work/out.$n" 2>"$work/err"; then
            echo "aarch64-count: $program $set $op $n failed on -cpu $cpu:" >&2
            cat "$work/err" >&2
            exit 1
        fi
        total+=("$(grep -c '^Trace' "$work/log")")
    done
    echo $(((total[1] - total[0]) / 2))
}

[ -z "$csv" ] || echo "cpu,parameter_set,operation,implementation,instructions" >"$csv"
header="| -cpu | set | operation |"
rule="|---|---|---|"
for backend in ${backends//,/ }; do header+=" kem-core $backend |"; rule+="---:|"; done
for peer in "${peers[@]}"; do header+=" ${peer%%=*} | ${peer%%=*}/ours |"; rule+="---:|---:|"; done
echo "instructions per operation (thousands), qemu-aarch64 -singlestep"
echo "$header"
echo "$rule"
for cpu in ${cpus//,/ }; do
    for set in ${params//,/ }; do
        for op in ${ops//,/ }; do
            row="| $cpu | ML-KEM-$set | $op |"
            first=
            for backend in ${backends//,/ }; do
                c=$(count "$cpu" "$ours" "$set" "$op" MLKEM_BACKEND="$backend")
                grep -q " on $backend:" "$work/out.1" ||
                    { echo "aarch64-count: op-loop did not run on $backend: $(cat "$work/out.1")" >&2; exit 1; }
                first=${first:-$c}
                row+=" $(awk -v c="$c" 'BEGIN { printf "%.1f", c / 1000 }') |"
                [ -z "$csv" ] || echo "$cpu,ML-KEM-$set,$op,kem-core/$backend,$c" >>"$csv"
            done
            for peer in "${peers[@]}"; do
                c=$(count "$cpu" "${peer#*=}" "$set" "$op")
                row+=" $(awk -v c="$c" -v o="$first" 'BEGIN { printf "%.1f | %.2f", c / 1000, c / o }') |"
                [ -z "$csv" ] || echo "$cpu,ML-KEM-$set,$op,${peer%%=*},$c" >>"$csv"
            done
            echo "$row"
        done
    done
done
