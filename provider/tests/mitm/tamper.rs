//! The groups under test, their key-share layouts, and the rewrites the man
//! in the middle applies to one key share, with what each must lead to.

use std::collections::HashMap;
use std::fmt;

use super::wire::KeyShare;

/// The classical half of a hybrid group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Curve {
    X25519,
    P256,
    P384,
}

impl Curve {
    /// The encoded public key's length (raw X25519, or an uncompressed
    /// point), the same in both hellos.
    fn len(self) -> usize {
        match self {
            Curve::X25519 => 32,
            Curve::P256 => 65,
            Curve::P384 => 97,
        }
    }

    /// The field prime, big-endian (EC curves only).
    fn prime(self) -> &'static [u8] {
        match self {
            Curve::X25519 => unreachable!("X25519 keys are not points"),
            Curve::P256 => &[
                0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                0xff, 0xff, 0xff, 0xff,
            ],
            Curve::P384 => &[
                0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                0xff, 0xff, 0xff, 0xfe, 0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                0x00, 0x00, 0xff, 0xff, 0xff, 0xff,
            ],
        }
    }
}

/// One TLS group we offer: its code point and key-share layout.
#[derive(Debug)]
pub struct Group {
    pub name: &'static str,
    pub id: u16,
    /// ML-KEM encapsulation key and ciphertext lengths.
    ek_len: usize,
    ct_len: usize,
    /// The classical half, and whether the ML-KEM part comes first.
    hybrid: Option<(Curve, bool)>,
}

/// Every group the provider offers (provider/src/algorithms.rs and
/// hybrid.rs), each followed in [`Group::other`] by the next.
pub const GROUPS: [Group; 6] = [
    Group {
        name: "MLKEM512",
        id: 0x0200,
        ek_len: 800,
        ct_len: 768,
        hybrid: None,
    },
    Group {
        name: "MLKEM768",
        id: 0x0201,
        ek_len: 1184,
        ct_len: 1088,
        hybrid: None,
    },
    Group {
        name: "MLKEM1024",
        id: 0x0202,
        ek_len: 1568,
        ct_len: 1568,
        hybrid: None,
    },
    Group {
        name: "X25519MLKEM768",
        id: 0x11EC,
        ek_len: 1184,
        ct_len: 1088,
        hybrid: Some((Curve::X25519, true)),
    },
    Group {
        name: "SecP256r1MLKEM768",
        id: 0x11EB,
        ek_len: 1184,
        ct_len: 1088,
        hybrid: Some((Curve::P256, false)),
    },
    Group {
        name: "SecP384r1MLKEM1024",
        id: 0x11ED,
        ek_len: 1568,
        ct_len: 1568,
        hybrid: Some((Curve::P384, false)),
    },
];

/// Which hello is rewritten, and so which of our peers is under attack.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    /// The ClientHello's key share (an encapsulation key) is rewritten:
    /// our server's encapsulation and key checks face it.
    OurServer,
    /// The ServerHello's key share (a ciphertext) is rewritten: our
    /// client's decapsulation and ciphertext checks face it.
    OurClient,
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Side::OurServer => "our server (ClientHello)",
            Side::OurClient => "our client (ServerHello)",
        })
    }
}

impl Group {
    /// The group after this one, whose valid shares serve as "another
    /// group's share"; its lengths differ from this group's in both hellos.
    pub fn other(&self) -> &'static Group {
        let at = GROUPS.iter().position(|g| g.id == self.id).expect("group");
        &GROUPS[(at + 1) % GROUPS.len()]
    }

    /// The ML-KEM part's length in `side`'s rewritten hello.
    fn ml_kem_len(&self, side: Side) -> usize {
        match side {
            Side::OurServer => self.ek_len,
            Side::OurClient => self.ct_len,
        }
    }

    /// The (start, end) byte ranges of the ML-KEM part and of the
    /// classical part (empty for the pure groups) in a share.
    fn parts(&self, side: Side) -> ((usize, usize), (usize, usize)) {
        let ml_kem = self.ml_kem_len(side);
        match self.hybrid {
            None => ((0, ml_kem), (ml_kem, ml_kem)),
            Some((curve, true)) => ((0, ml_kem), (ml_kem, ml_kem + curve.len())),
            Some((curve, false)) => ((curve.len(), curve.len() + ml_kem), (0, curve.len())),
        }
    }

    /// The share's full length in `side`'s hello.
    pub fn share_len(&self, side: Side) -> usize {
        self.ml_kem_len(side) + self.hybrid.map_or(0, |(c, _)| c.len())
    }
}

/// One rewrite of the attacked key share.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tamper {
    /// The last byte dropped.
    Truncate1,
    /// Only the first half kept.
    TruncateHalf,
    /// An empty key_exchange.
    Empty,
    /// A zero byte appended.
    Extend1,
    /// Every byte zero.
    AllZero,
    /// Every byte 0xff (ML-KEM: coefficients 4095, above q).
    AllOnes,
    /// Bit 0 of the byte at this offset flipped (offsets past the end wrap).
    FlipAt(usize),
    /// The ML-KEM part zeroed.
    MlKemZero,
    /// The ML-KEM part all 0xff.
    MlKemOnes,
    /// One bit in the middle of the ML-KEM part flipped.
    MlKemFlip,
    /// The ML-KEM part cut or padded to another parameter set's length.
    MlKemWrongLength,
    /// The classical part zeroed (X25519 u = 0, a low-order point; an EC
    /// encoding with no valid prefix).
    ClassicalZero,
    /// EC: y + 1, off the curve; X25519: u = 1, a low-order point.
    ClassicalOffCurve,
    /// EC: x = p, a coordinate not reduced mod p; X25519: u = p + 1, the
    /// unreduced encoding of the low-order point 1.
    ClassicalNonCanonical,
    /// EC: the point at infinity (a single 0x00); X25519: 31 bytes.
    ClassicalShort,
    /// EC: the "hybrid" 0x06/0x07 form of the same point, which TLS
    /// forbids; X25519: the top bit set (ignored by RFC 7748 decoding).
    ClassicalForm,
    /// The group kept, the bytes a valid share of [`Group::other`] from an
    /// earlier handshake.
    OtherGroupShare,
    /// The bytes kept, the group relabelled as [`Group::other`].
    Relabel,
    /// A valid share of the same group from an earlier handshake.
    Replay,
    /// ClientHello only: a valid share of [`Group::other`] (a group the
    /// client supports but sent no share for) inserted before the client's.
    InjectBefore,
    /// ClientHello only: the same share appended after the client's.
    InjectAfter,
    /// ClientHello only: the client's share sent twice.
    Duplicate,
}

impl fmt::Display for Tamper {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tamper::FlipAt(at) => write!(f, "flip bit at {at}"),
            other => write!(f, "{other:?}"),
        }
    }
}

/// What a rewrite must lead to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    /// Refused when the share is parsed or used: an alert other than the
    /// record-layer failures of a wrong secret (bad_record_mac,
    /// decrypt_error).
    Reject,
    /// Any fatal alert: the share decodes (ML-KEM's implicit rejection, a
    /// valid but different share), so the handshake fails on the derived
    /// keys or the transcript.
    Abort,
}

/// Valid shares of every group from earlier honest handshakes: the
/// ClientHello's and the ServerHello's key_exchange bytes.
#[derive(Default)]
pub struct Captured {
    pub client: HashMap<u16, Vec<u8>>,
    pub server: HashMap<u16, Vec<u8>>,
}

impl Captured {
    fn share(&self, side: Side, group: &Group) -> Vec<u8> {
        let map = match side {
            Side::OurServer => &self.client,
            Side::OurClient => &self.server,
        };
        map.get(&group.id)
            .unwrap_or_else(|| panic!("no captured share of {}", group.name))
            .clone()
    }
}

/// The rewrites for `group` on `side`, short form.
pub fn cases(group: &Group, side: Side) -> Vec<Tamper> {
    use Tamper::*;
    let len = group.share_len(side);
    let mut cases = vec![
        Truncate1,
        TruncateHalf,
        Empty,
        Extend1,
        AllZero,
        AllOnes,
        FlipAt(0),
        FlipAt(len / 2),
        FlipAt(len - 1),
        MlKemWrongLength,
        OtherGroupShare,
        Relabel,
        Replay,
    ];
    if group.hybrid.is_some() {
        cases.extend([
            MlKemZero,
            MlKemOnes,
            MlKemFlip,
            ClassicalZero,
            ClassicalOffCurve,
            ClassicalNonCanonical,
            ClassicalShort,
            ClassicalForm,
        ]);
    }
    if side == Side::OurServer {
        cases.extend([InjectBefore, InjectAfter, Duplicate]);
    }
    cases
}

fn fill(bytes: &mut [u8], (start, end): (usize, usize), value: u8) {
    bytes[start..end].fill(value);
}

impl Tamper {
    /// Rewrites the key shares of `side`'s hello (the first is the one
    /// under attack).
    pub fn apply(self, group: &Group, side: Side, captured: &Captured, shares: &mut Vec<KeyShare>) {
        use Tamper::*;
        assert_eq!(shares[0].group, group.id, "the hello offers {}", group.name);
        assert_eq!(shares[0].key_exchange.len(), group.share_len(side));
        let (ml_kem, classical) = group.parts(side);
        let curve = group.hybrid.map(|(c, _)| c);
        let other = group.other();
        let own = shares[0].clone();
        let bytes = &mut shares[0].key_exchange;
        let len = bytes.len();
        match self {
            Truncate1 => bytes.truncate(len - 1),
            TruncateHalf => bytes.truncate(len / 2),
            Empty => bytes.clear(),
            Extend1 => bytes.push(0),
            AllZero => bytes.fill(0),
            AllOnes => bytes.fill(0xff),
            FlipAt(at) => bytes[at % len] ^= 1,
            MlKemZero => fill(bytes, ml_kem, 0),
            MlKemOnes => fill(bytes, ml_kem, 0xff),
            MlKemFlip => bytes[(ml_kem.0 + ml_kem.1) / 2] ^= 1,
            MlKemWrongLength => {
                // ML-KEM-768's lengths for 512 and 1024, 512's for 768.
                let wrong = match group.ml_kem_len(side) {
                    1184 | 1088 => GROUPS[0].ml_kem_len(side),
                    _ => GROUPS[1].ml_kem_len(side),
                };
                let mut part = bytes[ml_kem.0..ml_kem.1].to_vec();
                part.resize(wrong, 0x5a);
                bytes.splice(ml_kem.0..ml_kem.1, part);
            }
            ClassicalZero => fill(bytes, classical, 0),
            ClassicalOffCurve => match curve.expect("hybrid") {
                Curve::X25519 => {
                    fill(bytes, classical, 0);
                    bytes[classical.0] = 1;
                }
                Curve::P256 | Curve::P384 => bytes[classical.1 - 1] ^= 1,
            },
            ClassicalNonCanonical => match curve.expect("hybrid") {
                Curve::X25519 => {
                    // p + 1 = 2^255 - 18, little-endian.
                    fill(bytes, classical, 0xff);
                    bytes[classical.0] = 0xee;
                    bytes[classical.1 - 1] = 0x7f;
                }
                c @ (Curve::P256 | Curve::P384) => {
                    let p = c.prime();
                    bytes[classical.0 + 1..classical.0 + 1 + p.len()].copy_from_slice(p);
                }
            },
            ClassicalShort => {
                let short: &[u8] = match curve.expect("hybrid") {
                    Curve::X25519 => &bytes[classical.0..classical.1 - 1],
                    Curve::P256 | Curve::P384 => &[0],
                };
                let short = short.to_vec();
                bytes.splice(classical.0..classical.1, short);
            }
            ClassicalForm => match curve.expect("hybrid") {
                Curve::X25519 => bytes[classical.1 - 1] |= 0x80,
                Curve::P256 | Curve::P384 => {
                    let y_odd = bytes[classical.1 - 1] & 1;
                    bytes[classical.0] = 0x06 | y_odd;
                }
            },
            OtherGroupShare => *bytes = captured.share(side, other),
            Relabel => shares[0].group = other.id,
            Replay => {
                let earlier = captured.share(side, group);
                assert_ne!(&earlier, bytes, "a fresh share each handshake");
                *bytes = earlier;
            }
            InjectBefore | InjectAfter => {
                let injected = KeyShare {
                    group: other.id,
                    key_exchange: captured.share(side, other),
                };
                let at = if self == InjectBefore {
                    0
                } else {
                    shares.len()
                };
                shares.insert(at, injected);
            }
            Duplicate => shares.push(own),
        }
    }

    /// What this rewrite of `group`'s share on `side` must lead to.
    pub fn expect(self, group: &Group, side: Side) -> Expect {
        use Tamper::*;
        let (_, classical) = group.parts(side);
        let curve = group.hybrid.map(|(c, _)| c);
        let ec = matches!(curve, Some(Curve::P256 | Curve::P384));
        let reject = match self {
            // Lengths no decoder may take.
            Truncate1 | TruncateHalf | Empty | Extend1 | MlKemWrongLength | ClassicalShort
            | OtherGroupShare | Relabel => true,
            // Coefficients above q in an encapsulation key (FIPS 203's
            // modulus check); a ciphertext has no such check, but the
            // classical part then has an invalid prefix (EC) or an X25519
            // u = 2^255 - 1, which is valid.
            AllOnes => side == Side::OurServer || ec,
            MlKemOnes => side == Side::OurServer,
            // An all-zero ML-KEM part is a valid key / ciphertext; an
            // all-zero classical part never is.
            AllZero => curve.is_some(),
            // A flipped bit is caught only in an EC point.
            FlipAt(at) => ec && (classical.0..classical.1).contains(&(at % group.share_len(side))),
            MlKemZero | MlKemFlip => false,
            ClassicalZero | ClassicalOffCurve | ClassicalNonCanonical => true,
            ClassicalForm => ec,
            Replay | InjectBefore | InjectAfter | Duplicate => false,
        };
        if reject {
            Expect::Reject
        } else {
            Expect::Abort
        }
    }
}
