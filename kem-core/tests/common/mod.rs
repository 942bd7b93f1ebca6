//! Shared helpers for the vector tests: locating the vector files (and the
//! skip-or-fail policy when they are missing), reading JSON, plain and
//! gzip text, a small hex decoder, and byte comparisons with short messages.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use flate2::read::GzDecoder;
use serde_json::Value;

/// Calls a function generic over `P: ParameterSet` for the parameter set
/// named by a string such as `"ML-KEM-768"`.
macro_rules! with_parameter_set {
    ($name:expr, $f:ident($($arg:expr),* $(,)?)) => {
        match $name {
            "ML-KEM-512" => $f::<kem_core::MlKem512>($($arg),*),
            "ML-KEM-768" => $f::<kem_core::MlKem768>($($arg),*),
            "ML-KEM-1024" => $f::<kem_core::MlKem1024>($($arg),*),
            other => panic!("unknown parameter set {other:?}"),
        }
    };
}
pub(crate) use with_parameter_set;

/// The three parameter set names, in the order the files use them.
pub const PARAMETER_SETS: [&str; 3] = ["ML-KEM-512", "ML-KEM-768", "ML-KEM-1024"];

/// `MLKEM_VECTORS_DIR` if set, else `<CARGO_MANIFEST_DIR>/../../shared/vectors`.
fn vectors_dir() -> PathBuf {
    match std::env::var_os("MLKEM_VECTORS_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/vectors"),
    }
}

// The workspace's one rule for "running in CI" (`CI` is `true` or `1`),
// where missing vectors are a failure.
#[path = "../../../test-tools/src/ci.rs"]
#[allow(dead_code)]
mod ci;
use ci::running_in_ci as in_ci;

/// Resolves vector files relative to the vector directory. If the directory
/// or any file is missing: under CI, panics with the path; otherwise prints
/// why the test is skipped and returns `None`.
pub fn vector_files(relative: &[&str]) -> Option<Vec<PathBuf>> {
    let dir = vectors_dir();
    let missing: Vec<PathBuf> = if dir.is_dir() {
        relative
            .iter()
            .map(|rel| dir.join(rel))
            .filter(|path| !path.is_file())
            .collect()
    } else {
        vec![dir.clone()]
    };
    if missing.is_empty() {
        return Some(relative.iter().map(|rel| dir.join(rel)).collect());
    }
    let list: Vec<String> = missing.iter().map(|p| p.display().to_string()).collect();
    if in_ci() {
        panic!(
            "test vectors missing (required under CI, CI=true or 1): {}",
            list.join(", ")
        );
    }
    eprintln!(
        "SKIPPED: test vectors not found: {} (set MLKEM_VECTORS_DIR to the vector directory)",
        list.join(", ")
    );
    None
}

/// Reads a whole file as UTF-8 text.
pub fn read_text(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// Reads a gzip-compressed text file.
pub fn read_gz_text(path: &Path) -> String {
    let file = File::open(path).unwrap_or_else(|e| panic!("opening {}: {e}", path.display()));
    let mut text = String::new();
    GzDecoder::new(file)
        .read_to_string(&mut text)
        .unwrap_or_else(|e| panic!("decompressing {}: {e}", path.display()));
    text
}

/// Reads and parses a JSON file.
pub fn read_json(path: &Path) -> Value {
    serde_json::from_str(&read_text(path))
        .unwrap_or_else(|e| panic!("parsing {}: {e}", path.display()))
}

/// Decodes a hex string (either case, even length). Panics on bad input.
pub fn hex(s: &str) -> Vec<u8> {
    fn nibble(c: u8) -> u8 {
        match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            _ => panic!("invalid hex digit {:?}", c as char),
        }
    }
    let s = s.trim().as_bytes();
    assert!(
        s.len().is_multiple_of(2),
        "odd-length hex string ({} digits)",
        s.len()
    );
    s.chunks_exact(2)
        .map(|pair| (nibble(pair[0]) << 4) | nibble(pair[1]))
        .collect()
}

/// Encodes bytes as lowercase hex (for messages).
fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A string field of a JSON object; panics naming the field if absent.
pub fn str_field<'a>(obj: &'a Value, key: &str) -> &'a str {
    obj.get(key)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("missing string field {key:?} in {}", short_json(obj)))
}

/// A hex field of a JSON object, decoded.
pub fn hex_field(obj: &Value, key: &str) -> Vec<u8> {
    hex(str_field(obj, key))
}

/// An integer field of a JSON object.
pub fn u64_field(obj: &Value, key: &str) -> u64 {
    obj.get(key)
        .and_then(Value::as_u64)
        .unwrap_or_else(|| panic!("missing integer field {key:?} in {}", short_json(obj)))
}

/// An array field of a JSON object.
pub fn array_field<'a>(obj: &'a Value, key: &str) -> &'a [Value] {
    obj.get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_else(|| panic!("missing array field {key:?} in {}", short_json(obj)))
}

/// The start of an object's JSON text, for error messages.
fn short_json(obj: &Value) -> String {
    let text = obj.to_string();
    match text.char_indices().nth(120) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// Converts a slice to a 32-byte array, naming the case if it is not 32 long.
pub fn array32(ctx: &str, what: &str, bytes: &[u8]) -> [u8; 32] {
    bytes
        .try_into()
        .unwrap_or_else(|_| panic!("{ctx}: {what} is {} bytes, expected 32", bytes.len()))
}

/// Asserts two byte strings are equal; on mismatch reports the lengths and
/// the first differing offset instead of dumping kilobytes.
pub fn assert_bytes(ctx: &str, what: &str, got: &[u8], want: &[u8]) {
    if got == want {
        return;
    }
    let first = got
        .iter()
        .zip(want)
        .position(|(a, b)| a != b)
        .unwrap_or(got.len().min(want.len()));
    let window = |b: &[u8]| to_hex(&b[first.min(b.len())..(first + 16).min(b.len())]);
    panic!(
        "{ctx}: {what} differs (got {} bytes, expected {}); first difference at byte {first}: \
         got {}…, expected {}…",
        got.len(),
        want.len(),
        window(got),
        window(want)
    );
}

/// Parses `name = value` lines (blank lines ignored) into pairs, in order.
pub fn parse_assignments(text: &str) -> Vec<(&str, &str)> {
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            line.split_once(" = ")
                .map(|(name, value)| (name.trim(), value.trim()))
                .unwrap_or_else(|| panic!("not a `name = value` line: {line:.80}"))
        })
        .collect()
}

/// The hex value of the one assignment called `name`; panics if there is
/// none or more than one.
pub fn assigned_hex(ctx: &str, pairs: &[(&str, &str)], name: &str) -> Vec<u8> {
    let mut values = pairs.iter().filter(|(n, _)| *n == name).map(|(_, v)| v);
    match (values.next(), values.next()) {
        (Some(value), None) => hex(value),
        (None, _) => panic!("{ctx}: no `{name} = …` line"),
        (Some(_), Some(_)) => panic!("{ctx}: more than one `{name} = …` line"),
    }
}

/// Asserts that a test checked exactly the expected number of cases.
pub fn assert_count(what: &str, checked: usize, expected: usize) {
    assert_eq!(
        checked, expected,
        "{what}: checked {checked} cases, expected {expected}"
    );
}
