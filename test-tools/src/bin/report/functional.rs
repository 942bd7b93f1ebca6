//! Section 3: every instance checked against its known answers before any
//! timing. The NIST-format KAT (the text liboqs `kat_kem --all` prints) is
//! regenerated on each backend and compared byte for byte with the vector
//! file and by SHA-256 with the digest liboqs publishes; a manifest records
//! the SHA-256 of every file read.

use std::fmt::Write as _;

use kem_core::{with_backend, BackendKind};
use serde_json::json;
use test_tools::nist_kat::{sha256_hex, KAT_COUNT};
use test_tools::table::Table;

use crate::{cases, sanity_check, Args, Evidence};

/// Runs the checks of every instance on every chosen set: the section's
/// Markdown, and whether every check passed.
pub fn run(args: &Args, instances: &[BackendKind], evidence: &mut Evidence) -> (String, bool) {
    let vectors = args.vectors();
    let mut out = String::from("## 3. Functional testing\n\n");
    let _ = writeln!(
        out,
        "Before any timing, each instance regenerates the NIST-format known-answer file \
         ({KAT_COUNT} entries per set: keygen, encaps and decaps from the NIST DRBG seeds) \
         and must match the vector file byte for byte (when the file is there); its SHA-256 \
         must also equal the digest liboqs publishes in `kats.json` (built into test-tools). \
         A sanity check then runs the fixed inputs of section 4 (keys round-trip through \
         bytes, decaps recovers the secret, a modified ciphertext is implicitly rejected, \
         every backend gives the portable backend's bytes).\n\nVectors: `{}`\n\n\
         ### KAT file manifest (SHA-256)\n",
        vectors.display()
    );
    let kat_file = |name: &str| format!("nist-kat/{name}.liboqs-kat.rsp");
    let mut files: Vec<String> = args.sets().iter().map(|s| kat_file(s.name())).collect();
    files.push("liboqs/kats.json".to_owned());
    let mut manifest = Table::titled(&["file", "bytes", "SHA-256"]);
    let mut texts = Vec::new();
    for relative in files {
        let path = vectors.join(&relative);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()));
        let entry = text.as_ref().map(|t| (t.len(), sha256_hex(t)));
        // A missing file is not a failure: the generated KAT is still
        // checked against liboqs's digest (built into test-tools).
        manifest.push_text(match &entry {
            Ok((len, digest)) => [
                format!("`{relative}`"),
                len.to_string(),
                format!("`{digest}`"),
            ],
            Err(e) => [format!("`{relative}`"), "missing".to_owned(), (*e).clone()],
        });
        let data = json!({
            "file": relative,
            "bytes": entry.as_ref().ok().map(|e| e.0),
            "sha256": entry.as_ref().ok().map(|e| &e.1),
            "error": entry.as_ref().err(),
        });
        evidence.push("functional", format!("manifest/{relative}"), data);
        texts.push((relative, text.ok()));
    }
    out.push_str(&manifest.markdown());

    let mut results = Table::titled(&[
        "instance",
        "set",
        "KAT file (100 entries)",
        "liboqs digest",
        "sanity check",
        "result",
    ]);
    let mut passed = true;
    // The first instance's answers, the bytes every other must give.
    let mut references = Vec::new();
    for (backend, label, set) in cases(args, instances) {
        eprintln!("  [{label} {}] KAT", set.name());
        let generated = with_backend(backend, || set.generate(KAT_COUNT))
            .unwrap_or_else(|e| format!("backend unavailable: {e}"));
        let file = kat_file(set.name());
        let expected = texts.iter().find(|(name, _)| *name == file);
        let expected = expected.and_then(|(_, text)| text.as_deref());
        let file_ok = expected == Some(generated.as_str());
        let digest = sha256_hex(&generated);
        let liboqs = set.expected_digest(KAT_COUNT).unwrap_or_default();
        let sanity = sanity_check(backend, set);
        let reference = references.iter().find(|(s, _)| *s == set);
        let sanity_ok = match (&sanity, reference) {
            (Ok(answer), Some((_, Some(reference)))) => answer == reference,
            (result, _) => result.is_ok(),
        };
        if reference.is_none() {
            references.push((set, sanity.clone().ok()));
        }
        // Without the vector file the liboqs digest still pins the whole
        // 100-entry text.
        let ok = (file_ok || expected.is_none()) && digest == liboqs && sanity_ok;
        passed &= ok;
        let verdict = |good: bool, text: &str| match good {
            true => text.to_owned(),
            false => "**mismatch**".to_owned(),
        };
        results.push_text([
            format!("`{label}`"),
            set.name().to_owned(),
            match expected {
                None => "not checked (file missing)".to_owned(),
                Some(_) => verdict(file_ok, "identical"),
            },
            verdict(digest == liboqs, &format!("`{}…`", &digest[..16])),
            match &sanity {
                Err(e) => format!("**failed: {e}**"),
                Ok(_) => verdict(sanity_ok, "OK"),
            },
            if ok { "PASS" } else { "**FAIL**" }.to_owned(),
        ]);
        let data = json!({
            "instance": label,
            "parameter_set": set.name(),
            "kat_entries": KAT_COUNT,
            "kat_file": file,
            "identical_to_file": file_ok,
            "generated_sha256": digest,
            "liboqs_sha256": liboqs,
            "sanity": sanity.as_ref().err().map_or("OK", String::as_str),
            "same_bytes_as_reference": sanity_ok,
            "result": if ok { "PASS" } else { "FAIL" },
        });
        evidence.push("functional", format!("kat/{}/{label}", set.name()), data);
    }
    let verdict = if passed { "PASS" } else { "FAIL" };
    let _ = write!(
        out,
        "\n### Results\n\n{}\nOverall: **{verdict}**.\n",
        results.markdown()
    );
    (out, passed)
}
