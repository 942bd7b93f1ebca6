//! The core's BIOs, through the BIO upcalls: what an encoder writes to and
//! a decoder reads from.

use core::ffi::c_int;
use core::marker::PhantomData;
use core::ptr::NonNull;

use zeroize::Zeroizing;

use super::guard::non_null;
use super::sys::OSSL_CORE_BIO;
use super::upcalls::upcalls;
use crate::error::{ProviderError, Reason};

/// A core BIO handed to an encoder or decoder for one call.
pub(crate) struct CoreBio<'a> {
    bio: NonNull<OSSL_CORE_BIO>,
    _call: PhantomData<&'a mut OSSL_CORE_BIO>,
}

impl CoreBio<'_> {
    /// Wraps the core's BIO; NULL is an error.
    ///
    /// # Safety
    /// `bio` is NULL or a core BIO valid for the wrapper's life (the call
    /// it came with).
    pub(super) unsafe fn new(bio: *mut OSSL_CORE_BIO, what: &str) -> Result<Self, ProviderError> {
        non_null(bio, what)?;
        let bio = NonNull::new(bio).ok_or_else(|| ProviderError::new(Reason::NullArgument))?;
        Ok(Self {
            bio,
            _call: PhantomData,
        })
    }

    /// Reads the BIO to its end, refusing more than `limit` bytes. What a
    /// decoder reads may be a private key, so every buffer it passes
    /// through is wiped.
    pub(crate) fn read_all(&mut self, limit: usize) -> Result<Zeroizing<Vec<u8>>, ProviderError> {
        let read = upcalls().and_then(|u| u.bio_read_ex).ok_or_else(|| {
            ProviderError::new(Reason::LibcryptoFailure).with_detail("no BIO_read_ex")
        })?;
        let mut data = Zeroizing::new(Vec::new());
        let mut chunk = Zeroizing::new([0u8; 4096]);
        loop {
            let mut got = 0usize;
            // SAFETY: `chunk` has room for its length; the BIO is live.
            let ok = unsafe {
                read(
                    self.bio.as_ptr(),
                    chunk.as_mut_ptr().cast(),
                    chunk.len(),
                    &mut got,
                )
            };
            if ok != 1 || got == 0 {
                break;
            }
            append_wiped(&mut data, &chunk[..got.min(chunk.len())]);
            if data.len() > limit {
                return Err(ProviderError::new(Reason::BadEncoding).with_detail("input too large"));
            }
        }
        Ok(data)
    }

    /// Writes all of `data` to the BIO.
    pub(crate) fn write_all(&mut self, data: &[u8]) -> Result<(), ProviderError> {
        let write = upcalls().and_then(|u| u.bio_write_ex).ok_or_else(|| {
            ProviderError::new(Reason::LibcryptoFailure).with_detail("no BIO_write_ex")
        })?;
        let mut rest = data;
        while !rest.is_empty() {
            let mut written = 0usize;
            // SAFETY: `rest` is readable for its length; the BIO is live.
            let ok: c_int = unsafe {
                write(
                    self.bio.as_ptr(),
                    rest.as_ptr().cast(),
                    rest.len(),
                    &mut written,
                )
            };
            if ok != 1 || written == 0 {
                return Err(
                    ProviderError::new(Reason::LibcryptoFailure).with_detail("BIO write failed")
                );
            }
            rest = &rest[written.min(rest.len())..];
        }
        Ok(())
    }
}

/// Appends `bytes` to `data`. When `data` is full it moves to a buffer of
/// twice the size first, so that the old one is wiped as it is dropped:
/// `Vec`'s own growth would free it with its bytes still in it.
pub(crate) fn append_wiped(data: &mut Zeroizing<Vec<u8>>, bytes: &[u8]) {
    let needed = data.len() + bytes.len();
    if needed > data.capacity() {
        let mut grown = Zeroizing::new(Vec::with_capacity(needed.max(2 * data.capacity())));
        grown.extend_from_slice(data);
        *data = grown;
    }
    data.extend_from_slice(bytes);
}
