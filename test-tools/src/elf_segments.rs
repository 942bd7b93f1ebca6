//! The loadable segments (`PT_LOAD` program headers) of a 64-bit
//! little-endian ELF file: what the dynamic loader maps for a shared
//! object, i.e. the memory a module costs before it allocates anything.

/// One `PT_LOAD` segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoadSegment {
    /// Bytes taken from the file.
    pub file_size: u64,
    /// Bytes mapped in memory (at least `file_size`; the rest is zeroed,
    /// e.g. `.bss`).
    pub memory_size: u64,
    /// Readable.
    pub read: bool,
    /// Writable.
    pub write: bool,
    /// Executable.
    pub execute: bool,
}

impl LoadSegment {
    /// The permissions as `r-x` style text.
    pub fn permissions(&self) -> String {
        [(self.read, 'r'), (self.write, 'w'), (self.execute, 'x')]
            .iter()
            .map(|&(on, c)| if on { c } else { '-' })
            .collect()
    }
}

const PT_LOAD: u32 = 1;
const PF_X: u32 = 1;
const PF_W: u32 = 2;
const PF_R: u32 = 4;
/// Size of an ELF64 program header.
const PHDR_SIZE: usize = 56;

/// The `PT_LOAD` segments of an ELF64 little-endian image, in file order.
pub fn load_segments(image: &[u8]) -> Result<Vec<LoadSegment>, String> {
    if image.len() < 64 || &image[..4] != b"\x7fELF" {
        return Err("not an ELF file".into());
    }
    if image[4] != 2 || image[5] != 1 {
        return Err("not a 64-bit little-endian ELF file".into());
    }
    let phoff = read_u64(image, 0x20)? as usize;
    let phentsize = read_u16(image, 0x36)? as usize;
    let phnum = read_u16(image, 0x38)? as usize;
    if phentsize < PHDR_SIZE {
        return Err(format!("program header entries of {phentsize} bytes"));
    }
    let mut segments = Vec::new();
    for index in 0..phnum {
        let base = phoff
            .checked_add(index * phentsize)
            .ok_or("program header offset overflows")?;
        if read_u32(image, base)? != PT_LOAD {
            continue;
        }
        let flags = read_u32(image, base + 4)?;
        segments.push(LoadSegment {
            file_size: read_u64(image, base + 32)?,
            memory_size: read_u64(image, base + 40)?,
            read: flags & PF_R != 0,
            write: flags & PF_W != 0,
            execute: flags & PF_X != 0,
        });
    }
    Ok(segments)
}

fn field<const N: usize>(image: &[u8], offset: usize) -> Result<[u8; N], String> {
    offset
        .checked_add(N)
        .and_then(|end| image.get(offset..end))
        .map(|bytes| bytes.try_into().expect("N bytes"))
        .ok_or_else(|| format!("ELF file truncated at offset {offset:#x}"))
}

fn read_u16(image: &[u8], offset: usize) -> Result<u16, String> {
    field(image, offset).map(u16::from_le_bytes)
}

fn read_u32(image: &[u8], offset: usize) -> Result<u32, String> {
    field(image, offset).map(u32::from_le_bytes)
}

fn read_u64(image: &[u8], offset: usize) -> Result<u64, String> {
    field(image, offset).map(u64::from_le_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
