//! Zeroization of plain-data buffers with volatile block writes: a whole
//! value at once ([`wipe`]), or a byte slice 32 bytes at a time
//! ([`wipe_bytes`]).
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

/// Overwrites `bytes` with zeros, 32 at a time through [`wipe`] (no
/// temporary larger than 32 bytes, unlike a [`wipe`] of a whole array), the
/// rest one volatile byte at a time.
pub(crate) fn wipe_bytes(bytes: &mut [u8]) {
    let mut chunks = bytes.chunks_exact_mut(32);
    for chunk in &mut chunks {
        let chunk: &mut [u8; 32] = chunk.try_into().expect("32-byte chunk");
        wipe(chunk, [0; 32]);
    }
    for byte in chunks.into_remainder() {
        wipe(byte, 0);
    }
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

    #[test]
    fn wipes_every_byte_of_any_length() {
        for len in [0, 1, 31, 32, 33, 768, 1088, 1568, 1601] {
            let mut buffer = vec![0x5au8; len + 1];
            wipe_bytes(&mut buffer[..len]);
            assert!(buffer[..len].iter().all(|&b| b == 0), "length {len}");
            assert_eq!(buffer[len], 0x5a, "length {len}: wrote past the end");
        }
    }
}
