//! The number-theoretic transform (FIPS 203, section 4.3): NTT (Algorithm 9),
//! NTT^-1 (Algorithm 10) and multiplication in the NTT domain (Algorithms 11
//! and 12), in Montgomery arithmetic with lazy reduction.

use crate::field::{barrett_reduce, fqmul, montgomery_reduce, Q};
use crate::poly::{Poly, N};

/// The primitive 256th root of unity mod q used by FIPS 203.
const ZETA: u32 = 17;

/// Reverses the 7 low bits of `i` (BitRev7).
const fn bit_rev7(i: usize) -> usize {
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
const ZETAS: [i16; 128] = {
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
const INV_NTT_SCALE: i16 = 1441;

/// Algorithm 9: NTT, in place. Input coefficients must be below q in absolute
/// value; the output is reduced into [-(q-1)/2, (q-1)/2].
pub(crate) fn ntt(p: &mut Poly) {
    let r = &mut p.coeffs;
    let mut k = 1;
    let mut len = N / 2;
    while len >= 2 {
        for start in (0..N).step_by(2 * len) {
            let zeta = ZETAS[k];
            k += 1;
            let (lo, hi) = r[start..start + 2 * len].split_at_mut(len);
            for (a, b) in lo.iter_mut().zip(hi.iter_mut()) {
                let t = fqmul(zeta, *b);
                *b = *a - t;
                *a += t;
            }
        }
        len /= 2;
    }
    p.reduce();
}

/// Algorithm 10: NTT^-1, in place, times the Montgomery factor 2^16 (which
/// cancels the 2^-16 that `multiply_accumulate` leaves). Output coefficients
/// are below q in absolute value.
pub(crate) fn inv_ntt(p: &mut Poly) {
    let r = &mut p.coeffs;
    let mut k = 127;
    let mut len = 2;
    while len <= N / 2 {
        for start in (0..N).step_by(2 * len) {
            let zeta = ZETAS[k];
            k -= 1;
            let (lo, hi) = r[start..start + 2 * len].split_at_mut(len);
            for (a, b) in lo.iter_mut().zip(hi.iter_mut()) {
                let t = *a;
                *a = barrett_reduce(t + *b);
                *b = fqmul(zeta, *b - t);
            }
        }
        len *= 2;
    }
    for a in r.iter_mut() {
        *a = fqmul(*a, INV_NTT_SCALE);
    }
}

/// Algorithms 11 and 12: acc = Σ a_i ∘ b_i in the NTT domain, times 2^-16,
/// reduced into [-(q-1)/2, (q-1)/2]. Each degree-one product
/// (a0 + a1 X)(b0 + b1 X) mod (X^2 - gamma) is accumulated in 32 bits and
/// Montgomery-reduced once per output coefficient.
pub(crate) fn multiply_accumulate(acc: &mut Poly, a: &[Poly], b: &[Poly]) {
    debug_assert_eq!(a.len(), b.len());
    for i in 0..N / 4 {
        let gamma = ZETAS[64 + i];
        let mut sums = [0i32; 4];
        for (pa, pb) in a.iter().zip(b.iter()) {
            let a = &pa.coeffs[4 * i..4 * i + 4];
            let b = &pb.coeffs[4 * i..4 * i + 4];
            // Pair (0, 1) is reduced modulo X^2 - gamma, pair (2, 3) modulo
            // X^2 + gamma.
            let a1b1 = fqmul(a[1], b[1]);
            let a3b3 = fqmul(a[3], b[3]);
            sums[0] += i32::from(a[0]) * i32::from(b[0]) + i32::from(a1b1) * i32::from(gamma);
            sums[1] += i32::from(a[0]) * i32::from(b[1]) + i32::from(a[1]) * i32::from(b[0]);
            sums[2] += i32::from(a[2]) * i32::from(b[2]) - i32::from(a3b3) * i32::from(gamma);
            sums[3] += i32::from(a[2]) * i32::from(b[3]) + i32::from(a[3]) * i32::from(b[2]);
        }
        for (out, sum) in acc.coeffs[4 * i..4 * i + 4].iter_mut().zip(sums) {
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
        let mut v = [0i64; N];
        for i in 0..N {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let c = ((state >> 33) % 3329) as i16 - 1664;
            p.coeffs[i] = c;
            v[i] = canonical(i64::from(c));
        }
        (v, p)
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
