//! Secrets are wiped when the provider frees key objects and the temporary
//! copies it makes of them.
//!
//! Reading memory after it is freed is undefined behaviour, so the test
//! looks at each heap block just *before* it is freed: this test binary's
//! global allocator ([`Inspecting`], a wrapper around `System`) inspects
//! every block the test thread hands back while a [`watch`] is running:
//!
//! - does the block still contain one of the secrets the watch names (the
//!   seed's halves d and z, the start of the encoded ŝ)?
//! - if it has ŝ's layout (an array of k of kem-core's `Poly`), is
//!   it all zero?
//!
//! The inspection is sound: it runs before `System.dealloc`, on a block
//! that is still allocated, and reads it only through libc's `memmem` and
//! `memcmp` (C code, where reading any byte as `unsigned char` is defined),
//! never by making Rust values of bytes that may be uninitialised (padding,
//! spare capacity). It allocates nothing, takes no lock, and only looks at
//! blocks freed by the thread that armed the watch, so the crate's other
//! unit tests, running on other threads, are not inspected.
//!
//! Positive controls show it catches what it must: a plain `Vec` or `Box`
//! copy of the seed, and a non-zero block of ŝ's layout, are reported.
//! `realloc` keeps `GlobalAlloc`'s default (allocate, copy, free), so a
//! secret buffer that moves when it grows is inspected too.
//!
//! What is checked is the provider's own heap: key objects (`free`, the
//! function of the keymgmt dispatch table, after generation, import and
//! `dup`), and the copies `export` and `get_params` make. kem-core's
//! `DecapsulationKey` is the owner of ŝ, z and the seed inside a key; its
//! `Drop` zeroises them (`zeroize`), and the provider holds it inside
//! `Box<dyn KeyData>` without copying them elsewhere. The one-shot `seed`
//! of a generation context and `ikme` of a KEM context are
//! `Zeroizing<[u8; N]>` fields; those contexts need a live provider
//! context (a libcrypto child library context) and are not built here.

use core::ffi::{c_int, c_void};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::RefCell;
use std::hint::black_box;

use kem_core::{DecapsulationKey, MlKem768, ParameterSet, Poly, SEED_LEN};

use super::{dup, export, free, get_params};
use crate::algorithms::{Algorithm, ML_KEM};
use crate::context::ProvCtx;
use crate::ffi::names;
use crate::ffi::object::into_raw;
use crate::ffi::params::END;
use crate::ffi::sys::{OSSL_PARAM, OSSL_PARAM_OCTET_STRING};
use crate::ffi::Selection;
use crate::key::Key;
use crate::keymgmt::KeyManagement;

/// ML-KEM-768's key management, whose dispatch-table functions are tested.
type Mgmt = KeyManagement<Algorithm, 1>;
const SELECT_KEYPAIR: c_int = Selection::KEYPAIR.0;

// ---------------------------------------------------------------- the allocator

/// `System`, inspecting the blocks the watching thread frees.
struct Inspecting;

#[global_allocator]
static ALLOCATOR: Inspecting = Inspecting;

/// How many secrets one watch can look for.
const MAX_NEEDLES: usize = 4;
/// Length of each secret looked for (a 32-byte window of a secret: a chance
/// match in 2^256 is no concern).
const NEEDLE_LEN: usize = 32;

/// What a watch looks for, and what it found.
#[derive(Clone, Copy, Debug)]
struct Watch {
    armed: bool,
    needles: [[u8; NEEDLE_LEN]; MAX_NEEDLES],
    needle_count: usize,
    /// The layout of blocks that must be all zero when freed.
    wiped_layout: Option<Layout>,
    report: Report,
}

/// What the watching thread freed while the watch was armed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Report {
    /// Blocks freed.
    blocks: usize,
    /// For each needle, the blocks freed with it still inside.
    hits: [usize; MAX_NEEDLES],
    /// Blocks of the wiped layout freed all zero.
    wiped: usize,
    /// Blocks of the wiped layout freed with a non-zero byte.
    not_wiped: usize,
}

impl Report {
    /// No needle survived (else panics with `leak`), and exactly `wiped`
    /// blocks of the watched layout were freed, all zero (else `unwiped`).
    fn assert_clean(&self, leak: &str, wiped: usize, unwiped: &str) {
        assert_eq!(self.hits, [0; MAX_NEEDLES], "{leak}: {self:?}");
        assert_eq!(
            (self.wiped, self.not_wiped),
            (wiped, 0),
            "{unwiped}: {self:?}"
        );
    }
}

impl Watch {
    const IDLE: Watch = Watch {
        armed: false,
        needles: [[0; NEEDLE_LEN]; MAX_NEEDLES],
        needle_count: 0,
        wiped_layout: None,
        report: Report {
            blocks: 0,
            hits: [0; MAX_NEEDLES],
            wiped: 0,
            not_wiped: 0,
        },
    };

    /// Records what the block at `ptr` holds.
    ///
    /// # Safety
    /// `ptr` is a live allocation of `layout` (about to be freed).
    unsafe fn inspect(&mut self, ptr: *const u8, layout: Layout) {
        self.report.blocks += 1;
        for (needle, hits) in self.needles[..self.needle_count]
            .iter()
            .zip(&mut self.report.hits)
        {
            // SAFETY: the block's `size` bytes are readable (the caller's
            // contract); C reads them as unsigned char; the needle is ours.
            let found = unsafe {
                libc::memmem(
                    ptr.cast::<c_void>(),
                    layout.size(),
                    needle.as_ptr().cast::<c_void>(),
                    NEEDLE_LEN,
                )
            };
            if !found.is_null() {
                *hits += 1;
            }
        }
        if self.wiped_layout == Some(layout) {
            // SAFETY: as above.
            if unsafe { all_zero(ptr, layout.size()) } {
                self.report.wiped += 1;
            } else {
                self.report.not_wiped += 1;
            }
        }
    }
}

/// Whether `len` bytes at `ptr` are all zero, compared by libc.
///
/// # Safety
/// `len` bytes at `ptr` are readable.
unsafe fn all_zero(ptr: *const u8, len: usize) -> bool {
    static ZEROS: [u8; 1024] = [0; 1024];
    let mut offset = 0;
    while offset < len {
        let n = (len - offset).min(ZEROS.len());
        // SAFETY: `offset + n <= len` bytes at `ptr` are readable (the
        // caller's contract); `ZEROS` has at least `n`.
        let differs = unsafe {
            libc::memcmp(
                ptr.add(offset).cast::<c_void>(),
                ZEROS.as_ptr().cast::<c_void>(),
                n,
            )
        };
        if differs != 0 {
            return false;
        }
        offset += n;
    }
    true
}

thread_local! {
    /// This thread's watch (const-initialised, no destructor: usable from
    /// inside the allocator at any time).
    static WATCH: RefCell<Watch> = const { RefCell::new(Watch::IDLE) };
}

// SAFETY: every method forwards to `System` with the same arguments; the
// inspection in `dealloc` only reads the block before it is freed.
unsafe impl GlobalAlloc for Inspecting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // A thread-local that is gone, or already borrowed (never while
        // armed: arming and reading allocate nothing), means "not watched".
        let _ = WATCH.try_with(|watch| {
            if let Ok(mut watch) = watch.try_borrow_mut() {
                if watch.armed {
                    // SAFETY: `ptr` is a live block of `layout` (dealloc's
                    // contract), freed only below.
                    unsafe { watch.inspect(ptr, layout) };
                }
            }
        });
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// Runs `body` with this thread's frees inspected for `needles` and for
/// non-zero blocks of `wiped_layout`; returns what was found.
fn watch(
    needles: &[[u8; NEEDLE_LEN]],
    wiped_layout: Option<Layout>,
    body: impl FnOnce(),
) -> Report {
    assert!(needles.len() <= MAX_NEEDLES);
    let mut armed = Watch {
        armed: true,
        needle_count: needles.len(),
        wiped_layout,
        ..Watch::IDLE
    };
    armed.needles[..needles.len()].copy_from_slice(needles);
    WATCH.with(|w| *w.borrow_mut() = armed);
    body();
    WATCH.with(|w| {
        let mut w = w.borrow_mut();
        w.armed = false;
        w.report
    })
}

// ---------------------------------------------------------------- fixtures

const ML_KEM_768: &Algorithm = &ML_KEM[1];

/// A fixed seed d ‖ z.
fn seed() -> [u8; SEED_LEN] {
    core::array::from_fn(|i| (i as u8).wrapping_mul(37) ^ 0xa5)
}

/// ŝ's heap layout in an ML-KEM-768 key: k of kem-core's `Poly`.
fn s_hat_layout() -> Layout {
    Layout::array::<Poly>(MlKem768::K).expect("a valid layout")
}

/// The secrets of the key made from [`seed`]: d, z, and the first 32
/// bytes of the encoded ŝ (dk_PKE), as kem-core computes them.
fn secrets() -> [[u8; NEEDLE_LEN]; 3] {
    let seed = seed();
    let reference = DecapsulationKey::<MlKem768>::from_seed(&seed).expect("kem-core key");
    let dk = reference.to_bytes();
    let part =
        |bytes: &[u8]| -> [u8; NEEDLE_LEN] { bytes[..NEEDLE_LEN].try_into().expect("32 bytes") };
    [part(&seed[..32]), part(&seed[32..]), part(dk.as_ref())]
}

/// The expanded decapsulation key of the key made from [`seed`].
fn expanded_dk() -> Vec<u8> {
    let reference = DecapsulationKey::<MlKem768>::from_seed(&seed()).expect("kem-core key");
    reference.to_bytes().as_ref().to_vec()
}

/// A key object as keymgmt hands it to OpenSSL, from [`seed`].
fn generated_key() -> *mut c_void {
    let data = (ML_KEM_768.from_seed)(&seed()).expect("key from seed");
    into_raw(Key {
        kind: ML_KEM_768,
        prov: ProvCtx::for_tests(),
        parts: Some(data),
    })
}

// ---------------------------------------------------------------- tests

#[test]
fn inspection_catches_secrets_left_in_freed_blocks() {
    let secrets = secrets();
    let layout = s_hat_layout();
    let report = watch(&secrets, Some(layout), || {
        // A plain copy of the seed, as a non-zeroising key would hold it.
        drop(black_box(seed().to_vec()));
        drop(black_box(Box::new(seed())));
        // A block of ŝ's layout freed with data in it, and one freed zero.
        // SAFETY: a non-zero-sized layout; the block is written within its
        // size and freed once, with the same layout.
        unsafe {
            let block = std::alloc::alloc(layout);
            assert!(!block.is_null());
            block.write_bytes(0x11, layout.size());
            std::alloc::dealloc(black_box(block), layout);
            let block = std::alloc::alloc_zeroed(layout);
            assert!(!block.is_null());
            std::alloc::dealloc(black_box(block), layout);
        }
    });
    assert_eq!(
        report.hits,
        [2, 2, 0, 0],
        "d and z in both copies: {report:?}"
    );
    assert_eq!((report.wiped, report.not_wiped), (1, 1), "{report:?}");
    assert!(report.blocks >= 4, "{report:?}");
}

#[test]
fn freeing_a_generated_key_wipes_seed_and_s_hat() {
    let secrets = secrets();
    let key = generated_key();
    let report = watch(&secrets, Some(s_hat_layout()), || {
        // SAFETY: a live key from `into_raw`, freed once (the dispatch
        // table's `free`).
        unsafe { free::<Mgmt>(key) };
    });
    report.assert_clean("a secret survived the free", 1, "ŝ not wiped");
    // The key object, its KeyData box, ŝ, and the expanded public key with
    // its encoding.
    assert!(report.blocks >= 5, "{report:?}");
}

#[test]
fn freeing_an_imported_expanded_key_wipes_it() {
    let secrets = secrets();
    let dk = expanded_dk();
    let data = (ML_KEM_768.from_private)(&dk).expect("key from dk");
    drop(dk);
    let key = into_raw(Key {
        kind: ML_KEM_768,
        prov: ProvCtx::for_tests(),
        parts: Some(data),
    });
    let report = watch(&secrets, Some(s_hat_layout()), || {
        // SAFETY: a live key from `into_raw`, freed once.
        unsafe { free::<Mgmt>(key) };
    });
    // No seed in a key parsed from its expanded form: z and ŝ are what it
    // holds.
    report.assert_clean("a secret survived the free", 1, "ŝ not wiped");
}

#[test]
fn duplicated_keys_are_wiped_too() {
    let secrets = secrets();
    let key = generated_key();
    // SAFETY: a live key; the copy is a new key object we free below.
    let copy = unsafe { dup::<Mgmt>(key, SELECT_KEYPAIR) };
    assert!(!copy.is_null());
    let report = watch(&secrets, Some(s_hat_layout()), || {
        // SAFETY: two live keys from this provider, each freed once.
        unsafe {
            free::<Mgmt>(copy);
            free::<Mgmt>(key);
        }
    });
    report.assert_clean("a secret survived the free", 2, "ŝ not wiped");
}

/// Export's callback: records the size of the `priv` it was given.
unsafe extern "C" fn record_priv_len(params: *const OSSL_PARAM, arg: *mut c_void) -> c_int {
    let mut at = params;
    // SAFETY: a terminated array from `export`; `arg` is our usize.
    unsafe {
        while !(*at).key.is_null() {
            if core::ffi::CStr::from_ptr((*at).key) == names::PKEY_PRIV_KEY {
                *arg.cast::<usize>() = (*at).data_size;
            }
            at = at.add(1);
        }
    }
    1
}

#[test]
fn export_and_get_params_wipe_their_copies() {
    let secrets = secrets();
    let key_ptr = generated_key();
    // The expanded dk copy both paths make: one 2400-byte block.
    let dk_layout = Layout::array::<u8>(ML_KEM_768.layout.dk_len).expect("layout");

    let mut exported_len = 0usize;
    let report = watch(&secrets, Some(dk_layout), || {
        let arg = core::ptr::from_mut(&mut exported_len).cast::<c_void>();
        // SAFETY: a live key from `into_raw`, only read; the callback takes
        // `arg` as the usize it is.
        let rc = unsafe { export::<Mgmt>(key_ptr, SELECT_KEYPAIR, Some(record_priv_len), arg) };
        assert_eq!(rc, 1);
    });
    assert_eq!(
        exported_len, ML_KEM_768.layout.dk_len,
        "export gave no priv"
    );
    report.assert_clean("export left a secret behind", 1, "dk copy not wiped");

    let mut buffer = vec![0u8; ML_KEM_768.layout.dk_len];
    let mut params = [
        OSSL_PARAM {
            key: names::PKEY_PRIV_KEY.as_ptr(),
            data_type: OSSL_PARAM_OCTET_STRING,
            data: buffer.as_mut_ptr().cast(),
            data_size: buffer.len(),
            return_size: usize::MAX,
        },
        END,
    ];
    let report = watch(&secrets, Some(dk_layout), || {
        // SAFETY: a live key and a terminated array whose buffer is
        // writable for its size.
        let rc = unsafe { get_params::<Mgmt>(key_ptr, params.as_mut_ptr()) };
        assert_eq!(rc, 1);
    });
    assert_eq!(params[0].return_size, ML_KEM_768.layout.dk_len);
    assert_eq!(buffer, expanded_dk(), "get_params gave another dk");
    report.assert_clean("get_params left a secret behind", 1, "dk copy not wiped");

    // SAFETY: the live key, freed once.
    unsafe { free::<Mgmt>(key_ptr) };
}

#[test]
fn a_decoder_input_is_wiped_as_it_grows() {
    let secrets = secrets();
    let dk = zeroize::Zeroizing::new(expanded_dk());
    // Positive control: a plain `Vec` that grows leaves copies behind.
    let report = watch(&secrets, None, || {
        let mut plain = Vec::new();
        for chunk in dk.chunks(100) {
            plain.extend_from_slice(chunk);
        }
        drop(black_box(plain));
    });
    assert_ne!(report.hits, [0; MAX_NEEDLES], "{report:?}");
    let report = watch(&secrets, None, || {
        let mut data = zeroize::Zeroizing::new(Vec::new());
        for chunk in dk.chunks(100) {
            crate::ffi::bio::append_wiped(&mut data, chunk);
        }
        assert_eq!(data.as_slice(), dk.as_slice());
        drop(black_box(data));
    });
    report.assert_clean("a copy of the input survived", 0, "");
    assert!(
        report.blocks >= 5,
        "the buffer grew several times: {report:?}"
    );
}
