//! The number-theoretic transform (FIPS 203, section 4.3): NTT (Algorithm 9),
//! NTT^-1 (Algorithm 10) and multiplication in the NTT domain (Algorithms 11
//! and 12), in Montgomery arithmetic with lazy reduction.

use core::borrow::Borrow;

use crate::field::{barrett_reduce, fqmul, montgomery_reduce, Q};
use crate::poly::{Poly, N};

/// The primitive 256th root of unity mod q used by FIPS 203.
const ZETA: u32 = 17;

/// Reverses the 7 low bits of `i` (BitRev7).
pub(crate) const fn bit_rev7(i: usize) -> usize {
    let mut r = 0;
    let mut b = 0;
    while b < 7 {
        r |= ((i >> b) & 1) << (6 - b);
        b += 1;
    }
    r
}

/// zeta^BitRev7(i) · 2^16 mod q for i in 0..128, centered in (-q/2, q/2):
/// the twiddle factors in Montgomery form, in the order the layers use them.
pub(crate) const ZETAS: [i16; 128] = {
    let q = Q as u32;
    let mut table = [0i16; 128];
    let mut i = 0;
    while i < 128 {
        let mut power = 1u32;
        let mut e = 0;
        while e < bit_rev7(i) {
            power = power * ZETA % q;
            e += 1;
        }
        let mont = (power << 16) % q;
        table[i] = if mont > q / 2 {
            mont as i16 - Q
        } else {
            mont as i16
        };
        i += 1;
    }
    table
};

/// 2^32 / 128 mod q = mont^2 / 128: scales the inverse NTT's output by 1/128
/// and into Montgomery form in one multiplication.
pub(crate) const INV_NTT_SCALE: i16 = 1441;

/// One layer of Algorithm 9: butterflies of distance LEN, one zeta per block
/// taken in order from `ZETAS[first..]`. LEN is a constant so that the inner
/// loop vectorises.
#[inline(always)]
fn forward_layer<const LEN: usize>(r: &mut [i16; N], first: usize) {
    for (block, zeta) in r.chunks_exact_mut(2 * LEN).zip(&ZETAS[first..]) {
        let (lo, hi) = block.split_at_mut(LEN);
        for (a, b) in lo.iter_mut().zip(hi.iter_mut()) {
            let t = fqmul(*zeta, *b);
            *b = *a - t;
            *a += t;
        }
    }
}

/// Algorithm 9: NTT, in place. Input coefficients must be below q in absolute
/// value (each layer grows the bound by q, to below 8q); the output is
/// reduced into [-(q-1)/2, (q-1)/2].
#[inline(always)]
pub(crate) fn ntt(p: &mut Poly) {
    let r = &mut p.coeffs;
    forward_layer::<128>(r, 1);
    forward_layer::<64>(r, 2);
    forward_layer::<32>(r, 4);
    forward_layer::<16>(r, 8);
    forward_layer::<8>(r, 16);
    forward_layer::<4>(r, 32);
    forward_layer::<2>(r, 64);
    p.reduce();
}

/// One layer of Algorithm 10: Gentleman-Sande butterflies of distance LEN,
/// zetas taken backwards from `ZETAS[last]`; sums are Barrett-reduced,
/// differences Montgomery-multiplied, so every output stays below q.
#[inline(always)]
fn inverse_layer<const LEN: usize>(r: &mut [i16; N], last: usize) {
    for (block, zeta) in r.chunks_exact_mut(2 * LEN).zip(ZETAS[..=last].iter().rev()) {
        let (lo, hi) = block.split_at_mut(LEN);
        for (a, b) in lo.iter_mut().zip(hi.iter_mut()) {
            let t = *a;
            *a = barrett_reduce(t + *b);
            *b = fqmul(*zeta, *b - t);
        }
    }
}

/// Algorithm 10: NTT^-1, in place, times the Montgomery factor 2^16 (which
/// cancels the 2^-16 that `multiply_accumulate` leaves). Output coefficients
/// are below q in absolute value.
#[inline(always)]
pub(crate) fn inv_ntt(p: &mut Poly) {
    let r = &mut p.coeffs;
    inverse_layer::<2>(r, 127);
    inverse_layer::<4>(r, 63);
    inverse_layer::<8>(r, 31);
    inverse_layer::<16>(r, 15);
    inverse_layer::<32>(r, 7);
    inverse_layer::<64>(r, 3);
    inverse_layer::<128>(r, 1);
    for a in r.iter_mut() {
        *a = fqmul(*a, INV_NTT_SCALE);
    }
}

/// GAMMAS[i] = zeta^(2 BitRev7(i) + 1) · 2^16 mod q: the modulus X^2 - gamma
/// of coefficient pair i (FIPS 203 Algorithm 11). Pairs 2i and 2i+1 use
/// ±ZETAS[64 + i].
pub(crate) const GAMMAS: [i16; 128] = {
    let mut t = [0i16; 128];
    let mut i = 0;
    while i < 64 {
        t[2 * i] = ZETAS[64 + i];
        t[2 * i + 1] = -ZETAS[64 + i];
        i += 1;
    }
    t
};

/// Algorithms 11 and 12: acc = Σ a_i ∘ b_i in the NTT domain, times 2^-16,
/// reduced into [-(q-1)/2, (q-1)/2]. Each degree-one product
/// (a0 + a1 X)(b0 + b1 X) mod (X^2 - gamma) is accumulated in 32 bits and
/// Montgomery-reduced once per output coefficient: with |a|, |b| < q and
/// k ≤ 4 the sums stay below 2k·q^2 < q·2^15.
#[inline(always)]
pub(crate) fn multiply_accumulate(acc: &mut Poly, a: &[impl Borrow<Poly>], b: &[Poly]) {
    debug_assert_eq!(a.len(), b.len());
    // 64 coefficients at a time: a small accumulator that still vectorises.
    const CHUNK: usize = 64;
    for (start, out) in (0..N)
        .step_by(CHUNK)
        .zip(acc.coeffs.chunks_exact_mut(CHUNK))
    {
        let mut sums = [0i32; CHUNK];
        let gammas = &GAMMAS[start / 2..(start + CHUNK) / 2];
        for (pa, pb) in a.iter().zip(b.iter()) {
            let pa = &pa.borrow().coeffs[start..start + CHUNK];
            let pb = &pb.coeffs[start..start + CHUNK];
            for (((s, a), b), gamma) in sums
                .chunks_exact_mut(2)
                .zip(pa.chunks_exact(2))
                .zip(pb.chunks_exact(2))
                .zip(gammas)
            {
                let a1b1 = fqmul(a[1], b[1]);
                s[0] += i32::from(a[0]) * i32::from(b[0]) + i32::from(a1b1) * i32::from(*gamma);
                s[1] += i32::from(a[0]) * i32::from(b[1]) + i32::from(a[1]) * i32::from(b[0]);
            }
        }
        for (out, sum) in out.iter_mut().zip(sums) {
            *out = barrett_reduce(montgomery_reduce(sum));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const QI: i64 = Q as i64;

    fn canonical(x: i64) -> i64 {
        x.rem_euclid(QI)
    }

    fn pow(mut b: i64, mut e: usize) -> i64 {
        let mut r = 1;
        while e > 0 {
            if e & 1 == 1 {
                r = r * b % QI;
            }
            b = b * b % QI;
            e >>= 1;
        }
        r
    }

    /// Schoolbook multiplication in Z_q[X]/(X^256 + 1).
    fn schoolbook(a: &[i64; N], b: &[i64; N]) -> [i64; N] {
        let mut r = [0i64; N];
        for i in 0..N {
            for j in 0..N {
                let p = a[i] * b[j];
                if i + j < N {
                    r[i + j] += p;
                } else {
                    r[i + j - N] -= p;
                }
            }
        }
        r.map(canonical)
    }

    fn sample_poly(seed: u64) -> ([i64; N], Poly) {
        let mut state = seed;
        let mut p = Poly::ZERO;
        for c in p.coeffs.iter_mut() {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            *c = ((state >> 33) % 3329) as i16 - 1664;
        }
        (p.coeffs.map(|c| canonical(i64::from(c))), p)
    }

    #[test]
    fn zeta_table_matches_definition() {
        // FIPS 203 Appendix A starts 1, 1729, 2580, 3289, ...
        let r = pow(2, 16);
        for (i, z) in ZETAS.iter().enumerate() {
            assert_eq!(canonical(i64::from(*z)), pow(17, bit_rev7(i)) * r % QI);
        }
        assert_eq!(pow(17, bit_rev7(1)), 1729);
        assert_eq!(
            canonical(i64::from(INV_NTT_SCALE)),
            pow(2, 32) * pow(128, 3327) % QI
        );
    }

    #[test]
    fn ntt_matches_definition() {
        // NTT(f)[2i] + NTT(f)[2i+1] X = f mod (X^2 - zeta^(2 BitRev7(i) + 1)).
        let (v, mut p) = sample_poly(7);
        ntt(&mut p);
        for i in 0..128 {
            let gamma = pow(17, 2 * bit_rev7(i) + 1);
            let (mut e0, mut e1) = (0i64, 0i64);
            // Reduce f modulo X^2 - gamma: X^(2j) -> gamma^j.
            for j in 0..128 {
                let g = pow(gamma, j);
                e0 += v[2 * j] * g % QI;
                e1 += v[2 * j + 1] * g % QI;
            }
            assert_eq!(
                canonical(i64::from(p.coeffs[2 * i])),
                canonical(e0),
                "i = {i}"
            );
            assert_eq!(
                canonical(i64::from(p.coeffs[2 * i + 1])),
                canonical(e1),
                "i = {i}"
            );
            assert!(p.coeffs[2 * i].abs() <= Q / 2);
        }
    }

    #[test]
    fn ntt_round_trip_and_product_match_schoolbook() {
        for seed in 0..4 {
            let (va, mut a) = sample_poly(seed);
            let (vb, mut b) = sample_poly(seed + 100);
            let orig = a;
            ntt(&mut a);
            ntt(&mut b);

            // Round trip: inv_ntt(ntt(a)) = a · 2^16.
            let mut back = a;
            inv_ntt(&mut back);
            for (x, y) in back.coeffs.iter().zip(orig.coeffs.iter()) {
                assert!(x.abs() < Q);
                assert_eq!(
                    canonical(i64::from(*x)),
                    canonical(i64::from(*y) * pow(2, 16))
                );
            }

            // Product: inv_ntt(a ∘ b · 2^-16) · 2^16 = a·b.
            let mut prod = Poly::ZERO;
            multiply_accumulate(&mut prod, &[a], &[b]);
            inv_ntt(&mut prod);
            let expect = schoolbook(&va, &vb);
            for (x, e) in prod.coeffs.iter().zip(expect.iter()) {
                assert_eq!(canonical(i64::from(*x)), *e);
            }
        }
    }
}
