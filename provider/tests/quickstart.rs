//! The README's quickstart, command for command, on every OpenSSL whose
//! `pkeyutl` has `-encap` and `-decap` (3.4, 3.5, 3.6, 4.0): a user who
//! copies it gets a key, its public half, its text form and one shared
//! secret on both sides.

mod common;

use common::{natives, openssl_34, ours, read, scratch};

#[test]
fn readme_quickstart_agrees_on_the_secret() {
    let openssls = openssl_34().into_iter().chain(natives());
    for ssl in openssls {
        let dir = scratch(&format!("quickstart-{}", ssl.series));
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
            &["-in", "key.pem", "-pubout", "-out", "pub.pem"],
        );
        let text = ssl.ok(&dir, "pkey", &p, &["-in", "key.pem", "-text", "-noout"]);
        let text = String::from_utf8_lossy(&text.stdout);
        assert!(text.contains("ML-KEM-768"), "{}:\n{text}", ssl.series);
        ssl.ok(
            &dir,
            "pkeyutl",
            &p,
            &[
                "-encap", "-pubin", "-inkey", "pub.pem", "-out", "ct.bin", "-secret", "ss.bin",
            ],
        );
        // `-out`, not `-secret`: OpenSSL 3.4's `-secret` is for
        // encapsulation only, and its -decap writes the secret to -out
        // (3.5 and later take either).
        let decap = ssl.ok(
            &dir,
            "pkeyutl",
            &p,
            &[
                "-decap", "-inkey", "key.pem", "-in", "ct.bin", "-out", "ss2.bin",
            ],
        );
        assert!(decap.stdout.is_empty(), "{}: secret on stdout", ssl.series);
        assert_eq!(read(&dir, "ct.bin").len(), 1088, "{}", ssl.series);
        let secret = read(&dir, "ss.bin");
        assert_eq!(secret.len(), 32, "{}", ssl.series);
        assert_eq!(secret, read(&dir, "ss2.bin"), "{}", ssl.series);
    }
}
