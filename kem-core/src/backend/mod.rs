//! The backends: the interface (`traits`), the portable reference
//! (`portable`), one folder per architecture (`x86_64`: AVX2 and AVX-512;
//! `aarch64`: Neon), and the choice of one per process (`select`). The
//! algorithm code in `pke` and `kem` is generic over `Backend` and
//! monomorphised once per backend by `dispatch!`. All
//! backends share one key representation (canonical coefficients, FIPS 203
//! NTT order), so a key made under one backend works under any other.

#[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
mod aarch64;
mod portable;
mod select;
mod traits;
#[cfg(target_arch = "x86_64")]
mod x86_64;

#[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
pub(crate) use aarch64::Neon;
pub(crate) use portable::Portable;
pub use select::{
    active_backend, available_backends, preferred_backend, set_backend, with_backend, BackendKind,
};
pub(crate) use traits::{sample_noise_eta, Backend, DecapsHashInput, KeyBuffers, PolyKernels};
#[cfg(target_arch = "x86_64")]
pub(crate) use x86_64::{Avx2, Avx512, Avx512Keccak};

/// Runs `$body` with `$b` bound to the active backend's type: the one
/// place where the backend choice becomes a monomorphised code path.
macro_rules! dispatch {
    ($b:ident => $body:expr) => {
        match $crate::backend::active_backend() {
            $crate::backend::BackendKind::Portable => {
                type $b = $crate::backend::Portable;
                $body
            }
            #[cfg(target_arch = "x86_64")]
            $crate::backend::BackendKind::Avx2 => {
                type $b = $crate::backend::Avx2;
                $body
            }
            #[cfg(target_arch = "x86_64")]
            $crate::backend::BackendKind::Avx512Keccak => {
                type $b = $crate::backend::Avx512Keccak;
                $body
            }
            #[cfg(target_arch = "x86_64")]
            $crate::backend::BackendKind::Avx512 => {
                type $b = $crate::backend::Avx512;
                $body
            }
            #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
            $crate::backend::BackendKind::Neon => {
                type $b = $crate::backend::Neon;
                $body
            }
        }
    };
}
pub(crate) use dispatch;
