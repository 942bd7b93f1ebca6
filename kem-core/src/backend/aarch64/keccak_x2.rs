//! Two Keccak-f[1600] permutations at once on 128-bit Neon vectors, for the
//! `neon` backend: lane i of both states in one `uint64x2_t`.
//!
//! The rounds (`asm`, generated) have two bodies: with the Armv8.2 SHA-3
//! extension (`EOR3` for θ's column parities, `RAX1` for θ's D, `XAR` for
//! θ's XOR with ρ's rotation, `BCAX` for χ), chosen at run time where the
//! CPU has it, and on plain Neon (rotations as `SHL` + `SRI`, or one `TBL`
//! for the rotation by 8; χ as `BIC` + `EOR`) otherwise. No data-dependent
//! branch or index: constant time.

mod asm;

use asm::{permute_neon, permute_sha3};

/// The 24 round constants of ι, from FIPS 202's LFSR (Algorithm 5).
static ROUND_CONSTANTS: [u64; 24] = {
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

/// Keccak-f[1600] on `a` and on `b`, as one two-way permutation.
#[target_feature(enable = "neon")]
pub(super) fn keccak_f1600_x2(a: &mut [u64; 25], b: &mut [u64; 25]) {
    if has_sha3() {
        // SAFETY: the CPU has the SHA-3 extension (just detected).
        unsafe { permute_sha3(a, b) }
    } else {
        permute_neon(a, b);
    }
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
            let (mut plain_a, mut plain_b) = (a, b);
            permute_neon(&mut plain_a, &mut plain_b);
            assert_eq!((plain_a, plain_b), (want_a, want_b), "plain Neon");
            if has_sha3() {
                let (mut sha3_a, mut sha3_b) = (a, b);
                // SAFETY: the CPU has the SHA-3 extension.
                unsafe { permute_sha3(&mut sha3_a, &mut sha3_b) };
                assert_eq!((sha3_a, sha3_b), (want_a, want_b), "SHA-3");
            }
            let mut one_way = a;
            super::super::keccak_x1::keccak_f1600(&mut one_way);
            assert_eq!(one_way, want_a, "scalar one-way");
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
