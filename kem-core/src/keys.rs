//! The public key, ciphertext and shared-secret types, with the FIPS 203
//! input checks applied when they are parsed.
//!
//! Keys hold their expanded form (Â transposed, t̂, H(ek), ŝ), built once
//! when a key is generated or parsed, so that repeated encapsulations and
//! decapsulations with one key redo none of that work and allocate nothing.

use core::fmt;
use core::marker::PhantomData;

use subtle::{Choice, ConstantTimeEq};
use zeroize::{Zeroize, ZeroizeOnDrop, Zeroizing};

use crate::backend::{dispatch, Backend, PolyKernels};
use crate::error::{check_length, Error};
use crate::params::{ByteArray, ParameterSet};
use crate::poly::{zeroize_all, Poly};
use crate::{hash, kem, pke};

/// Length of a shared secret K in bytes.
pub const SHARED_SECRET_LEN: usize = 32;
/// Length of a key-generation seed d ‖ z in bytes.
pub const SEED_LEN: usize = 64;
/// Length of the encapsulation randomness m in bytes.
pub const MESSAGE_LEN: usize = 32;

/// A source of random bytes, supplied by the caller (kem-core has no RNG of
/// its own). Implemented for every `FnMut(&mut [u8]) -> Result<(), Error>`.
pub trait RandomSource {
    /// Fills `dest` with random bytes, or fails with [`Error::RandomSource`].
    fn fill(&mut self, dest: &mut [u8]) -> Result<(), Error>;
}

impl<F: FnMut(&mut [u8]) -> Result<(), Error>> RandomSource for F {
    fn fill(&mut self, dest: &mut [u8]) -> Result<(), Error> {
        self(dest)
    }
}

/// J(z ‖ c), computed while a decapsulation key is parsed for `c`
/// ([`DecapsulationKey::decapsulate_bytes`]); wiped on drop.
type Rejection = Zeroizing<[u8; 32]>;

/// An ML-KEM encapsulation (public) key, with its expanded form.
///
/// The expanded parts live on the heap (allocated once, when the key is made
/// or parsed): moving a key is cheap and operations need little stack.
pub struct EncapsulationKey<P: ParameterSet> {
    /// Â^T then t̂ (see `pke::expanded_key_len`), canonical coefficients.
    expanded: Box<[Poly]>,
    /// H(ek).
    h: [u8; 32],
    /// The encoding ByteEncode_12(t̂) ‖ ρ, `P::EK_LEN` bytes.
    bytes: Box<[u8]>,
    _params: PhantomData<P>,
}

impl<P: ParameterSet> EncapsulationKey<P> {
    /// Parses an encoded key, applying the FIPS 203 section 7.2 checks (exact
    /// length, and every coefficient below q), and expands it.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        check_length("encapsulation key", bytes, P::EK_LEN)?;
        dispatch!(B => Self::parse::<B>(bytes, None)).map(|(key, _)| key)
    }

    /// Parses and expands `bytes` (of the right length); with `rejection`
    /// = (z, c), computes J(z ‖ c) in the same pool and returns it too.
    #[inline(never)] // one frame per backend (see `kem::keygen_internal`)
    fn parse<B: Backend>(
        bytes: &[u8],
        rejection: Option<(&[u8; 32], &[u8])>,
    ) -> Result<(Self, Option<Rejection>), Error> {
        let k = P::K;
        let mut expanded = pke::new_polys(pke::expanded_key_len(k));
        let t_bytes = &bytes[..384 * k];
        let mut reduced = true;
        for (p, chunk) in expanded[k * k..].iter_mut().zip(t_bytes.chunks_exact(384)) {
            reduced &= B::decode_12_checked(chunk, p);
        }
        if !reduced {
            return Err(Error::EncapsulationKeyNotReduced);
        }
        let (h, j) = pke::expand_key::<B>(bytes, k, &mut expanded, rejection);
        let key = Self {
            expanded,
            h,
            bytes: bytes.into(),
            _params: PhantomData,
        };
        Ok((key, j))
    }

    /// The key KeyGen produced: its expanded form, encoding and hash.
    pub(crate) fn from_generated(expanded: Box<[Poly]>, bytes: Box<[u8]>, h: [u8; 32]) -> Self {
        Self {
            expanded,
            h,
            bytes,
            _params: PhantomData,
        }
    }

    /// The encoded key, `P::EK_LEN` bytes.
    pub fn as_bytes(&self) -> &[u8] {
        self.bytes.as_ref()
    }

    /// H(ek), the SHA3-256 digest of the encoded key.
    pub fn hash(&self) -> &[u8; 32] {
        &self.h
    }

    /// Algorithm 20: ML-KEM.Encaps(ek), drawing m from `rng`.
    pub fn encapsulate(
        &self,
        rng: &mut impl RandomSource,
    ) -> Result<(Ciphertext<P>, SharedSecret), Error> {
        let mut m = Zeroizing::new([0u8; MESSAGE_LEN]);
        rng.fill(m.as_mut())?;
        Ok(self.encapsulate_deterministic(&m))
    }

    /// Algorithm 17: ML-KEM.Encaps_internal(ek, m), for known-answer tests
    /// and the provider's `ikme` parameter. `m` must be fresh randomness
    /// in any other use.
    pub fn encapsulate_deterministic(
        &self,
        m: &[u8; MESSAGE_LEN],
    ) -> (Ciphertext<P>, SharedSecret) {
        let mut ct = Ciphertext::from_array(P::CiphertextBytes::zeroed());
        let shared = dispatch!(B => kem::encaps_internal::<P, B>(
            &self.expanded,
            &self.h,
            m,
            ct.as_mut_bytes(),
        ));
        (ct, SharedSecret::new(shared))
    }
}

impl<P: ParameterSet> Clone for EncapsulationKey<P> {
    fn clone(&self) -> Self {
        Self {
            expanded: self.expanded.clone(),
            h: self.h,
            bytes: self.bytes.clone(),
            _params: PhantomData,
        }
    }
}

impl<P: ParameterSet> PartialEq for EncapsulationKey<P> {
    fn eq(&self, other: &Self) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl<P: ParameterSet> Eq for EncapsulationKey<P> {}

impl<P: ParameterSet> fmt::Debug for EncapsulationKey<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EncapsulationKey")
            .field("parameter_set", &P::NAME)
            .finish_non_exhaustive()
    }
}

/// An ML-KEM decapsulation (private) key: ŝ, z, the encapsulation key it
/// belongs to, and the seed d ‖ z when it was generated from one. Secret
/// parts are zeroized on drop.
pub struct DecapsulationKey<P: ParameterSet> {
    ek: EncapsulationKey<P>,
    /// ŝ (k polynomials), canonical coefficients; on the heap, like the
    /// expanded public part.
    s_hat: Box<[Poly]>,
    /// The implicit-rejection secret z.
    z: [u8; 32],
    seed: Option<[u8; SEED_LEN]>,
}

impl<P: ParameterSet> DecapsulationKey<P> {
    /// Algorithm 19: ML-KEM.KeyGen, drawing d ‖ z (64 bytes, one call) from
    /// `rng`.
    pub fn generate(rng: &mut impl RandomSource) -> Result<Self, Error> {
        let mut seed = Zeroizing::new([0u8; SEED_LEN]);
        rng.fill(seed.as_mut())?;
        Self::from_seed(seed.as_ref())
    }

    /// Algorithm 16 from a 64-byte seed d ‖ z (the form OpenSSL and the
    /// IETF private-key format store).
    pub fn from_seed(seed: &[u8]) -> Result<Self, Error> {
        check_length("seed", seed, SEED_LEN)?;
        let (d, z) = seed.split_at(32);
        Ok(Self::from_seed_parts(
            d.try_into().expect("length checked"),
            z.try_into().expect("length checked"),
        ))
    }

    /// Algorithm 16: ML-KEM.KeyGen_internal(d, z).
    pub fn from_seed_parts(d: &[u8; 32], z: &[u8; 32]) -> Self {
        dispatch!(B => {
            let key = kem::keygen_internal::<P, B>(d);
            let ek = EncapsulationKey::from_generated(key.expanded, key.ek, key.ek_hash);
            let mut seed = [0u8; SEED_LEN];
            seed[..32].copy_from_slice(d);
            seed[32..].copy_from_slice(z);
            Self::from_parts(ek, key.s_hat, *z, Some(seed))
        })
    }

    fn from_parts(
        ek: EncapsulationKey<P>,
        s_hat: Box<[Poly]>,
        z: [u8; 32],
        seed: Option<[u8; SEED_LEN]>,
    ) -> Self {
        Self { ek, s_hat, z, seed }
    }

    /// Parses the FIPS 203 expanded form dk_PKE ‖ ek ‖ H(ek) ‖ z, applying
    /// the section 7.3 checks (exact length, stored hash equals H(ek)) and
    /// the section 7.2 checks to the embedded ek; ŝ must be fully reduced.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        check_length("decapsulation key", bytes, P::DK_LEN)?;
        dispatch!(B => Self::parse::<B>(bytes, None)).map(|(key, _)| key)
    }

    /// Algorithm 21, ML-KEM.Decaps(dk, c), on an encoded key: parses `dk`
    /// as [`DecapsulationKey::from_bytes`] does (the same checks and
    /// errors) and decapsulates `ct` with it, as `from_bytes` then
    /// [`DecapsulationKey::decapsulate`] would, with the same result. For a
    /// key used once: the x86-64 backends absorb J(z ‖ c), which otherwise
    /// runs mostly alone after decryption, beside H(ek) and the matrix while
    /// the key is parsed (ML-KEM-1024: 12 blocks); the AArch64 one pairs it
    /// with decapsulation's G and noise instead. The parsed key is wiped
    /// when this returns.
    pub fn decapsulate_bytes(dk: &[u8], ct: &Ciphertext<P>) -> Result<SharedSecret, Error> {
        check_length("decapsulation key", dk, P::DK_LEN)?;
        let c = ct.as_bytes();
        let shared = dispatch!(B => {
            // A backend may compute J while parsing, or leave it to
            // decapsulation's hashes.
            let (key, j) = Self::parse::<B>(dk, Some(c))?;
            let parts = kem::DecapsKeyParts {
                s_hat: &key.s_hat,
                expanded: &key.ek.expanded,
                ek_hash: &key.ek.h,
                z: &key.z,
                rejection: j.as_deref(),
            };
            kem::decaps_internal::<P, B>(parts, c)
        });
        Ok(SharedSecret::new(shared))
    }

    /// Parses `bytes` (of the right length); with `ct`, the backend may
    /// also compute J(z ‖ ct) while the embedded ek is expanded, and returns
    /// it if it did.
    #[inline(never)] // one frame per backend (see `kem::keygen_internal`)
    fn parse<B: Backend>(
        bytes: &[u8],
        ct: Option<&[u8]>,
    ) -> Result<(Self, Option<Rejection>), Error> {
        let k = P::K;
        let (dk_pke, rest) = bytes.split_at(384 * k);
        let (ek_bytes, rest) = rest.split_at(P::EK_LEN);
        let (h, z) = rest.split_at(32);
        let z: &[u8; 32] = z.try_into().expect("length checked");

        // Section 7.3: H(ek) must equal the stored hash. The hash is computed
        // while the embedded ek is expanded; a hash mismatch is reported
        // first, as the check FIPS 203 requires.
        let rejection = ct.map(|c| (z, c));
        let (ek, j) = match EncapsulationKey::<P>::parse::<B>(ek_bytes, rejection) {
            Ok((ek, j)) if bool::from(kem::ct_eq_bytes(ek.hash(), h)) => (ek, j),
            Ok(_) => return Err(Error::DecapsulationKeyHashMismatch),
            Err(error) if bool::from(kem::ct_eq_bytes(&hash::h::<B>(ek_bytes), h)) => {
                return Err(error)
            }
            Err(_) => return Err(Error::DecapsulationKeyHashMismatch),
        };

        let mut s_hat = pke::new_polys(k);
        let mut reduced = Choice::from(1);
        for (p, chunk) in s_hat.iter_mut().zip(dk_pke.chunks_exact(384)) {
            reduced &= Choice::from(u8::from(B::decode_12_checked(chunk, p)));
        }
        if reduced.unwrap_u8() == 0 {
            zeroize_all(&mut s_hat);
            return Err(Error::DecapsulationKeyNotReduced);
        }
        Ok((Self::from_parts(ek, s_hat, *z, None), j))
    }

    /// The expanded encoding dk_PKE ‖ ek ‖ H(ek) ‖ z (`P::DK_LEN` bytes).
    pub fn to_bytes(&self) -> Zeroizing<P::DecapsKeyBytes> {
        let mut out = Zeroizing::new(P::DecapsKeyBytes::zeroed());
        let (dk_pke, rest) = out.as_mut().split_at_mut(384 * P::K);
        dispatch!(B => {
            for (p, chunk) in self.s_hat.iter().zip(dk_pke.chunks_exact_mut(384)) {
                B::encode_12(p, chunk);
            }
        });
        let (ek, rest) = rest.split_at_mut(P::EK_LEN);
        ek.copy_from_slice(self.ek.as_bytes());
        let (h, z) = rest.split_at_mut(32);
        h.copy_from_slice(self.ek.hash());
        z.copy_from_slice(&self.z);
        out
    }

    /// The seed d ‖ z, if the key was generated from one (keys parsed from
    /// the expanded form have none).
    pub fn seed(&self) -> Option<&[u8; SEED_LEN]> {
        self.seed.as_ref()
    }

    /// The matching encapsulation key.
    pub fn encapsulation_key(&self) -> &EncapsulationKey<P> {
        &self.ek
    }

    /// Algorithm 21: ML-KEM.Decaps(dk, c). Never fails: a ciphertext that
    /// does not re-encrypt to itself yields the implicit-rejection secret
    /// J(z ‖ c), selected in constant time.
    pub fn decapsulate(&self, ct: &Ciphertext<P>) -> SharedSecret {
        let parts = kem::DecapsKeyParts {
            s_hat: &self.s_hat,
            expanded: &self.ek.expanded,
            ek_hash: &self.ek.h,
            z: &self.z,
            rejection: None,
        };
        SharedSecret::new(dispatch!(B => kem::decaps_internal::<P, B>(parts, ct.as_bytes())))
    }
}

impl<P: ParameterSet> Clone for DecapsulationKey<P> {
    fn clone(&self) -> Self {
        Self::from_parts(self.ek.clone(), self.s_hat.clone(), self.z, self.seed)
    }
}

impl<P: ParameterSet> Drop for DecapsulationKey<P> {
    fn drop(&mut self) {
        zeroize_all(&mut self.s_hat);
        self.z.zeroize();
        if let Some(seed) = self.seed.as_mut() {
            seed.zeroize();
        }
    }
}

impl<P: ParameterSet> ZeroizeOnDrop for DecapsulationKey<P> {}

impl<P: ParameterSet> fmt::Debug for DecapsulationKey<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DecapsulationKey")
            .field("parameter_set", &P::NAME)
            .field("has_seed", &self.seed.is_some())
            .finish_non_exhaustive()
    }
}

/// An ML-KEM ciphertext of the exact length for its parameter set.
pub struct Ciphertext<P: ParameterSet> {
    bytes: P::CiphertextBytes,
    _params: PhantomData<P>,
}

impl<P: ParameterSet> Ciphertext<P> {
    /// Wraps an encoded ciphertext, checking only its length (FIPS 203
    /// section 7.3: any ciphertext of the right length is decapsulated).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        check_length("ciphertext", bytes, P::CT_LEN)?;
        let mut array = P::CiphertextBytes::zeroed();
        array.as_mut().copy_from_slice(bytes);
        Ok(Self::from_array(array))
    }

    pub(crate) fn from_array(bytes: P::CiphertextBytes) -> Self {
        Self {
            bytes,
            _params: PhantomData,
        }
    }

    /// The encoded ciphertext, `P::CT_LEN` bytes.
    pub fn as_bytes(&self) -> &[u8] {
        self.bytes.as_ref()
    }

    pub(crate) fn as_mut_bytes(&mut self) -> &mut [u8] {
        self.bytes.as_mut()
    }
}

impl<P: ParameterSet> Clone for Ciphertext<P> {
    fn clone(&self) -> Self {
        Self::from_array(self.bytes.clone())
    }
}

impl<P: ParameterSet> PartialEq for Ciphertext<P> {
    fn eq(&self, other: &Self) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl<P: ParameterSet> Eq for Ciphertext<P> {}

impl<P: ParameterSet> fmt::Debug for Ciphertext<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ciphertext")
            .field("parameter_set", &P::NAME)
            .finish_non_exhaustive()
    }
}

/// A 32-byte shared secret K, zeroized on drop. Equality is constant time.
#[derive(Clone, Zeroize, ZeroizeOnDrop)]
pub struct SharedSecret([u8; SHARED_SECRET_LEN]);

impl SharedSecret {
    pub(crate) fn new(bytes: [u8; SHARED_SECRET_LEN]) -> Self {
        Self(bytes)
    }

    /// The secret's bytes.
    pub fn as_bytes(&self) -> &[u8; SHARED_SECRET_LEN] {
        &self.0
    }
}

impl ConstantTimeEq for SharedSecret {
    fn ct_eq(&self, other: &Self) -> Choice {
        self.0.ct_eq(&other.0)
    }
}

impl PartialEq for SharedSecret {
    fn eq(&self, other: &Self) -> bool {
        self.ct_eq(other).into()
    }
}

impl Eq for SharedSecret {}

impl fmt::Debug for SharedSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SharedSecret(..)")
    }
}
