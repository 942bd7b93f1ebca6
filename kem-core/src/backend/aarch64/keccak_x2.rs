//! Two Keccak-f[1600] permutations at once on 128-bit Neon vectors, for the
//! `neon` backend: lane i of both states in one `uint64x2_t`.
//!
//! Two bodies of the same round (one macro): with the Armv8.2 SHA-3
//! extension (`EOR3` for θ's column parities, `RAX1` for θ's D, `XAR` for
//! θ's XOR with ρ's rotation, `BCAX` for χ), chosen at run time where the
//! CPU has it, and on plain Neon (rotations as `SHL` + `SRI`, χ as `BIC` +
//! `EOR`) otherwise. No data-dependent branch or index: constant time.

use core::arch::aarch64::{
    uint64x2_t, vbicq_u64, vcombine_u64, vcreate_u64, vdupq_n_u64, veorq_u64, vgetq_lane_u64,
    vshlq_n_u64, vsriq_n_u64,
};
use core::arch::aarch64::{vbcaxq_u64, veor3q_u64, vrax1q_u64, vxarq_u64};

/// The 24 round constants of ι, from FIPS 202's LFSR (Algorithm 5).
const ROUND_CONSTANTS: [u64; 24] = {
    let mut constants = [0u64; 24];
    let mut lfsr: u8 = 1;
    let mut round = 0;
    while round < 24 {
        let mut j = 0;
        while j < 7 {
            if lfsr & 1 != 0 {
                constants[round] ^= 1 << ((1 << j) - 1);
            }
            lfsr = if lfsr & 0x80 != 0 {
                (lfsr << 1) ^ 0x71
            } else {
                lfsr << 1
            };
            j += 1;
        }
        round += 1;
    }
    constants
};

/// Whether this CPU has the SHA-3 extension (detected once by std).
pub(crate) fn has_sha3() -> bool {
    std::arch::is_aarch64_feature_detected!("sha3")
}

// The four operations a round is written in, on plain Neon and on SHA-3.

/// a ^ b ^ c.
macro_rules! plain_xor3 {
    ($a:expr, $b:expr, $c:expr) => {
        veorq_u64(veorq_u64($a, $b), $c)
    };
}
/// a ^ rotl(b, 1).
macro_rules! plain_rax1 {
    ($a:expr, $b:expr) => {{
        let b = $b;
        veorq_u64($a, vsriq_n_u64::<63>(vshlq_n_u64::<1>(b), b))
    }};
}
/// rotl(a ^ d, r).
macro_rules! plain_xor_rotl {
    ($a:expr, $d:expr, $r:literal) => {{
        let x = veorq_u64($a, $d);
        vsriq_n_u64::<{ 64 - $r }>(vshlq_n_u64::<$r>(x), x)
    }};
}
/// a ^ (b & !c).
macro_rules! plain_bcax {
    ($a:expr, $b:expr, $c:expr) => {
        veorq_u64($a, vbicq_u64($b, $c))
    };
}
macro_rules! sha3_xor3 {
    ($a:expr, $b:expr, $c:expr) => {
        veor3q_u64($a, $b, $c)
    };
}
macro_rules! sha3_rax1 {
    ($a:expr, $b:expr) => {
        vrax1q_u64($a, $b)
    };
}
/// `XAR` rotates right: rotl by r is rotr by (64 - r) mod 64.
macro_rules! sha3_xor_rotl {
    ($a:expr, $d:expr, $r:literal) => {
        vxarq_u64::<{ (64 - $r) % 64 }>($a, $d)
    };
}
macro_rules! sha3_bcax {
    ($a:expr, $b:expr, $c:expr) => {
        vbcaxq_u64($a, $b, $c)
    };
}

/// ρ and π after θ: `b[dst] = rotl(s[src] ^ d[src mod 5], r)` for each
/// `src => dst, r` (π sends lane (x, y) to (y, 2x + 3y); r is ρ's offset).
macro_rules! rho_pi {
    ($b:ident, $s:ident, $d:ident, $xor_rotl:ident; $($src:literal => $dst:literal, $r:literal;)*) => {
        $( $b[$dst] = $xor_rotl!($s[$src], $d[$src % 5], $r); )*
    };
}

/// The 24 rounds on `$s: [uint64x2_t; 25]`, written in the four operations.
macro_rules! rounds {
    ($s:ident, $xor3:ident, $rax1:ident, $xor_rotl:ident, $bcax:ident) => {
        for constant in ROUND_CONSTANTS {
            // θ: column parities, then D[x] = C[x-1] ^ rotl(C[x+1], 1).
            let c = [
                $xor3!($xor3!($s[0], $s[5], $s[10]), $s[15], $s[20]),
                $xor3!($xor3!($s[1], $s[6], $s[11]), $s[16], $s[21]),
                $xor3!($xor3!($s[2], $s[7], $s[12]), $s[17], $s[22]),
                $xor3!($xor3!($s[3], $s[8], $s[13]), $s[18], $s[23]),
                $xor3!($xor3!($s[4], $s[9], $s[14]), $s[19], $s[24]),
            ];
            let d = [
                $rax1!(c[4], c[1]),
                $rax1!(c[0], c[2]),
                $rax1!(c[1], c[3]),
                $rax1!(c[2], c[4]),
                $rax1!(c[3], c[0]),
            ];
            let mut b = [vdupq_n_u64(0); 25];
            rho_pi!(b, $s, d, $xor_rotl;
                0 => 0, 0; 1 => 10, 1; 2 => 20, 62; 3 => 5, 28; 4 => 15, 27;
                5 => 16, 36; 6 => 1, 44; 7 => 11, 6; 8 => 21, 55; 9 => 6, 20;
                10 => 7, 3; 11 => 17, 10; 12 => 2, 43; 13 => 12, 25; 14 => 22, 39;
                15 => 23, 41; 16 => 8, 45; 17 => 18, 15; 18 => 3, 21; 19 => 13, 8;
                20 => 14, 18; 21 => 24, 2; 22 => 9, 61; 23 => 19, 56; 24 => 4, 14;
            );
            // χ: a[x] = b[x] ^ (!b[x+1] & b[x+2]) along each row.
            for y in (0..25).step_by(5) {
                for x in 0..5 {
                    $s[y + x] = $bcax!(b[y + x], b[y + (x + 2) % 5], b[y + (x + 1) % 5]);
                }
            }
            // ι
            $s[0] = veorq_u64($s[0], vdupq_n_u64(constant));
        }
    };
}

/// The rounds on plain Neon.
#[inline(never)]
#[target_feature(enable = "neon")]
fn permute_neon(s: &mut [uint64x2_t; 25]) {
    rounds!(s, plain_xor3, plain_rax1, plain_xor_rotl, plain_bcax);
}

/// The rounds on the SHA-3 extension (callers check [`has_sha3`]).
#[inline(never)]
#[target_feature(enable = "neon,sha3")]
fn permute_sha3(s: &mut [uint64x2_t; 25]) {
    rounds!(s, sha3_xor3, sha3_rax1, sha3_xor_rotl, sha3_bcax);
}

/// Keccak-f[1600] on `a` and on `b`, as one two-way permutation.
#[target_feature(enable = "neon")]
pub(super) fn keccak_f1600_x2(a: &mut [u64; 25], b: &mut [u64; 25]) {
    let mut s = [vdupq_n_u64(0); 25];
    for (i, lanes) in s.iter_mut().enumerate() {
        *lanes = vcombine_u64(vcreate_u64(a[i]), vcreate_u64(b[i]));
    }
    if has_sha3() {
        // SAFETY: the CPU has the SHA-3 extension (just detected).
        unsafe { permute_sha3(&mut s) }
    } else {
        permute_neon(&mut s);
    }
    for (i, lanes) in s.iter().enumerate() {
        a[i] = vgetq_lane_u64::<0>(*lanes);
        b[i] = vgetq_lane_u64::<1>(*lanes);
    }
    // The vectors held secret lanes (noise streams): clear them.
    crate::wipe::wipe(&mut s, [vdupq_n_u64(0); 25]);
}

#[cfg(test)]
#[allow(unsafe_code)]
mod tests {
    use super::*;

    #[target_feature(enable = "neon")]
    fn check_against_the_keccak_crate() {
        let mut a: [u64; 25] =
            core::array::from_fn(|i| (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let mut b: [u64; 25] = core::array::from_fn(|i| !(i as u64) << 7);
        for _ in 0..3 {
            let (mut want_a, mut want_b) = (a, b);
            keccak::f1600(&mut want_a);
            keccak::f1600(&mut want_b);
            let mut plain = [vdupq_n_u64(0); 25];
            for (i, lanes) in plain.iter_mut().enumerate() {
                *lanes = vcombine_u64(vcreate_u64(a[i]), vcreate_u64(b[i]));
            }
            let mut sha3 = plain;
            permute_neon(&mut plain);
            for (i, lanes) in plain.iter().enumerate() {
                assert_eq!(vgetq_lane_u64::<0>(*lanes), want_a[i]);
                assert_eq!(vgetq_lane_u64::<1>(*lanes), want_b[i]);
            }
            if has_sha3() {
                // SAFETY: the CPU has the SHA-3 extension.
                unsafe { permute_sha3(&mut sha3) };
                for (i, lanes) in sha3.iter().enumerate() {
                    assert_eq!(vgetq_lane_u64::<0>(*lanes), want_a[i]);
                    assert_eq!(vgetq_lane_u64::<1>(*lanes), want_b[i]);
                }
            }
            keccak_f1600_x2(&mut a, &mut b);
            assert_eq!((a, b), (want_a, want_b));
        }
    }

    #[test]
    fn both_bodies_match_the_keccak_crate() {
        // SAFETY: Neon is part of the AArch64 baseline this module needs.
        unsafe { check_against_the_keccak_crate() }
    }
}
