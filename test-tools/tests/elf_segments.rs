//! Tests of `test_tools::elf_segments` on a hand-made ELF image.

use test_tools::elf_segments::*;

// The ELF64 values the image below is made of (the ELF specification's).
const PT_LOAD: u32 = 1;
const PF_X: u32 = 1;
const PF_W: u32 = 2;
const PF_R: u32 = 4;
const PHDR_SIZE: usize = 56;

/// A minimal ELF64 header with two program headers: PT_LOAD r-x
/// (0x1000 / 0x1000) and PT_DYNAMIC (skipped), then PT_LOAD rw-
/// (0x80 in the file, 0x200 in memory).
fn tiny_elf() -> Vec<u8> {
    let mut image = vec![0u8; 64 + 3 * PHDR_SIZE];
    image[..6].copy_from_slice(b"\x7fELF\x02\x01");
    image[0x20..0x28].copy_from_slice(&64u64.to_le_bytes());
    image[0x36..0x38].copy_from_slice(&(PHDR_SIZE as u16).to_le_bytes());
    image[0x38..0x3a].copy_from_slice(&3u16.to_le_bytes());
    let headers = [
        (PT_LOAD, PF_R | PF_X, 0x1000u64, 0x1000u64),
        (2, PF_R | PF_W, 0x10, 0x10),
        (PT_LOAD, PF_R | PF_W, 0x80, 0x200),
    ];
    for (i, (kind, flags, file, memory)) in headers.into_iter().enumerate() {
        let base = 64 + i * PHDR_SIZE;
        image[base..base + 4].copy_from_slice(&kind.to_le_bytes());
        image[base + 4..base + 8].copy_from_slice(&flags.to_le_bytes());
        image[base + 32..base + 40].copy_from_slice(&file.to_le_bytes());
        image[base + 40..base + 48].copy_from_slice(&memory.to_le_bytes());
    }
    image
}

#[test]
fn reads_load_segments() {
    let segments = load_segments(&tiny_elf()).unwrap();
    assert_eq!(segments.len(), 2);
    assert_eq!(
        (segments[0].memory_size, segments[0].permissions()),
        (0x1000, "r-x".into())
    );
    assert_eq!(
        (segments[1].file_size, segments[1].memory_size),
        (0x80, 0x200)
    );
    assert_eq!(segments[1].permissions(), "rw-");
}

#[test]
fn rejects_bad_images() {
    assert!(load_segments(b"not elf").is_err());
    let mut image = tiny_elf();
    image[4] = 1;
    assert!(load_segments(&image).unwrap_err().contains("64-bit"));
    let image = tiny_elf();
    assert!(load_segments(&image[..100])
        .unwrap_err()
        .contains("truncated"));
}

#[test]
fn reads_this_test_binary() {
    let image = std::fs::read(std::env::current_exe().unwrap()).unwrap();
    let segments = load_segments(&image).unwrap();
    assert!(segments.iter().any(|s| s.execute && s.read));
    assert!(segments.iter().all(|s| s.memory_size >= s.file_size));
}
