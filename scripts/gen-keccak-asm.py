#!/usr/bin/env python3
"""Writes the AArch64 Keccak-f[1600] permutations of the `neon` backend as
inline assembly: kem-core/src/backend/aarch64/keccak_x2/asm.rs, the two-way
rounds with all 25 lanes (two states, one per 64-bit half) in vector
registers for the whole permutation, and .../aarch64/keccak_x1.rs, the
one-way permutation on scalar registers for cores without SHA-3.

Why assembly: from intrinsics, LLVM keeps the state in registers but spills
and reloads about 27 vectors a round (189 instructions a round where the
operations need 162). Register allocation by hand needs no spill:

plain Neon (24 rounds unrolled, lane i in v<i> between rounds)
    θ    C[x] in v25..v29 (20 EOR); D[x] = C[x-1] ^ rotl(C[x+1], 1) in v30
         and XORed into column x at once (5 x (SHL, SRI, EOR) + 25 EOR)
    ρ π  walks π's one 24-cycle backwards: the first rotated lane goes to
         v25, every later one into the register the step before emptied, so
         each lane lands in its own register (23 x (SHL, SRI)); lane 1's
         value waits in v25 for χ. Lane 19's offset, 8, is a byte
         rotation: one TBL with indices that stay in v31
    χ    per row, the five ~b[x+1] & b[x+2] into v26..v30 (BIC), then XORed
         into place (EOR)
    ι    LD1R of the round constant, EOR
SHA-3 extension (24 rounds unrolled, registers renamed from round to round)
    θ    C with EOR3 (10), D with RAX1 (5), XOR and ρ fused in XAR (24)
    χ    BCAX (25): per row, out[3] and out[4] into free registers, the
         other three in place, so no row needs a copy
    ι    LD1R, EOR

scalar, one-way (24 rounds unrolled, lanes renamed from round to round)
    28 general registers are free for inline assembly (not x18, x19, x29,
    sp): 25 lanes and three temporaries; the state pointer and two of θ's
    column parities wait on the stack, the parities zeroed (one STP of
    XZR) before the stack space is given back.
    lazy ρ  no lane is rotated by ρ: each register holds its lane rotated
         left by a lag the generator tracks, and every operand that reads
         it takes the difference as the shifted operand of EOR or BIC (free
         on AArch64). Lane 0 never lags; the others lag 24 after the last
         round, rotated back once (24 ROR) before the store
    θ    C[x] (20 EOR), D[x] = C[x-1] ^ rotl(C[x+1], 1) in one EOR,
         XORed into column x at once (25 EOR); the order keeps three
         parities in registers at a time
    π    renames registers (the generator's map), no instruction
    χ    per row, ~b[x+1] & b[x+2] by BIC into a temporary, XORed into
         place, in an order that needs no copies (50)
    ι    the constant by a PC-relative LDR from a table after the code
         (which jumps over it), EOR
Against the `keccak` crate's portable Rust: 106 instructions a round
instead of about 163.

Run it after changing it: `python3 scripts/gen-keccak-asm.py`. The files
it writes say they are generated; `--check` (run by scripts/test.sh)
fails if they are out of step.
"""
import sys
from pathlib import Path

# ρ's rotation offsets by lane index x + 5y (FIPS 202, Algorithm 2).
RHO = [0, 1, 62, 28, 27, 36, 44, 6, 55, 20, 3, 10, 43, 25, 39, 41, 45, 15, 21, 8, 18, 2, 61, 56, 14]


def pi(lane):
    """π sends lane (x, y) to (y, 2x + 3y)."""
    x, y = lane % 5, lane // 5
    return y + 5 * ((2 * x + 3 * y) % 5)


def pi_cycle():
    """π's one cycle through the 24 lanes other than 0, from lane 1."""
    cycle = [1]
    while pi(cycle[-1]) != 1:
        cycle.append(pi(cycle[-1]))
    assert sorted(cycle) == list(range(1, 25))
    return cycle


def v(r, arrangement="16b"):
    return f"v{r}.{arrangement}"


def plain_round():
    """One round on plain Neon; lane i in v<i> before and after."""
    out = ["// θ: column parities C[x] in v25..v29"]
    for x in range(5):
        c = 25 + x
        out.append(f"eor {v(c)}, {v(x)}, {v(x + 5)}")
        for y in (2, 3, 4):
            out.append(f"eor {v(c)}, {v(c)}, {v(x + 5 * y)}")
    out.append("// θ: D[x] = C[x-1] ^ rotl(C[x+1], 1) in v30, XORed into column x")
    for x in range(5):
        nxt, prv = 25 + (x + 1) % 5, 25 + (x - 1) % 5
        out.append(f"shl {v(30, '2d')}, {v(nxt, '2d')}, #1")
        out.append(f"sri {v(30, '2d')}, {v(nxt, '2d')}, #63")
        out.append(f"eor {v(30)}, {v(30)}, {v(prv)}")
        for y in range(5):
            out.append(f"eor {v(x + 5 * y)}, {v(x + 5 * y)}, {v(30)}")
    out.append("// ρ and π: B[π(i)] = rotl(A[i], ρ[i]), along π's cycle backwards")
    cycle = pi_cycle()
    reg = {lane: lane for lane in range(25)}
    reg[cycle[0]] = 25  # B[1] = rotl(A[cycle[-1]]) waits in v25
    for i in range(len(cycle) - 1, -1, -1):
        src, dst = cycle[i], cycle[(i + 1) % len(cycle)]
        r = RHO[src]
        if r == 8:
            # A byte rotation: one TBL with the indices kept in v31.
            out.append(f"tbl {v(reg[dst])}, {{{{{v(src)}}}}}, {v(31)}")
            continue
        out.append(f"shl {v(reg[dst], '2d')}, {v(src, '2d')}, #{r}")
        out.append(f"sri {v(reg[dst], '2d')}, {v(src, '2d')}, #{64 - r}")
    out.append("// χ: A[x] = B[x] ^ (~B[x+1] & B[x+2]) along each row")
    for y in range(5):
        b = [reg[5 * y + x] for x in range(5)]
        for x in range(5):
            out.append(f"bic {v(26 + x)}, {v(b[(x + 2) % 5])}, {v(b[(x + 1) % 5])}")
        for x in range(5):
            out.append(f"eor {v(5 * y + x)}, {v(b[x])}, {v(26 + x)}")
    out.append("// ι")
    out.append("ld1r {{v26.2d}}, [{constants}], #8")
    out.append(f"eor {v(0)}, {v(0)}, {v(26)}")
    return out


class Registers:
    """Which register holds which lane, and which are free."""

    def __init__(self):
        self.lane = list(range(25))
        self.free = list(range(25, 32))

    def take(self):
        return self.free.pop()

    def give(self, r):
        self.free.append(r)


def sha3_round(regs):
    """One round on the SHA-3 extension, renaming registers in `regs`."""
    a = regs.lane
    out = ["// θ: C with EOR3"]
    c = []
    for x in range(5):
        r = regs.take()
        out.append(f"eor3 {v(r)}, {v(a[x])}, {v(a[x + 5])}, {v(a[x + 10])}")
        out.append(f"eor3 {v(r)}, {v(r)}, {v(a[x + 15])}, {v(a[x + 20])}")
        c.append(r)
    out.append("// θ: D[x] = C[x-1] ^ rotl(C[x+1], 1) with RAX1")
    d = [None] * 5
    # D0 and D1 take the two free registers; D2..D4 overwrite C1..C3, each
    # read for the last time there.
    for x, dst in ((0, regs.take()), (1, regs.take()), (2, c[1]), (3, c[2]), (4, c[3])):
        out.append(f"rax1 {v(dst, '2d')}, {v(c[(x - 1) % 5], '2d')}, {v(c[(x + 1) % 5], '2d')}")
        d[x] = dst
    regs.give(c[4])
    regs.give(c[0])
    out.append("// ρ and π with θ's XOR: B[π(i)] = rotl(A[i] ^ D[i mod 5], ρ[i]) with XAR")
    b = [None] * 25
    b[0] = regs.take()
    out.append(f"eor {v(b[0])}, {v(a[0])}, {v(d[0])}")
    regs.give(a[0])
    cycle = pi_cycle()
    for i in range(len(cycle) - 1, -1, -1):
        src, dst = cycle[i], cycle[(i + 1) % len(cycle)]
        b[dst] = regs.take()
        out.append(f"xar {v(b[dst], '2d')}, {v(a[src], '2d')}, {v(d[src % 5], '2d')}, #{(64 - RHO[src]) % 64}")
        regs.give(a[src])
    for r in d:
        regs.give(r)
    out.append("// χ with BCAX: out[3], out[4] into free registers, the rest in place")
    new = [None] * 25
    for y in range(5):
        row = b[5 * y : 5 * y + 5]

        def bcax(dst, x):
            return f"bcax {v(dst)}, {v(row[x])}, {v(row[(x + 2) % 5])}, {v(row[(x + 1) % 5])}"

        for x in (3, 4):
            new[5 * y + x] = regs.take()
            out.append(bcax(new[5 * y + x], x))
        for x in (0, 1, 2):
            new[5 * y + x] = row[x]
            out.append(bcax(row[x], x))
        regs.give(row[3])
        regs.give(row[4])
    regs.lane = new
    out.append("// ι")
    t = regs.take()
    out.append(f"ld1r {{{{{v(t, '2d')}}}}}, [{{constants}}], #8")
    out.append(f"eor {v(new[0])}, {v(new[0])}, {v(t)}")
    regs.give(t)
    return out


SCALAR_LANES = [f"x{i}" for i in range(18)] + [f"x{i}" for i in range(20, 27)]
T0, T1, T2 = "x27", "x28", "x30"


def round_constants():
    """ι's 24 constants (FIPS 202, Algorithms 5 and 6)."""
    constants, lfsr = [], 1
    for _ in range(24):
        rc = 0
        for j in range(7):
            if lfsr & 1:
                rc |= 1 << ((1 << j) - 1)
            lfsr = ((lfsr << 1) ^ 0x71) & 0xFF if lfsr & 0x80 else lfsr << 1
        constants.append(rc)
    return constants


class LazyLanes:
    """Where each lane is and how far it lags: position i's value is its
    register `reg[i]` rotated right by `lag[i]` (so ρ lowers a lag by its
    offset instead of rotating, and π renames registers instead of moving
    them)."""

    def __init__(self):
        self.reg = list(SCALAR_LANES)
        self.lag = [0] * 25


def operand(reg, lag, frame):
    """`reg` (a value lagging by `lag`) as a shifted operand of an
    instruction whose result lags by `frame`."""
    shift = (lag - frame) % 64
    return f"{reg}, ror #{shift}" if shift else reg


def lazy_round(lanes, rnd):
    """One round on scalar registers with ρ folded into the operands (see
    [`LazyLanes`]); the stack holds the state pointer at [sp] and room for
    two parities at [sp, #16]."""
    out = []
    reg, lag = lanes.reg, lanes.lag
    frame = {}

    def parity(t, x):
        # C[x], lagging as lane (x, 0) does.
        frame[t] = lag[x]
        out.append(f"eor {t}, {reg[x]}, {operand(reg[x + 5], lag[x + 5], frame[t])}")
        for y in (2, 3, 4):
            i = x + 5 * y
            out.append(f"eor {t}, {t}, {operand(reg[i], lag[i], frame[t])}")

    def d(t, c_prev, c_next, f_prev, f_next):
        # D[x] = C[x-1] ^ rotl(C[x+1], 1) into `t` (holding C[x-1]).
        out.append(f"eor {t}, {c_prev}, {operand(c_next, f_next + 63, f_prev)}")
        frame[t] = f_prev

    def apply(t, x):
        for y in range(5):
            i = x + 5 * y
            out.append(f"eor {reg[i]}, {reg[i]}, {operand(t, frame[t], lag[i])}")

    out.append(f"// round {rnd}, θ: C0 (kept on the stack), C1, C2; D1 = C0 ^ rotl(C2, 1)")
    parity(T0, 0)
    f_c0 = frame[T0]
    out.append(f"str {T0}, [sp, #16]")
    parity(T1, 1)
    f_c1 = frame[T1]
    parity(T2, 2)
    f_c2 = frame[T2]
    d(T0, T0, T2, f_c0, f_c2)
    apply(T0, 1)
    out.append("// C3; D2 = C1 ^ rotl(C3, 1) (C1 kept on the stack)")
    parity(T0, 3)
    f_c3 = frame[T0]
    out.append(f"str {T1}, [sp, #24]")
    d(T1, T1, T0, f_c1, f_c3)
    apply(T1, 2)
    out.append("// C4; D3 = C2 ^ rotl(C4, 1)")
    parity(T1, 4)
    f_c4 = frame[T1]
    d(T2, T2, T1, f_c2, f_c4)
    apply(T2, 3)
    out.append("// D4 = C3 ^ rotl(C0, 1), D0 = C4 ^ rotl(C1, 1)")
    out.append(f"ldr {T2}, [sp, #16]")
    d(T0, T0, T2, f_c3, f_c0)
    apply(T0, 4)
    out.append(f"ldr {T2}, [sp, #24]")
    d(T1, T1, T2, f_c4, f_c1)
    apply(T1, 0)

    # ρ: lane i lags RHO[i] less (a left rotation); π: position pi(i)
    # takes lane i's register.
    new_reg, new_lag = [None] * 25, [None] * 25
    for i in range(25):
        new_reg[pi(i)] = reg[i]
        new_lag[pi(i)] = (lag[i] - RHO[i]) % 64
    reg[:], lag[:] = new_reg, new_lag

    out.append("// χ, row by row: out[x] = b[x] ^ (~b[x+1] & b[x+2]), in place")
    for y in range(5):
        b = [reg[5 * y + x] for x in range(5)]
        f = [lag[5 * y + x] for x in range(5)]

        def bic(t, x):
            # ~b[x+1] & b[x+2], lagging as b[x+2] does.
            frame[t] = f[(x + 2) % 5]
            out.append(f"bic {t}, {b[(x + 2) % 5]}, {operand(b[(x + 1) % 5], f[(x + 1) % 5], frame[t])}")

        def xor(x, t):
            out.append(f"eor {b[x]}, {b[x]}, {operand(t, frame[t], f[x])}")

        bic(T0, 0)
        bic(T1, 1)
        bic(T2, 2)
        xor(2, T2)
        bic(T2, 3)
        xor(3, T2)
        bic(T2, 4)
        xor(4, T2)
        xor(0, T0)
        xor(1, T1)
    assert lag[0] == 0, "lane 0 never lags (ρ and π leave it in place)"
    out.append(f"// ι (lane 0 never lags)")
    out.append(f"ldr {T0}, {300 + rnd}f")
    out.append(f"eor {reg[0]}, {reg[0]}, {T0}")
    return out


def scalar_permutation():
    """The 24 rounds unrolled, then every lane rotated by what it still
    lags and stored; the round constants follow as data, which the code
    jumps over and reads PC-relative."""
    lanes = LazyLanes()
    a = lanes.reg
    out = ["sub sp, sp, #32", "str x0, [sp]", f"mov {T0}, x0"]
    for i in range(0, 24, 2):
        out.append(f"ldp {a[i]}, {a[i + 1]}, [{T0}, #{8 * i}]")
    out.append(f"ldr {a[24]}, [{T0}, #192]")
    for rnd in range(24):
        out += lazy_round(lanes, rnd)
    out.append("// what each lane still lags")
    for i in range(25):
        if lanes.lag[i]:
            out.append(f"ror {lanes.reg[i]}, {lanes.reg[i]}, #{lanes.lag[i]}")
    out.append(f"ldr {T0}, [sp]")
    r = lanes.reg
    for i in range(0, 24, 2):
        out.append(f"stp {r[i]}, {r[i + 1]}, [{T0}, #{8 * i}]")
    out.append(f"str {r[24]}, [{T0}, #192]")
    # The last round's parities C0 and C1 are functions of the state, which
    # may be secret: zeroed before the space is given back (the pointer at
    # [sp] is not secret).
    out.append("stp xzr, xzr, [sp, #16]")
    out.append("add sp, sp, #32")
    out.append("b 399f")
    out.append(".p2align 3")
    for rnd, rc in enumerate(round_constants()):
        out.append(f"{300 + rnd}: .quad {rc:#018x}")
    out.append("399:")
    return out


def load():
    """Lane i of `a` and of `b` into the halves of v<i>: four lanes of each
    with two LDP, then 64-bit zips (v25..v29 are free before the rounds)."""
    out = []
    for g in range(6):
        out.append(f"ldp q26, q27, [{{a}}, #{32 * g}]")
        out.append(f"ldp q28, q29, [{{b}}, #{32 * g}]")
        for i, (op, x, y) in enumerate((("zip1", 26, 28), ("zip2", 26, 28), ("zip1", 27, 29), ("zip2", 27, 29))):
            out.append(f"{op} {v(4 * g + i, '2d')}, {v(x, '2d')}, {v(y, '2d')}")
    out.append("ldr d24, [{a}, #192]")
    out.append("ldr d25, [{b}, #192]")
    out.append(f"zip1 {v(24, '2d')}, {v(24, '2d')}, {v(25, '2d')}")
    return out


def store(lane_reg, free):
    """The inverse of `load`, lane i from register `lane_reg[i]`, with four
    free registers `free`."""
    t = free[:4]
    out = []
    for g in range(6):
        r = [lane_reg[4 * g + i] for i in range(4)]
        out.append(f"zip1 {v(t[0], '2d')}, {v(r[0], '2d')}, {v(r[1], '2d')}")
        out.append(f"zip2 {v(t[1], '2d')}, {v(r[0], '2d')}, {v(r[1], '2d')}")
        out.append(f"zip1 {v(t[2], '2d')}, {v(r[2], '2d')}, {v(r[3], '2d')}")
        out.append(f"zip2 {v(t[3], '2d')}, {v(r[2], '2d')}, {v(r[3], '2d')}")
        out.append(f"stp q{t[0]}, q{t[2]}, [{{a}}, #{32 * g}]")
        out.append(f"stp q{t[1]}, q{t[3]}, [{{b}}, #{32 * g}]")
    out.append(f"str d{lane_reg[24]}, [{{a}}, #192]")
    out.append(f"dup {v(t[0], '2d')}, {v(lane_reg[24], 'd')}[1]")
    out.append(f"str d{t[0]}, [{{b}}, #192]")
    return out


def rust_lines(lines, indent):
    body = []
    for line in lines:
        if line.startswith("//"):
            body.append(f"{indent}{line}")
        else:
            body.append(f'{indent}"{line}",')
    return body


CLOBBERS = ", ".join(f'out("v{i}") _' for i in range(32))


def main():
    plain = load() + ["ldr q31, [{rotl8}]"]
    for rnd in range(24):
        plain.append(f"// round {rnd}")
        plain += plain_round()
    plain += store(list(range(25)), [25, 26, 27, 28])

    regs = Registers()
    sha3 = load()
    for rnd in range(24):
        sha3.append(f"// round {rnd}")
        sha3 += sha3_round(regs)
    sha3 += store(regs.lane, regs.free)

    ind = " " * 12
    text = f'''// @generated by scripts/gen-keccak-asm.py: edit that, not this.
//! The two-way Keccak-f[1600] rounds in AArch64 assembly, every lane in a
//! vector register from the first round to the last (see the generator
//! for the register plan).

use core::arch::asm;

use super::ROUND_CONSTANTS;

/// TBL's indices for rotating both 64-bit lanes left by 8 bits (ρ's offset
/// of lane 19).
static ROTL8_INDICES: [u8; 16] = [7, 0, 1, 2, 3, 4, 5, 6, 15, 8, 9, 10, 11, 12, 13, 14];

/// Keccak-f[1600] on `a` and on `b` on plain Neon, every lane in a
/// register (no spills).
#[target_feature(enable = "neon")]
pub(super) fn permute_neon(a: &mut [u64; 25], b: &mut [u64; 25]) {{
    // SAFETY: the assembly reads and writes the 200 bytes of `a` and of `b`
    // (valid, exclusive borrows, so distinct) and reads the 24 round
    // constants and the 16 TBL indices; it clobbers only the vector
    // registers it declares and the constants' pointer it is given.
    unsafe {{
        asm!(
{chr(10).join(rust_lines(plain, ind))}
            a = in(reg) a.as_mut_ptr(),
            b = in(reg) b.as_mut_ptr(),
            constants = inout(reg) ROUND_CONSTANTS.as_ptr() => _,
            rotl8 = in(reg) ROTL8_INDICES.as_ptr(),
            {CLOBBERS},
            options(nostack),
        );
    }}
}}

/// Keccak-f[1600] on `a` and on `b` with the SHA-3 extension.
#[target_feature(enable = "neon,sha3")]
pub(super) fn permute_sha3(a: &mut [u64; 25], b: &mut [u64; 25]) {{
    // SAFETY: the assembly reads and writes the 200 bytes of `a` and of `b`
    // (valid, exclusive borrows, so distinct) and reads the 24 round
    // constants; it clobbers only the vector registers it declares and the
    // constants' pointer it is given. This function's `target_feature`
    // (its caller checks the CPU at run time) makes EOR3, RAX1, XAR and
    // BCAX legal.
    unsafe {{
        asm!(
{chr(10).join(rust_lines(sha3, ind))}
            a = in(reg) a.as_mut_ptr(),
            b = in(reg) b.as_mut_ptr(),
            constants = inout(reg) ROUND_CONSTANTS.as_ptr() => _,
            {CLOBBERS},
            options(nostack),
        );
    }}
}}
'''
    clobbers = ", ".join(f'out("{r}") _' for r in SCALAR_LANES[1:] + [T0, T1, T2])
    scalar = f'''// @generated by scripts/gen-keccak-asm.py: edit that, not this.
//! The one-way Keccak-f[1600] on scalar registers, for the `neon` backend
//! on cores without the SHA-3 extension (those with it take the `keccak`
//! crate's SHA-3 assembly): every lane in a general register for the whole
//! permutation, ρ folded into the operands (see the generator for the
//! register plan).

use core::arch::asm;

/// Keccak-f[1600] (FIPS 202, Algorithm 7 with 24 rounds) on `state`.
// Not inlined: the 24 unrolled rounds are 10 KiB of code.
#[inline(never)]
pub(super) fn keccak_f1600(state: &mut [u64; 25]) {{
    // SAFETY: the assembly reads and writes the 200 bytes of `state` (a
    // valid, exclusive borrow) and reads its own round constants, which it
    // jumps over; it clobbers only the general registers it declares, and
    // uses 32 bytes below the stack pointer, which it restores (no
    // `nostack`), zeroing θ's two parities there first (they derive from
    // the state, which may be secret).
    unsafe {{
        asm!(
{chr(10).join(rust_lines(scalar_permutation(), ind))}
            inout("x0") state.as_mut_ptr() => _,
            {clobbers},
        );
    }}
}}
'''
    root = Path(__file__).resolve().parent.parent / "kem-core/src/backend/aarch64"
    outputs = [(root / "keccak_x2/asm.rs", text), (root / "keccak_x1.rs", scalar)]
    if len(sys.argv) > 1 and sys.argv[1] == "--check":
        for path, content in outputs:
            if not path.exists() or path.read_text() != content:
                sys.exit(f"{path} is out of step with {__file__}: run it")
        return
    for path, content in outputs:
        path.write_text(content)


main()
