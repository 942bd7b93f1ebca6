//! The few TLS 1.3 wire structures the man in the middle reads and rewrites
//! (RFC 8446): records, and the ClientHello / ServerHello with their
//! `key_share` extension. Everything else passes through as opaque bytes.

use std::io::{self, Read, Write};

/// Record content types.
pub const ALERT: u8 = 21;
pub const HANDSHAKE: u8 = 22;

/// Handshake message types.
pub const CLIENT_HELLO: u8 = 1;
pub const SERVER_HELLO: u8 = 2;

/// The `key_share` extension.
const KEY_SHARE: u16 = 51;

/// The ServerHello random that marks a HelloRetryRequest (RFC 8446, 4.1.3).
const HELLO_RETRY_RANDOM: [u8; 32] = [
    0xCF, 0x21, 0xAD, 0x74, 0xE5, 0x9A, 0x61, 0x11, 0xBE, 0x1D, 0x8C, 0x02, 0x1E, 0x65, 0xB8, 0x91,
    0xC2, 0xA2, 0x11, 0x16, 0x7A, 0xBB, 0x8C, 0x5E, 0x07, 0x9E, 0x09, 0xE2, 0xC8, 0xA8, 0x33, 0x9C,
];

/// One TLS record.
pub struct Record {
    pub content_type: u8,
    pub version: [u8; 2],
    pub fragment: Vec<u8>,
}

impl Record {
    /// Reads one record; `None` at a clean end of stream between records.
    pub fn read(from: &mut impl Read) -> io::Result<Option<Self>> {
        let mut header = [0u8; 5];
        match from.read(&mut header[..1])? {
            0 => return Ok(None),
            _ => from.read_exact(&mut header[1..])?,
        }
        let len = usize::from(u16::from_be_bytes([header[3], header[4]]));
        let mut fragment = vec![0u8; len];
        from.read_exact(&mut fragment)?;
        Ok(Some(Self {
            content_type: header[0],
            version: [header[1], header[2]],
            fragment,
        }))
    }

    /// Writes the record, its length taken from the fragment.
    pub fn write(&self, to: &mut impl Write) -> io::Result<()> {
        let len = u16::try_from(self.fragment.len()).expect("record too long");
        let mut out = Vec::with_capacity(5 + self.fragment.len());
        out.push(self.content_type);
        out.extend_from_slice(&self.version);
        out.extend_from_slice(&len.to_be_bytes());
        out.extend_from_slice(&self.fragment);
        to.write_all(&out)
    }
}

/// One `KeyShareEntry`: a group and its key exchange bytes (an encapsulation
/// key from the client, a ciphertext from the server, each with the
/// classical part for the hybrids).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyShare {
    pub group: u16,
    pub key_exchange: Vec<u8>,
}

/// A ClientHello or ServerHello: the fixed fields before the extensions,
/// kept as bytes, and the extensions.
pub struct Hello {
    pub msg_type: u8,
    head: Vec<u8>,
    extensions: Vec<(u16, Vec<u8>)>,
}

/// A forward-only reader over a byte string; every read checks bounds.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let out = self.bytes.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(out)
    }

    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }

    fn u16(&mut self) -> Option<u16> {
        self.take(2).map(|b| u16::from_be_bytes([b[0], b[1]]))
    }

    fn vec8(&mut self) -> Option<&'a [u8]> {
        let n = usize::from(self.u8()?);
        self.take(n)
    }

    fn vec16(&mut self) -> Option<&'a [u8]> {
        let n = usize::from(self.u16()?);
        self.take(n)
    }

    fn done(&self) -> bool {
        self.at == self.bytes.len()
    }
}

fn push_vec16(out: &mut Vec<u8>, bytes: &[u8]) {
    let len = u16::try_from(bytes.len()).expect("vector too long");
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(bytes);
}

impl Hello {
    /// Parses a handshake record's fragment holding exactly one ClientHello
    /// or ServerHello (not a HelloRetryRequest); `None` otherwise.
    pub fn parse(fragment: &[u8]) -> Option<Self> {
        let mut outer = Cursor {
            bytes: fragment,
            at: 0,
        };
        let msg_type = outer.u8()?;
        let len = outer.take(3)?;
        let len = usize::from(len[0]) << 16 | usize::from(len[1]) << 8 | usize::from(len[2]);
        let body = outer.take(len)?;
        if !outer.done() {
            return None;
        }
        let mut body = Cursor { bytes: body, at: 0 };
        body.take(2)?; // legacy_version
        let random = body.take(32)?;
        body.vec8()?; // legacy_session_id(_echo)
        match msg_type {
            CLIENT_HELLO => {
                body.vec16()?; // cipher_suites
                body.vec8()?; // legacy_compression_methods
            }
            SERVER_HELLO if random != HELLO_RETRY_RANDOM => {
                body.take(3)?; // cipher_suite, legacy_compression_method
            }
            _ => return None,
        }
        let head = body.bytes[..body.at].to_vec();
        let mut list = Cursor {
            bytes: body.vec16()?,
            at: 0,
        };
        if !body.done() {
            return None;
        }
        let mut extensions = Vec::new();
        while !list.done() {
            let kind = list.u16()?;
            extensions.push((kind, list.vec16()?.to_vec()));
        }
        Some(Self {
            msg_type,
            head,
            extensions,
        })
    }

    /// The message, lengths recomputed.
    pub fn encode(&self) -> Vec<u8> {
        let mut list = Vec::new();
        for (kind, data) in &self.extensions {
            list.extend_from_slice(&kind.to_be_bytes());
            push_vec16(&mut list, data);
        }
        let mut body = self.head.clone();
        push_vec16(&mut body, &list);
        let len = u32::try_from(body.len()).expect("message too long");
        let mut out = vec![self.msg_type];
        out.extend_from_slice(&len.to_be_bytes()[1..]);
        out.extend_from_slice(&body);
        out
    }

    fn key_share_data(&self) -> Option<&[u8]> {
        self.extensions
            .iter()
            .find(|(kind, _)| *kind == KEY_SHARE)
            .map(|(_, data)| data.as_slice())
    }

    /// The key shares: the ClientHello's list, or the ServerHello's one.
    pub fn key_shares(&self) -> Option<Vec<KeyShare>> {
        let data = self.key_share_data()?;
        let mut list = Cursor { bytes: data, at: 0 };
        if self.msg_type == CLIENT_HELLO {
            list = Cursor {
                bytes: list.vec16()?,
                at: 0,
            };
        }
        let mut shares = Vec::new();
        while !list.done() {
            let group = list.u16()?;
            let key_exchange = list.vec16()?.to_vec();
            shares.push(KeyShare {
                group,
                key_exchange,
            });
        }
        Some(shares)
    }

    /// Replaces the key shares (a ServerHello takes exactly one).
    pub fn set_key_shares(&mut self, shares: &[KeyShare]) {
        let mut entries = Vec::new();
        for share in shares {
            entries.extend_from_slice(&share.group.to_be_bytes());
            push_vec16(&mut entries, &share.key_exchange);
        }
        let data = if self.msg_type == CLIENT_HELLO {
            let mut data = Vec::new();
            push_vec16(&mut data, &entries);
            data
        } else {
            assert_eq!(shares.len(), 1, "a ServerHello carries one key share");
            entries
        };
        let slot = self
            .extensions
            .iter_mut()
            .find(|(kind, _)| *kind == KEY_SHARE)
            .expect("key_share extension");
        slot.1 = data;
    }
}

/// The name of a TLS alert description (RFC 8446, 6).
pub fn alert_name(description: u8) -> String {
    match description {
        0 => "close_notify".into(),
        10 => "unexpected_message".into(),
        20 => "bad_record_mac".into(),
        40 => "handshake_failure".into(),
        42 => "bad_certificate".into(),
        47 => "illegal_parameter".into(),
        50 => "decode_error".into(),
        51 => "decrypt_error".into(),
        70 => "protocol_version".into(),
        71 => "insufficient_security".into(),
        80 => "internal_error".into(),
        109 => "missing_extension".into(),
        110 => "unsupported_extension".into(),
        other => format!("alert_{other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal ClientHello with one key share round-trips, and a rewritten
    /// share comes back with every length updated.
    #[test]
    fn client_hello_round_trip_and_rewrite() {
        let mut body = vec![0x03, 0x03];
        body.extend_from_slice(&[7u8; 32]);
        body.push(0); // session id
        push_vec16(&mut body, &[0x13, 0x01]);
        body.extend_from_slice(&[1, 0]);
        let mut share = vec![0x02, 0x01];
        push_vec16(&mut share, &[9u8; 4]);
        let mut key_share = Vec::new();
        push_vec16(&mut key_share, &share);
        let mut extensions = 51u16.to_be_bytes().to_vec();
        push_vec16(&mut extensions, &key_share);
        push_vec16(&mut body, &extensions);
        let mut message = vec![CLIENT_HELLO, 0, 0, body.len() as u8];
        message.extend_from_slice(&body);

        let mut hello = Hello::parse(&message).expect("parse");
        assert_eq!(hello.encode(), message);
        let shares = hello.key_shares().expect("shares");
        assert_eq!(
            shares,
            [KeyShare {
                group: 0x0201,
                key_exchange: vec![9; 4]
            }]
        );
        let longer = KeyShare {
            group: 0x0201,
            key_exchange: vec![5; 300],
        };
        hello.set_key_shares(&[longer.clone(), shares[0].clone()]);
        let reparsed = Hello::parse(&hello.encode()).expect("reparse");
        assert_eq!(
            reparsed.key_shares().expect("shares"),
            [longer, shares[0].clone()]
        );
    }
}
