//! The machine a shared object was built for, from its ELF header: a
//! module for another architecture fails to load with a message that
//! does not say so.

use std::fs::File;
use std::io::Read;
use std::path::Path;

/// The architecture this program was built for, as ELF names it.
pub const HOST_MACHINE: u16 = if cfg!(target_arch = "x86_64") {
    62
} else if cfg!(target_arch = "aarch64") {
    183
} else if cfg!(target_arch = "x86") {
    3
} else if cfg!(target_arch = "arm") {
    40
} else if cfg!(target_arch = "powerpc64") {
    21
} else if cfg!(target_arch = "s390x") {
    22
} else if cfg!(target_arch = "riscv64") {
    243
} else {
    0
};

/// A readable name for an ELF machine number.
pub fn machine_name(machine: u16) -> String {
    match machine {
        3 => "x86 (32-bit)".into(),
        21 => "ppc64".into(),
        22 => "s390x".into(),
        40 => "ARM (32-bit)".into(),
        62 => "x86-64".into(),
        183 => "AArch64".into(),
        243 => "RISC-V".into(),
        other => format!("ELF machine {other}"),
    }
}

/// The ELF machine of the file, or why it has none.
pub fn machine(path: &Path) -> Result<u16, String> {
    let mut header = [0u8; 20];
    File::open(path)
        .and_then(|mut f| f.read_exact(&mut header))
        .map_err(|e| format!("cannot read it: {e}"))?;
    if &header[..4] != b"\x7fELF" {
        return Err("it is not an ELF shared object".into());
    }
    // e_machine is at offset 18, in the file's byte order (EI_DATA).
    let bytes = [header[18], header[19]];
    Ok(match header[5] {
        2 => u16::from_be_bytes(bytes),
        _ => u16::from_le_bytes(bytes),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_this_program_and_refuses_other_files() {
        let exe = std::env::current_exe().unwrap();
        assert_eq!(machine(&exe), Ok(HOST_MACHINE));
        assert_ne!(HOST_MACHINE, 0);
        let text = std::env::temp_dir().join(format!("mlkem-elf-{}", std::process::id()));
        std::fs::write(&text, b"not an ELF file at all").unwrap();
        assert!(machine(&text).unwrap_err().contains("not an ELF"));
        std::fs::remove_file(&text).unwrap();
        assert!(machine(Path::new("/nonexistent/mlkem.so"))
            .unwrap_err()
            .contains("cannot read"));
        assert_eq!(machine_name(183), "AArch64");
    }
}
