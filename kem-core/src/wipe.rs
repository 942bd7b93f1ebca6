//! Zeroization of whole plain-data buffers with one volatile write.
//!
//! The `zeroize` crate wipes a slice one element at a time (one volatile
//! store per `i16` or byte, which the compiler may not merge): 256 stores
//! for a polynomial. A volatile write of the whole value is lowered to one
//! block copy from a zeroed temporary, which the compiler may not remove
//! either, at a fraction of the cost.

/// Overwrites `value` with `zero` through a volatile write, followed by a
/// compiler fence so that later code cannot be moved before it.
#[allow(unsafe_code)]
#[inline]
pub(crate) fn wipe<T: Copy>(value: &mut T, zero: T) {
    // SAFETY: `value` is an exclusive, aligned reference to a live `T`, so
    // the pointer is valid for a write of a `T`; `T: Copy` has no drop glue,
    // so overwriting the old value without dropping it leaks nothing.
    unsafe { core::ptr::write_volatile(value, zero) };
    core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::SeqCst);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wipes_the_whole_value() {
        let mut buffer = [[0xa5u8; 192]; 4];
        wipe(&mut buffer, [[0; 192]; 4]);
        assert!(buffer.iter().flatten().all(|&b| b == 0));
        let mut words = [u64::MAX; 25];
        wipe(&mut words, [0; 25]);
        assert_eq!(words, [0; 25]);
    }
}
