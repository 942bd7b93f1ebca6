//! Stack depth: every operation must fit in 16 KiB of stack, since `openssl
//! speed -async_jobs` runs providers on 32 KiB fibre stacks.
//!
//! A stack overflow aborts the process, so each probe runs in a child process
//! (this test binary re-run with `STACK_PROBE` set) on a thread of a chosen
//! stack size, and the smallest size (1 KiB steps) on which it completes is
//! searched. Each probe first descends through `PADDING_KIB` of 1 KiB frames,
//! so that every measurement lies above the minimum stack the platform
//! enforces for a thread. The budget is calibrated the same way: the
//! smallest size on which the padding plus 16 KiB of frames completes. Every
//! ML-KEM operation must fit in that size. Release builds only: debug frames
//! are several times larger.

mod backends;

use std::hint::black_box;
use std::process::Command;

use kem_core::{
    with_backend, BackendKind, Ciphertext, DecapsulationKey, EncapsulationKey, MlKem1024, MlKem512,
    MlKem768, ParameterSet,
};

const BUDGET_KIB: usize = 16;
const PADDING_KIB: usize = 32;

/// Descends through `kib` frames of 1 KiB, then runs `f` at the bottom.
#[inline(never)]
fn below_frames(kib: usize, f: &dyn Fn()) {
    if kib > 0 {
        let mut frame = [0u8; 1024];
        black_box(&mut frame);
        below_frames(kib - 1, f);
        black_box(&frame);
    } else {
        f();
    }
}

/// The probed operation of set P (`"<operation>:<backend>"`), with inputs
/// prepared outside it.
fn run_operation<P: ParameterSet>(operation_and_backend: &str) {
    let (operation, backend) = operation_and_backend.split_once(':').unwrap();
    let backend = BackendKind::from_name(backend).unwrap();
    let dk = DecapsulationKey::<P>::from_seed_parts(&[1; 32], &[2; 32]);
    let ek_bytes = dk.encapsulation_key().as_bytes().to_vec();
    let dk_bytes = dk.to_bytes().as_ref().to_vec();
    let (ct, _) = dk.encapsulation_key().encapsulate_deterministic(&[3; 32]);
    let ct_bytes = ct.as_bytes().to_vec();
    let operation = operation.to_owned();
    let probe = move || {
        with_backend(backend, || match operation.as_str() {
            "keygen" => keygen::<P>(),
            "encaps" => encaps::<P>(&ek_bytes),
            "decaps" => decaps::<P>(&dk_bytes, &ct_bytes),
            "decapsulate_bytes" => decapsulate_bytes::<P>(&dk_bytes, &ct_bytes),
            other => panic!("unknown operation {other}"),
        })
        .unwrap()
    };
    spawn_with_stack(probe);
}

// One function per operation, as a caller would write it, so that the
// probe measures that operation alone.

#[inline(never)]
fn keygen<P: ParameterSet>() {
    black_box(DecapsulationKey::<P>::from_seed_parts(&[4; 32], &[5; 32]));
}

#[inline(never)]
fn encaps<P: ParameterSet>(ek_bytes: &[u8]) {
    let ek = EncapsulationKey::<P>::from_bytes(black_box(ek_bytes)).unwrap();
    black_box(ek.encapsulate_deterministic(&[6; 32]));
}

#[inline(never)]
fn decapsulate_bytes<P: ParameterSet>(dk_bytes: &[u8], ct_bytes: &[u8]) {
    let ct = Ciphertext::<P>::from_bytes(ct_bytes).unwrap();
    black_box(DecapsulationKey::<P>::decapsulate_bytes(black_box(dk_bytes), &ct).unwrap());
}

#[inline(never)]
fn decaps<P: ParameterSet>(dk_bytes: &[u8], ct_bytes: &[u8]) {
    let dk = DecapsulationKey::<P>::from_bytes(black_box(dk_bytes)).unwrap();
    let ct = Ciphertext::<P>::from_bytes(ct_bytes).unwrap();
    black_box(dk.decapsulate(&ct));
}

/// Runs `f` below `PADDING_KIB` of frames on a thread whose stack size is
/// `STACK_PROBE_SIZE`.
fn spawn_with_stack(f: impl Fn() + Send + 'static) {
    let size: usize = std::env::var("STACK_PROBE_SIZE").unwrap().parse().unwrap();
    std::thread::Builder::new()
        .stack_size(size)
        .spawn(move || below_frames(PADDING_KIB, &f))
        .unwrap()
        .join()
        .unwrap();
}

/// The child side, run only by `probe_succeeds` (with `--ignored`).
#[test]
#[ignore = "child process of every_operation_fits_in_16_kib_of_stack"]
fn stack_probe_child() {
    let probe = std::env::var("STACK_PROBE").expect("run by the stack test only");
    match probe.split_once(':') {
        Some(("calibrate", kib)) => {
            let kib: usize = kib.parse().unwrap();
            spawn_with_stack(move || below_frames(kib, &|| ()));
        }
        Some(("ML-KEM-512", rest)) => run_operation::<MlKem512>(rest),
        Some(("ML-KEM-768", rest)) => run_operation::<MlKem768>(rest),
        Some(("ML-KEM-1024", rest)) => run_operation::<MlKem1024>(rest),
        _ => panic!("bad STACK_PROBE {probe}"),
    }
    println!("{DONE_MARKER}");
}

/// Printed by the child after its probe completed: a child that ran no test
/// (a wrong filter, say) must not count as a success.
const DONE_MARKER: &str = "stack probe completed";

/// Runs the child probe on a thread with `size` bytes of stack; true if it
/// completed.
fn probe_succeeds(probe: &str, size: usize) -> bool {
    let output = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "stack_probe_child",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("STACK_PROBE", probe)
        .env("STACK_PROBE_SIZE", size.to_string())
        .output()
        .unwrap();
    output.status.success() && String::from_utf8_lossy(&output.stdout).contains(DONE_MARKER)
}

/// The smallest thread stack size, in 1 KiB steps, on which `probe`
/// completes.
fn smallest_stack(probe: &str) -> usize {
    (PADDING_KIB..1024)
        .map(|kib| kib * 1024)
        .find(|&size| probe_succeeds(probe, size))
        .unwrap_or_else(|| panic!("{probe} never completed"))
}

#[test]
fn every_operation_fits_in_16_kib_of_stack() {
    if cfg!(debug_assertions) {
        eprintln!(
            "skipped: stack depth is only meaningful in release builds (cargo test --release)"
        );
        return;
    }
    let baseline = smallest_stack("calibrate:0");
    let budget = smallest_stack(&format!("calibrate:{BUDGET_KIB}"));
    eprintln!(
        "thread stack for the padding alone: {} KiB; with {BUDGET_KIB} KiB more: {} KiB",
        baseline / 1024,
        budget / 1024
    );
    // The probe must see stack use at all: 16 KiB of frames need more room
    // than none, and 20 KiB more than the budget.
    assert!(
        budget >= baseline + (BUDGET_KIB - 1) * 1024,
        "calibration failed"
    );
    assert!(
        smallest_stack(&format!("calibrate:{}", BUDGET_KIB + 4)) > budget,
        "the probe cannot tell 20 KiB from 16 KiB"
    );
    let mut too_deep = Vec::new();
    for backend in backends::backends_to_exercise() {
        for set in ["ML-KEM-512", "ML-KEM-768", "ML-KEM-1024"] {
            for op in ["keygen", "encaps", "decaps", "decapsulate_bytes"] {
                let needed = smallest_stack(&format!("{set}:{op}:{backend}"));
                let used = (needed - baseline) / 1024;
                eprintln!("{backend} {set} {op}: about {used} KiB of stack");
                if needed > budget {
                    too_deep.push(format!("{backend} {set} {op}"));
                }
            }
        }
        backends::record_exercised(backend);
    }
    assert!(
        too_deep.is_empty(),
        "more than 16 KiB of stack: {too_deep:?}"
    );
}
