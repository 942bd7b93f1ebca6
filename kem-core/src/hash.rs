//! The hash functions of FIPS 203, section 4.1, on SHA-3 / SHAKE from the
//! `sha3` crate: G = SHA3-512, H = SHA3-256, J = SHAKE256 to 32 bytes,
//! PRF_eta = SHAKE256 to 64·eta bytes, XOF = SHAKE128.

use sha3::digest::{Digest, ExtendableOutput, Update, XofReader};
use sha3::{Sha3_256, Sha3_512, Shake128, Shake256};

/// Rate of SHAKE128 in bytes: one Keccak-f[1600] call squeezes this much.
pub(crate) const SHAKE128_RATE: usize = 168;

/// G(a ‖ b) = SHA3-512, split into two 32-byte halves.
pub(crate) fn g(a: &[u8], b: &[u8]) -> ([u8; 32], [u8; 32]) {
    let mut hasher = Sha3_512::new();
    Digest::update(&mut hasher, a);
    Digest::update(&mut hasher, b);
    let out = hasher.finalize();
    let mut first = [0u8; 32];
    let mut second = [0u8; 32];
    first.copy_from_slice(&out[..32]);
    second.copy_from_slice(&out[32..]);
    (first, second)
}

/// H(s) = SHA3-256.
pub(crate) fn h(s: &[u8]) -> [u8; 32] {
    Sha3_256::digest(s).into()
}

/// J(a ‖ b) = SHAKE256(a ‖ b, 8·32).
pub(crate) fn j(a: &[u8], b: &[u8]) -> [u8; 32] {
    let mut xof = Shake256::default();
    xof.update(a);
    xof.update(b);
    let mut out = [0u8; 32];
    xof.finalize_xof().read(&mut out);
    out
}

/// PRF_eta(s, b) = SHAKE256(s ‖ b, 8·64·eta), written to `out` (64·eta bytes).
pub(crate) fn prf(s: &[u8; 32], b: u8, out: &mut [u8]) {
    let mut xof = Shake256::default();
    xof.update(s);
    xof.update(&[b]);
    xof.finalize_xof().read(out);
}

/// XOF(ρ, i, j): SHAKE128 absorbing ρ ‖ i ‖ j (FIPS 203 Algorithm 7 input),
/// ready to be squeezed.
pub(crate) fn xof(rho: &[u8; 32], i: u8, j: u8) -> impl XofReader {
    let mut xof = Shake128::default();
    xof.update(rho);
    xof.update(&[i, j]);
    xof.finalize_xof()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn known_answers_for_empty_input() {
        // FIPS 202 test values for the empty message.
        assert_eq!(
            hex(&h(b"")),
            "a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a"
        );
        let (a, b) = g(b"", b"");
        assert_eq!(
            hex(&a) + &hex(&b),
            "a69f73cca23a9ac5c8b567dc185a756e97c982164fe25859e0d1dcc1475c80a6\
             15b2123af1f5f94c11e3e9402c3ac558f500199d95b6d3e301758586281dcd26"
        );
        assert_eq!(
            hex(&j(b"", b"")),
            "46b9dd2b0ba88d13233b3feb743eeb243fcd52ea62b81b82b50c27646ed5762f"
        );
    }

    #[test]
    fn split_inputs_hash_like_their_concatenation() {
        assert_eq!(g(b"ab", b"cd"), g(b"abc", b"d"));
        assert_eq!(j(b"ab", b"cd"), j(b"a", b"bcd"));
        let mut out1 = [0u8; 128];
        let mut out2 = [0u8; 128];
        prf(&[7; 32], 3, &mut out1);
        let mut x = Shake256::default();
        x.update(&[7; 32]);
        x.update(&[3]);
        x.finalize_xof().read(&mut out2);
        assert_eq!(out1, out2);

        // XOF(ρ, i, j) absorbs ρ ‖ i ‖ j in that order.
        let mut xof_out = [0u8; 200];
        let mut expected = [0u8; 200];
        xof(&[9; 32], 1, 2).read(&mut xof_out);
        let mut x = Shake128::default();
        x.update(&[9; 32]);
        x.update(&[1, 2]);
        x.finalize_xof().read(&mut expected);
        assert_eq!(xof_out, expected);
    }
}
