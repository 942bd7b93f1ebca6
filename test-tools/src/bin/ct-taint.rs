//! Constant-time check of kem-core under valgrind memcheck (run by
//! `scripts/ct-taint.sh`): the secret inputs (d, z; m; the ciphertext being
//! decapsulated) are marked undefined, keygen, encaps and decaps (with a
//! parsed key and in one shot from bytes) run on every parameter set and
//! backend, and only what FIPS 203 makes public is
//! marked defined again (ek, ct once made, the shared secrets once returned,
//! and ρ through kem-core's `ct-taint` hook). Valgrind then reports every
//! branch or address that depends on a secret. `--leaky` adds a deliberate
//! secret-dependent branch and `--keep-rho-secret` skips declassifying ρ,
//! to show the check works. Outside valgrind the client requests do nothing.

use std::hint::black_box;

use kem_core::{
    available_backends, with_backend, Ciphertext, DecapsulationKey, MlKem1024, MlKem512, MlKem768,
    ParameterSet,
};
use test_tools::kem_core_ops::{D, M, Z};

/// Valgrind memcheck client requests (valgrind.h / memcheck.h).
mod valgrind {
    const MAKE_MEM_UNDEFINED: u64 = 0x4d43_0001;
    const MAKE_MEM_DEFINED: u64 = 0x4d43_0002;
    const RUNNING_ON_VALGRIND: u64 = 0x1001;

    /// Issues a client request with two arguments; 0 when not under
    /// valgrind.
    #[cfg(target_arch = "x86_64")]
    fn request(code: u64, a: u64, b: u64) -> u64 {
        let args = [code, a, b, 0, 0, 0];
        let mut result = 0;
        // SAFETY: valgrind's "special instruction" sequence: four rotations
        // of rdi summing to 128 bits (no change) and `xchg rbx, rbx` (no
        // change), which valgrind intercepts. It reads `args` through rax
        // and leaves the result in rdx; natively it does nothing.
        unsafe {
            core::arch::asm!(
                "rol rdi, 3",
                "rol rdi, 13",
                "rol rdi, 61",
                "rol rdi, 51",
                "xchg rbx, rbx",
                inout("rdx") result,
                in("rax") args.as_ptr(),
                inout("rdi") 0u64 => _,
                options(nostack, preserves_flags),
            );
        }
        result
    }

    #[cfg(not(target_arch = "x86_64"))]
    fn request(_code: u64, _a: u64, _b: u64) -> u64 {
        0
    }

    /// Marks `bytes` as undefined (secret).
    pub fn taint(bytes: &[u8]) {
        request(
            MAKE_MEM_UNDEFINED,
            bytes.as_ptr() as u64,
            bytes.len() as u64,
        );
    }

    /// Marks `bytes` as defined (public).
    pub fn declassify(bytes: &[u8]) {
        request(MAKE_MEM_DEFINED, bytes.as_ptr() as u64, bytes.len() as u64);
    }

    /// Whether the program runs under valgrind.
    pub fn running() -> bool {
        request(RUNNING_ON_VALGRIND, 0, 0) != 0
    }
}

/// A secret-dependent branch, for `--leaky`.
#[inline(never)]
fn leaky_branch(secret: &[u8]) -> u32 {
    if black_box(secret[0]) & 1 == 1 {
        black_box(7)
    } else {
        black_box(9)
    }
}

fn check<P: ParameterSet>(leaky: bool) {
    // The benchmarks' fixed inputs (no RNG: the check is about data flow).
    let (d, z, m) = (D, Z, M);
    [&d, &z, &m]
        .into_iter()
        .for_each(|secret| valgrind::taint(secret));
    if leaky {
        black_box(leaky_branch(&d));
    }

    // Algorithm 16: everything derived from d and z is secret, except ρ
    // (declassified by kem-core's hook) and the encapsulation key.
    let dk = DecapsulationKey::<P>::from_seed_parts(&d, &z);
    let ek = dk.encapsulation_key();
    valgrind::declassify(ek.as_bytes());
    valgrind::declassify(ek.hash());

    // Algorithm 17 with a secret m: the ciphertext is public once made,
    // the key is the caller's secret.
    let (ct, k_sent) = ek.encapsulate_deterministic(&m);
    valgrind::declassify(ct.as_bytes());
    valgrind::declassify(k_sent.as_bytes());

    // Algorithm 21 on a ciphertext treated as secret (the implicit
    // rejection must not reveal whether it was valid), and on a corrupted
    // one.
    let mut ct_bytes = ct.as_bytes().to_vec();
    for corrupt in [false, true] {
        if corrupt {
            ct_bytes[0] ^= 1;
        }
        let ct = Ciphertext::<P>::from_bytes(&ct_bytes).expect("right length");
        valgrind::taint(ct.as_bytes());
        let k = dk.decapsulate(&ct);
        valgrind::declassify(k.as_bytes());
        let equal = k.as_bytes() == k_sent.as_bytes();
        assert_eq!(equal, !corrupt, "{} decapsulation", P::NAME);

        // The one-shot form on the encoded key, whose parse absorbs
        // J(z ‖ c) beside H(ek) and the matrix: z and the ciphertext secret.
        // (ŝ is declassified here: its range check rejects a bad key, a
        // public outcome; ŝ's flow is the decapsulation above.)
        let dk_bytes = dk.to_bytes();
        valgrind::declassify(&dk_bytes.as_ref()[..384 * P::K]);
        valgrind::taint(&dk_bytes.as_ref()[P::DK_LEN - 32..]);
        let k =
            DecapsulationKey::<P>::decapsulate_bytes(dk_bytes.as_ref(), &ct).expect("a valid key");
        valgrind::declassify(k.as_bytes());
        let equal = k.as_bytes() == k_sent.as_bytes();
        assert_eq!(equal, !corrupt, "{} decapsulate_bytes", P::NAME);
    }
}

/// Runs kem-core's keygen, encaps and decaps with the secrets marked
/// undefined for valgrind memcheck (`valgrind --error-exitcode=1
/// target/release/ct-taint`, see scripts/ct-taint.sh).
#[derive(clap::Parser, Debug)]
#[command(name = "ct-taint")]
struct Args {
    /// Add one deliberately secret-dependent branch, to show the check works
    #[arg(long)]
    leaky: bool,
    /// Skip the declassification of rho, to show that the taint of d flows
    /// through G into the matrix sampling
    #[arg(long)]
    keep_rho_secret: bool,
}

fn main() {
    let args = <Args as clap::Parser>::parse();
    if !args.keep_rho_secret {
        kem_core::ct_taint::set_declassify_hook(valgrind::declassify);
    }
    let backends = available_backends();
    let under = if valgrind::running() {
        "under"
    } else {
        "NOT under"
    };
    let names: Vec<&str> = backends.iter().map(|b| b.name()).collect();
    let leaky = match args.leaky {
        true => ", with a deliberate secret-dependent branch",
        false => "",
    };
    println!("ct-taint: {under} valgrind, backends {names:?}{leaky}");
    for backend in backends {
        with_backend(backend, || {
            check::<MlKem512>(args.leaky);
            check::<MlKem768>(args.leaky);
            check::<MlKem1024>(args.leaky);
        })
        .expect("available backend");
        println!(
            "  {}: keygen, encaps, decaps (valid and corrupted; parsed key and one shot from bytes) of all three sets",
            backend.name()
        );
    }
}
