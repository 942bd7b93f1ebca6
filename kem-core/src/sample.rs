//! Sampling (FIPS 203, section 4.2.2): SampleNTT (Algorithm 7), uniform
//! polynomials in the NTT domain by rejection from XOF output, and
//! SamplePolyCBD (Algorithm 8), centered binomial noise from PRF output.

use crate::field::Q;
use crate::hash::{self, Permutation, SHAKE128_RATE};
use crate::poly::{Poly, N};

/// Three SHAKE128 blocks yield 336 12-bit candidates, enough for 256
/// coefficients with overwhelming probability; more blocks follow if not.
const FIRST_BLOCKS: usize = 3;

/// Algorithm 7: SampleNTT(ρ ‖ j ‖ i) — the matrix entry Â[i, j] is
/// `sample_ntt(rho, j, i)`. Coefficients are in [0, q). Branches only on
/// public data (ρ is part of the encapsulation key).
pub(crate) fn sample_ntt<F: Permutation>(rho: &[u8; 32], j: u8, i: u8, p: &mut Poly) {
    let mut xof = hash::xof::<F>(rho, j, i);
    let mut buf = [0u8; FIRST_BLOCKS * SHAKE128_RATE];
    for block in buf.chunks_exact_mut(SHAKE128_RATE) {
        xof.squeeze_block(block);
    }
    let mut filled = rejection_sample(&mut p.coeffs, 0, &buf);
    while filled < N {
        let block = &mut buf[..SHAKE128_RATE];
        xof.squeeze_block(block);
        filled = rejection_sample(&mut p.coeffs, filled, block);
    }
}

/// The number of set bits of each 8-bit mask: how many of eight candidates
/// a vector rejection sampler's acceptance mask keeps (a table, as a
/// vector unit's mask leaves it as a byte, not a count).
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub(crate) const fn popcount_table() -> [u8; 256] {
    let mut table = [0u8; 256];
    let mut mask = 0;
    while mask < 256 {
        table[mask] = (mask as u8).count_ones() as u8;
        mask += 1;
    }
    table
}

/// Appends to `coeffs[filled..]` the 12-bit candidates of `bytes` that are
/// below q, stopping when the polynomial is full; returns the new count.
pub(crate) fn rejection_sample(coeffs: &mut [i16; N], mut filled: usize, bytes: &[u8]) -> usize {
    let mut chunks = bytes.chunks_exact(3);
    // While two more values always fit, write each candidate and advance
    // past it only if it is accepted: no hard-to-predict branch.
    while filled + 2 <= N {
        let Some(chunk) = chunks.next() else {
            return filled;
        };
        let (d1, d2) = candidates(chunk);
        coeffs[filled] = d1 as i16;
        filled += usize::from(d1 < Q as u16);
        coeffs[filled] = d2 as i16;
        filled += usize::from(d2 < Q as u16);
    }
    // The last coefficient, if still missing.
    for chunk in chunks {
        if filled == N {
            break;
        }
        let (d1, d2) = candidates(chunk);
        for d in [d1, d2] {
            if d < Q as u16 && filled < N {
                coeffs[filled] = d as i16;
                filled += 1;
            }
        }
    }
    filled
}

/// The two 12-bit values d1, d2 of three XOF bytes (Algorithm 7, lines 5-6).
#[inline(always)]
fn candidates(chunk: &[u8]) -> (u16, u16) {
    let d1 = u16::from(chunk[0]) | (u16::from(chunk[1] & 0x0f) << 8);
    let d2 = u16::from(chunk[1] >> 4) | (u16::from(chunk[2]) << 4);
    (d1, d2)
}

/// Algorithm 8: SamplePolyCBD_eta from 64·eta bytes, eta ∈ {2, 3}.
/// Coefficients are in [-eta, eta]; bit counting only, no branch on the
/// (secret) input.
pub(crate) fn sample_poly_cbd<const ETA: usize>(bytes: &[u8], p: &mut Poly) {
    debug_assert_eq!(bytes.len(), 64 * ETA);
    match ETA {
        2 => {
            // Four bytes give eight coefficients, each (a0 + a1) - (b0 + b1).
            for (chunk, out) in bytes.chunks_exact(4).zip(p.coeffs.chunks_exact_mut(8)) {
                let t = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
                let d = (t & 0x5555_5555) + ((t >> 1) & 0x5555_5555);
                for (k, c) in out.iter_mut().enumerate() {
                    let a = (d >> (4 * k)) & 0x3;
                    let b = (d >> (4 * k + 2)) & 0x3;
                    *c = a as i16 - b as i16;
                }
            }
        }
        3 => {
            // Three bytes give four coefficients, each of 3 + 3 bits.
            for (chunk, out) in bytes.chunks_exact(3).zip(p.coeffs.chunks_exact_mut(4)) {
                let t = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], 0]);
                let d = (t & 0x0024_9249) + ((t >> 1) & 0x0024_9249) + ((t >> 2) & 0x0024_9249);
                for (k, c) in out.iter_mut().enumerate() {
                    let a = (d >> (6 * k)) & 0x7;
                    let b = (d >> (6 * k + 3)) & 0x7;
                    *c = a as i16 - b as i16;
                }
            }
        }
        _ => unreachable!("FIPS 203 uses eta = 2 or 3 only"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha3::digest::{ExtendableOutput, Update, XofReader};
    use sha3::Shake128;

    /// Algorithm 8 bit by bit.
    fn reference_cbd(bytes: &[u8], eta: usize) -> Vec<i16> {
        let bit = |i: usize| i16::from((bytes[i / 8] >> (i % 8)) & 1);
        (0..N)
            .map(|i| {
                let x: i16 = (0..eta).map(|j| bit(2 * i * eta + j)).sum();
                let y: i16 = (0..eta).map(|j| bit(2 * i * eta + eta + j)).sum();
                x - y
            })
            .collect()
    }

    #[test]
    fn cbd_matches_algorithm_8() {
        for seed in 0..8u8 {
            let bytes: Vec<u8> = (0..192u32)
                .map(|i| (i * 151 + u32::from(seed) * 29) as u8)
                .collect();
            let mut p = Poly::ZERO;
            sample_poly_cbd::<2>(&bytes[..128], &mut p);
            assert_eq!(p.coeffs.to_vec(), reference_cbd(&bytes[..128], 2));
            sample_poly_cbd::<3>(&bytes, &mut p);
            assert_eq!(p.coeffs.to_vec(), reference_cbd(&bytes, 3));
        }
    }

    #[test]
    fn sample_ntt_matches_algorithm_7() {
        // Algorithm 7 squeezing three bytes at a time from one XOF stream.
        let rho: [u8; 32] = core::array::from_fn(|i| i as u8);
        let mut p = Poly::ZERO;
        sample_ntt::<crate::backend::Portable>(&rho, 1, 2, &mut p);
        let mut reader = Shake128::default().chain(rho).chain([1, 2]).finalize_xof();
        let mut expected = Vec::new();
        while expected.len() < N {
            let mut c = [0u8; 3];
            reader.read(&mut c);
            let d1 = u16::from(c[0]) + 256 * u16::from(c[1] % 16);
            let d2 = u16::from(c[1] / 16) + 16 * u16::from(c[2]);
            for d in [d1, d2] {
                if d < 3329 && expected.len() < N {
                    expected.push(d as i16);
                }
            }
        }
        assert_eq!(p.coeffs.to_vec(), expected);
    }
}
