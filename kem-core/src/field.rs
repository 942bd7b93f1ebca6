//! Arithmetic in Z_q, q = 3329, on signed 16-bit representatives.
//!
//! Coefficients are kept as `i16` in a small signed range and reduced lazily:
//! Montgomery reduction after products, Barrett reduction after sums. All
//! reductions use multiplications and shifts only, never a division or a
//! branch, so they are constant time on secret inputs.

/// The ML-KEM modulus q.
pub(crate) const Q: i16 = 3329;

/// q^-1 mod 2^16, as a signed value.
const Q_INV: i16 = -3327;

/// 2^32 mod q: `fqmul(x, MONT_SQUARED)` is `x·2^16 mod q`.
pub(crate) const MONT_SQUARED: i16 = 1353;

/// Montgomery reduction: for |a| < q·2^15 returns r ≡ a·2^-16 (mod q) with
/// |r| < q.
#[inline(always)]
pub(crate) fn montgomery_reduce(a: i32) -> i16 {
    let t = (a as i16).wrapping_mul(Q_INV);
    ((a - i32::from(t) * i32::from(Q)) >> 16) as i16
}

/// Product in Montgomery form: a·b·2^-16 mod q, with |result| < q.
#[inline(always)]
pub(crate) fn fqmul(a: i16, b: i16) -> i16 {
    // montgomery_reduce(a·b) written with 16-bit high and low halves of
    // products, which vectorises to pmullw/pmulhw: the low 16 bits of a·b and
    // of t·q are equal, so the subtraction is exact in the high halves.
    let t = a.wrapping_mul(b).wrapping_mul(Q_INV);
    let high = ((i32::from(a) * i32::from(b)) >> 16) as i16;
    let correction = ((i32::from(t) * i32::from(Q)) >> 16) as i16;
    high.wrapping_sub(correction)
}

/// Barrett reduction: the representative of a mod q in [-(q-1)/2, (q-1)/2].
#[inline(always)]
pub(crate) fn barrett_reduce(a: i16) -> i16 {
    // V = round(2^26 / q)
    const V: i32 = ((1 << 26) + Q as i32 / 2) / Q as i32;
    // round(a·V / 2^26) via the high half of a·V: floor((⌊a·V / 2^16⌋ +
    // 2^9) / 2^10) equals floor((a·V + 2^25) / 2^26) exactly.
    let high = ((V * i32::from(a)) >> 16) as i16;
    let t = (high + (1 << 9)) >> 10;
    a.wrapping_sub(t.wrapping_mul(Q))
}

/// Maps a representative in (-q, q) to the canonical one in [0, q), without
/// branching: adds q exactly when the input is negative.
#[inline(always)]
pub(crate) fn to_unsigned(a: i16) -> u16 {
    (a + ((a >> 15) & Q)) as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canonical(x: i64) -> i64 {
        x.rem_euclid(i64::from(Q))
    }

    #[test]
    fn constants_are_consistent() {
        assert_eq!((i32::from(Q) * i32::from(Q_INV)) as i16, 1);
        assert_eq!(canonical(i64::from(MONT_SQUARED)), (1i64 << 32) % 3329);
    }

    #[test]
    fn fqmul_equals_montgomery_reduce_of_the_product() {
        for a in (i16::MIN..=i16::MAX).step_by(7) {
            for b in [-3328i16, -1665, -1, 0, 1, 17, 1353, 1664, 3328, 20159] {
                assert_eq!(fqmul(a, b), montgomery_reduce(i32::from(a) * i32::from(b)));
            }
        }
    }

    #[test]
    fn barrett_reduce_is_exact_and_centered_for_all_i16() {
        for a in i16::MIN..=i16::MAX {
            let r = barrett_reduce(a);
            assert!(r.abs() <= (Q - 1) / 2, "a = {a}, r = {r}");
            assert_eq!(canonical(i64::from(r)), canonical(i64::from(a)));
        }
    }

    #[test]
    fn montgomery_reduce_is_exact_and_bounded() {
        // 2^16 · 2^-16 ≡ 1
        let r_inv = (1..3329i64).find(|x| (x << 16) % 3329 == 1).unwrap();
        let bound = i32::from(Q) << 15;
        let mut a = -bound + 1;
        while a < bound {
            let r = montgomery_reduce(a);
            assert!(r.abs() < Q, "a = {a}");
            assert_eq!(
                canonical(i64::from(r)),
                canonical(i64::from(a) * r_inv),
                "a = {a}"
            );
            a += 997;
        }
    }

    #[test]
    fn to_unsigned_maps_to_canonical_range() {
        for a in -(Q - 1)..Q {
            let u = to_unsigned(a);
            assert!(u < Q as u16);
            assert_eq!(i64::from(u), canonical(i64::from(a)));
        }
    }
}
