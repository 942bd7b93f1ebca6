//! The calls through which kem-core reports to [`crate::profiling`]: they
//! forward to it with the feature `profiling` and compile to nothing
//! without it, so the call sites need no `cfg`.

#[cfg(feature = "profiling")]
pub(crate) use crate::profiling::{count, permutation_end, permutation_start, Primitive};

#[cfg(not(feature = "profiling"))]
mod disabled {
    /// A primitive counted by the profiler (unused without `profiling`).
    #[derive(Clone, Copy)]
    pub(crate) enum Primitive {
        G,
        H,
        J,
        Prf,
        Xof,
    }

    #[inline(always)]
    pub(crate) fn count(_primitive: Primitive, _streams: u64) {}

    /// When a permutation started (nothing without `profiling`).
    pub(crate) struct PermutationStart;

    #[inline(always)]
    pub(crate) fn permutation_start() -> PermutationStart {
        PermutationStart
    }

    #[inline(always)]
    pub(crate) fn permutation_end(_start: PermutationStart, _ways: u8) {}
}

#[cfg(not(feature = "profiling"))]
pub(crate) use disabled::{count, permutation_end, permutation_start, Primitive};
