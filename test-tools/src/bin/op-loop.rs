//! `op-loop SET OP N`: one ML-KEM operation N times on fixed, serialised
//! inputs (keygen from the seed, encaps from the encapsulation key's bytes,
//! decaps from the decapsulation key's bytes), on the backend
//! `MLKEM_BACKEND` or the CPU picks. It prints the XOR of the N outputs
//! (which also keeps the loop from being optimised away).
//!
//! For counting instructions under an emulator (`scripts/aarch64-count.sh`):
//! the difference between runs with two values of N is the cost of the
//! operations alone, without start-up and input preparation.

use std::process::ExitCode;

use kem_core::{
    Ciphertext, DecapsulationKey, EncapsulationKey, MlKem1024, MlKem512, MlKem768, ParameterSet,
};

const USAGE: &str = "usage: op-loop 512|768|1024 keygen|encaps|decaps N";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [set, op, n] = args.as_slice() else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let Ok(n) = n.parse::<u32>() else {
        eprintln!("op-loop: N must be a count, not {n:?}\n{USAGE}");
        return ExitCode::from(2);
    };
    let out = match set.as_str() {
        "512" => run::<MlKem512>(op, n),
        "768" => run::<MlKem768>(op, n),
        "1024" => run::<MlKem1024>(op, n),
        _ => None,
    };
    match out {
        Some(out) => {
            let hex: String = out.iter().map(|b| format!("{b:02x}")).collect();
            println!("{set} {op} x{n} on {}: {hex}", kem_core::active_backend());
            ExitCode::SUCCESS
        }
        None => {
            eprintln!("op-loop: unknown set or operation: {set} {op}\n{USAGE}");
            ExitCode::from(2)
        }
    }
}

/// The XOR of `n` outputs of `op` (the first 32 bytes of ek for keygen, the
/// shared secret otherwise); `None` for an unknown operation.
fn run<P: ParameterSet>(op: &str, n: u32) -> Option<[u8; 32]> {
    if !["keygen", "encaps", "decaps"].contains(&op) {
        return None;
    }
    let (d, z, m) = ([1u8; 32], [2u8; 32], [3u8; 32]);
    let dk = DecapsulationKey::<P>::from_seed_parts(&d, &z);
    let ek_bytes = dk.encapsulation_key().as_bytes().to_vec();
    let dk_bytes = dk.to_bytes();
    let (ct, _) = dk.encapsulation_key().encapsulate_deterministic(&m);
    let ct = Ciphertext::<P>::from_bytes(ct.as_bytes()).expect("our own ciphertext");
    let one = || -> [u8; 32] {
        match op {
            "keygen" => {
                let key = DecapsulationKey::<P>::from_seed_parts(&d, &z);
                key.encapsulation_key().as_bytes()[..32]
                    .try_into()
                    .expect("32 bytes")
            }
            "encaps" => {
                let ek = EncapsulationKey::<P>::from_bytes(&ek_bytes).expect("our own ek");
                *ek.encapsulate_deterministic(&m).1.as_bytes()
            }
            _ => *DecapsulationKey::<P>::decapsulate_bytes(dk_bytes.as_ref(), &ct)
                .expect("our own dk")
                .as_bytes(),
        }
    };
    let mut acc = [0u8; 32];
    for _ in 0..n {
        let out = std::hint::black_box(one());
        acc.iter_mut().zip(out).for_each(|(a, b)| *a ^= b);
    }
    Some(acc)
}
