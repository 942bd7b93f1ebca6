//! Hostile and mistaken input through the CLI: each gets a failing exit
//! status and an error message, never a crash.

mod common;

use common::{matrix, ours, read, scratch, write};

#[test]
fn truncated_and_garbage_keys_fail_cleanly() {
    for ssl in matrix() {
        let dir = scratch(&format!("bad-{}", ssl.series));
        let p = ours();
        ssl.ok(
            &dir,
            "genpkey",
            &p,
            &["-algorithm", "ML-KEM-768", "-out", "key.pem"],
        );
        ssl.ok(
            &dir,
            "pkey",
            &p,
            &["-in", "key.pem", "-outform", "DER", "-out", "key.der"],
        );
        let der = read(&dir, "key.der");
        let pem = String::from_utf8(read(&dir, "key.pem")).unwrap();
        // Reading `file` as a DER key fails cleanly.
        let der_fails = |file: &str, what: &str| {
            let out = ssl.with_flags(&dir, "pkey", &p, &["-inform", "DER", "-in", file, "-noout"]);
            common::assert_clean_failure(&out, "Could not", what);
        };

        // Truncated DER, at several points.
        for cut in [1, 10, 30, der.len() / 2, der.len() - 1] {
            write(&dir, "cut.der", &der[..cut]);
            der_fails("cut.der", &format!("DER cut at {cut} on {}", ssl.series));
        }
        // A PEM whose body is cut short.
        write(
            &dir,
            "cut.pem",
            format!("{}\n-----END PRIVATE KEY-----\n", &pem[..pem.len() / 2]),
        );
        let out = ssl.with_flags(&dir, "pkey", &p, &["-in", "cut.pem", "-noout"]);
        common::assert_clean_failure(&out, "Could not", "truncated PEM");
        // Garbage.
        write(&dir, "garbage.der", [0x30, 0x82, 0xff, 0xff, 1, 2, 3]);
        der_fails("garbage.der", "garbage DER");
        // Our OID with a payload one byte short: our decoder declines it
        // (a decoder must, so that others may try), and the CLI reports
        // that no decoder could read it; the reason our decoder gives is
        // checked in process by entry_point_faults.rs.
        let mut bad = der.clone();
        let last = bad.len() - 1;
        bad.truncate(last);
        let total = bad.len() - 4;
        bad[2] = (total >> 8) as u8;
        bad[3] = total as u8;
        // The privateKey OCTET STRING (offsets 20..24: 04 82 hh ll) now
        // ends one byte early, inside our key-format payload.
        assert_eq!(bad[20..22], [0x04, 0x82], "PrivateKeyInfo layout");
        let inner = bad.len() - 24;
        bad[22] = (inner >> 8) as u8;
        bad[23] = inner as u8;
        write(&dir, "short.der", &bad);
        der_fails("short.der", "payload one byte short");
    }
}

#[test]
fn wrong_key_kinds_and_lengths_fail_cleanly() {
    // pkeyutl -encap/-decap exist from 3.4 on.
    let Some(ssl) = common::openssl_35() else {
        return;
    };
    let dir = scratch("bad-kem");
    let p = ours();
    ssl.ok(
        &dir,
        "genpkey",
        &p,
        &["-algorithm", "ML-KEM-512", "-out", "key.pem"],
    );
    ssl.ok(
        &dir,
        "pkey",
        &p,
        &["-in", "key.pem", "-pubout", "-out", "pub.pem"],
    );
    ssl.ok(
        &dir,
        "pkeyutl",
        &p,
        &[
            "-encap", "-pubin", "-inkey", "pub.pem", "-out", "ct", "-secret", "ss",
        ],
    );
    let ct = read(&dir, "ct");
    assert_eq!(ct.len(), 768);

    // A ciphertext one byte short, and one byte long.
    let mut long = ct.clone();
    long.push(0);
    for (file, bad, needle, what) in [
        (
            "short.ct",
            &ct[..ct.len() - 1],
            "ML-KEM-512 ciphertext must be 768 bytes, got 767",
            "short ciphertext",
        ),
        (
            "long.ct",
            &long[..],
            "ML-KEM-512 ciphertext must be 768 bytes, got 769",
            "long ciphertext",
        ),
    ] {
        write(&dir, file, bad);
        let out = ssl.with_flags(
            &dir,
            "pkeyutl",
            &p,
            &["-decap", "-inkey", "key.pem", "-in", file, "-secret", "x"],
        );
        common::assert_clean_failure(&out, needle, what);
    }

    // A public key where a private key is needed.
    let out = ssl.with_flags(
        &dir,
        "pkeyutl",
        &p,
        &[
            "-decap", "-pubin", "-inkey", "pub.pem", "-in", "ct", "-secret", "x",
        ],
    );
    common::assert_clean_failure(
        &out,
        "missing private key",
        "decapsulation with a public key",
    );
    let out = ssl.with_flags(&dir, "pkey", &p, &["-in", "pub.pem", "-noout"]);
    common::assert_clean_failure(&out, "Could not", "public key read as private");

    // A seed of the wrong length.
    let out = ssl.with_flags(
        &dir,
        "genpkey",
        &p,
        &[
            "-algorithm",
            "ML-KEM-512",
            "-pkeyopt",
            "hexseed:0011",
            "-out",
            "x.pem",
        ],
    );
    common::assert_clean_failure(&out, "seed must be 64 bytes, got 2", "short seed");
}
