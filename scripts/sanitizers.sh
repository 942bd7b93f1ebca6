#!/usr/bin/env bash
# ThreadSanitizer over the threaded tests and LeakSanitizer over the CLI
# flows (AddressSanitizer runs with the fuzzers: scripts/fuzz.sh):
#
#   scripts/sanitizers.sh [--quick] [tsan] [lsan]   (default: both)
#
# tsan  The threaded provider tests, built with the nightly toolchain and
#       RUSTFLAGS=-Zsanitizer=thread for the host target (so build scripts
#       and bindgen stay plain), in $CARGO_TARGET_DIR/tsan:
#         scale              many_threads_share_one_provider_and_one_key
#                            (8 threads, one key; the speed-up test is a
#                            timing measurement and is skipped)
#         tls_threads        1,000 TLS 1.3 handshakes across four threads
#         hybrid_in_process  one_hybrid_key_shared_by_four_threads
#         load_cycles        provider load/unload cycles, and a second
#                            activation released while keys are in use
#       The cdylib the tests load (target/<triple>/release/libmlkem.so,
#       found next to the test binaries by provider/tests/common) is built
#       with the same flags first, so the provider code OpenSSL calls into
#       is instrumented too; its __tsan_* calls resolve to the runtime in
#       the test executable.
#       Instrumented: the tests, kem-core, the provider and every Rust crate
#       they use, including the generic parts of std (Arc, Mutex<T>, the
#       scoped threads: monomorphised into our crates). Not instrumented:
#       std's precompiled parts (-Zbuild-std needs the network; hence
#       -Cunsafe-allow-abi-mismatch=sanitizer), and the system libcrypto and
#       libssl (OpenSSL 3.0) the tests drive: races inside OpenSSL are not
#       seen, while its pthread locks, thread creation and joins are (TSan
#       intercepts them), so OpenSSL's locking of its own stores orders our
#       accesses as it should. scripts/tsan.supp lists the suppressions
#       (libtest's result channel, the Arc of std::thread::scope, the openssl
#       crate's OnceLock of an ex_data index; each with
#       its reason: fences and atomics in the precompiled std); any other
#       report fails the run. Self-checks first: a racy program built with
#       the same flags must be reported (its joined twin must not), and the
#       cdylib must carry TSan's instrumentation (nm: __tsan_func_entry).
#       Sizes: MLKEM_SCALE_ROUNDS 1,000 and MLKEM_LOAD_CYCLES 1,000; with
#       --quick (CI) 100 and 150. The load cycles' resident-memory bound is
#       widened to 16 KiB per cycle (TSan's own bookkeeping).
#
# lsan  LeakSanitizer (gcc's standalone runtime, liblsan.so from
#       build-essential's libgcc) preloaded into the real, uninstrumented
#       `openssl` binaries with our release mlkem.so: key generation,
#       -text/DER/public/encrypted PKCS#8 output and input for every
#       parameter set (the hybrids have no key file format), the bad-input
#       flows (truncated and garbage DER and PEM, a public key as private, a
#       wrong passphrase, short and long ciphertexts, decapsulation with a
#       public key),
#       pkeyutl -encap/-decap for every parameter set on OpenSSL 3.5 and 4.0
#       (scripts/build-openssl.sh; skipped when not built), and a TLS 1.3
#       s_server/s_client handshake over every group we offer, both ends
#       checked. Any leak fails: one whose allocation stack goes through
#       the provider (mlkem.so, kem_core::, mlkem::, their sources) is named
#       the provider's; others (none today: OpenSSL's apps free what they
#       allocate) are shown apart, as they may be OpenSSL objects the
#       provider kept.
#       Where it sees more than scripts/valgrind-cli.sh (which stays): it
#       runs at native speed, so every algorithm and group and both TLS ends
#       are checked rather than one, and the CPU's own backend runs: valgrind
#       cannot execute AVX-512, LSan runs the AVX-512 code this machine
#       selects. mlkem.so is preloaded too, so that OpenSSL's dlclose at exit
#       leaves it mapped and the leak check at exit can name its frames.
#       Before the flows a self-check loads a Rust cdylib named mlkem (as
#       the provider is) that leaks 4,096 bytes on purpose, the same way, and
#       fails unless the filter reports it as the provider's (and nothing
#       when it frees them). --quick runs the key flows for ML-KEM-768,
#       encap/decap on one native OpenSSL, TLS over MLKEM768 and
#       X25519MLKEM768.
#
# Environment: CARGO_TARGET_DIR, MLKEM_OPENSSL_CACHE (as the tests).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

quick=0
modes=()
while (($#)); do
    case $1 in
        --quick) quick=1 ;;
        tsan | lsan) modes+=("$1") ;;
        -h | --help) sed -n '2,/^# Environment/p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "sanitizers: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
((${#modes[@]})) || modes=(tsan lsan)

source scripts/setup.sh >&2

target_root=${CARGO_TARGET_DIR:-$root/target}

# ------------------------------------------------------------------ tsan

run_tsan() {
    rustup run nightly rustc --version >/dev/null 2>&1 ||
        { echo "sanitizers: tsan needs the nightly toolchain (rustup toolchain install nightly)" >&2; return 1; }
    local triple tsan_dir rounds cycles log status failed=0
    triple=$(rustc -vV | sed -n 's/^host: //p')
    tsan_dir=$target_root/tsan
    if ((quick)); then rounds=100 cycles=150; else rounds=1000 cycles=1000; fi
    # With --target, RUSTFLAGS reach only the crates built for the target,
    # not build scripts; std was built without TSan, hence the ABI override.
    # The cdylib's __tsan_* calls resolve to the runtime linked into the
    # test executable, which must export it (--export-dynamic).
    local cargo=(env "RUSTFLAGS=-Zsanitizer=thread -Cunsafe-allow-abi-mismatch=sanitizer -Clink-arg=-Wl,--export-dynamic"
        cargo +nightly)
    local flags=(--release -p mlkem-provider --target "$triple" --target-dir "$tsan_dir")
    echo "tsan: building the provider and its tests (nightly, -Zsanitizer=thread, $tsan_dir)" >&2
    # The cdylib first: cargo test builds only the rlib the tests link.
    nice "${cargo[@]}" build -q "${flags[@]}" >&2
    nice "${cargo[@]}" test --no-run -q "${flags[@]}" --test scale --test tls_threads \
        --test hybrid_in_process --test load_cycles >&2
    tsan_self_check "$triple" "$tsan_dir" || return 1
    # The module the tests load must carry the instrumentation.
    if ! nm -D --undefined-only "$tsan_dir/$triple/release/libmlkem.so" | grep -q __tsan_func_entry; then
        echo "FAIL tsan: $tsan_dir/$triple/release/libmlkem.so is not instrumented"
        return 1
    fi
    export TSAN_OPTIONS="halt_on_error=0 exitcode=66 second_deadlock_stack=1 suppressions=$root/scripts/tsan.supp"
    export MLKEM_SCALE_ROUNDS=$rounds MLKEM_LOAD_CYCLES=$cycles
    # TSan's own bookkeeping grows by about 11 KiB per load cycle (measured:
    # 10 MiB over 900 cycles); load_cycles' resident-memory bound allows
    # 16 KiB per cycle here. Leaks are the lsan mode's (and valgrind's).
    export MLKEM_LOAD_CYCLES_RSS_SLACK_KIB=$((16 * cycles))
    local runs=(
        "scale many_threads_share_one_provider_and_one_key"
        "tls_threads a_thousand_handshakes_across_four_threads"
        "hybrid_in_process one_hybrid_key_shared_by_four_threads"
        "load_cycles"
    )
    mkdir -p "$tsan_dir/logs"
    local run test filter start
    for run in "${runs[@]}"; do
        read -r test filter <<<"$run"
        log=$tsan_dir/logs/$test.log
        start=$SECONDS
        status=0
        # Output stays captured (no --nocapture): std's stdout lock is in
        # its precompiled part, so a test thread and libtest's main thread
        # both printing would be reported as a race on stdout's buffer.
        "${cargo[@]}" test -q "${flags[@]}" --test "$test" -- ${filter:+--exact "$filter"} \
            >"$log" 2>&1 || status=$?
        local reports passed
        reports=$(grep -c '^WARNING: ThreadSanitizer' "$log" || true)
        passed=$(sed -n 's/^test result: ok\. \([0-9]*\) passed.*/\1/p' "$log" | tail -1)
        if ((status != 0)) || ((reports != 0)) || [ -z "$passed" ] || ((passed == 0)); then
            echo "FAIL tsan $test${filter:+ $filter}: exit status $status, $reports ThreadSanitizer report(s), ${passed:-no} test(s) passed; log $log"
            if ((reports)); then
                grep -A30 -m2 '^WARNING: ThreadSanitizer' "$log" | head -60
            else
                tail -20 "$log"
            fi
            failed=1
        else
            echo "ok   tsan $test${filter:+ $filter}: $passed test(s), 0 reports, $((SECONDS - start)) s"
        fi
    done
    unset TSAN_OPTIONS MLKEM_SCALE_ROUNDS MLKEM_LOAD_CYCLES MLKEM_LOAD_CYCLES_RSS_SLACK_KIB
    return $failed
}

# tsan_self_check TRIPLE DIR: a program built with the same flags that
# increments a static from two threads must be reported; the same program
# joining the thread first (the join orders the increments, seen through
# the intercepted pthread_join) must not.
tsan_self_check() {
    local triple=$1 dir=$2/self-check racy status reports
    mkdir -p "$dir"
    cat >"$dir/race.rs" <<'RUST'
//! The self-check of scripts/sanitizers.sh tsan.
static mut COUNTER: u64 = 0;

fn bump() {
    // SAFETY: none; racing on purpose when the argument is "race".
    unsafe { *std::ptr::addr_of_mut!(COUNTER) += 1 };
}

fn main() {
    let race = std::env::args().nth(1).as_deref() == Some("race");
    let other = std::thread::spawn(bump);
    if race {
        bump();
        other.join().unwrap();
    } else {
        other.join().unwrap();
        bump();
    }
}
RUST
    rustup run nightly rustc --edition 2021 -O -g --target "$triple" -Zsanitizer=thread \
        -Cunsafe-allow-abi-mismatch=sanitizer -o "$dir/race" "$dir/race.rs"
    for racy in race ordered; do
        status=0
        TSAN_OPTIONS="exitcode=66" "$dir/race" "$racy" >"$dir/$racy.log" 2>&1 || status=$?
        reports=$(grep -c '^WARNING: ThreadSanitizer: data race' "$dir/$racy.log" || true)
        if { [ $racy = race ] && { ((status != 66)) || ((reports != 1)); }; } ||
            { [ $racy = ordered ] && { ((status != 0)) || ((reports != 0)); }; }; then
            echo "FAIL tsan self-check: '$racy' gave exit status $status and $reports report(s)"
            sed 's/^/    /' "$dir/$racy.log" | head -20
            return 1
        fi
    done
    echo "ok   tsan self-check: a race between two threads is reported, the joined version is not"
}

# ------------------------------------------------------------------ lsan

lsan_failures=0
lsan_runs=0
lsan_foreign=0

# Prints the leak records (blank-line separated, from "Direct leak" or
# "Indirect leak" on) of the LeakSanitizer logs given whose allocation
# stack goes through the provider (a frame in mlkem.so without line
# information, a symbol of the crates mlkem or kem_core, or a line of their
# sources); `foreign` prints the others instead.
leak_records() {
    local which=$1
    shift
    awk -v which="$which" -v provider_frame='/mlkem[.]so[+)]|[^A-Za-z_]mlkem::|kem_core::|(provider|kem-core)/src/' '
        /^(Direct|Indirect) leak of/ { rec = 1; buf = "" }
        rec { buf = buf $0 "\n" }
        rec && /^$/ {
            ours = buf ~ provider_frame
            if ((which == "ours") == ours) printf "%s", buf
            rec = 0
        }
        END { if (rec) { ours = buf ~ provider_frame; if ((which == "ours") == ours) printf "%s", buf } }
    ' "$@" /dev/null
}

# lsan_options LOG_PREFIX: LeakSanitizer's options. Reports go to files
# (LOG_PREFIX.PID), apart from the program's output; the exit status stays
# the program's (the logs decide); the slow unwinder follows Rust frames
# without frame pointers.
lsan_options() {
    printf '%s' "exitcode=0:fast_unwind_on_malloc=0:malloc_context_size=40:log_path=$1"
}

# lsan NAME EXPECT OPENSSL ARGS...: runs one flow under LeakSanitizer.
# EXPECT is "ok" or "fail" (the exit status the command itself should have).
lsan() {
    local name=$1 expect=$2 bin=$3
    shift 3
    local logs=$lsan_work/logs/$name status=0
    lsan_runs=$((lsan_runs + 1))
    OPENSSL_CONF=/dev/null LD_PRELOAD="$liblsan $module_dir/mlkem.so" LSAN_OPTIONS=$(lsan_options "$logs") \
        "$bin" "$@" >"$lsan_work/$name.out" 2>&1 || status=$?
    lsan_check "$name" "$expect" "$status" "$logs"
}

# lsan_check NAME EXPECT STATUS LOG_PREFIX
lsan_check() {
    local name=$1 expect=$2 status=$3 logs=$4 ours foreign
    if { [ "$expect" = ok ] && [ "$status" -ne 0 ]; } || { [ "$expect" = fail ] && [ "$status" -eq 0 ]; } ||
        [ "$status" -gt 128 ]; then
        echo "FAIL lsan $name: exit status $status, expected $expect"
        sed 's/^/    /' "$lsan_work/$name.out" | head -5
        lsan_failures=$((lsan_failures + 1))
        return
    fi
    shopt -s nullglob
    local files=("$logs".*)
    shopt -u nullglob
    if ((${#files[@]})) && grep -qE "ERROR: LeakSanitizer: (detected|failed)|Tracer caught signal|LeakSanitizer has encountered a fatal error" \
        "${files[@]}" && ! grep -q "detected memory leaks" "${files[@]}"; then
        echo "FAIL lsan $name: LeakSanitizer could not run"; sed 's/^/    /' "${files[@]}" | head -10
        lsan_failures=$((lsan_failures + 1))
        return
    fi
    ours=$(leak_records ours "${files[@]}")
    foreign=$(leak_records foreign "${files[@]}" | grep -c '^\(Direct\|Indirect\) leak' || true)
    lsan_foreign=$((lsan_foreign + foreign))
    if [ -n "$ours" ]; then
        echo "FAIL lsan $name: leak from the provider"
        sed 's/^/    /' <<<"$ours" | head -40
        lsan_failures=$((lsan_failures + 1))
        return
    fi
    if ((foreign)); then
        # None today: OpenSSL's apps free what they allocate, so such a leak
        # is most likely an OpenSSL object the provider kept a reference to.
        echo "FAIL lsan $name: $foreign leak record(s) without a provider frame"
        leak_records foreign "${files[@]}" | sed 's/^/    /' | head -40
        lsan_failures=$((lsan_failures + 1))
        return
    fi
    echo "ok   lsan $name"
}

# The self-check: a Rust cdylib whose crate is named mlkem, as the provider,
# built as the provider is (optimised, line tables), loaded with dlopen and
# closed before exit as OpenSSL does, leaks a 4,096-byte Vec: the leak must
# be reported as the provider's; without the leak, nothing may be.
lsan_self_check() {
    local dir=$lsan_work/self-check
    mkdir -p "$dir"
    cat >"$dir/leaky.rs" <<'RUST'
//! The self-check's stand-in for the provider.
#[inline(never)]
fn allocate(leak: bool) {
    let buffer = std::hint::black_box(vec![1u8; 4096]);
    if leak {
        std::mem::forget(buffer);
    }
}

/// Allocates 4,096 bytes and leaks them when `leak` is non-zero.
#[no_mangle]
pub extern "C" fn mlkem_self_check_alloc(leak: i32) {
    allocate(leak != 0);
}
RUST
    cat >"$dir/main.c" <<'C'
#include <dlfcn.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    void *so = dlopen(argv[1], RTLD_NOW);
    if (so == NULL) return 2;
    void (*f)(int) = (void (*)(int))dlsym(so, "mlkem_self_check_alloc");
    if (f == NULL) return 2;
    f(atoi(argv[2]));
    dlclose(so);
    return 0;
}
C
    rustc --edition 2021 --crate-type cdylib --crate-name mlkem -C opt-level=3 -C debuginfo=1 \
        -o "$dir/mlkem.so" "$dir/leaky.rs"
    gcc -O1 -g -o "$dir/main" "$dir/main.c" -ldl
    local leak expect status logs got
    for leak in 1 0; do
        logs=$dir/log-$leak
        status=0
        LD_PRELOAD="$liblsan $dir/mlkem.so" LSAN_OPTIONS=$(lsan_options "$logs") \
            "$dir/main" "$dir/mlkem.so" "$leak" || status=$?
        shopt -s nullglob
        local files=("$logs".*)
        shopt -u nullglob
        got=$(leak_records ours "${files[@]}" | grep -c '^Direct leak of 4096 byte' || true)
        expect=$leak
        if ((status != 0)) || ((got != expect)); then
            echo "FAIL lsan self-check: leak=$leak gave $got provider leak record(s), expected $expect (exit status $status)"
            return 1
        fi
    done
    echo "ok   lsan self-check: a 4,096-byte leak in a Rust cdylib named mlkem is reported, none without it"
}

run_lsan() {
    liblsan=$(gcc -print-file-name=liblsan.so)
    [ -e "$liblsan" ] || { echo "sanitizers: no liblsan.so (gcc's, in build-essential)" >&2; return 1; }
    liblsan=$(readlink -f "$liblsan")
    module_dir=${MLKEM_MODULE_DIR:-$(bash scripts/build-provider.sh | tail -1)}
    lsan_work=$(mktemp -d)
    mkdir -p "$lsan_work/logs"
    # shellcheck disable=SC2064 # the directory is fixed now
    trap "rm -rf '$lsan_work'" EXIT
    lsan_self_check || return 1

    local cache openssl35 openssl40 natives=() algorithms groups alg bin n
    cache=${MLKEM_OPENSSL_CACHE:-$HOME/.cache/mlkem-provider/openssl}
    # The releases of scripts/build-openssl.sh's pins, when built.
    openssl35=$(openssl_prefix 3.5)/bin/openssl
    openssl40=$(openssl_prefix 4.0)/bin/openssl
    [ -x "$openssl35" ] || openssl35=""
    [ -x "$openssl40" ] || openssl40=""
    [ -n "$openssl35" ] && natives+=("$openssl35")
    [ -n "$openssl40" ] && natives+=("$openssl40")
    if ((quick)); then
        algorithms=(ML-KEM-768)
        groups=(MLKEM768 X25519MLKEM768)
        ((${#natives[@]})) && natives=("${natives[0]}")
    else
        # The hybrids have no key file format: they are used through TLS.
        algorithms=(ML-KEM-512 ML-KEM-768 ML-KEM-1024)
        groups=(MLKEM512 MLKEM768 MLKEM1024 X25519MLKEM768 SecP256r1MLKEM768 SecP384r1MLKEM1024)
    fi
    local P=(-provider-path "$module_dir" -provider mlkem -provider default -propquery '?provider=mlkem')
    cd "$lsan_work"

    for alg in "${algorithms[@]}"; do
        lsan "genpkey-$alg" ok openssl genpkey "${P[@]}" -algorithm "$alg" -out "$alg.pem"
        lsan "text-$alg" ok openssl pkey "${P[@]}" -in "$alg.pem" -text -noout
        lsan "der-$alg" ok openssl pkey "${P[@]}" -in "$alg.pem" -outform DER -out "$alg.der"
        lsan "der-in-$alg" ok openssl pkey "${P[@]}" -inform DER -in "$alg.der" -noout
        lsan "pubout-$alg" ok openssl pkey "${P[@]}" -in "$alg.pem" -pubout -out "$alg.pub"
        lsan "pub-text-$alg" ok openssl pkey "${P[@]}" -pubin -in "$alg.pub" -text -noout
        lsan "encrypt-$alg" ok openssl pkey "${P[@]}" -in "$alg.pem" -aes256 -passout pass:pw -out "$alg.enc"
        lsan "decrypt-$alg" ok openssl pkey "${P[@]}" -in "$alg.enc" -passin pass:pw -noout
        # Bad input.
        lsan "wrong-pass-$alg" fail openssl pkey "${P[@]}" -in "$alg.enc" -passin pass:wrong -noout
        lsan "pub-as-private-$alg" fail openssl pkey "${P[@]}" -in "$alg.pub" -noout
        n=$(stat -c %s "$alg.der")
        for cut in 1 30 $((n / 2)) $((n - 1)); do
            head -c "$cut" "$alg.der" >cut.der
            lsan "der-cut-$cut-$alg" fail openssl pkey "${P[@]}" -inform DER -in cut.der -noout
        done
        { head -c $(($(stat -c %s "$alg.pem") / 2)) "$alg.pem"; printf '\n-----END PRIVATE KEY-----\n'; } >cut.pem
        lsan "pem-cut-$alg" fail openssl pkey "${P[@]}" -in cut.pem -noout
    done
    printf '\x30\x82\xff\xff\x01\x02\x03' >garbage.der
    lsan garbage-der fail openssl pkey "${P[@]}" -inform DER -in garbage.der -noout

    for bin in "${natives[@]}"; do
        local v
        v=$("$bin" version | awk '{print $2}')
        for alg in "${algorithms[@]}"; do
            lsan "encap-$alg-$v" ok "$bin" pkeyutl "${P[@]}" -encap -pubin -inkey "$alg.pub" -out "$alg.ct" -secret s1
            lsan "decap-$alg-$v" ok "$bin" pkeyutl "${P[@]}" -decap -inkey "$alg.pem" -in "$alg.ct" -secret s2
            cmp -s s1 s2 || { echo "FAIL lsan $alg-$v: encap/decap secrets differ"; lsan_failures=$((lsan_failures + 1)); }
            n=$(stat -c %s "$alg.ct")
            head -c $((n - 1)) "$alg.ct" >short.ct
            { cat "$alg.ct"; printf '\0'; } >long.ct
            lsan "decap-short-$alg-$v" fail "$bin" pkeyutl "${P[@]}" -decap -inkey "$alg.pem" -in short.ct -secret s3
            lsan "decap-long-$alg-$v" fail "$bin" pkeyutl "${P[@]}" -decap -inkey "$alg.pem" -in long.ct -secret s3
            lsan "decap-with-public-$alg-$v" fail "$bin" pkeyutl "${P[@]}" -decap -pubin -inkey "$alg.pub" \
                -in "$alg.ct" -secret s3
        done
    done
    ((${#natives[@]})) || echo "skip lsan encap/decap: OpenSSL 3.5 and 4.0 not built (scripts/build-openssl.sh)"

    # TLS 1.3, one handshake per group, both ends under LeakSanitizer.
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout server.key \
        -out server.crt -subj /CN=localhost -days 1 2>/dev/null
    printf 'GET / HTTP/1.0\r\n\r\n' >request
    local group port server status
    for group in "${groups[@]}"; do
        port=$((20000 + RANDOM % 12000)) # below the ephemeral range (32768-60999)
        OPENSSL_CONF=/dev/null LD_PRELOAD="$liblsan $module_dir/mlkem.so" \
            LSAN_OPTIONS=$(lsan_options "$lsan_work/logs/s_server-$group") \
            openssl s_server "${P[@]}" -cert server.crt -key server.key -accept "$port" -tls1_3 \
            -groups "$group" -naccept 1 -www >"s_server-$group.out" 2>&1 &
        server=$!
        for _ in $(seq 100); do grep -q ACCEPT "s_server-$group.out" 2>/dev/null && break; sleep 0.1; done
        lsan "s_client-$group" ok openssl s_client "${P[@]}" -connect "127.0.0.1:$port" -tls1_3 \
            -groups "$group" -ign_eof <request
        # The client offers this one group: a TLS 1.3 session means it was used.
        if ! grep -q "TLSv1.3" "s_client-$group.out"; then
            echo "FAIL lsan s_client-$group: no TLS 1.3 session in s_client's output"
            lsan_failures=$((lsan_failures + 1))
        fi
        status=0
        wait "$server" || status=$?
        lsan_runs=$((lsan_runs + 1))
        lsan_check "s_server-$group" ok "$status" "$lsan_work/logs/s_server-$group"
    done
    cd "$root"
    echo "lsan: $lsan_runs runs, $lsan_failures failures, $lsan_foreign leak record(s) outside the provider"
    ((lsan_failures == 0))
}

failed=0
for mode in "${modes[@]}"; do
    if ((quick)); then echo "== sanitizers: $mode (quick)"; else echo "== sanitizers: $mode"; fi
    "run_$mode" || failed=1
done
exit $failed
