# The kem-core backends this CPU supports, and a check that the tests ran
# each of them (sourced by scripts/test.sh).
#
#   expected=$(cpu_backends)        # e.g. portable,avx2,avx512-keccak,avx512
#   MLKEM_EXPECT_BACKENDS=$expected MLKEM_BACKEND_LOG=$log cargo test ...
#   check_backends_exercised "$log" "$expected" vectors differential ...
#
# cpu_backends reads /proc/cpuinfo, independently of kem-core's own
# detection (is_x86_feature_detected!), with the features each backend
# needs (kem-core/src/backend/select.rs): avx2 = AVX2 + BMI1, avx512-keccak
# and avx512 = that + AVX-512 F, VL and BW; neon = AArch64 ASIMD. The tests
# fail when kem-core detects another list (MLKEM_EXPECT_BACKENDS), and
# append a line "<test binary> <backend>" to MLKEM_BACKEND_LOG for each
# backend a test ran to the end (kem-core/tests/backends/mod.rs).

cpu_backends() {
    local flags list=portable
    flags=" $(grep -m1 -E '^(flags|Features)' /proc/cpuinfo | cut -d: -f2) "
    has() { local f; for f; do [[ $flags == *" $f "* ]] || return 1; done; }
    case "$(uname -m)" in
    x86_64)
        if has avx2 bmi1; then
            list+=,avx2
            has avx512f avx512vl avx512bw && list+=,avx512-keccak,avx512
        fi
        ;;
    aarch64) has asimd && list+=,neon ;;
    esac
    echo "$list"
}

# check_backends_exercised LOG EXPECTED BINARY...: every test binary named
# recorded every backend of EXPECTED (comma-separated) in LOG.
check_backends_exercised() {
    local log=$1 expected=$2 binary kind missing=()
    shift 2
    for binary; do
        for kind in ${expected//,/ }; do
            grep -qx "$binary $kind" "$log" || missing+=("$binary:$kind")
        done
    done
    if ((${#missing[@]})); then
        echo "backends: the CPU has $expected, but these test binaries did not run them: ${missing[*]}" >&2
        return 1
    fi
    echo "backends: $expected each exercised by $*"
}
