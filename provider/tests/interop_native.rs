//! Interoperability with the own ML-KEM of OpenSSL 3.5, 3.6 and 4.0 (the "native" side runs
//! with only OpenSSL's default provider; "ours" runs with the mlkem provider
//! and OpenSSL's base provider, which has no ML-KEM, or with default and
//! `?provider=mlkem` where randomness is needed).

mod common;

use common::{hex_seed, natives, ours, ours_with, read, scratch, SETS};

#[test]
fn same_seed_gives_byte_identical_keys() {
    for ssl in natives() {
        let dir = scratch("native-seed");
        let base = ours_with("base");
        for set in SETS {
            let seed = format!("hexseed:{}", hex_seed(1));
            ssl.ok(
                &dir,
                "genpkey",
                &[],
                &["-algorithm", set, "-pkeyopt", &seed, "-out", "native.pem"],
            );
            ssl.ok(
                &dir,
                "genpkey",
                &base,
                &["-algorithm", set, "-pkeyopt", &seed, "-out", "ours.pem"],
            );
            assert_eq!(
                read(&dir, "native.pem"),
                read(&dir, "ours.pem"),
                "{set} private PEM"
            );
            ssl.ok(
                &dir,
                "pkey",
                &[],
                &["-in", "native.pem", "-pubout", "-out", "native.pub"],
            );
            ssl.ok(
                &dir,
                "pkey",
                &base,
                &["-in", "ours.pem", "-pubout", "-out", "ours.pub"],
            );
            assert_eq!(
                read(&dir, "native.pub"),
                read(&dir, "ours.pub"),
                "{set} public PEM"
            );
            let native_text = ssl
                .ok(&dir, "pkey", &[], &["-in", "native.pem", "-text", "-noout"])
                .stdout;
            let our_text = ssl
                .ok(&dir, "pkey", &base, &["-in", "ours.pem", "-text", "-noout"])
                .stdout;
            assert_eq!(native_text, our_text, "{set} text");
        }
    }
}

#[test]
fn keys_move_both_ways_in_every_private_key_format() {
    for ssl in natives() {
        let dir = scratch("native-formats");
        let base = ours_with("base");
        for format in [
            "seed-priv",
            "seed-only",
            "priv-only",
            "oqskeypair",
            "bare-seed",
            "bare-priv",
        ] {
            // native -> ours
            let provparam = format!("ml-kem.output_formats={format}");
            ssl.ok(
                &dir,
                "genpkey",
                &["-provparam".into(), provparam.clone()],
                &["-algorithm", "ML-KEM-768", "-out", "n.pem"],
            );
            ssl.ok(
                &dir,
                "pkey",
                &base,
                &["-in", "n.pem", "-pubout", "-out", "n-by-ours.pub"],
            );
            ssl.ok(
                &dir,
                "pkey",
                &[],
                &["-in", "n.pem", "-pubout", "-out", "n-by-native.pub"],
            );
            assert_eq!(
                read(&dir, "n-by-ours.pub"),
                read(&dir, "n-by-native.pub"),
                "{format}"
            );
            // ours -> native, written by us in that format
            let mut flags = ours();
            flags.extend(["-provparam".into(), provparam]);
            ssl.ok(
                &dir,
                "genpkey",
                &flags,
                &["-algorithm", "ML-KEM-768", "-out", "o.pem"],
            );
            ssl.ok(
                &dir,
                "pkey",
                &[],
                &["-in", "o.pem", "-pubout", "-out", "o-by-native.pub"],
            );
            ssl.ok(
                &dir,
                "pkey",
                &base,
                &["-in", "o.pem", "-pubout", "-out", "o-by-ours.pub"],
            );
            assert_eq!(
                read(&dir, "o-by-native.pub"),
                read(&dir, "o-by-ours.pub"),
                "{format}"
            );
        }
    }
}

#[test]
fn encapsulation_and_decapsulation_agree_both_ways() {
    for ssl in natives() {
        let dir = scratch("native-kem");
        let base = ours_with("base");
        let with_rng = ours();
        for set in SETS {
            ssl.ok(
                &dir,
                "genpkey",
                &[],
                &["-algorithm", set, "-out", "key.pem"],
            );
            ssl.ok(
                &dir,
                "pkey",
                &[],
                &["-in", "key.pem", "-pubout", "-out", "pub.pem"],
            );
            // native encapsulates, ours decapsulates (base: no native ML-KEM).
            ssl.ok(
                &dir,
                "pkeyutl",
                &[],
                &[
                    "-encap", "-pubin", "-inkey", "pub.pem", "-out", "ct1", "-secret", "s1",
                ],
            );
            ssl.ok(
                &dir,
                "pkeyutl",
                &base,
                &[
                    "-decap", "-inkey", "key.pem", "-in", "ct1", "-secret", "s1-ours",
                ],
            );
            assert_eq!(
                read(&dir, "s1"),
                read(&dir, "s1-ours"),
                "{set}: native -> ours"
            );
            // ours encapsulates (needs the default provider's DRBG), native
            // decapsulates.
            ssl.ok(
                &dir,
                "pkeyutl",
                &with_rng,
                &[
                    "-encap", "-pubin", "-inkey", "pub.pem", "-out", "ct2", "-secret", "s2",
                ],
            );
            ssl.ok(
                &dir,
                "pkeyutl",
                &[],
                &[
                    "-decap",
                    "-inkey",
                    "key.pem",
                    "-in",
                    "ct2",
                    "-secret",
                    "s2-native",
                ],
            );
            assert_eq!(
                read(&dir, "s2"),
                read(&dir, "s2-native"),
                "{set}: ours -> native"
            );
            assert_eq!(read(&dir, "s2").len(), 32);
        }
    }
}
