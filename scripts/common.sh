# Shell helpers shared by the scripts (sourced; scripts/setup.sh sources it).

# The one rule for "running in CI", as test_tools::ci::running_in_ci has it
# for the Rust tests: CI is `true` (any case) or `1`. Under CI, what a check
# needs and lacks (vectors, an OpenSSL build, root, qemu) fails it instead of
# skipping it.
in_ci() {
    local value=${CI:-}
    [ "${value,,}" = true ] || [ "$value" = 1 ]
}
