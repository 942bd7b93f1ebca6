//! `OSSL_PARAM` arrays: read the caller's, fill the caller's, build our own.
//!
//! Every function here checks the parameter's declared type and size before
//! touching its data, the way OpenSSL's own `OSSL_PARAM_get_*`/`set_*` do,
//! so a parameter of the wrong type or size is an error, never a bad read.

use core::ffi::{c_char, c_int, c_void, CStr};
use core::marker::PhantomData;
use core::ptr;

use super::sys::{
    OSSL_CALLBACK, OSSL_PARAM, OSSL_PARAM_INTEGER, OSSL_PARAM_OCTET_PTR, OSSL_PARAM_OCTET_STRING,
    OSSL_PARAM_UNSIGNED_INTEGER, OSSL_PARAM_UTF8_PTR, OSSL_PARAM_UTF8_STRING,
};
use crate::error::{ProviderError, Reason};

/// `OSSL_PARAM_UNMODIFIED`: the `return_size` of a parameter not yet set.
const UNMODIFIED: usize = usize::MAX;

fn wrong_type(key: &CStr, expected: &str) -> ProviderError {
    ProviderError::new(Reason::InvalidParameter).with_detail(format!(
        "parameter '{}' must be {expected}",
        key.to_string_lossy()
    ))
}

/// A read-only view of a caller's `const OSSL_PARAM[]` (possibly NULL).
#[derive(Clone, Copy)]
pub(crate) struct Params<'a> {
    ptr: *const OSSL_PARAM,
    _array: PhantomData<&'a [OSSL_PARAM]>,
}

impl<'a> Params<'a> {
    /// Wraps a caller's array.
    ///
    /// # Safety
    /// `ptr` is NULL or points to an array terminated by an entry with a NULL
    /// key, valid (and not written by anyone else) for `'a`.
    pub(crate) unsafe fn from_ptr(ptr: *const OSSL_PARAM) -> Self {
        Self {
            ptr,
            _array: PhantomData,
        }
    }

    /// The entries, in order.
    pub(crate) fn iter(self) -> impl Iterator<Item = Param<'a>> {
        let mut next = self.ptr;
        core::iter::from_fn(move || {
            if next.is_null() {
                return None;
            }
            // SAFETY: `from_ptr`'s contract: entries up to the terminator are
            // valid for 'a; `next` never moves past the terminator.
            let entry: &'a OSSL_PARAM = unsafe { &*next };
            if entry.key.is_null() {
                return None;
            }
            // SAFETY: as above; the terminator is still ahead.
            next = unsafe { next.add(1) };
            Some(Param(entry))
        })
    }

    /// The first entry named `key`.
    pub(crate) fn find(self, key: &CStr) -> Option<Param<'a>> {
        self.iter().find(|p| p.key() == key)
    }
}

/// One entry of a caller's parameter array.
#[derive(Clone, Copy)]
pub(crate) struct Param<'a>(&'a OSSL_PARAM);

impl<'a> Param<'a> {
    /// The entry's name.
    pub(crate) fn key(&self) -> &'a CStr {
        // SAFETY: the array's contract gives every entry before the
        // terminator a NUL-terminated key.
        unsafe { CStr::from_ptr(self.0.key) }
    }

    /// The bytes of an octet-string parameter.
    pub(crate) fn octets(&self) -> Result<&'a [u8], ProviderError> {
        let p = self.0;
        let (data, len) = match p.data_type {
            OSSL_PARAM_OCTET_STRING => (p.data.cast_const().cast::<u8>(), p.data_size),
            OSSL_PARAM_OCTET_PTR if !p.data.is_null() => {
                // As OpenSSL's `OSSL_PARAM_get_octet_ptr`: `data` points at
                // the pointer to the bytes and `data_size` is their length
                // (`return_size` is `OSSL_PARAM_UNMODIFIED` in a caller's
                // array, so it is not a length).
                // SAFETY: an OCTET_PTR parameter's non-NULL data is the
                // address of a `const void *`.
                let inner = unsafe { p.data.cast::<*const u8>().read_unaligned() };
                (inner, p.data_size)
            }
            _ => return Err(wrong_type(self.key(), "an octet string")),
        };
        if len == 0 {
            return Ok(&[]);
        }
        // No object can be larger than isize::MAX bytes: such a length is
        // a caller's error, never a buffer.
        if data.is_null() || len > isize::MAX as usize {
            return Err(wrong_type(self.key(), "a non-NULL octet string"));
        }
        // SAFETY: the caller declares `len` readable bytes at `data`, alive
        // as long as the array ('a); `len` fits in isize.
        Ok(unsafe { core::slice::from_raw_parts(data, len) })
    }

    /// The bytes of an octet-string parameter of exactly `N` bytes.
    pub(crate) fn octet_array<const N: usize>(&self) -> Result<[u8; N], ProviderError> {
        let bytes = self.octets()?;
        bytes.try_into().map_err(|_| {
            ProviderError::new(Reason::InvalidLength).with_detail(format!(
                "{} must be {N} bytes, got {}",
                self.key().to_string_lossy(),
                bytes.len()
            ))
        })
    }

    /// The text of a UTF-8 string parameter, up to its first NUL; a NULL
    /// string (OpenSSL's "not set", e.g. no cipher properties) is `None`.
    pub(crate) fn utf8_or_null(&self) -> Result<Option<&'a str>, ProviderError> {
        let p = self.0;
        let (data, len) = match p.data_type {
            OSSL_PARAM_UTF8_STRING => (p.data.cast_const().cast::<u8>(), p.data_size),
            OSSL_PARAM_UTF8_PTR if !p.data.is_null() => {
                // As OpenSSL's `OSSL_PARAM_get_utf8_ptr`: only the pointer
                // is read; `data_size` is the string's length, often 0.
                // SAFETY: a UTF8_PTR parameter's non-NULL data is the
                // address of a `const char *`.
                let inner = unsafe { p.data.cast::<*const c_char>().read_unaligned() };
                if inner.is_null() {
                    return Ok(None);
                }
                // SAFETY: the pointed-to string is NUL-terminated (UTF8_PTR).
                let text = unsafe { CStr::from_ptr(inner) };
                return text
                    .to_str()
                    .map(Some)
                    .map_err(|_| wrong_type(self.key(), "UTF-8 text"));
            }
            _ => return Err(wrong_type(self.key(), "a UTF-8 string")),
        };
        if data.is_null() {
            return Ok(None);
        }
        if len > isize::MAX as usize {
            return Err(wrong_type(self.key(), "a UTF-8 string"));
        }
        // SAFETY: the caller declares `len` readable bytes at `data`; `len`
        // fits in isize.
        let bytes = unsafe { core::slice::from_raw_parts(data, len) };
        let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
        core::str::from_utf8(&bytes[..end])
            .map(Some)
            .map_err(|_| wrong_type(self.key(), "UTF-8 text"))
    }
}

/// A caller's `OSSL_PARAM[]` to fill in (get_params).
pub(crate) struct ParamsMut<'a> {
    ptr: *mut OSSL_PARAM,
    _array: PhantomData<&'a mut [OSSL_PARAM]>,
}

impl<'a> ParamsMut<'a> {
    /// Wraps a caller's array.
    ///
    /// # Safety
    /// `ptr` is NULL or points to a writable array terminated by an entry
    /// with a NULL key, whose `data` buffers hold `data_size` writable bytes
    /// each, valid and unaliased for `'a`.
    pub(crate) unsafe fn from_ptr(ptr: *mut OSSL_PARAM) -> Self {
        Self {
            ptr,
            _array: PhantomData,
        }
    }

    /// Every entry named `key` (OpenSSL fills the first; we fill all, which
    /// is the same for well-formed arrays).
    pub(crate) fn find(&mut self, key: &CStr) -> Option<ParamMut<'_>> {
        if self.ptr.is_null() {
            return None;
        }
        let mut at = self.ptr;
        loop {
            // SAFETY: `from_ptr`'s contract; `at` stays within the array.
            let entry = unsafe { &mut *at };
            if entry.key.is_null() {
                return None;
            }
            // SAFETY: entries before the terminator have NUL-terminated keys.
            if unsafe { CStr::from_ptr(entry.key) } == key {
                return Some(ParamMut(entry));
            }
            // SAFETY: the terminator has not been reached yet.
            at = unsafe { at.add(1) };
        }
    }
}

/// One entry of a caller's array, to be set.
pub(crate) struct ParamMut<'a>(&'a mut OSSL_PARAM);

impl ParamMut<'_> {
    fn key(&self) -> &CStr {
        // SAFETY: see `ParamsMut::find`.
        unsafe { CStr::from_ptr(self.0.key) }
    }

    /// Sets an integer parameter of any width OpenSSL uses (4 or 8 bytes,
    /// signed or unsigned), failing when `value` does not fit.
    pub(crate) fn set_int(&mut self, value: i64) -> Result<(), ProviderError> {
        let p = &mut *self.0;
        let size = p.data_size;
        let fits = match (p.data_type, size) {
            (OSSL_PARAM_INTEGER, 4) => i32::try_from(value).is_ok(),
            (OSSL_PARAM_INTEGER, 8) => true,
            (OSSL_PARAM_UNSIGNED_INTEGER, 4) => u32::try_from(value).is_ok(),
            (OSSL_PARAM_UNSIGNED_INTEGER, 8) => value >= 0,
            _ => return Err(wrong_type(self.key(), "a 32- or 64-bit integer")),
        };
        if !fits {
            return Err(wrong_type(self.key(), "wide enough for its value"));
        }
        p.return_size = size;
        if p.data.is_null() {
            return Ok(());
        }
        // SAFETY: (each arm) the caller declared `size` writable bytes of
        // this type at `data`; the value fits (checked above).
        unsafe {
            match (p.data_type, size) {
                (OSSL_PARAM_INTEGER, 4) => p.data.cast::<i32>().write_unaligned(value as i32),
                (OSSL_PARAM_INTEGER, _) => p.data.cast::<i64>().write_unaligned(value),
                (_, 4) => p.data.cast::<u32>().write_unaligned(value as u32),
                _ => p.data.cast::<u64>().write_unaligned(value as u64),
            }
        }
        Ok(())
    }

    /// Sets an octet-string parameter. A NULL `data` is a size query.
    pub(crate) fn set_octets(&mut self, value: &[u8]) -> Result<(), ProviderError> {
        let p = &mut *self.0;
        if p.data_type != OSSL_PARAM_OCTET_STRING {
            return Err(wrong_type(self.key(), "an octet string"));
        }
        p.return_size = value.len();
        if p.data.is_null() {
            return Ok(());
        }
        if p.data_size < value.len() {
            return Err(
                ProviderError::new(Reason::OutputBufferTooSmall).with_detail(format!(
                    "parameter '{}' needs {} bytes",
                    self.key().to_string_lossy(),
                    value.len()
                )),
            );
        }
        // SAFETY: `data` holds `data_size >= value.len()` writable bytes
        // that cannot overlap our own `value`.
        unsafe { ptr::copy_nonoverlapping(value.as_ptr(), p.data.cast::<u8>(), value.len()) };
        Ok(())
    }

    /// Sets a UTF-8 string parameter (a string buffer, or a pointer to our
    /// `'static` text). A NULL buffer is a size query.
    pub(crate) fn set_utf8(&mut self, value: &'static CStr) -> Result<(), ProviderError> {
        let p = &mut *self.0;
        let text = value.to_bytes();
        match p.data_type {
            OSSL_PARAM_UTF8_PTR => {
                // As OpenSSL's `OSSL_PARAM_set_utf8_ptr`, whose callers
                // often declare a size of 0: the size is not checked, and
                // a NULL `data` is a size query.
                p.return_size = text.len();
                if p.data.is_null() {
                    return Ok(());
                }
                // SAFETY: a UTF8_PTR parameter's `data` points at a
                // `const char *` to set; the
                // text is 'static so the pointer stays valid.
                unsafe {
                    p.data
                        .cast::<*const c_char>()
                        .write_unaligned(value.as_ptr())
                };
                Ok(())
            }
            OSSL_PARAM_UTF8_STRING => {
                p.return_size = text.len();
                if p.data.is_null() {
                    return Ok(());
                }
                if p.data_size < text.len() {
                    return Err(wrong_type(self.key(), "long enough for its value"));
                }
                // SAFETY: room for `text.len()` bytes (checked), plus the
                // NUL only when there is room for it, as OpenSSL does.
                unsafe {
                    ptr::copy_nonoverlapping(text.as_ptr(), p.data.cast::<u8>(), text.len());
                    if p.data_size > text.len() {
                        p.data.cast::<u8>().add(text.len()).write(0);
                    }
                }
                Ok(())
            }
            _ => Err(wrong_type(self.key(), "a UTF-8 string")),
        }
    }
}

/// A parameter array we build and pass to a callback, borrowing its data.
pub(crate) struct ParamList<'a> {
    params: Vec<OSSL_PARAM>,
    _data: PhantomData<&'a [u8]>,
}

impl<'a> ParamList<'a> {
    /// An empty list.
    pub(crate) fn new() -> Self {
        Self {
            params: Vec::with_capacity(8),
            _data: PhantomData,
        }
    }

    fn push(&mut self, key: &'static CStr, data_type: u32, data: *const u8, size: usize) {
        self.params.push(OSSL_PARAM {
            key: key.as_ptr(),
            data_type,
            data: data.cast_mut().cast(),
            data_size: size,
            return_size: UNMODIFIED,
        });
    }

    /// Adds an octet string.
    pub(crate) fn octets(mut self, key: &'static CStr, data: &'a [u8]) -> Self {
        self.push(key, OSSL_PARAM_OCTET_STRING, data.as_ptr(), data.len());
        self
    }

    /// Adds an object reference (`OSSL_OBJECT_PARAM_REFERENCE`): the bytes
    /// of the pointer variable `slot`, which the receiver may overwrite
    /// (a keymgmt's `load` clears it when it takes the object).
    pub(crate) fn reference(mut self, key: &'static CStr, slot: &'a mut *mut c_void) -> Self {
        let data = ptr::from_mut(slot).cast::<u8>();
        self.push(key, OSSL_PARAM_OCTET_STRING, data, size_of::<*mut c_void>());
        self
    }

    /// Adds a UTF-8 string.
    pub(crate) fn utf8(mut self, key: &'static CStr, text: &'a CStr) -> Self {
        let bytes = text.to_bytes();
        self.push(key, OSSL_PARAM_UTF8_STRING, bytes.as_ptr(), bytes.len());
        self
    }

    /// Adds an unsigned integer of any size, given as native-endian bytes
    /// (how OpenSSL passes BIGNUMs).
    pub(crate) fn unsigned_bytes(mut self, key: &'static CStr, native_endian: &'a [u8]) -> Self {
        self.push(
            key,
            OSSL_PARAM_UNSIGNED_INTEGER,
            native_endian.as_ptr(),
            native_endian.len(),
        );
        self
    }

    /// Adds a C `int`.
    pub(crate) fn int(mut self, key: &'static CStr, value: &'a c_int) -> Self {
        self.push(
            key,
            OSSL_PARAM_INTEGER,
            ptr::from_ref(value).cast(),
            size_of::<c_int>(),
        );
        self
    }

    /// Adds an unsigned int.
    pub(crate) fn uint(mut self, key: &'static CStr, value: &'a core::ffi::c_uint) -> Self {
        self.push(
            key,
            OSSL_PARAM_UNSIGNED_INTEGER,
            ptr::from_ref(value).cast(),
            size_of::<core::ffi::c_uint>(),
        );
        self
    }

    /// The terminated array, valid while `self` lives and is not changed.
    pub(crate) fn as_ptr(&mut self) -> *const OSSL_PARAM {
        if self.params.last().is_none_or(|last| !last.key.is_null()) {
            self.params.push(END);
        }
        self.params.as_ptr()
    }
}

/// A callback the core passes with its argument, to be called with a
/// parameter array (`OSSL_CALLBACK`: export's and a decoder's data
/// callback).
#[derive(Clone, Copy)]
pub(crate) struct ParamCallback<'a> {
    function: unsafe extern "C" fn(*const OSSL_PARAM, *mut c_void) -> c_int,
    arg: *mut c_void,
    _call: PhantomData<&'a ()>,
}

impl ParamCallback<'_> {
    /// Wraps the core's callback; a NULL callback is an error.
    ///
    /// # Safety
    /// `callback` may be called with `arg` and any terminated array while
    /// the wrapper lives (the core's contract for the call it came with).
    pub(crate) unsafe fn new(
        callback: OSSL_CALLBACK,
        arg: *mut c_void,
    ) -> Result<Self, ProviderError> {
        let function = callback.ok_or_else(|| ProviderError::new(Reason::NullArgument))?;
        Ok(Self {
            function,
            arg,
            _call: PhantomData,
        })
    }

    /// Calls the callback with `params`; its result.
    pub(crate) fn call(&self, params: &mut ParamList<'_>) -> c_int {
        // SAFETY: `new`'s contract; the array and what it points at outlive
        // the call.
        unsafe { (self.function)(params.as_ptr(), self.arg) }
    }
}

/// The end-of-array marker.
pub(crate) const END: OSSL_PARAM = OSSL_PARAM {
    key: ptr::null(),
    data_type: 0,
    data: ptr::null_mut(),
    data_size: 0,
    return_size: 0,
};

/// A descriptor entry for gettable/settable tables.
pub(crate) const fn describe(key: &'static CStr, data_type: u32) -> OSSL_PARAM {
    OSSL_PARAM {
        key: key.as_ptr(),
        data_type,
        data: ptr::null_mut(),
        data_size: 0,
        return_size: UNMODIFIED,
    }
}

/// Descriptor of an octet-string parameter.
pub(crate) const fn describe_octets(key: &'static CStr) -> OSSL_PARAM {
    describe(key, OSSL_PARAM_OCTET_STRING)
}

/// Descriptor of an integer parameter.
pub(crate) const fn describe_int(key: &'static CStr) -> OSSL_PARAM {
    describe(key, OSSL_PARAM_INTEGER)
}

/// Descriptor of a UTF-8 string parameter.
pub(crate) const fn describe_utf8(key: &'static CStr) -> OSSL_PARAM {
    describe(key, OSSL_PARAM_UTF8_STRING)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An entry as OpenSSL's `OSSL_PARAM_construct_*` builds it.
    fn construct(
        key: &'static CStr,
        data_type: u32,
        data: *mut c_void,
        data_size: usize,
    ) -> OSSL_PARAM {
        OSSL_PARAM {
            key: key.as_ptr(),
            data_type,
            data,
            data_size,
            return_size: UNMODIFIED,
        }
    }

    fn read_octets(param: OSSL_PARAM) -> Result<Vec<u8>, ProviderError> {
        let array = [param, END];
        // SAFETY: a terminated array whose one entry's buffers outlive it.
        let params = unsafe { Params::from_ptr(array.as_ptr()) };
        let param = params.iter().next().expect("one entry");
        param.octets().map(<[u8]>::to_vec)
    }

    fn read_utf8(param: OSSL_PARAM) -> Result<Option<String>, ProviderError> {
        let array = [param, END];
        // SAFETY: as in `read_octets`.
        let params = unsafe { Params::from_ptr(array.as_ptr()) };
        let param = params.iter().next().expect("one entry");
        param.utf8_or_null().map(|s| s.map(str::to_owned))
    }

    /// Regression, found by the `ossl_params` fuzz target (input
    /// `d3 ff 00 60 00 2a 00 08`: an import of ML-KEM-512 whose "seed" is
    /// `OSSL_PARAM_construct_octet_ptr("seed", &p, 8)` pointing at 8 zero
    /// bytes): the length was taken from `return_size`, which such an
    /// entry leaves at `OSSL_PARAM_UNMODIFIED` (`usize::MAX`), making a
    /// slice of `usize::MAX` bytes. OpenSSL's length is `data_size`.
    #[test]
    fn octet_ptr_length_is_data_size() {
        let bytes = [0u8; 8];
        let mut at = bytes.as_ptr();
        let param = construct(
            c"seed",
            OSSL_PARAM_OCTET_PTR,
            ptr::from_mut(&mut at).cast(),
            bytes.len(),
        );
        assert_eq!(read_octets(param).unwrap(), bytes);

        let seed: Vec<u8> = (0..64).collect();
        let mut at = seed.as_ptr();
        let param = construct(
            c"seed",
            OSSL_PARAM_OCTET_PTR,
            ptr::from_mut(&mut at).cast(),
            seed.len(),
        );
        assert_eq!(read_octets(param).unwrap(), seed);
    }

    #[test]
    fn octet_ptr_null_cases() {
        let mut at: *const u8 = ptr::null();
        let empty = construct(
            c"pub",
            OSSL_PARAM_OCTET_PTR,
            ptr::from_mut(&mut at).cast(),
            0,
        );
        assert_eq!(read_octets(empty).unwrap(), Vec::<u8>::new());
        let dangling = construct(
            c"pub",
            OSSL_PARAM_OCTET_PTR,
            ptr::from_mut(&mut at).cast(),
            5,
        );
        assert!(read_octets(dangling).is_err());
        let no_slot = construct(c"pub", OSSL_PARAM_OCTET_PTR, ptr::null_mut(), 8);
        assert!(read_octets(no_slot).is_err());
    }

    #[test]
    fn octet_string_and_wrong_types() {
        let mut bytes = *b"abc";
        let string = construct(
            c"pub",
            OSSL_PARAM_OCTET_STRING,
            bytes.as_mut_ptr().cast(),
            bytes.len(),
        );
        assert_eq!(read_octets(string).unwrap(), b"abc");
        let mut value: c_int = 7;
        let integer = construct(
            c"pub",
            OSSL_PARAM_INTEGER,
            ptr::from_mut(&mut value).cast(),
            size_of::<c_int>(),
        );
        let error = read_octets(integer).unwrap_err();
        assert_eq!(error.reason, Reason::InvalidParameter);
    }

    /// `OSSL_PARAM_construct_utf8_ptr` callers often pass a size of 0 (or
    /// the string's length): only the pointer counts, as in OpenSSL.
    #[test]
    fn utf8_ptr_ignores_data_size() {
        let text = c"provider=mlkem";
        for size in [0, text.to_bytes().len(), 8] {
            let mut at = text.as_ptr();
            let param = construct(
                c"properties",
                OSSL_PARAM_UTF8_PTR,
                ptr::from_mut(&mut at).cast(),
                size,
            );
            assert_eq!(
                read_utf8(param).unwrap().as_deref(),
                Some("provider=mlkem"),
                "data_size {size}"
            );
        }
        let mut null: *const c_char = ptr::null();
        let unset = construct(
            c"properties",
            OSSL_PARAM_UTF8_PTR,
            ptr::from_mut(&mut null).cast(),
            0,
        );
        assert_eq!(read_utf8(unset).unwrap(), None);
    }

    /// `set_utf8` as OpenSSL's setters: a UTF8_PTR entry gets our pointer,
    /// and a NULL `data`, of either kind, is a size query: the length goes
    /// to `return_size` and the call succeeds.
    #[test]
    fn set_utf8_fills_pointers_and_answers_size_queries() {
        let value = c"ML-KEM-768";
        let mut at: *const c_char = ptr::null();
        let slot = ptr::from_mut(&mut at).cast();
        let mut array = [
            construct(c"pointer", OSSL_PARAM_UTF8_PTR, slot, 0),
            construct(c"pointer-size", OSSL_PARAM_UTF8_PTR, ptr::null_mut(), 0),
            construct(c"string-size", OSSL_PARAM_UTF8_STRING, ptr::null_mut(), 0),
            END,
        ];
        // SAFETY: a terminated array whose one non-NULL buffer, `at`,
        // outlives it.
        let mut params = unsafe { ParamsMut::from_ptr(array.as_mut_ptr()) };
        for key in [c"pointer", c"pointer-size", c"string-size"] {
            let mut param = params.find(key).expect("listed");
            param
                .set_utf8(value)
                .unwrap_or_else(|e| panic!("{key:?}: {e:?}"));
        }
        assert_eq!(at, value.as_ptr());
        for entry in &array[..3] {
            assert_eq!(entry.return_size, value.to_bytes().len());
        }
    }
}
