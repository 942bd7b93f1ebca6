//! The KEM operation (`OSSL_OP_KEM`): encapsulate and decapsulate, with
//! OpenSSL 3.5's size-query semantics and its one-shot `ikme` parameter,
//! written once over [`Key<K>`](Key) for every kind of key.

use core::ffi::c_int;
use core::marker::PhantomData;

use kem_core::MESSAGE_LEN;
use zeroize::Zeroizing;

use crate::context::ProvCtx;
use crate::error::{ProviderError, Reason, Result};
use crate::ffi::kem::{kem_functions, Encapsulation, Kem};
use crate::ffi::names;
use crate::ffi::object::{Lent, Object};
use crate::ffi::params::{describe_octets, Params, END};
use crate::ffi::sys::{OSSL_DISPATCH, OSSL_PARAM};
use crate::ffi::upcalls::Instance;
use crate::key::{Key, KeyKind, KeyParts};

/// The KEM operation on keys of kind `K`.
pub(crate) struct KemOperation<K>(PhantomData<K>);

#[derive(Clone, Copy, PartialEq, Eq)]
enum Operation {
    Encapsulate,
    Decapsulate,
}

/// A KEM context: the key and operation set by `*_init`, and a one-shot m
/// from `ikme` (for a hybrid, the ML-KEM half's m; the classical half stays
/// random).
pub(crate) struct KemCtx<K: KeyKind> {
    prov: &'static ProvCtx,
    key: Option<(Lent<Key<K>>, Operation)>,
    ikme: Option<Zeroizing<[u8; MESSAGE_LEN]>>,
}

impl<K: KeyKind> Clone for KemCtx<K> {
    fn clone(&self) -> Self {
        Self {
            prov: self.prov,
            key: self.key.clone(),
            ikme: self.ikme.clone(),
        }
    }
}

impl<K: KeyKind> Object for KemCtx<K> {
    fn instance(&self) -> Instance {
        self.prov.instance()
    }
}

impl<K: KeyKind> KemCtx<K> {
    /// The key set by `*_init` for `operation`.
    fn key(&self, operation: Operation) -> Result<Lent<Key<K>>> {
        match &self.key {
            Some((key, op)) if *op == operation => Ok(key.clone()),
            _ => Err(
                ProviderError::new(Reason::CallOutOfOrder).with_detail(match operation {
                    Operation::Encapsulate => "encapsulate_init not called",
                    Operation::Decapsulate => "decapsulate_init not called",
                }),
            ),
        }
    }

    fn operation(&self) -> Option<Operation> {
        self.key.as_ref().map(|(_, op)| *op)
    }

    fn set_params(&mut self, params: Params<'_>) -> Result<()> {
        if self.operation() == Some(Operation::Decapsulate) {
            // Decapsulation is deterministic.
            self.ikme = None;
        }
        if self.operation() != Some(Operation::Encapsulate) {
            return Ok(());
        }
        if let Some(p) = params.find(names::KEM_IKME) {
            // A rejected ikme clears the one set before, as in OpenSSL 3.5.
            self.ikme = None;
            let m: [u8; MESSAGE_LEN] = p.octet_array()?;
            self.ikme = Some(Zeroizing::new(m));
        }
        Ok(())
    }
}

impl<K: KeyKind> Kem for KemOperation<K> {
    type Prov = ProvCtx;
    type Key = Key<K>;
    type Ctx = KemCtx<K>;

    const SETTABLE: &'static [OSSL_PARAM] = &[describe_octets(names::KEM_IKME), END];

    fn new(prov: &'static ProvCtx) -> Result<KemCtx<K>> {
        Ok(KemCtx {
            prov,
            key: None,
            ikme: None,
        })
    }

    fn init(
        ctx: &mut KemCtx<K>,
        key: Lent<Key<K>>,
        decapsulate: bool,
        params: Params<'_>,
    ) -> Result<()> {
        let operation = if decapsulate {
            key.get().private()?;
            Operation::Decapsulate
        } else {
            key.get().public()?;
            Operation::Encapsulate
        };
        ctx.key = Some((key, operation));
        ctx.ikme = None;
        ctx.set_params(params)
    }

    fn set_params(ctx: &mut KemCtx<K>, params: Params<'_>) -> Result<()> {
        ctx.set_params(params)
    }

    fn encapsulate(ctx: &mut KemCtx<K>, mut output: Encapsulation<'_>) -> Result<c_int> {
        let key = ctx.key(Operation::Encapsulate)?;
        let key = key.get();
        let parts = key.public()?;
        let kind = key.kind;
        let (ct_len, ss_len) = (kind.ciphertext_len(), kind.secret_len());
        if output.is_size_query() {
            return Ok(output.report_lens(ct_len, ss_len));
        }
        // One-shot entropy: a real attempt uses it up, whatever happens
        // below (a size query above leaves it, as in OpenSSL).
        let ikme = ctx.ikme.take();
        let (ct, secret) = output.buffers(ct_len, ss_len)?;
        let m = match ikme {
            Some(m) => m,
            None => {
                let mut m = Zeroizing::new([0u8; MESSAGE_LEN]);
                ctx.prov
                    .secret_random(m.as_mut_slice(), kind.security_bits())?;
                m
            }
        };
        parts.encapsulate(kind, ctx.prov, &m, ct, secret)?;
        Ok(1)
    }

    fn decapsulation_lens(ctx: &KemCtx<K>) -> Result<(usize, usize)> {
        let key = ctx.key(Operation::Decapsulate)?;
        let key = key.get();
        key.private()?;
        Ok((key.kind.ciphertext_len(), key.kind.secret_len()))
    }

    fn decapsulate(ctx: &KemCtx<K>, ct: &[u8], secret: &mut [u8]) -> Result<()> {
        let key = ctx.key(Operation::Decapsulate)?;
        let key = key.get();
        key.private()?.decapsulate(key.kind, ctx.prov, ct, secret)
    }

    fn key_name(ctx: &KemCtx<K>) -> Result<&'static str> {
        Ok(ctx.key(Operation::Decapsulate)?.get().kind.name())
    }
}

/// The KEM dispatch table of the pure ML-KEM algorithms (shared by the
/// three parameter sets: the key knows its own).
pub(crate) const ML_KEM_FUNCTIONS: &[OSSL_DISPATCH] =
    kem_functions!(KemOperation<crate::algorithms::Algorithm>);

/// The KEM dispatch table of the hybrid algorithms.
pub(crate) const HYBRID_FUNCTIONS: &[OSSL_DISPATCH] =
    kem_functions!(KemOperation<crate::hybrid::Hybrid>);
