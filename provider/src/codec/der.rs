//! Just enough DER (X.690) for the key encodings: single-byte tags and
//! definite lengths.
//!
//! Reading is strict: lengths must be definite and minimally encoded, must
//! fit in the input, and callers say when trailing data is an error.

use super::CodecError;

/// `INTEGER`.
pub(super) const INTEGER: u8 = 0x02;
/// `BIT STRING`.
pub(super) const BIT_STRING: u8 = 0x03;
/// `OCTET STRING`.
pub(super) const OCTET_STRING: u8 = 0x04;
/// `OBJECT IDENTIFIER`.
pub(super) const OBJECT_IDENTIFIER: u8 = 0x06;
/// `SEQUENCE` (always constructed).
pub(super) const SEQUENCE: u8 = 0x30;
/// `[0] IMPLICIT`, primitive.
pub(super) const CONTEXT_0: u8 = 0x80;
/// `[1] IMPLICIT`, primitive.
pub(super) const CONTEXT_1: u8 = 0x81;
/// `[0] IMPLICIT`, constructed.
pub(super) const CONTEXT_0_CONSTRUCTED: u8 = 0xa0;

/// Low five tag bits all set: the high-tag-number form, which we never use.
const HIGH_TAG_NUMBER: u8 = 0x1f;
/// Lengths below this use the one-byte short form.
const LONG_FORM: u8 = 0x80;

/// Bytes needed to write `len` big-endian without leading zeros.
const fn significant_bytes(len: usize) -> usize {
    (usize::BITS - len.leading_zeros()).div_ceil(8) as usize
}

/// Bytes a tag and the definite length `len` take.
pub(super) const fn header_len(len: usize) -> usize {
    if len < LONG_FORM as usize {
        2
    } else {
        2 + significant_bytes(len)
    }
}

/// Bytes a whole TLV with `len` content bytes takes.
pub(super) const fn tlv_len(len: usize) -> usize {
    header_len(len) + len
}

/// Appends `tag` and the minimal definite encoding of `len`.
pub(super) fn write_header(out: &mut Vec<u8>, tag: u8, len: usize) {
    let bytes = len.to_be_bytes();
    out.push(tag);
    if len < usize::from(LONG_FORM) {
        out.push(bytes[bytes.len() - 1]);
    } else {
        let count = significant_bytes(len);
        // `count` is at most `size_of::<usize>()`, so it fits the low 7 bits.
        out.push(LONG_FORM | count as u8);
        out.extend_from_slice(&bytes[bytes.len() - count..]);
    }
}

/// Appends a whole TLV.
pub(super) fn write_tlv(out: &mut Vec<u8>, tag: u8, content: &[u8]) {
    write_header(out, tag, content.len());
    out.extend_from_slice(content);
}

/// Parses `input` as exactly one TLV tagged `tag` and returns its content.
pub(super) fn parse_exact(input: &[u8], tag: u8) -> Result<&[u8], CodecError> {
    let mut reader = Reader::new(input);
    let content = reader.read(tag)?;
    reader.finish()?;
    Ok(content)
}

/// A cursor that reads consecutive TLVs from borrowed input.
#[derive(Clone, Debug)]
pub(super) struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    /// Starts reading at the beginning of `input`.
    pub(super) fn new(input: &'a [u8]) -> Self {
        Self { rest: input }
    }

    /// Whether all input has been read.
    pub(super) fn is_empty(&self) -> bool {
        self.rest.is_empty()
    }

    /// Reads the next TLV and returns its tag and content.
    pub(super) fn read_any(&mut self) -> Result<(u8, &'a [u8]), CodecError> {
        let (&tag, rest) = self.rest.split_first().ok_or(CodecError::Malformed)?;
        if tag & HIGH_TAG_NUMBER == HIGH_TAG_NUMBER {
            return Err(CodecError::Malformed);
        }
        let (len, rest) = read_length(rest)?;
        let (content, rest) = rest.split_at_checked(len).ok_or(CodecError::Malformed)?;
        self.rest = rest;
        Ok((tag, content))
    }

    /// Reads the next TLV, which must be tagged `tag`, and returns its content.
    pub(super) fn read(&mut self, tag: u8) -> Result<&'a [u8], CodecError> {
        match self.read_any()? {
            (found, content) if found == tag => Ok(content),
            _ => Err(CodecError::Malformed),
        }
    }

    /// Reads the next TLV if there is one and it is tagged `tag`.
    pub(super) fn read_optional(&mut self, tag: u8) -> Result<Option<&'a [u8]>, CodecError> {
        if self.rest.first() == Some(&tag) {
            self.read(tag).map(Some)
        } else {
            Ok(None)
        }
    }

    /// Ends reading; input left over is an error.
    pub(super) fn finish(self) -> Result<(), CodecError> {
        if self.is_empty() {
            Ok(())
        } else {
            Err(CodecError::Malformed)
        }
    }
}

/// Splits a minimal definite length off the front of `input`.
fn read_length(input: &[u8]) -> Result<(usize, &[u8]), CodecError> {
    let (&first, rest) = input.split_first().ok_or(CodecError::Malformed)?;
    if first < LONG_FORM {
        return Ok((usize::from(first), rest));
    }
    // A count of zero is BER's indefinite length, which DER forbids; a count
    // beyond `usize` describes more input than we could hold.
    let count = usize::from(first & !LONG_FORM);
    if count == 0 || count > size_of::<usize>() {
        return Err(CodecError::Malformed);
    }
    let (octets, rest) = rest.split_at_checked(count).ok_or(CodecError::Malformed)?;
    if octets.first() == Some(&0) {
        return Err(CodecError::Malformed);
    }
    let len = octets
        .iter()
        .fold(0, |len: usize, &octet| (len << 8) | usize::from(octet));
    if len < usize::from(LONG_FORM) {
        return Err(CodecError::Malformed);
    }
    Ok((len, rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(tag: u8, len: usize) -> Vec<u8> {
        let mut out = Vec::new();
        write_header(&mut out, tag, len);
        out
    }

    #[test]
    fn writes_minimal_lengths() {
        assert_eq!(header(0x04, 0), [0x04, 0x00]);
        assert_eq!(header(0x04, 0x7f), [0x04, 0x7f]);
        assert_eq!(header(0x04, 0x80), [0x04, 0x81, 0x80]);
        assert_eq!(header(0x04, 0xff), [0x04, 0x81, 0xff]);
        assert_eq!(header(0x04, 0x100), [0x04, 0x82, 0x01, 0x00]);
        assert_eq!(header(0x30, 0x09a6), [0x30, 0x82, 0x09, 0xa6]);
        assert_eq!(header(0x04, 0xffff), [0x04, 0x82, 0xff, 0xff]);
        assert_eq!(header(0x04, 0x1_0000), [0x04, 0x83, 0x01, 0x00, 0x00]);
    }

    #[test]
    fn header_len_matches_what_is_written() {
        for len in (0..0x1_0100)
            .step_by(7)
            .chain([0x7f, 0x80, 0xff, 0x100, 0xffff])
        {
            assert_eq!(header(0x04, len).len(), header_len(len), "len {len}");
            assert_eq!(tlv_len(len), header_len(len) + len);
        }
    }

    #[test]
    fn reads_back_what_is_written() {
        for len in [0, 1, 0x7f, 0x80, 0x81, 0xff, 0x100, 0x960, 0xffff, 0x1_0000] {
            let content: Vec<u8> = (0..len).map(|i| i as u8).collect();
            let mut der = Vec::new();
            write_tlv(&mut der, OCTET_STRING, &content);
            assert_eq!(der.len(), tlv_len(len));
            assert_eq!(parse_exact(&der, OCTET_STRING), Ok(&content[..]));
        }
    }

    #[test]
    fn reads_consecutive_tlvs() {
        let der = [0x02, 0x01, 0x00, 0x04, 0x02, 0xaa, 0xbb, 0x05, 0x00];
        let mut reader = Reader::new(&der);
        assert_eq!(reader.read(INTEGER), Ok(&[0x00][..]));
        assert_eq!(reader.read_optional(SEQUENCE), Ok(None));
        assert_eq!(
            reader.read_optional(OCTET_STRING),
            Ok(Some(&[0xaa, 0xbb][..]))
        );
        assert!(!reader.is_empty());
        assert_eq!(reader.read_any(), Ok((0x05, &[][..])));
        assert!(reader.is_empty());
        assert_eq!(reader.read_optional(OCTET_STRING), Ok(None));
        assert_eq!(reader.finish(), Ok(()));
    }

    #[test]
    fn rejects_what_der_forbids() {
        let bad: &[&[u8]] = &[
            // Empty input, lone tag.
            &[],
            &[0x04],
            // Indefinite length.
            &[0x04, 0x80, 0x00, 0x00],
            // Long form for a length below 0x80.
            &[0x04, 0x81, 0x01, 0xaa],
            &[0x04, 0x81, 0x7f],
            // Leading zero length octet.
            &[0x04, 0x82, 0x00, 0x80],
            // Length octets missing.
            &[0x04, 0x82, 0x01],
            // Reserved length form 0xff and over-long counts.
            &[0x04, 0xff],
            &[0x04, 0x89, 0x01, 0, 0, 0, 0, 0, 0, 0, 0],
            // Length beyond the input.
            &[0x04, 0x02, 0xaa],
            &[0x04, 0x81, 0x80, 0x00],
            // High-tag-number form.
            &[0x1f, 0x01, 0x00],
            &[0xbf, 0x81, 0x00, 0x00],
            // Trailing data.
            &[0x04, 0x00, 0x00],
            // Wrong tag.
            &[0x24, 0x00],
        ];
        for der in bad {
            assert_eq!(
                parse_exact(der, OCTET_STRING),
                Err(CodecError::Malformed),
                "{der:02x?}"
            );
        }
    }

    #[test]
    fn length_at_the_usize_limit_does_not_overflow() {
        let mut der = vec![0x04, 0x80 | size_of::<usize>() as u8];
        der.extend_from_slice(&usize::MAX.to_be_bytes());
        assert_eq!(Reader::new(&der).read_any(), Err(CodecError::Malformed));
    }
}
