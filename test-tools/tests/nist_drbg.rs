//! Tests of `test_tools::nist_drbg` against the values of NIST's KAT generator.

use test_tools::nist_drbg::*;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02X}")).collect()
}

fn kat_entropy() -> [u8; ENTROPY_LEN] {
    core::array::from_fn(|i| i as u8)
}

/// Draws seed, then (d ‖ z) and m from a DRBG re-seeded with it, the way
/// kat_kem does for one count.
fn draw(outer: &mut NistDrbg) -> (String, String, String, String) {
    let seed: [u8; ENTROPY_LEN] = outer.random_array();
    let mut inner = NistDrbg::new(&seed);
    let dz: [u8; 64] = inner.random_array();
    let m: [u8; 32] = inner.random_array();
    (hex(&seed), hex(&dz[..32]), hex(&dz[32..]), hex(&m))
}

#[test]
fn count_0_and_1_sanity_values() {
    let mut outer = NistDrbg::new(&kat_entropy());

    let (seed, d, z, m) = draw(&mut outer);
    assert_eq!(
        seed,
        "061550234D158C5EC95595FE04EF7A25767F2E24CC2BC479D09D86DC9ABCFDE7\
         056A8C266F9EF97ED08541DBD2E1FFA1"
    );
    assert_eq!(
        d,
        "7C9935A0B07694AA0C6D10E4DB6B1ADD2FD81A25CCB148032DCD739936737F2D"
    );
    assert_eq!(
        z,
        "B505D7CFAD1B497499323C8686325E4792F267AAFA3F87CA60D01CB54F29202A"
    );
    assert_eq!(
        m,
        "EB4A7C66EF4EBA2DDB38C88D8BC706B1D639002198172A7B1942ECA8F6C001BA"
    );

    let (seed, d, z, m) = draw(&mut outer);
    assert_eq!(
        seed,
        "D81C4D8D734FCBFBEADE3D3F8A039FAA2A2C9957E835AD55B22E75BF57BB556A\
         C81ADDE6AEEB4A5A875C3BFCADFA958F"
    );
    assert_eq!(
        d,
        "D60B93492A1D8C1C7BA6FC0B733137F3406CEE8110A93F170E7A78658AF326D9"
    );
    assert_eq!(
        z,
        "588522D326E7F105F11C4E8D97E119E193AF42DC28409F4F7572ADA538B52C1F"
    );
    assert_eq!(
        m,
        "46401015603C5E2174CB94AC742E836B516E2D570F15DE0B9D0204D79AC64BA3"
    );
}

#[test]
fn one_update_per_call() {
    // One 64-byte call is not two 32-byte calls, but its first block
    // equals the first block of a 32-byte call from the same state.
    let mut a = NistDrbg::new(&kat_entropy());
    let mut b = a.clone();
    let whole: [u8; 64] = a.random_array();
    let first: [u8; 32] = b.random_array();
    let second: [u8; 32] = b.random_array();
    assert_eq!(whole[..32], first);
    assert_ne!(whole[32..], second);
}

#[test]
fn partial_block_is_a_prefix() {
    let mut a = NistDrbg::new(&kat_entropy());
    let mut b = a.clone();
    let short: [u8; 5] = a.random_array();
    let block: [u8; 16] = b.random_array();
    assert_eq!(short, block[..5]);
    // Both calls consumed one block and ran one Update: same state after.
    assert_eq!(a.random_array::<16>(), b.random_array::<16>());
}
