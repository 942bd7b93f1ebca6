#!/usr/bin/env bash
# Draws SVG bar charts from the CSV files of the benchmark tools (bench,
# speed-compare, evp-bench): one chart per parameter set, plus the CSV
# behind each chart, written to OUT_DIR as <csv name>-<parameter set>.svg;
# from tls-bench's, <csv name>.svg (handshakes/s per group) and
# <csv name>-server-us.svg (the server's µs per handshake).
#
#   scripts/charts.sh [--png] OUT_DIR CSV...
#
# --png also renders each SVG to a PNG next to it (at 2x, for reports) with
# rsvg-convert (Debian: apt-get install librsvg2-bin), when that is
# installed. Prints the paths of the files it wrote.
set -euo pipefail

usage() { sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; }

png=0
positional=()
while (($#)); do
    case $1 in
        --png) png=1; shift ;;
        -h | --help) usage; exit 0 ;;
        --) shift; positional+=("$@"); break ;;
        -*) echo "charts.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
        *) positional+=("$1"); shift ;;
    esac
done
if ((${#positional[@]} < 2)); then
    usage >&2
    exit 2
fi
out_dir=${positional[0]}
csvs=("${positional[@]:1}")

# Resolve paths before leaving the caller's directory.
for i in "${!csvs[@]}"; do
    [ -f "${csvs[i]}" ] || { echo "charts.sh: no such file: ${csvs[i]}" >&2; exit 1; }
    csvs[i]=$(cd "$(dirname "${csvs[i]}")" && pwd)/$(basename "${csvs[i]}")
done
mkdir -p "$out_dir"
out_dir=$(cd "$out_dir" && pwd)

cd "$(dirname "$0")/.."
if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
fi
cargo build --release -q -p test-tools --bin charts
charts="${CARGO_TARGET_DIR:-$(pwd)/target}/release/charts"

renderer=""
if ((png)); then
    if command -v rsvg-convert >/dev/null 2>&1; then
        renderer=rsvg-convert
    else
        echo "charts.sh: rsvg-convert not found (apt-get install librsvg2-bin); writing SVG only" >&2
    fi
fi

for csv in "${csvs[@]}"; do
    prefix=$(basename "$csv")
    prefix=${prefix%.*}
    echo "charts.sh: $csv" >&2
    header=$(head -n 1 "$csv")
    if [[ $header == group,implementation,*handshakes_per_sec* ]]; then
        # tls-bench: handshakes/s per group and implementation, and the
        # server's share of each handshake where the CSV has it.
        paths=$("$charts" --csv "$csv" --out "$out_dir" --prefix "$prefix" --group group \
            --value handshakes_per_sec --value-label "handshakes/s (higher is better)" \
            --title "Full TLS 1.3 handshakes")
        if [[ $header == *,server_us_per_handshake,* ]]; then
            paths+=$'\n'$("$charts" --csv "$csv" --out "$out_dir" --prefix "$prefix-server-us" \
                --group group --value server_us_per_handshake \
                --value-label "server µs per handshake (lower is better)" \
                --title "TLS 1.3 handshake, server side")
        fi
    else
        paths=$("$charts" --csv "$csv" --out "$out_dir" --prefix "$prefix")
    fi
    while IFS= read -r path; do
        echo "$path"
        if [ -n "$renderer" ] && [[ $path == *.svg ]]; then
            png_path=${path%.svg}.png
            "$renderer" --zoom 2 --format png --output "$png_path" "$path"
            echo "$png_path"
        fi
    done <<<"$paths"
done
