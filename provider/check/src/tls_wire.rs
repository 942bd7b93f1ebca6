//! What the check reads off the wire: the ClientHello's groups and key
//! shares, and the server's answer (a HelloRetryRequest, the ServerHello's
//! group). Both travel in plaintext handshake records in TLS 1.3, so they
//! are read from a copy of the bytes each side sent (RFC 8446, 4.1-4.2).

const RECORD_CHANGE_CIPHER_SPEC: u8 = 20;
const RECORD_ALERT: u8 = 21;
const RECORD_HANDSHAKE: u8 = 22;
const CLIENT_HELLO: u8 = 1;
const SERVER_HELLO: u8 = 2;
const EXT_SUPPORTED_GROUPS: u16 = 10;
const EXT_SUPPORTED_VERSIONS: u16 = 43;
const EXT_KEY_SHARE: u16 = 51;
const TLS13: u16 = 0x0304;

/// A HelloRetryRequest is a ServerHello with this random (RFC 8446, 4.1.3).
const HELLO_RETRY_RANDOM: [u8; 32] = [
    0xcf, 0x21, 0xad, 0x74, 0xe5, 0x9a, 0x61, 0x11, 0xbe, 0x1d, 0x8c, 0x02, 0x1e, 0x65, 0xb8, 0x91,
    0xc2, 0xa2, 0x11, 0x16, 0x7a, 0xbb, 0x8c, 0x5e, 0x07, 0x9e, 0x09, 0xe2, 0xc8, 0xa8, 0x33, 0x9c,
];

/// The groups a ClientHello offers, in the client's order of preference.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClientHello {
    /// supported_groups, in order.
    pub groups: Vec<u16>,
    /// The groups the client sent a key share for.
    pub key_shares: Vec<u16>,
}

/// What the server's plaintext flight says.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServerAnswer {
    /// The group a HelloRetryRequest asked for, if the server sent one.
    pub hello_retry_group: Option<u16>,
    /// The group of the (final) ServerHello's key share.
    pub group: Option<u16>,
    /// The version the ServerHello selected (0x0304 for TLS 1.3).
    pub version: Option<u16>,
    /// An alert the server sent before encryption started: (level, code).
    pub alert: Option<(u8, u8)>,
    /// Whether the bytes began like TLS records at all.
    pub looked_like_tls: bool,
}

impl ServerAnswer {
    /// Whether the server selected TLS 1.3.
    pub fn is_tls13(&self) -> bool {
        self.version == Some(TLS13)
    }
}

/// The largest record a TLS peer may send: 2^14 bytes of plaintext plus
/// 2048 of expansion (RFC 5246, 6.2.3; TLS 1.3 allows only 256).
pub const MAX_RECORD: usize = (1 << 14) + 2048;

/// Follows the record framing of the bytes a server sends, to refuse a
/// record whose header announces more than [`MAX_RECORD`] bytes before any
/// of its body is read.
#[derive(Debug, Default)]
pub struct RecordFraming {
    header: [u8; 5],
    have: usize,
    body_left: usize,
}

impl RecordFraming {
    /// Takes the next bytes of the stream; an error is the length a
    /// header announced.
    pub fn feed(&mut self, mut bytes: &[u8]) -> Result<(), usize> {
        while !bytes.is_empty() {
            if self.body_left > 0 {
                let n = self.body_left.min(bytes.len());
                self.body_left -= n;
                bytes = &bytes[n..];
                continue;
            }
            self.header[self.have] = bytes[0];
            self.have += 1;
            bytes = &bytes[1..];
            if self.have == self.header.len() {
                self.have = 0;
                let len = usize::from(u16::from_be_bytes([self.header[3], self.header[4]]));
                if len > MAX_RECORD {
                    return Err(len);
                }
                self.body_left = len;
            }
        }
        Ok(())
    }
}

/// A bounds-checked reader of TLS's big-endian, length-prefixed fields.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(head)
    }
    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }
    fn u16(&mut self) -> Option<u16> {
        self.take(2).map(|b| u16::from_be_bytes([b[0], b[1]]))
    }
    fn u24(&mut self) -> Option<usize> {
        self.take(3)
            .map(|b| usize::from(b[0]) << 16 | usize::from(b[1]) << 8 | usize::from(b[2]))
    }
    fn vec8(&mut self) -> Option<Reader<'a>> {
        let n = self.u8()?;
        self.take(usize::from(n)).map(Reader)
    }
    fn vec16(&mut self) -> Option<Reader<'a>> {
        let n = self.u16()?;
        self.take(usize::from(n)).map(Reader)
    }
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The plaintext handshake bytes (records of type 22, across change cipher
/// spec records) at the start of a stream, and the first alert if one came
/// before encryption started. Stops at the first other record.
fn plaintext_handshake(stream: &[u8]) -> (Vec<u8>, Option<(u8, u8)>, bool) {
    let mut handshake = Vec::new();
    let mut reader = Reader(stream);
    let mut looked_like_tls = false;
    while let (Some(kind), Some(_version), Some(fragment)) =
        (reader.u8(), reader.u16(), reader.vec16())
    {
        match kind {
            RECORD_HANDSHAKE => handshake.extend_from_slice(fragment.0),
            RECORD_CHANGE_CIPHER_SPEC => {}
            RECORD_ALERT => {
                let alert = (fragment.0.len() == 2).then(|| (fragment.0[0], fragment.0[1]));
                return (handshake, alert, true);
            }
            _ => break,
        }
        looked_like_tls = true;
    }
    (handshake, None, looked_like_tls)
}

/// The handshake messages, as (type, body), in the plaintext part of a stream.
fn messages(handshake: &[u8]) -> Vec<(u8, &[u8])> {
    let mut reader = Reader(handshake);
    let mut out = Vec::new();
    while let Some(kind) = reader.u8() {
        match reader.u24().and_then(|n| reader.take(n)) {
            Some(body) => out.push((kind, body)),
            None => break,
        }
    }
    out
}

/// The extensions of a hello message, as (type, data).
fn extensions<'a>(reader: &mut Reader<'a>) -> Vec<(u16, Reader<'a>)> {
    let mut out = Vec::new();
    if let Some(mut list) = reader.vec16() {
        while let (Some(kind), Some(data)) = (list.u16(), list.vec16()) {
            out.push((kind, data));
        }
    }
    out
}

fn parse_client_hello(body: &[u8]) -> Option<ClientHello> {
    let mut r = Reader(body);
    r.take(2 + 32)?; // legacy_version, random
    r.vec8()?; // legacy_session_id
    r.vec16()?; // cipher_suites
    r.vec8()?; // legacy_compression_methods
    let mut hello = ClientHello::default();
    for (kind, mut data) in extensions(&mut r) {
        match kind {
            EXT_SUPPORTED_GROUPS => {
                let mut list = data.vec16()?;
                while let Some(group) = list.u16() {
                    hello.groups.push(group);
                }
            }
            EXT_KEY_SHARE => {
                let mut shares = data.vec16()?;
                while !shares.is_empty() {
                    hello.key_shares.push(shares.u16()?);
                    shares.vec16()?;
                }
            }
            _ => {}
        }
    }
    Some(hello)
}

/// The first ClientHello in the bytes a client sent.
pub fn client_hello(client_stream: &[u8]) -> Option<ClientHello> {
    let (handshake, _, _) = plaintext_handshake(client_stream);
    messages(&handshake)
        .into_iter()
        .find(|(kind, _)| *kind == CLIENT_HELLO)
        .and_then(|(_, body)| parse_client_hello(body))
}

/// What the server's plaintext flight says: HelloRetryRequest, ServerHello.
pub fn server_answer(server_stream: &[u8]) -> ServerAnswer {
    let (handshake, alert, looked_like_tls) = plaintext_handshake(server_stream);
    let mut answer = ServerAnswer {
        alert,
        looked_like_tls,
        ..ServerAnswer::default()
    };
    for (kind, body) in messages(&handshake) {
        if kind != SERVER_HELLO {
            continue;
        }
        let mut r = Reader(body);
        let (Some(_), Some(random)) = (r.u16(), r.take(32)) else {
            break;
        };
        let retry = random == HELLO_RETRY_RANDOM;
        if r.vec8().is_none() || r.take(2 + 1).is_none() {
            break;
        }
        let mut group = None;
        let mut version = None;
        for (ext, mut data) in extensions(&mut r) {
            match ext {
                EXT_KEY_SHARE => group = data.u16(),
                EXT_SUPPORTED_VERSIONS => version = data.u16(),
                _ => {}
            }
        }
        answer.version = version.or(Some(u16::from_be_bytes([body[0], body[1]])));
        if retry {
            answer.hello_retry_group = group;
        } else {
            answer.group = group;
            break;
        }
    }
    answer
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(kind: u8, payload: &[u8]) -> Vec<u8> {
        let mut out = vec![kind, 3, 3];
        out.extend_from_slice(&u16::try_from(payload.len()).unwrap().to_be_bytes());
        out.extend_from_slice(payload);
        out
    }

    fn message(kind: u8, body: &[u8]) -> Vec<u8> {
        let n = u32::try_from(body.len()).unwrap().to_be_bytes();
        let mut out = vec![kind, n[1], n[2], n[3]];
        out.extend_from_slice(body);
        out
    }

    fn ext(kind: u16, data: &[u8]) -> Vec<u8> {
        let mut out = kind.to_be_bytes().to_vec();
        out.extend_from_slice(&u16::try_from(data.len()).unwrap().to_be_bytes());
        out.extend_from_slice(data);
        out
    }

    fn vec16(data: &[u8]) -> Vec<u8> {
        let mut out = u16::try_from(data.len()).unwrap().to_be_bytes().to_vec();
        out.extend_from_slice(data);
        out
    }

    fn server_hello(random: [u8; 32], group: u16, share_len: usize) -> Vec<u8> {
        let mut body = vec![3, 3];
        body.extend_from_slice(&random);
        body.extend_from_slice(&[0, 0x13, 0x01, 0]);
        let mut share = group.to_be_bytes().to_vec();
        if share_len > 0 {
            share.extend_from_slice(&vec16(&vec![7; share_len]));
        }
        let exts = [
            ext(EXT_SUPPORTED_VERSIONS, &[3, 4]),
            ext(EXT_KEY_SHARE, &share),
        ]
        .concat();
        body.extend_from_slice(&vec16(&exts));
        message(SERVER_HELLO, &body)
    }

    #[test]
    fn reads_groups_and_key_shares_of_a_client_hello() {
        let mut body = vec![3, 3];
        body.extend_from_slice(&[0; 32]);
        body.extend_from_slice(&[0]); // session id
        body.extend_from_slice(&vec16(&[0x13, 0x01]));
        body.extend_from_slice(&[1, 0]);
        let groups = vec16(&[0x11, 0xec, 0x00, 0x1d]);
        let shares = vec16(&[[0x11, 0xec].as_slice(), &vec16(&[9; 1216])].concat());
        let exts = [
            ext(EXT_SUPPORTED_GROUPS, &groups),
            ext(EXT_KEY_SHARE, &shares),
        ]
        .concat();
        body.extend_from_slice(&vec16(&exts));
        let stream = record(RECORD_HANDSHAKE, &message(CLIENT_HELLO, &body));
        let hello = client_hello(&stream).unwrap();
        assert_eq!(hello.groups, [0x11ec, 0x001d]);
        assert_eq!(hello.key_shares, [0x11ec]);
        // A truncated stream yields nothing rather than a partial answer.
        assert_eq!(client_hello(&stream[..40]), None);
    }

    #[test]
    fn tells_a_hello_retry_request_from_the_server_hello() {
        let stream = [
            record(
                RECORD_HANDSHAKE,
                &server_hello(HELLO_RETRY_RANDOM, 0x001d, 0),
            ),
            record(RECORD_CHANGE_CIPHER_SPEC, &[1]),
            record(RECORD_HANDSHAKE, &server_hello([5; 32], 0x001d, 32)),
            record(23, &[0; 40]),
        ]
        .concat();
        let answer = server_answer(&stream);
        assert_eq!(answer.hello_retry_group, Some(0x001d));
        assert_eq!(answer.group, Some(0x001d));
        assert!(answer.is_tls13());

        let direct = server_answer(&record(
            RECORD_HANDSHAKE,
            &server_hello([5; 32], 0x11ec, 1088),
        ));
        assert_eq!(
            (direct.hello_retry_group, direct.group),
            (None, Some(0x11ec))
        );
    }

    #[test]
    fn refuses_an_oversized_record_at_its_header() {
        let mut framing = RecordFraming::default();
        let stream = [
            record(RECORD_HANDSHAKE, &[0; MAX_RECORD]),
            record(23, &[1; 300]),
        ]
        .concat();
        // Fed in odd pieces, as reads return them.
        for piece in stream.chunks(7) {
            framing.feed(piece).unwrap();
        }
        assert_eq!(framing.feed(&[22, 3, 3, 0x48]), Ok(()));
        assert_eq!(framing.feed(&[0x01]), Err(0x4801));
        assert_eq!(
            RecordFraming::default().feed(&[22, 3, 3, 0xff, 0xff, 2]),
            Err(65535)
        );
    }

    #[test]
    fn reports_alerts_and_bytes_that_are_not_tls() {
        let alert = server_answer(&record(RECORD_ALERT, &[2, 40]));
        assert_eq!(alert.alert, Some((2, 40)));
        let http = server_answer(b"HTTP/1.1 400 Bad Request\r\n\r\n");
        assert!(!http.looked_like_tls);
        assert_eq!(http.group, None);
        assert_eq!(server_answer(&[]), ServerAnswer::default());
    }
}
