//! The plaintext exchanges that come before TLS on mail and database
//! ports, as `openssl s_client -starttls` does them.

use std::io::{Read, Write};

use clap::ValueEnum;
use serde::Serialize;

/// A protocol that upgrades to TLS in band.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    /// SMTP's STARTTLS (RFC 3207).
    Smtp,
    /// IMAP's STARTTLS (RFC 3501).
    Imap,
    /// POP3's STLS (RFC 2595).
    Pop3,
    /// PostgreSQL's SSLRequest.
    Postgres,
    /// MySQL and MariaDB's SSL request packet.
    Mysql,
}

/// The longest line or packet read before the handshake.
const MAX_LINE: usize = 8192;

/// The most lines of one reply (SMTP's continuation lines, IMAP's untagged
/// lines before the tagged answer): real servers send a few dozen at most.
const MAX_LINES: usize = 100;

impl Protocol {
    /// The port it is served on when none is given.
    pub fn default_port(self) -> u16 {
        match self {
            Protocol::Smtp => 25,
            Protocol::Imap => 143,
            Protocol::Pop3 => 110,
            Protocol::Postgres => 5432,
            Protocol::Mysql => 3306,
        }
    }

    /// Runs the exchange on a connected stream; afterwards the stream is
    /// ready for the TLS handshake.
    pub fn prepare<S: Read + Write>(self, stream: &mut S) -> Result<(), String> {
        match self {
            Protocol::Smtp => {
                expect_reply(stream, "220", "an SMTP greeting")?;
                send(stream, b"EHLO mlkem-provider-check\r\n")?;
                let lines = expect_reply(stream, "250", "an answer to EHLO")?;
                if !lines
                    .iter()
                    .any(|l| l.to_ascii_uppercase().contains("STARTTLS"))
                {
                    return Err("the SMTP server does not offer STARTTLS".into());
                }
                send(stream, b"STARTTLS\r\n")?;
                expect_reply(stream, "220", "an answer to STARTTLS").map(drop)
            }
            Protocol::Imap => {
                let greeting = read_line(stream)?;
                if !greeting.starts_with("* OK") {
                    return Err(format!("not an IMAP greeting: {}", shown(&greeting)));
                }
                send(stream, b". STARTTLS\r\n")?;
                for _ in 0..MAX_LINES {
                    let line = read_line(stream)?;
                    if let Some(status) = line.strip_prefix(". ") {
                        return if status.starts_with("OK") {
                            Ok(())
                        } else {
                            Err(format!(
                                "the IMAP server refuses STARTTLS: {}",
                                shown(&line)
                            ))
                        };
                    }
                }
                Err(format!(
                    "expected an answer to STARTTLS, got more than {MAX_LINES} untagged lines"
                ))
            }
            Protocol::Pop3 => {
                let greeting = read_line(stream)?;
                if !greeting.starts_with("+OK") {
                    return Err(format!("not a POP3 greeting: {}", shown(&greeting)));
                }
                send(stream, b"STLS\r\n")?;
                let answer = read_line(stream)?;
                if answer.starts_with("+OK") {
                    Ok(())
                } else {
                    Err(format!("the POP3 server refuses STLS: {}", shown(&answer)))
                }
            }
            Protocol::Postgres => {
                // SSLRequest: length 8, code 80877103.
                send(stream, &[0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f])?;
                let mut answer = [0u8; 1];
                read_exact(stream, &mut answer)?;
                match answer[0] {
                    b'S' => Ok(()),
                    b'N' => Err("the PostgreSQL server does not accept TLS (ssl = off)".into()),
                    other => Err(format!(
                        "not a PostgreSQL server (it answered byte {other:#04x})"
                    )),
                }
            }
            Protocol::Mysql => mysql(stream),
        }
    }
}

/// MySQL/MariaDB: the server greets first; the client answers with an
/// SSL request packet (what `openssl s_client -starttls mysql` sends).
fn mysql<S: Read + Write>(stream: &mut S) -> Result<(), String> {
    let mut header = [0u8; 4];
    read_exact(stream, &mut header)?;
    let len = usize::from(header[0]) | usize::from(header[1]) << 8 | usize::from(header[2]) << 16;
    if len > MAX_LINE {
        return Err("not a MySQL greeting (too long)".into());
    }
    let mut greeting = vec![0u8; len];
    read_exact(stream, &mut greeting)?;
    match greeting.first() {
        Some(10) => {}
        Some(0xff) => {
            let message = String::from_utf8_lossy(greeting.get(3..).unwrap_or_default());
            return Err(format!(
                "the MySQL server refuses the connection: {}",
                shown(&message)
            ));
        }
        _ => return Err("not a MySQL greeting".into()),
    }
    // After the version string: connection id (4), auth data (8), filler
    // (1), then the capability flags' lower half.
    let end = greeting[1..]
        .iter()
        .position(|&b| b == 0)
        .ok_or("not a MySQL greeting")?
        + 1;
    let caps = greeting
        .get(end + 14..end + 16)
        .map(|b| u16::from_le_bytes([b[0], b[1]]))
        .ok_or("not a MySQL greeting (too short)")?;
    const CLIENT_SSL: u16 = 0x0800;
    if caps & CLIENT_SSL == 0 {
        return Err("the MySQL server does not offer TLS (have_ssl is off)".into());
    }
    let mut request = vec![
        0x20, 0x00, 0x00, 0x01, 0x85, 0xae, 0x7f, 0x00, 0, 0, 0, 1, 0x21,
    ];
    request.resize(4 + 32, 0);
    send(stream, &request)
}

fn send<S: Write>(stream: &mut S, bytes: &[u8]) -> Result<(), String> {
    stream
        .write_all(bytes)
        .and_then(|()| stream.flush())
        .map_err(|e| format!("sending to the server: {}", io_reason(&e)))
}

fn read_exact<S: Read>(stream: &mut S, buf: &mut [u8]) -> Result<(), String> {
    stream
        .read_exact(buf)
        .map_err(|e| format!("reading the server's answer: {}", io_reason(&e)))
}

fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        // The deadline's own error says which.
        std::io::ErrorKind::TimedOut if e.get_ref().is_some() => e.to_string(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => "no answer in time".into(),
        std::io::ErrorKind::UnexpectedEof => "the server closed the connection".into(),
        _ => e.to_string(),
    }
}

/// One line, CRLF or LF ended, without its end.
fn read_line<S: Read>(stream: &mut S) -> Result<String, String> {
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    while line.len() < MAX_LINE {
        read_exact(stream, &mut byte)?;
        if byte[0] == b'\n' {
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            return Ok(String::from_utf8_lossy(&line).into_owned());
        }
        line.push(byte[0]);
    }
    Err("the server sent a line too long for this protocol".into())
}

/// An SMTP-style reply (`250-...` lines, then `250 ...`), which must carry
/// `code`.
fn expect_reply<S: Read>(stream: &mut S, code: &str, what: &str) -> Result<Vec<String>, String> {
    let mut lines = Vec::new();
    loop {
        let line = read_line(stream)?;
        if !line.starts_with(code) {
            return Err(format!("expected {what}, got: {}", shown(&line)));
        }
        let last = line.as_bytes().get(3) != Some(&b'-');
        lines.push(line);
        if last {
            return Ok(lines);
        }
        if lines.len() >= MAX_LINES {
            return Err(format!("expected {what}, got more than {MAX_LINES} lines"));
        }
    }
}

/// Text from the server, printable and at most 60 characters.
fn shown(text: &str) -> String {
    let clean: String = text
        .chars()
        .map(|c| if c.is_control() { '.' } else { c })
        .take(60)
        .collect();
    format!("\"{clean}\"")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    /// A scripted server: what it says, and a record of what it was sent.
    struct Script {
        says: Cursor<Vec<u8>>,
        heard: Vec<u8>,
    }

    impl Script {
        fn new(says: &[u8]) -> Self {
            Self {
                says: Cursor::new(says.to_vec()),
                heard: Vec::new(),
            }
        }
    }

    impl Read for Script {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            self.says.read(buf)
        }
    }

    impl Write for Script {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.heard.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn smtp_needs_starttls_in_the_ehlo_answer() {
        let mut good =
            Script::new(b"220 mx ESMTP\r\n250-mx\r\n250-STARTTLS\r\n250 8BITMIME\r\n220 go\r\n");
        Protocol::Smtp.prepare(&mut good).unwrap();
        assert_eq!(good.heard, b"EHLO mlkem-provider-check\r\nSTARTTLS\r\n");
        let mut plain = Script::new(b"220 mx ESMTP\r\n250 mx\r\n");
        assert!(Protocol::Smtp
            .prepare(&mut plain)
            .unwrap_err()
            .contains("does not offer STARTTLS"));
        let mut http = Script::new(b"HTTP/1.1 400 Bad Request\r\n");
        assert!(Protocol::Smtp
            .prepare(&mut http)
            .unwrap_err()
            .contains("expected an SMTP greeting"));
        let mut silent = Script::new(b"");
        assert!(Protocol::Smtp
            .prepare(&mut silent)
            .unwrap_err()
            .contains("closed the connection"));
    }

    #[test]
    fn imap_pop3_and_postgres_answers() {
        let mut imap = Script::new(b"* OK ready\r\n* note\r\n. OK begin TLS\r\n");
        Protocol::Imap.prepare(&mut imap).unwrap();
        let mut refused = Script::new(b"* OK ready\r\n. NO not now\r\n");
        assert!(Protocol::Imap.prepare(&mut refused).is_err());
        Protocol::Pop3
            .prepare(&mut Script::new(b"+OK hi\r\n+OK go\r\n"))
            .unwrap();
        let mut pg = Script::new(b"S");
        Protocol::Postgres.prepare(&mut pg).unwrap();
        assert_eq!(pg.heard, [0, 0, 0, 8, 4, 210, 22, 47]);
        assert!(Protocol::Postgres
            .prepare(&mut Script::new(b"N"))
            .unwrap_err()
            .contains("ssl = off"));
    }

    #[test]
    fn replies_are_capped_in_lines() {
        let imap = |untagged: usize| {
            let mut says = b"* OK ready\r\n".to_vec();
            says.extend(b"* OK wait\r\n".repeat(untagged));
            says.extend_from_slice(b". OK begin TLS\r\n");
            Protocol::Imap.prepare(&mut Script::new(&says))
        };
        imap(MAX_LINES - 1).unwrap();
        assert!(imap(MAX_LINES)
            .unwrap_err()
            .contains("more than 100 untagged lines"));
        let mut banner = b"220-mx\r\n".repeat(MAX_LINES);
        banner.extend_from_slice(b"220 mx\r\n");
        assert!(Protocol::Smtp
            .prepare(&mut Script::new(&banner))
            .unwrap_err()
            .contains("got more than 100 lines"));
    }

    #[test]
    fn mysql_sends_the_ssl_request_when_offered() {
        let mut greeting = vec![10];
        greeting.extend_from_slice(b"10.11.6-MariaDB\0");
        greeting.extend_from_slice(&[1, 0, 0, 0]); // connection id
        greeting.extend_from_slice(&[7; 8]); // auth data
        greeting.push(0); // filler
        greeting.extend_from_slice(&0xfffeu16.to_le_bytes());
        let mut packet = vec![u8::try_from(greeting.len()).unwrap(), 0, 0, 0];
        packet.extend_from_slice(&greeting);
        let mut server = Script::new(&packet);
        Protocol::Mysql.prepare(&mut server).unwrap();
        assert_eq!(server.heard.len(), 36);
        assert_eq!(&server.heard[..5], [0x20, 0, 0, 1, 0x85]);

        let without = packet.len() - 2;
        packet[without] = 0; // capability bits without CLIENT_SSL
        packet[without + 1] = 0;
        assert!(Protocol::Mysql
            .prepare(&mut Script::new(&packet))
            .unwrap_err()
            .contains("does not offer TLS"));
    }
}
