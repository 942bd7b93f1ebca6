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
    let phoff = u64::from_le_bytes(field(image, 0x20)?) as usize;
    let phentsize = usize::from(u16::from_le_bytes(field(image, 0x36)?));
    let phnum = u16::from_le_bytes(field(image, 0x38)?);
    if phentsize < PHDR_SIZE {
        return Err(format!("program header entries of {phentsize} bytes"));
    }
    let mut segments = Vec::new();
    for index in 0..usize::from(phnum) {
        let base = phoff
            .checked_add(index * phentsize)
            .ok_or("program header offset overflows")?;
        let word = |offset| field(image, base + offset).map(u32::from_le_bytes);
        let size = |offset| field(image, base + offset).map(u64::from_le_bytes);
        if word(0)? != PT_LOAD {
            continue;
        }
        let flags = word(4)?;
        segments.push(LoadSegment {
            file_size: size(32)?,
            memory_size: size(40)?,
            read: flags & PF_R != 0,
            write: flags & PF_W != 0,
            execute: flags & PF_X != 0,
        });
    }
    Ok(segments)
}

/// The `N` bytes at `offset`.
fn field<const N: usize>(image: &[u8], offset: usize) -> Result<[u8; N], String> {
    offset
        .checked_add(N)
        .and_then(|end| image.get(offset..end))
        .map(|bytes| bytes.try_into().expect("N bytes"))
        .ok_or_else(|| format!("ELF file truncated at offset {offset:#x}"))
}
