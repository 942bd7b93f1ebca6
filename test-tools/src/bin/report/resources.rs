//! Section 5: memory. The provider module's loadable ELF segments (what
//! the loader maps), and per operation the baseline and peak resident set
//! of a child process (`VmRSS` and `VmHWM` from `/proc/self/status`): the
//! child reads its inputs, then its baseline before any ML-KEM work, runs
//! the operation many times from the serialized inputs, and reads its peak.

use std::fmt::Write as _;
use std::hint::black_box;
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, ExitCode, Stdio};

use kem_core::{BackendKind, Ciphertext, DecapsulationKey, EncapsulationKey, ParameterSet};
use serde_json::{json, Value};
use test_tools::elf_segments::load_segments;
use test_tools::kem_core_ops::M;
use test_tools::nist_kat::KatParams;
use test_tools::table::{thousands, Table};

use crate::{operation_table, sanity_check, Args, Evidence};

/// The hidden first argument that makes `report` the measuring child.
pub const CHILD_FLAG: &str = "--rss-child";

/// Calls of the operation in the child.
const CHILD_CALLS: usize = 1000;

/// A `kB` field of `/proc/self/status`.
fn status_kib(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))?;
    line.trim().trim_end_matches("kB").trim().parse().ok()
}

/// The child: `report --rss-child SET OPERATION` with ek ‖ dk ‖ ct on
/// stdin and the backend chosen by `MLKEM_BACKEND`. Prints one JSON line.
pub fn child_main(args: &[String]) -> ExitCode {
    let result = (|| -> Result<Value, String> {
        let [set, operation] = args else {
            return Err(format!("{CHILD_FLAG} needs SET OPERATION"));
        };
        let set = KatParams::from_name(set).ok_or_else(|| format!("unknown set {set}"))?;
        let mut input = Vec::new();
        std::io::stdin()
            .read_to_end(&mut input)
            .map_err(|e| e.to_string())?;
        let baseline_rss = status_kib("VmRSS");
        let baseline_hwm = status_kib("VmHWM");
        test_tools::with_set!(set, P => run_child_operation::<P>(operation, &input))?;
        Ok(json!({
            "backend": kem_core::active_backend().name(),
            "calls": CHILD_CALLS,
            "baseline_rss_kib": baseline_rss,
            "baseline_hwm_kib": baseline_hwm,
            "peak_hwm_kib": status_kib("VmHWM"),
            "final_rss_kib": status_kib("VmRSS"),
        }))
    })();
    let result = result.map(|line| println!("{line}"));
    test_tools::cli::exit(&format!("report {CHILD_FLAG}"), result)
}

fn run_child_operation<P: ParameterSet>(operation: &str, input: &[u8]) -> Result<(), String> {
    let short = || "input shorter than ek ‖ dk ‖ ct".to_owned();
    let (ek, rest) = input.split_at_checked(P::EK_LEN).ok_or_else(short)?;
    let (dk, ct) = rest.split_at_checked(P::DK_LEN).ok_or_else(short)?;
    let seed: Vec<u8> = (0..64u8).collect();
    let text = |e: kem_core::Error| e.to_string();
    for _ in 0..CHILD_CALLS {
        match operation {
            "keygen" => drop(black_box(
                DecapsulationKey::<P>::from_seed(black_box(&seed)).map_err(text)?,
            )),
            "encaps" => {
                let ek = EncapsulationKey::<P>::from_bytes(black_box(ek)).map_err(text)?;
                drop(black_box(ek.encapsulate_deterministic(&M)));
            }
            "decaps" => {
                let dk = DecapsulationKey::<P>::from_bytes(black_box(dk)).map_err(text)?;
                let ct = Ciphertext::<P>::from_bytes(black_box(ct)).map_err(text)?;
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
    let Some(path) = args.module() else {
        out.push_str(
            "No provider module given (`--module`) or built (`scripts/build-provider.sh`).\n",
        );
        return Ok(out);
    };
    let image = std::fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let segments = load_segments(&image).map_err(|e| format!("{}: {e}", path.display()))?;
    let _ = writeln!(
        out,
        "`{}`: {} bytes on disk (with debug information). Loadable (`PT_LOAD`) segments, what \
         the dynamic loader maps:\n",
        path.display(),
        thousands(image.len() as f64)
    );
    let mut table = Table::titled(&["segment", "permissions", "file bytes", "memory bytes"]);
    for (i, s) in segments.iter().enumerate() {
        let sizes = [s.file_size, s.memory_size].map(|n| thousands(n as f64));
        table.push_text([i.to_string(), s.permissions()].into_iter().chain(sizes));
    }
    let file_total: u64 = segments.iter().map(|s| s.file_size).sum();
    let total: u64 = segments.iter().map(|s| s.memory_size).sum();
    let totals = [file_total, total].map(|n| thousands(n as f64));
    table.push_text(
        ["total".to_owned(), String::new()]
            .into_iter()
            .chain(totals),
    );
    out.push_str(&table.markdown());
    let segments: Vec<Value> = segments
        .iter()
        .map(|s| json!({ "permissions": s.permissions(), "file_bytes": s.file_size, "memory_bytes": s.memory_size }))
        .collect();
    let data = json!({
        "module": path.display().to_string(),
        "file_bytes": image.len(),
        "load_segments": segments,
        "load_memory_bytes_total": total,
    });
    evidence.push("resources", "module/elf-segments".to_owned(), data);
    Ok(out)
}

/// Runs one child for `operation` on `input`: its JSON line, or why not.
fn measure_child(
    exe: &Path,
    (backend, set, operation): (BackendKind, KatParams, &str),
    input: &[u8],
) -> Result<Value, String> {
    let cannot = |e: std::io::Error| format!("cannot run {}: {e}", exe.display());
    let mut child = Command::new(exe)
        .args([CHILD_FLAG, set.name(), operation])
        .env("MLKEM_BACKEND", backend.name())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(cannot)?;
    // A child that fails early closes its stdin; its stderr says why.
    let _ = child.stdin.take().expect("piped").write_all(input);
    let output = child.wait_with_output().map_err(cannot)?;
    let line = String::from_utf8_lossy(&output.stdout);
    match serde_json::from_str::<Value>(line.trim()) {
        Ok(record) if record["backend"] == backend.name() => Ok(record),
        Ok(record) => Err(format!("the child ran backend {}", record["backend"])),
        Err(_) => Err(format!(
            "the child failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        )),
    }
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
        "\n### Resident memory per operation\n\nA fresh child process per row reads `VmHWM` \
         (its peak resident set so far) before any ML-KEM work (baseline), runs the operation \
         {CHILD_CALLS} times from serialized inputs (keygen from a seed, encaps from ek bytes, \
         decaps from dk and ciphertext bytes), then reads `VmHWM` (peak). kem-core allocates \
         only the expanded key on the heap; the rest is stack.\n"
    );
    let titles = [
        "baseline peak RSS, VmHWM (KiB)",
        "peak RSS after the calls, VmHWM (KiB)",
        "growth (KiB)",
    ];
    let exe = std::env::current_exe().map_err(|e| format!("cannot find own executable: {e}"))?;
    let table = operation_table(
        args,
        instances,
        &titles,
        ("resources", "child process"),
        |backend, label, set, operation| {
            let answer = sanity_check(backend, set)?;
            let input = [answer.ek, answer.dk, answer.ct].concat();
            let record = measure_child(&exe, (backend, set, operation), &input)
                .map_err(|why| format!("not measured: {why}"))?;
            let (baseline, peak) = (
                record["baseline_hwm_kib"].as_u64(),
                record["peak_hwm_kib"].as_u64(),
            );
            let growth = baseline.zip(peak).map(|(b, p)| p.saturating_sub(b));
            let data = json!({
                "instance": label,
                "parameter_set": set.name(),
                "operation": operation,
                "child": record,
            });
            evidence.push(
                "resources",
                format!("rss/{}/{label}/{operation}", set.name()),
                data,
            );
            Ok([baseline, peak, growth]
                .map(|v| v.map_or("n/a".to_owned(), |v| thousands(v as f64)))
                .into())
        },
    );
    out.push_str(&table.markdown());
    Ok(out)
}
