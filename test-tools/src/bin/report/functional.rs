//! Section 3: every instance checked against its known answers before any
//! timing. The NIST-format KAT (100 entries per set, the text liboqs
//! `kat_kem --all` prints) is regenerated on each backend and compared byte
//! for byte with the vector files; its SHA-256 is compared with the digest
//! liboqs publishes. A manifest records the SHA-256 of every file read.

use std::fmt::Write as _;
use std::fs;
use std::path::Path;

use kem_core::{with_backend, BackendKind};
use serde_json::json;
use test_tools::kem_core_ops::{check_kem_core, kem_core_label};
use test_tools::nist_kat::{sha256_hex, KatParams, KAT_COUNT};

use crate::{Args, Evidence};
use test_tools::table::Table;

/// The outcome of section 3.
pub struct Functional {
    /// The section's Markdown.
    pub markdown: String,
    /// Whether every instance passed every check.
    pub passed: bool,
}

/// The KAT file of a set, relative to the vectors folder.
fn kat_file(set: KatParams) -> String {
    format!("nist-kat/{}.liboqs-kat.rsp", set.name())
}

/// Reads the file at `vectors/relative` (all are text) for the manifest
/// and the checks.
fn read_vector_file(vectors: &Path, relative: &str) -> Result<String, String> {
    let path = vectors.join(relative);
    fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

/// Runs the checks of every instance on every chosen set.
pub fn run(args: &Args, instances: &[BackendKind], evidence: &mut Evidence) -> Functional {
    let mut passed = true;
    let mut out = String::from("## 3. Functional testing\n\n");
    let _ = writeln!(
        out,
        "Before any timing, each instance regenerates the NIST-format known-answer file \
         ({KAT_COUNT} entries per set: keygen, encaps and decaps from the NIST DRBG seeds) \
         and must match the vector file byte for byte (when the file is there); its SHA-256 \
         must also equal the digest liboqs publishes in `kats.json` (built into test-tools). A sanity check then runs the fixed inputs \
         of section 4 (keys round-trip through bytes, decaps recovers the secret, a modified \
         ciphertext is implicitly rejected, every backend gives the portable backend's \
         bytes).\n\nVectors: `{}`\n",
        args.vectors().display()
    );

    out.push_str("### KAT file manifest (SHA-256)\n\n");
    let mut manifest = Table::titled(&["file", "bytes", "SHA-256"]);
    let mut files: Vec<String> = Vec::new();
    for set in &args.sets {
        if let Some(kat) = KatParams::from_name(set.name()) {
            files.push(kat_file(kat));
        }
    }
    files.push("liboqs/kats.json".to_owned());
    let mut kat_texts = Vec::new();
    for relative in &files {
        let text = read_vector_file(args.vectors(), relative);
        let entry = text.as_ref().map(|t| (t.len(), sha256_hex(t)));
        match &entry {
            Ok((len, digest)) => manifest.push_text([
                format!("`{relative}`"),
                len.to_string(),
                format!("`{digest}`"),
            ]),
            // A missing file is not a failure: the generated KAT is still
            // checked against liboqs's digest (built into test-tools).
            Err(e) => {
                manifest.push_text([format!("`{relative}`"), "missing".to_owned(), (*e).clone()])
            }
        }
        evidence.push(
            "functional",
            format!("manifest/{relative}"),
            json!({
                "file": relative,
                "bytes": entry.as_ref().ok().map(|e| e.0),
                "sha256": entry.as_ref().ok().map(|e| e.1.clone()),
                "error": entry.as_ref().err(),
            }),
        );
        kat_texts.push((relative.clone(), text.ok()));
    }
    out.push_str(&manifest.markdown());

    out.push_str("\n### Results\n\n");
    let mut results = Table::titled(&[
        "instance",
        "set",
        "KAT file (100 entries)",
        "liboqs digest",
        "sanity check",
        "result",
    ]);
    let mut reference_answers = Vec::new();
    for &backend in instances {
        let label = kem_core_label(backend);
        for (index, set) in args.sets.iter().enumerate() {
            let Some(kat) = KatParams::from_name(set.name()) else {
                continue;
            };
            eprintln!("  [{label} {}] KAT", set.name());
            let generated = with_backend(backend, || kat.generate(KAT_COUNT))
                .unwrap_or_else(|e| format!("backend unavailable: {e}"));
            let expected = kat_texts
                .iter()
                .find(|(name, _)| *name == kat_file(kat))
                .and_then(|(_, text)| text.as_deref());
            let file_ok = expected == Some(generated.as_str());
            let digest = sha256_hex(&generated);
            let digest_ok = digest == kat.liboqs_digests().all;
            let sanity = with_backend(
                backend,
                || test_tools::with_set!(*set, P => check_kem_core::<P>()),
            )
            .map_err(|e| e.to_string())
            .and_then(|r| r);
            let sanity_ok = match (&sanity, reference_answers.get(index)) {
                (Ok(answer), Some(Some(reference))) => answer.same_bytes(reference),
                (Ok(_), _) => true,
                (Err(_), _) => false,
            };
            if backend == instances[0] {
                reference_answers.push(sanity.as_ref().ok().cloned());
            }
            // Without the vector file the liboqs digest still pins the
            // whole 100-entry text.
            let ok = (file_ok || expected.is_none()) && digest_ok && sanity_ok;
            passed &= ok;
            let verdict = |good: bool, text: &str| {
                if good {
                    text.to_owned()
                } else {
                    "**mismatch**".to_owned()
                }
            };
            results.push_text([
                format!("`{label}`"),
                set.name().to_owned(),
                if expected.is_none() {
                    "not checked (file missing)".to_owned()
                } else {
                    verdict(file_ok, "identical")
                },
                verdict(digest_ok, &format!("`{}…`", &digest[..16])),
                match &sanity {
                    Err(e) => format!("**failed: {e}**"),
                    Ok(_) => verdict(sanity_ok, "OK"),
                },
                if ok { "PASS" } else { "**FAIL**" }.to_owned(),
            ]);
            evidence.push(
                "functional",
                format!("kat/{}/{label}", set.name()),
                json!({
                    "instance": label,
                    "parameter_set": set.name(),
                    "kat_entries": KAT_COUNT,
                    "kat_file": kat_file(kat),
                    "identical_to_file": file_ok,
                    "generated_sha256": digest,
                    "liboqs_sha256": kat.liboqs_digests().all,
                    "sanity": sanity.as_ref().err().cloned().unwrap_or_else(|| "OK".to_owned()),
                    "same_bytes_as_reference": sanity_ok,
                    "result": if ok { "PASS" } else { "FAIL" },
                }),
            );
        }
    }
    out.push_str(&results.markdown());
    let _ = writeln!(
        out,
        "\nOverall: **{}**.",
        if passed { "PASS" } else { "FAIL" }
    );
    Functional {
        markdown: out,
        passed,
    }
}
