//! ML-KEM keys in certificates (`x509 -force_pubkey`, `verify`) on every
//! OpenSSL of the matrix, and CMS with ML-KEM recipients (RFC 9629
//! KEMRecipientInfo, RFC 9936) against the native ML-KEM of OpenSSL 3.6 and
//! later, both ways, for all three parameter sets.

mod common;

use std::path::Path;

use common::{hex_seed, matrix, natives, ours, read, scratch, write, OpenSsl, SETS};

/// Extensions of the test CA and of a KEM recipient's certificate.
const CA_EXTENSIONS: &str = "basicConstraints = critical, CA:TRUE\n\
                             keyUsage = critical, keyCertSign\n";
const KEM_EXTENSIONS: &str = "basicConstraints = CA:FALSE\n\
                              keyUsage = critical, keyEncipherment\n";

/// In `dir`: an EC P-256 CA (`ca.key`, `ca.pem`), our ML-KEM key for `set`
/// from a fixed seed (`kem.pem`, `kem.pub`), and a certificate for that key
/// signed by the CA (`kem.crt`), all made by `ssl` with our provider.
fn issue(ssl: &OpenSsl, dir: &Path, set: &str) {
    let flags = ours();
    write(dir, "ca.ext", CA_EXTENSIONS);
    write(dir, "kem.ext", KEM_EXTENSIONS);
    ssl.ok(
        dir,
        "genpkey",
        &[],
        &[
            "-algorithm",
            "EC",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-out",
            "ca.key",
        ],
    );
    ssl.ok(
        dir,
        "x509",
        &[],
        &[
            "-new",
            "-key",
            "ca.key",
            "-subj",
            "/CN=ML-KEM test CA",
            "-days",
            "2",
            "-extfile",
            "ca.ext",
            "-out",
            "ca.pem",
        ],
    );
    let seed = format!("hexseed:{}", hex_seed(7));
    ssl.ok(
        dir,
        "genpkey",
        &flags,
        &["-algorithm", set, "-pkeyopt", &seed, "-out", "kem.pem"],
    );
    ssl.ok(
        dir,
        "pkey",
        &flags,
        &["-in", "kem.pem", "-pubout", "-out", "kem.pub"],
    );
    // The subject key cannot sign its own request: -force_pubkey puts it in
    // a certificate the CA signs.
    ssl.ok(
        dir,
        "x509",
        &flags,
        &[
            "-new",
            "-subj",
            "/CN=ML-KEM recipient",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-force_pubkey",
            "kem.pub",
            "-days",
            "2",
            "-extfile",
            "kem.ext",
            "-out",
            "kem.crt",
        ],
    );
}

#[test]
fn certificates_carry_ml_kem_keys_and_verify() {
    for ssl in matrix() {
        for set in SETS {
            let dir = scratch(&format!("cert-{}-{set}", ssl.series));
            issue(&ssl, &dir, set);
            let flags = ours();
            let verified = ssl.ok(&dir, "verify", &flags, &["-CAfile", "ca.pem", "kem.crt"]);
            assert_eq!(
                String::from_utf8_lossy(&verified.stdout).trim(),
                "kem.crt: OK",
                "{} {set}",
                ssl.series
            );
            let text = ssl.ok(&dir, "x509", &flags, &["-in", "kem.crt", "-noout", "-text"]);
            let text = String::from_utf8_lossy(&text.stdout);
            assert!(
                text.contains(&format!("Public Key Algorithm: {set}")),
                "{} {set}: x509 -text:\n{text}",
                ssl.series
            );
            // The certificate's key is the key we put in, byte for byte.
            ssl.ok(
                &dir,
                "x509",
                &flags,
                &["-in", "kem.crt", "-noout", "-pubkey", "-out", "cert.pub"],
            );
            assert_eq!(
                read(&dir, "cert.pub"),
                read(&dir, "kem.pub"),
                "{} {set}",
                ssl.series
            );
            if ssl.series != "3.0" {
                // A native OpenSSL reads and verifies our certificate alone.
                ssl.ok(&dir, "verify", &[], &["-CAfile", "ca.pem", "kem.crt"]);
                ssl.ok(
                    &dir,
                    "x509",
                    &[],
                    &["-in", "kem.crt", "-noout", "-pubkey", "-out", "native.pub"],
                );
                assert_eq!(read(&dir, "native.pub"), read(&dir, "kem.pub"), "{set}");
            }
        }
    }
}

/// CMS envelopes need OpenSSL 3.6's KEMRecipientInfo.
fn cms_capable() -> Vec<OpenSsl> {
    natives()
        .into_iter()
        .filter(|ssl| ssl.series != "3.5")
        .collect()
}

#[test]
fn cms_envelopes_to_ml_kem_recipients_open_both_ways_against_native() {
    let message = b"CMS to an ML-KEM recipient (RFC 9629, RFC 9936)\n";
    for ssl in cms_capable() {
        for set in SETS {
            let dir = scratch(&format!("cms-{}-{set}", ssl.series));
            issue(&ssl, &dir, set);
            write(&dir, "message.txt", message);
            for (sealer, opener) in [("ours", "native"), ("native", "ours"), ("ours", "ours")] {
                let flags = |side: &str| if side == "ours" { ours() } else { Vec::new() };
                let sealed = format!("{sealer}.cms");
                let opened = format!("{sealer}-by-{opener}.txt");
                ssl.ok(
                    &dir,
                    "cms",
                    &flags(sealer),
                    &[
                        "-encrypt",
                        "-binary",
                        "-in",
                        "message.txt",
                        "-recip",
                        "kem.crt",
                        "-aes-256-cbc",
                        "-outform",
                        "PEM",
                        "-out",
                        &sealed,
                    ],
                );
                let envelope = ssl.ok(
                    &dir,
                    "cms",
                    &[],
                    &["-cmsout", "-print", "-inform", "PEM", "-in", &sealed],
                );
                let envelope = String::from_utf8_lossy(&envelope.stdout);
                assert!(
                    envelope.contains("id-smime-ori-kem") && envelope.contains("d.kemri"),
                    "{} {set} sealed by {sealer}: no KEMRecipientInfo:\n{envelope}",
                    ssl.series
                );
                ssl.ok(
                    &dir,
                    "cms",
                    &flags(opener),
                    &[
                        "-decrypt", "-binary", "-inform", "PEM", "-in", &sealed, "-recip",
                        "kem.crt", "-inkey", "kem.pem", "-out", &opened,
                    ],
                );
                assert_eq!(
                    read(&dir, &opened),
                    message,
                    "{} {set}: sealed by {sealer}, opened by {opener}",
                    ssl.series
                );
            }
        }
    }
}
