//! `AlgorithmIdentifier` (RFC 5280, section 4.1.1.2) for ML-KEM, whose
//! parameters must be absent (draft-ietf-lamps-kyber-certificates).

use super::der::{self, Reader};
use super::CodecError;

/// Bytes the whole `AlgorithmIdentifier` for `oid` takes.
pub(super) const fn encoded_len(oid: &[u8]) -> usize {
    der::tlv_len(der::tlv_len(oid.len()))
}

/// Appends `SEQUENCE { OBJECT IDENTIFIER oid }`.
pub(super) fn write(out: &mut Vec<u8>, oid: &[u8]) {
    der::write_header(out, der::SEQUENCE, der::tlv_len(oid.len()));
    der::write_tlv(out, der::OBJECT_IDENTIFIER, oid);
}

/// Reads an `AlgorithmIdentifier` from `reader` and returns its object
/// identifier's content bytes, ignoring any parameters.
pub(super) fn read_oid<'a>(reader: &mut Reader<'a>) -> Result<&'a [u8], CodecError> {
    Reader::new(reader.read(der::SEQUENCE)?).read(der::OBJECT_IDENTIFIER)
}

/// Reads an `AlgorithmIdentifier` from `reader` and checks that it names
/// `oid` with no parameters.
///
/// Another object identifier is [`CodecError::WrongAlgorithm`] and
/// parameters (even `NULL`) are [`CodecError::UnexpectedParameters`].
pub(super) fn expect(reader: &mut Reader<'_>, oid: &[u8]) -> Result<(), CodecError> {
    let mut fields = Reader::new(reader.read(der::SEQUENCE)?);
    if fields.read(der::OBJECT_IDENTIFIER)? != oid {
        return Err(CodecError::WrongAlgorithm);
    }
    if fields.is_empty() {
        return Ok(());
    }
    fields.read_any()?;
    fields.finish()?;
    Err(CodecError::UnexpectedParameters)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::testutil::ML_KEM_768;

    const ALG_768: [u8; 13] = [
        0x30, 0x0b, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x04, 0x02,
    ];

    #[test]
    fn writes_oid_without_parameters() {
        let mut out = Vec::new();
        write(&mut out, ML_KEM_768.oid);
        assert_eq!(out, ALG_768);
        assert_eq!(encoded_len(ML_KEM_768.oid), ALG_768.len());
    }

    #[test]
    fn reads_and_checks_the_oid() {
        let mut reader = Reader::new(&ALG_768);
        assert_eq!(read_oid(&mut reader), Ok(ML_KEM_768.oid));
        assert!(reader.is_empty());

        let mut reader = Reader::new(&ALG_768);
        assert_eq!(expect(&mut reader, ML_KEM_768.oid), Ok(()));
        assert!(reader.is_empty());
    }

    #[test]
    fn another_oid_is_the_wrong_algorithm() {
        let mut other = ALG_768;
        other[12] = 0x01;
        let mut reader = Reader::new(&other);
        assert_eq!(
            expect(&mut reader, ML_KEM_768.oid),
            Err(CodecError::WrongAlgorithm)
        );
    }

    #[test]
    fn parameters_are_rejected() {
        let mut with_null = ALG_768.to_vec();
        with_null[1] += 2;
        with_null.extend_from_slice(&[0x05, 0x00]);
        assert_eq!(
            expect(&mut Reader::new(&with_null), ML_KEM_768.oid),
            Err(CodecError::UnexpectedParameters)
        );

        // Parameters followed by junk are malformed, not just unexpected.
        let mut with_junk = ALG_768.to_vec();
        with_junk[1] += 3;
        with_junk.extend_from_slice(&[0x05, 0x00, 0x00]);
        assert_eq!(
            expect(&mut Reader::new(&with_junk), ML_KEM_768.oid),
            Err(CodecError::Malformed)
        );
    }
}
