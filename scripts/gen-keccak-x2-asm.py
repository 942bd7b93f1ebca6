#!/usr/bin/env python3
"""Writes kem-core/src/backend/aarch64/keccak_x2/asm.rs: the two-way
Keccak-f[1600] rounds as AArch64 inline assembly, with all 25 lanes (two
states, one per 64-bit half) in vector registers for the whole permutation.

Why assembly: from intrinsics, LLVM keeps the state in registers but spills
and reloads about 27 vectors a round (189 instructions a round where the
operations need 162). Register allocation by hand needs no spill:

plain Neon (rolled loop, lane i always in v<i>)
    θ    C[x] in v25..v29 (20 EOR); D[x] = C[x-1] ^ rotl(C[x+1], 1) in v30
         and XORed into column x at once (5 x (SHL, SRI, EOR) + 25 EOR)
    ρ π  walks π's one 24-cycle backwards: the first rotated lane goes to
         v25, every later one into the register the step before emptied, so
         each lane lands in its own register (24 x (SHL, SRI)); lane 1's
         value waits in v25 for χ
    χ    per row, the five ~b[x+1] & b[x+2] into v26..v30 (BIC), then XORed
         into place (EOR)
    ι    LD1R of the round constant, EOR
SHA-3 extension (24 rounds unrolled, registers renamed from round to round)
    θ    C with EOR3 (10), D with RAX1 (5), XOR and ρ fused in XAR (24)
    χ    BCAX (25): per row, out[3] and out[4] into free registers, the
         other three in place, so no row needs a copy
    ι    LD1R, EOR

Run it after changing it: `python3 scripts/gen-keccak-x2-asm.py`. The
file it writes says it is generated; CI checks the two are in step.
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
    out.append("ld1r {{v31.2d}}, [{constants}], #8")
    out.append(f"eor {v(0)}, {v(0)}, {v(31)}")
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
    plain = load() + ["2:"] + plain_round() + ["subs {rounds}, {rounds}, #1", "b.ne 2b"]
    plain += store(list(range(25)), [25, 26, 27, 28])

    regs = Registers()
    sha3 = load()
    for rnd in range(24):
        sha3.append(f"// round {rnd}")
        sha3 += sha3_round(regs)
    sha3 += store(regs.lane, regs.free)

    ind = " " * 12
    text = f'''// @generated by scripts/gen-keccak-x2-asm.py: edit that, not this.
//! The two-way Keccak-f[1600] rounds in AArch64 assembly, every lane in a
//! vector register from the first round to the last (see the generator
//! for the register plan).

use core::arch::asm;

use super::ROUND_CONSTANTS;

/// Keccak-f[1600] on `a` and on `b` on plain Neon: 162 instructions a
/// round, none a spill.
#[target_feature(enable = "neon")]
pub(super) fn permute_neon(a: &mut [u64; 25], b: &mut [u64; 25]) {{
    // SAFETY: the assembly reads and writes the 200 bytes of `a` and of `b`
    // (valid, exclusive borrows, so distinct) and reads the 24 round
    // constants; it clobbers only the vector registers it declares and the
    // two counters it is given.
    unsafe {{
        asm!(
{chr(10).join(rust_lines(plain, ind))}
            a = in(reg) a.as_mut_ptr(),
            b = in(reg) b.as_mut_ptr(),
            constants = inout(reg) ROUND_CONSTANTS.as_ptr() => _,
            rounds = inout(reg) 24u64 => _,
            {CLOBBERS},
            options(nostack),
        );
    }}
}}

/// Keccak-f[1600] on `a` and on `b` with the SHA-3 extension: 67
/// instructions a round.
#[target_feature(enable = "neon,sha3")]
pub(super) fn permute_sha3(a: &mut [u64; 25], b: &mut [u64; 25]) {{
    // SAFETY: as for `permute_neon`; the caller's `target_feature` (checked
    // at run time by the caller) makes EOR3, RAX1, XAR and BCAX legal.
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
    path = Path(__file__).resolve().parent.parent / "kem-core/src/backend/aarch64/keccak_x2/asm.rs"
    if len(sys.argv) > 1 and sys.argv[1] == "--check":
        if path.read_text() != text:
            sys.exit(f"{path} is out of step with {__file__}: run it")
        return
    path.write_text(text)


main()
