//! Section 5: memory. The provider module's loadable ELF segments (what
//! the loader maps), and per operation the baseline and peak resident set
//! of a child process (`VmRSS` and `VmHWM` from `/proc/self/status`): the
//! child starts, reads its baseline before any ML-KEM work, runs the
//! operation many times from serialized inputs, and reads its peak.

use std::fmt::Write as _;
use std::fs;
use std::hint::black_box;
use std::process::{Command, ExitCode};

use kem_core::{
    with_backend, BackendKind, Ciphertext, DecapsulationKey, EncapsulationKey, ParameterSet,
};
use serde_json::{json, Value};
use test_tools::elf_segments::load_segments;
use test_tools::kem_core_ops::{check_kem_core, kem_core_label, M};
use test_tools::nist_kat::hex_upper;

use crate::{Args, Evidence, KatParams};
use test_tools::table::{thousands, Table};

/// The hidden first argument that makes `report` the measuring child.
pub const CHILD_FLAG: &str = "--rss-child";

/// The operations measured, from serialized inputs.
const OPERATIONS: [&str; 3] = ["keygen", "encaps", "decaps"];

/// Calls of the operation in the child.
const CHILD_CALLS: usize = 1000;

/// A `kB` field of `/proc/self/status`.
fn status_kib(field: &str) -> Option<u64> {
    let status = fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()
}

fn unhex(text: &str) -> Result<Vec<u8>, String> {
    let digit = |c: u8| {
        (c as char)
            .to_digit(16)
            .map(|d| d as u8)
            .ok_or_else(|| format!("not a hex digit: {:?}", c as char))
    };
    let bytes = text.as_bytes();
    if !bytes.len().is_multiple_of(2) {
        return Err("odd-length hex".into());
    }
    bytes
        .chunks(2)
        .map(|pair| Ok(digit(pair[0])? << 4 | digit(pair[1])?))
        .collect()
}

/// The child: `report --rss-child SET OPERATION EK DK CT` (hex inputs),
/// with the backend chosen by `MLKEM_BACKEND`. Prints one JSON line.
pub fn child_main(args: &[String]) -> ExitCode {
    let result = (|| -> Result<Value, String> {
        let [set, operation, ek, dk, ct] = args else {
            return Err(format!("{CHILD_FLAG} needs SET OPERATION EK DK CT"));
        };
        let set = KatParams::from_name(set).ok_or_else(|| format!("unknown set {set}"))?;
        let (ek, dk, ct) = (unhex(ek)?, unhex(dk)?, unhex(ct)?);
        let baseline_rss = status_kib("VmRSS");
        let baseline_hwm = status_kib("VmHWM");
        test_tools::with_set!(set, P => run_child_operation::<P>(operation, &ek, &dk, &ct))?;
        Ok(json!({
            "backend": kem_core::active_backend().name(),
            "calls": CHILD_CALLS,
            "baseline_rss_kib": baseline_rss,
            "baseline_hwm_kib": baseline_hwm,
            "peak_hwm_kib": status_kib("VmHWM"),
            "final_rss_kib": status_kib("VmRSS"),
        }))
    })();
    match result {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("report {CHILD_FLAG}: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run_child_operation<P: ParameterSet>(
    operation: &str,
    ek: &[u8],
    dk: &[u8],
    ct: &[u8],
) -> Result<(), String> {
    let seed: Vec<u8> = (0..64u8).collect();
    for _ in 0..CHILD_CALLS {
        match operation {
            "keygen" => drop(black_box(
                DecapsulationKey::<P>::from_seed(black_box(&seed)).map_err(|e| e.to_string())?,
            )),
            "encaps" => {
                let ek =
                    EncapsulationKey::<P>::from_bytes(black_box(ek)).map_err(|e| e.to_string())?;
                drop(black_box(ek.encapsulate_deterministic(&M)));
            }
            "decaps" => {
                let dk =
                    DecapsulationKey::<P>::from_bytes(black_box(dk)).map_err(|e| e.to_string())?;
                let ct = Ciphertext::<P>::from_bytes(black_box(ct)).map_err(|e| e.to_string())?;
                drop(black_box(dk.decapsulate(&ct)));
            }
            other => return Err(format!("unknown operation {other}")),
        }
    }
    Ok(())
}

/// The module-size part of section 5, read before any measurement so
/// that a bad `--module` fails early.
pub fn module_section(args: &Args, evidence: &mut Evidence) -> Result<String, String> {
    let mut out = String::from("## 5. Resources\n\n### Module size\n\n");
    match &args.module {
        None => out.push_str(
            "No provider module given (`--module`) or built (`scripts/build-provider.sh`).\n",
        ),
        Some(path) => {
            let image =
                fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            let segments = load_segments(&image).map_err(|e| format!("{}: {e}", path.display()))?;
            let _ = writeln!(
                out,
                "`{}`: {} bytes on disk (with debug information). Loadable (`PT_LOAD`) \
                 segments, what the dynamic loader maps:\n",
                path.display(),
                thousands(image.len() as f64)
            );
            let mut table =
                Table::titled(&["segment", "permissions", "file bytes", "memory bytes"]);
            for (i, s) in segments.iter().enumerate() {
                table.push_text([
                    i.to_string(),
                    s.permissions(),
                    thousands(s.file_size as f64),
                    thousands(s.memory_size as f64),
                ]);
            }
            let total: u64 = segments.iter().map(|s| s.memory_size).sum();
            table.push_text([
                "total".to_owned(),
                String::new(),
                thousands(segments.iter().map(|s| s.file_size).sum::<u64>() as f64),
                thousands(total as f64),
            ]);
            out.push_str(&table.markdown());
            evidence.push(
                "resources",
                "module/elf-segments".to_owned(),
                json!({
                    "module": path.display().to_string(),
                    "file_bytes": image.len(),
                    "load_segments": segments.iter().map(|s| json!({
                        "permissions": s.permissions(),
                        "file_bytes": s.file_size,
                        "memory_bytes": s.memory_size,
                    })).collect::<Vec<_>>(),
                    "load_memory_bytes_total": total,
                }),
            );
        }
    }
    Ok(out)
}

/// Runs the rest of section 5 after `module` (from [`module_section`]).
pub fn run(
    args: &Args,
    instances: &[BackendKind],
    module: String,
    evidence: &mut Evidence,
) -> Result<String, String> {
    let mut out = module;
    let _ = writeln!(
        out,
        "\n### Resident memory per operation\n\nA fresh child process per row reads \
         `VmHWM` (its peak resident set so far) before any ML-KEM work (baseline), runs the operation {CHILD_CALLS} \
         times from serialized inputs (keygen from a seed, encaps from ek bytes, decaps \
         from dk and ciphertext bytes), then reads `VmHWM` (peak). kem-core allocates only \
         the expanded key on the heap; the rest is stack.\n"
    );
    let exe = std::env::current_exe().map_err(|e| format!("cannot find own executable: {e}"))?;
    let mut table = Table::titled(&[
        "instance",
        "set",
        "operation",
        "baseline peak RSS, VmHWM (KiB)",
        "peak RSS after the calls, VmHWM (KiB)",
        "growth (KiB)",
    ]);
    for &backend in instances {
        let label = kem_core_label(backend);
        for set in &args.sets {
            let answer = with_backend(
                backend,
                || test_tools::with_set!(*set, P => check_kem_core::<P>()),
            )
            .map_err(|e| e.to_string())
            .and_then(|r| r)?;
            for operation in OPERATIONS {
                eprintln!(
                    "  [resources {label} {} {operation}] child process",
                    set.name()
                );
                let output = Command::new(&exe)
                    .args([CHILD_FLAG, set.name(), operation])
                    .args([
                        hex_upper(&answer.ek),
                        hex_upper(&answer.dk),
                        hex_upper(&answer.ct),
                    ])
                    .env("MLKEM_BACKEND", backend.name())
                    .output()
                    .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
                let line = String::from_utf8_lossy(&output.stdout);
                let record: Value = match serde_json::from_str::<Value>(line.trim()) {
                    Ok(record) if record["backend"] == backend.name() => record,
                    parsed => {
                        let why = match parsed {
                            Ok(record) => format!("the child ran backend {}", record["backend"]),
                            Err(_) => format!(
                                "the child failed: {}",
                                String::from_utf8_lossy(&output.stderr).trim()
                            ),
                        };
                        table.push_text([
                            format!("`{label}`"),
                            set.name().to_owned(),
                            operation.to_owned(),
                            format!("**not measured: {why}**"),
                        ]);
                        continue;
                    }
                };
                let baseline = record["baseline_hwm_kib"].as_u64();
                let peak = record["peak_hwm_kib"].as_u64();
                let cell = |v: Option<u64>| v.map_or("n/a".to_owned(), |v| thousands(v as f64));
                table.push_text([
                    format!("`{label}`"),
                    set.name().to_owned(),
                    operation.to_owned(),
                    cell(baseline),
                    cell(peak),
                    match (baseline, peak) {
                        (Some(b), Some(p)) => thousands(p.saturating_sub(b) as f64),
                        _ => "n/a".to_owned(),
                    },
                ]);
                evidence.push(
                    "resources",
                    format!("rss/{}/{label}/{operation}", set.name()),
                    json!({
                        "instance": label,
                        "parameter_set": set.name(),
                        "operation": operation,
                        "child": record,
                    }),
                );
            }
        }
    }
    out.push_str(&table.markdown());
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trip_and_bad_input() {
        assert_eq!(
            unhex(&hex_upper(&[0, 0xab, 0xff])).unwrap(),
            [0, 0xab, 0xff]
        );
        assert_eq!(unhex("0A").unwrap(), [0x0a]);
        assert!(unhex("abc").unwrap_err().contains("odd"));
        assert!(unhex("zz").unwrap_err().contains("hex digit"));
        // Multi-byte characters are an error, not a panic.
        assert!(unhex("é0").is_err());
    }
}
