//! The human-readable layout of `openssl pkey -text` for ML-KEM keys, as
//! OpenSSL's `ossl_ml_kem_key_to_text` prints it: 15 bytes a hex line in
//! 3.5 and 3.6, 16 from 4.0 on ([`bytes_per_line`]).

use zeroize::Zeroizing;

use super::{CodecError, KeyLayout, SEED_LEN};

/// Bytes per line of OpenSSL 3's hex dumps.
const BYTES_PER_LINE: usize = 15;

/// Bytes per line of the hex dumps of the OpenSSL whose version is `major`:
/// OpenSSL 4.0 moved `ossl_bio_print_labeled_buf` from 15 to 16.
pub fn bytes_per_line(major: u32) -> usize {
    if major >= 4 {
        16
    } else {
        BYTES_PER_LINE
    }
}
/// The indent of each hex dump line.
const INDENT: &str = "    ";

/// Prints an ML-KEM key as `openssl pkey -text` does.
///
/// With `include_private` and a seed or `dk`, prints the `Private-Key`
/// header and a `seed:` and `dk:` dump for each part present; then an `ek:`
/// dump if `ek` is present, under a `Public-Key` header if no private part
/// was printed. Each dump has `per_line` bytes a line (see
/// [`bytes_per_line`]), indented by four spaces, as lowercase hex joined by
/// `:`.
///
/// # Errors
///
/// [`CodecError::MissingKey`] if there is nothing to print.
pub fn key_to_text(
    layout: &KeyLayout,
    seed: Option<&[u8; SEED_LEN]>,
    dk: Option<&[u8]>,
    ek: Option<&[u8]>,
    include_private: bool,
    per_line: usize,
) -> Result<Zeroizing<String>, CodecError> {
    let private = include_private && (seed.is_some() || dk.is_some());
    let (header, dumps) = if private {
        let seed = seed.map(|seed| ("seed:", &seed[..]));
        let dk = dk.map(|dk| ("dk:", dk));
        (" Private-Key:\n", [seed, dk, ek.map(|ek| ("ek:", ek))])
    } else if let Some(ek) = ek {
        (" Public-Key:\n", [None, None, Some(("ek:", ek))])
    } else {
        return Err(CodecError::MissingKey);
    };

    let len = layout.name.len()
        + header.len()
        + dumps
            .iter()
            .flatten()
            .map(|(label, bytes)| dump_len(label, bytes.len(), per_line))
            .sum::<usize>();
    // Sized up front so the secret is never left behind by a reallocation.
    let mut text = Zeroizing::new(String::with_capacity(len));
    text.push_str(layout.name);
    text.push_str(header);
    for (label, bytes) in dumps.into_iter().flatten() {
        write_dump(&mut text, label, bytes, per_line);
    }
    debug_assert_eq!(text.len(), len);
    Ok(text)
}

/// Characters [`write_dump`] writes for `len` bytes.
fn dump_len(label: &str, len: usize, per_line: usize) -> usize {
    let lines = len.div_ceil(per_line);
    // Label and newline, indents, hex digits, separators, and newlines
    // between lines and at the end.
    label.len() + 1 + INDENT.len() * lines + 2 * len + len.saturating_sub(1) + lines.max(1)
}

/// Appends `label`, a newline and a hex dump of `bytes` in the layout of
/// OpenSSL's `ossl_bio_print_labeled_buf`: a line that continues ends in
/// `:`, the last does not.
fn write_dump(text: &mut String, label: &str, bytes: &[u8], per_line: usize) {
    text.push_str(label);
    text.push('\n');
    for (index, line) in bytes.chunks(per_line).enumerate() {
        if index > 0 {
            text.push_str(":\n");
        }
        text.push_str(INDENT);
        for (i, &byte) in line.iter().enumerate() {
            if i > 0 {
                text.push(':');
            }
            text.push(hex_digit(byte >> 4));
            text.push(hex_digit(byte & 0x0f));
        }
    }
    text.push('\n');
}

/// The lowercase hex digit for a nibble, without branching on it: `(9 -
/// n) >> 8` is all ones exactly when `n > 9`, adding the gap from `'9' + 1`
/// to `'a'`.
fn hex_digit(nibble: u8) -> char {
    let n = i16::from(nibble);
    let c = n + i16::from(b'0') + (((9 - n) >> 8) & i16::from(b'a' - b'0' - 10));
    char::from(c.to_le_bytes()[0])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::testutil::{keys, seed, ML_KEM_768};

    const TOY: KeyLayout = KeyLayout {
        name: "ML-KEM-TOY",
        oid: &[],
        ek_len: 3,
        dk_len: 2,
    };

    fn dump(bytes: &[u8]) -> String {
        let mut text = String::new();
        write_dump(&mut text, "x:", bytes, BYTES_PER_LINE);
        assert_eq!(text.len(), dump_len("x:", bytes.len(), BYTES_PER_LINE));
        text
    }

    #[test]
    fn openssl_4_prints_16_bytes_a_line() {
        assert_eq!(bytes_per_line(3), 15);
        assert_eq!(bytes_per_line(4), 16);
        let bytes: Vec<u8> = (0..32).collect();
        let mut text = String::new();
        write_dump(&mut text, "x:", &bytes, bytes_per_line(4));
        assert_eq!(text.lines().count(), 3, "label and two full lines:\n{text}");
        assert!(text.lines().nth(1).unwrap().ends_with("0e:0f:"));
        assert_eq!(text.len(), dump_len("x:", 32, 16));
    }

    #[test]
    fn hex_digits() {
        let digits: String = (0..16).map(hex_digit).collect();
        assert_eq!(digits, "0123456789abcdef");
    }

    #[test]
    fn dump_layout() {
        assert_eq!(dump(&[]), "x:\n\n");
        assert_eq!(dump(&[0xab]), "x:\n    ab\n");
        assert_eq!(dump(&[0x00, 0x0f, 0xf0]), "x:\n    00:0f:f0\n");
        let fifteen: Vec<u8> = (0..15).collect();
        assert_eq!(
            dump(&fifteen),
            "x:\n    00:01:02:03:04:05:06:07:08:09:0a:0b:0c:0d:0e\n"
        );
        let sixteen: Vec<u8> = (0..16).collect();
        assert_eq!(
            dump(&sixteen),
            "x:\n    00:01:02:03:04:05:06:07:08:09:0a:0b:0c:0d:0e:\n    0f\n"
        );
        let thirty: Vec<u8> = (0..30).collect();
        assert_eq!(
            dump(&thirty),
            "x:\n    00:01:02:03:04:05:06:07:08:09:0a:0b:0c:0d:0e:\n    \
             0f:10:11:12:13:14:15:16:17:18:19:1a:1b:1c:1d\n"
        );
    }

    #[test]
    fn seed_dump() {
        let text =
            key_to_text(&ML_KEM_768, Some(&seed()), None, None, true, BYTES_PER_LINE).unwrap();
        assert_eq!(
            *text,
            "ML-KEM-768 Private-Key:\n\
             seed:\n    \
             00:01:02:03:04:05:06:07:08:09:0a:0b:0c:0d:0e:\n    \
             0f:10:11:12:13:14:15:16:17:18:19:1a:1b:1c:1d:\n    \
             1e:1f:20:21:22:23:24:25:26:27:28:29:2a:2b:2c:\n    \
             2d:2e:2f:30:31:32:33:34:35:36:37:38:39:3a:3b:\n    \
             3c:3d:3e:3f\n"
        );
    }

    #[test]
    fn private_key_with_every_part() {
        let mut seed = [0; SEED_LEN];
        seed[63] = 0xff;
        let text = key_to_text(
            &TOY,
            Some(&seed),
            Some(&[0xd0, 0x0d]),
            Some(&[1, 2, 3]),
            true,
            BYTES_PER_LINE,
        )
        .unwrap();
        let zeros = "00:".repeat(BYTES_PER_LINE);
        let expected = format!(
            "ML-KEM-TOY Private-Key:\nseed:\n{}    00:00:00:ff\ndk:\n    d0:0d\nek:\n    01:02:03\n",
            format!("    {}\n", &zeros).repeat(4),
        );
        assert_eq!(*text, expected);
        assert_eq!(text.capacity(), text.len());
    }

    #[test]
    fn private_key_without_seed_or_ek() {
        let text =
            key_to_text(&TOY, None, Some(&[0xd0, 0x0d]), None, true, BYTES_PER_LINE).unwrap();
        assert_eq!(*text, "ML-KEM-TOY Private-Key:\ndk:\n    d0:0d\n");
    }

    #[test]
    fn public_key() {
        let expected = "ML-KEM-TOY Public-Key:\nek:\n    01:02:03\n";
        let ek: &[u8] = &[1, 2, 3];
        assert_eq!(
            *key_to_text(&TOY, None, None, Some(ek), true, BYTES_PER_LINE).unwrap(),
            expected
        );
        // Private parts are left out unless asked for.
        let text = key_to_text(
            &TOY,
            Some(&seed()),
            Some(&[0xd0, 0x0d]),
            Some(ek),
            false,
            BYTES_PER_LINE,
        );
        assert_eq!(*text.unwrap(), expected);
    }

    #[test]
    fn nothing_to_print() {
        assert_eq!(
            key_to_text(&TOY, None, None, None, true, BYTES_PER_LINE).unwrap_err(),
            CodecError::MissingKey
        );
        assert_eq!(
            key_to_text(
                &TOY,
                Some(&seed()),
                Some(&[0xd0, 0x0d]),
                None,
                false,
                BYTES_PER_LINE
            )
            .unwrap_err(),
            CodecError::MissingKey
        );
    }

    #[test]
    fn full_size_key_line_counts() {
        let (dk, ek) = keys(&ML_KEM_768);
        let text = key_to_text(
            &ML_KEM_768,
            Some(&seed()),
            Some(&dk),
            Some(&ek),
            true,
            BYTES_PER_LINE,
        )
        .unwrap();
        let lines: Vec<&str> = text.lines().collect();
        // Header, then each label and ceil(len / 15) dump lines.
        assert_eq!(lines.len(), 1 + (1 + 5) + (1 + 160) + (1 + 79));
        assert_eq!(lines[7], "dk:");
        assert_eq!(lines[168], "ek:");
        assert!(lines.iter().all(|line| line.len() <= 4 + 15 * 3));
        assert_eq!(
            lines[8],
            "    80:81:82:83:84:85:86:87:88:89:8a:8b:8c:8d:8e:"
        );
        assert_eq!(
            *lines.last().unwrap(),
            "    d2:d3:d4:d5:d6:d7:d8:d9:da:db:dc:dd:de:df"
        );
        assert_eq!(text.capacity(), text.len());
    }
}
