//! Keccak-f[1600] (FIPS 202, section 3.3) written for the compiler: the 25
//! lanes in a local array, every step a loop over constant indices that
//! unrolls completely, so that, compiled for a CPU with BMI1, chi becomes
//! one `andn` and one `xor` per lane. SIMD backends compile it inside their
//! `#[target_feature]` functions as their one-way permutation; its output
//! is tested against the `keccak` crate's.

/// The round constants of iota (FIPS 202, Algorithm 5).
pub(crate) const ROUND_CONSTANTS: [u64; 24] = [
    0x0000_0000_0000_0001,
    0x0000_0000_0000_8082,
    0x8000_0000_0000_808a,
    0x8000_0000_8000_8000,
    0x0000_0000_0000_808b,
    0x0000_0000_8000_0001,
    0x8000_0000_8000_8081,
    0x8000_0000_0000_8009,
    0x0000_0000_0000_008a,
    0x0000_0000_0000_0088,
    0x0000_0000_8000_8009,
    0x0000_0000_8000_000a,
    0x0000_0000_8000_808b,
    0x8000_0000_0000_008b,
    0x8000_0000_0000_8089,
    0x8000_0000_0000_8003,
    0x8000_0000_0000_8002,
    0x8000_0000_0000_0080,
    0x0000_0000_0000_800a,
    0x8000_0000_8000_000a,
    0x8000_0000_8000_8081,
    0x8000_0000_0000_8080,
    0x0000_0000_8000_0001,
    0x8000_0000_8000_8008,
];

/// The rotation offsets of rho for lane x + 5y (FIPS 202, Table 2).
const RHO: [u32; 25] = [
    0, 1, 62, 28, 27, 36, 44, 6, 55, 20, 3, 10, 43, 25, 39, 41, 45, 15, 21, 8, 18, 2, 61, 56, 14,
];

/// One round: theta, rho and pi into a second array, chi back, iota.
#[inline(always)]
fn round(a: &mut [u64; 25], round_constant: u64) {
    // Theta: column parities C and the D added to every lane of a column.
    let c: [u64; 5] = core::array::from_fn(|x| a[x] ^ a[x + 5] ^ a[x + 10] ^ a[x + 15] ^ a[x + 20]);
    let d: [u64; 5] = core::array::from_fn(|x| c[(x + 4) % 5] ^ c[(x + 1) % 5].rotate_left(1));
    // Rho and pi: B[y, 2x + 3y] = ROT(A[x, y] ^ D[x], r[x, y]).
    let mut b = [0u64; 25];
    for y in 0..5 {
        for x in 0..5 {
            let lane = x + 5 * y;
            b[y + 5 * ((2 * x + 3 * y) % 5)] = (a[lane] ^ d[x]).rotate_left(RHO[lane]);
        }
    }
    // Chi: A[x, y] = B[x, y] ^ (!B[x + 1, y] & B[x + 2, y]).
    for y in 0..5 {
        for x in 0..5 {
            let row = 5 * y;
            a[row + x] = b[row + x] ^ (!b[row + (x + 1) % 5] & b[row + (x + 2) % 5]);
        }
    }
    // Iota.
    a[0] ^= round_constant;
}

/// Keccak-f[1600] on `state`; two rounds per loop iteration.
#[inline(always)]
pub(crate) fn keccak_f1600(state: &mut [u64; 25]) {
    let mut a = *state;
    for pair in ROUND_CONSTANTS.chunks_exact(2) {
        round(&mut a, pair[0]);
        round(&mut a, pair[1]);
    }
    *state = a;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_keccak_crate() {
        let mut ours = [0u64; 25];
        let mut theirs = [0u64; 25];
        // FIPS 202 / XKCP: Keccak-f[1600] of the zero state, first lane.
        keccak_f1600(&mut ours);
        assert_eq!(ours[0], 0xf125_8f79_40e1_dde7);
        keccak::f1600(&mut theirs);
        assert_eq!(ours, theirs);
        for i in 0..1000u64 {
            ours[(i % 25) as usize] ^= i.wrapping_mul(0x9e37_79b9_7f4a_7c15);
            theirs[(i % 25) as usize] ^= i.wrapping_mul(0x9e37_79b9_7f4a_7c15);
            keccak_f1600(&mut ours);
            keccak::f1600(&mut theirs);
            assert_eq!(ours, theirs, "iteration {i}");
        }
    }
}
