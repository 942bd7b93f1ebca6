//! mlkem-provider-check as an administrator runs it: the real binary, the
//! system's libssl, configuration files written as the package's snippets
//! are, the mlkem.so this workspace built, and real `openssl s_server`s.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{accept_port, assert_exit, check, check_with_modules, text, Scratch, SYSTEM};

#[test]
fn local_mode_passes_with_the_system_wide_lines() {
    let s = Scratch::new("enabled");
    let conf = s.write("openssl.cnf", &format!("{SYSTEM}{}", s.includes()));
    let out = check(&conf, &[]);
    let mut wanted = vec![
        "ok    module:",
        "loads: mlkem-provider",
        "default client: offers X25519MLKEM768 (key share)",
        "negotiate X25519MLKEM768 (no HelloRetryRequest",
        "post-quantum TLS is in effect",
    ];
    let per_group: Vec<String> = [
        "X25519MLKEM768",
        "SecP256r1MLKEM768",
        "SecP384r1MLKEM1024",
        "MLKEM512",
        "MLKEM768",
        "MLKEM1024",
    ]
    .iter()
    .map(|g| format!("ok    handshake {g}: negotiated {g}"))
    .collect();
    wanted.extend(per_group.iter().map(String::as_str));
    assert_exit(&out, 0, &wanted);
    assert!(!text(&out).contains("FAIL"), "{}", text(&out));

    let json = check(&conf, &["--json"]);
    assert_eq!(json.status.code(), Some(0));
    let report: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(report["mode"], "local");
    assert_eq!(report["ok"], true);
    assert!(report["steps"].as_array().unwrap().len() >= 12);
}

/// Ubuntu 22.04's and 24.04's openssl.cnf, cut to what enabling touches:
/// its own providers and ssl_conf sections.
const UBUNTU: &str = "openssl_conf = openssl_init\n[openssl_init]\nproviders = provider_sect\n\
                      ssl_conf = ssl_sect\n[provider_sect]\ndefault = default_sect\n\
                      [default_sect]\n# activate = 1\n[ssl_sect]\n\
                      system_default = system_default_sect\n[system_default_sect]\n\
                      CipherString = DEFAULT:@SECLEVEL=2\n";

/// On a file with sections of its own, the two `.include` lines replace
/// them: the check fails naming `ssl_conf` and the setting it dropped, and
/// says that post-quantum TLS is on all the same; the replaced providers
/// section (`default` only, which mlkem's keeps) is a warning. The lines
/// of --enable-lines join them instead: the check passes.
#[test]
fn enable_lines_keep_the_files_own_sections() {
    let s = Scratch::new("ubuntu");
    let plain = s.write("plain.cnf", &format!("{UBUNTU}{}", s.includes()));
    let out = check_with_modules(&plain, Some(&s.dir), &[]);
    assert_exit(
        &out,
        1,
        &[
            "FAIL  configuration: [openssl_init] sets `ssl_conf` twice",
            "which drops the file's own `CipherString = DEFAULT:@SECLEVEL=2` ([system_default_sect])",
            "warn  configuration: [openssl_init] sets `providers` twice",
            "post-quantum TLS is in effect: a default client and a default server negotiate \
             X25519MLKEM768",
            "but enabling it replaced the file's own settings",
        ],
    );

    let ubuntu = s.write("ubuntu.cnf", UBUNTU);
    let lines = check(&ubuntu, &["--enable-lines"]);
    assert_eq!(lines.status.code(), Some(0), "{}", text(&lines));
    let lines = String::from_utf8(lines.stdout).unwrap();
    assert!(!lines.contains(".include"), "{lines}");
    let joined = s.write("joined.cnf", &format!("{UBUNTU}{lines}"));
    let out = check_with_modules(&joined, Some(&s.dir), &[]);
    assert_exit(&out, 0, &["post-quantum TLS is in effect"]);
    assert!(!text(&out).contains("FAIL"), "{}", text(&out));

    // Debian's file gets the two lines of the guide; no file, exit 2.
    let debian = s.write("debian.cnf", SYSTEM);
    let lines = check(&debian, &["--enable-lines"]);
    assert_exit(
        &lines,
        0,
        &[".include /etc/ssl/mlkem-provider.cnf\n.include /etc/ssl/mlkem-tls-groups.cnf\n"],
    );
    let missing = check(&s.path("missing.cnf"), &["--enable-lines"]);
    assert_exit(&missing, 2, &["does not exist"]);
}

#[test]
fn local_mode_names_each_common_mistake() {
    let s = Scratch::new("mistakes");
    // The lines never added: OpenSSL runs without the provider.
    let plain = s.write("plain.cnf", SYSTEM);
    assert_exit(
        &check(&plain, &[]),
        1,
        &[
            "[openssl_init] is empty or missing",
            "mlkem is not active",
            "NOT in effect",
        ],
    );

    // The module removed (the snippet still names it).
    let gone = Scratch::new("gone");
    let conf = gone.write("openssl.cnf", &format!("{SYSTEM}{}", gone.includes()));
    std::fs::remove_file(gone.path("mlkem.so")).unwrap();
    assert_exit(
        &check(&conf, &[]),
        1,
        &[
            "no mlkem.so at",
            "without mlkem",
            "default client: offers X25519 (key share)",
        ],
    );

    // A module for another architecture: an ELF header for AArch64 (for
    // x86-64 where this test itself runs on AArch64).
    let foreign = Scratch::new("foreign");
    let conf = foreign.write("openssl.cnf", &format!("{SYSTEM}{}", foreign.includes()));
    let (machine, name) = if cfg!(target_arch = "aarch64") {
        (62u8, "x86-64")
    } else {
        (183, "AArch64")
    };
    let header = [
        0x7f, b'E', b'L', b'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, machine, 0,
    ];
    std::fs::write(foreign.path("mlkem.so"), header).unwrap();
    assert_exit(
        &check(&conf, &[]),
        1,
        &[&format!("is built for {name}, this OpenSSL for")],
    );

    // A providers section without default.
    let provider = std::fs::read_to_string(s.path("mlkem-provider.cnf")).unwrap();
    s.write(
        "no-default.cnf",
        &provider.replace("default = mlkem_default_sect\n", ""),
    );
    let conf = s.write(
        "without-default.cnf",
        &format!("{SYSTEM}.include {}\n", s.path("no-default.cnf").display()),
    );
    assert_exit(
        &check(&conf, &[]),
        1,
        &[
            "does not activate `default`",
            "mlkem is active but default is not",
        ],
    );

    // The lines at the top: the system file's own lines join our sections.
    let conf = s.write("early.cnf", &format!("{}{SYSTEM}", s.includes()));
    assert_exit(
        &check(&conf, &[]),
        1,
        &[
            "is not at the end of its file",
            "never names an initialisation section",
        ],
    );

    // Our providers line undone by a later one of the admin's.
    let conf = s.write(
        "twice.cnf",
        &format!(
            "{SYSTEM}{}[openssl_init]\nproviders = mine\n[mine]\ndefault = d\n[d]\nactivate = 1\n",
            s.includes()
        ),
    );
    assert_exit(
        &check(&conf, &[]),
        1,
        &["sets `providers` twice", "does not name mlkem"],
    );

    // A file that is not a configuration, and one that is not there.
    let conf = s.write(
        "garbage.cnf",
        "\u{0}\u{1} this is not a configuration\n[[\n",
    );
    assert_exit(&check(&conf, &[]), 1, &["missing equal sign"]);
    assert_exit(&check(&s.path("absent.cnf"), &[]), 1, &["does not exist"]);
}

/// A port on 127.0.0.1 where nothing listens: one the kernel just gave out
/// and took back. (A port probed free and then used later may be taken in
/// between by a test running beside this one.)
fn closed_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// An `openssl s_server` on 127.0.0.1, on a port the kernel picks (so tests
/// running at once never race for one), killed on drop.
struct Server {
    child: Child,
    /// `127.0.0.1:PORT`, the port from the server's own `ACCEPT` line.
    target: String,
}

impl Server {
    fn start(openssl: &Path, conf: &Path, s: &Scratch, groups: &str) -> Self {
        let cert = s.cert();
        let child = Command::new(openssl)
            .args(["s_server", "-accept", "127.0.0.1:0", "-groups", groups])
            .arg("-cert")
            .arg(&cert)
            .arg("-key")
            .arg(s.path("key.pem"))
            .env("OPENSSL_CONF", conf)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Owned before anything can fail, so a failed start kills it too.
        let mut server = Self {
            child,
            target: String::new(),
        };
        let mut lines = BufReader::new(server.child.stdout.take().unwrap()).lines();
        let port = accept_port(lines.by_ref())
            .unwrap_or_else(|| panic!("s_server -groups {groups} did not start"));
        server.target = format!("127.0.0.1:{port}");
        std::thread::spawn(move || lines.for_each(drop)); // keep its pipe drained
        server
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[path = "../../../test-tools/src/openssl_cache.rs"]
mod openssl_cache;

/// OpenSSL 3.5 from scripts/build-openssl.sh's cache, if built.
fn openssl_35() -> Option<PathBuf> {
    openssl_cache::cached("3.5").map(|prefix| prefix.join("bin/openssl"))
}

#[test]
fn remote_mode_tells_post_quantum_from_classical_servers() {
    let s = Scratch::new("remote");
    let enabled = s.write("openssl.cnf", &format!("{SYSTEM}{}", s.includes()));
    let plain = s.write("plain.cnf", SYSTEM);
    // Servers: OpenSSL 3.5's own ML-KEM when built (CI builds it), and the
    // system's OpenSSL with our provider.
    let mut servers = vec![(PathBuf::from("openssl"), enabled.clone())];
    match openssl_35() {
        Some(o) => servers.push((o, plain.clone())),
        None => {
            assert!(
                std::env::var("CI").map_or(true, |v| v != "true" && v != "1"),
                "OpenSSL 3.5 is not built"
            );
            eprintln!("skipping OpenSSL 3.5: not built (scripts/build-openssl.sh 3.5)");
        }
    }
    for (openssl, server_conf) in &servers {
        let pq = Server::start(openssl, server_conf, &s, "X25519MLKEM768");
        // The check loads the provider itself when the configuration does not.
        for conf in [&plain, &enabled] {
            let out = check_with_modules(conf, Some(&s.dir), &[&pq.target]);
            assert_exit(
                &out,
                0,
                &[
                    "X25519MLKEM768       X25519MLKEM768",
                    "127.0.0.1 negotiates X25519MLKEM768",
                ],
            );
        }
        let json = check(&enabled, &["--json", &pq.target]);
        let report: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
        assert_eq!(report["post_quantum"], true);
        assert_eq!(report["attempts"][0]["negotiated"], "X25519MLKEM768");
        assert_eq!(report["attempts"][0]["codepoint"], 0x11ec);
        assert_eq!(
            report["attempts"][6]["negotiated"], "X25519MLKEM768",
            "the default list leads with it"
        );

        let classical = Server::start(openssl, server_conf, &s, "X25519:P-256");
        let out = check(&enabled, &[&classical.target]);
        // A 3.0 client leads with X25519MLKEM768: the server asks again.
        assert_exit(&out, 1, &["stays classical (X25519)", "yes, for X25519"]);
    }
}

#[test]
fn remote_mode_fails_clearly_and_in_bounded_time() {
    let s = Scratch::new("unreachable");
    let conf = s.write("openssl.cnf", &format!("{SYSTEM}{}", s.includes()));
    let closed = closed_port();
    let started = Instant::now();
    assert_exit(
        &check(&conf, &[&format!("127.0.0.1:{closed}")]),
        2,
        &["cannot connect", "refused"],
    );
    assert_exit(
        &check(&conf, &["host.invalid"]),
        2,
        &["cannot resolve host.invalid"],
    );
    assert_exit(
        &check(&conf, &["127.0.0.1:notaport"]),
        2,
        &["not a port number"],
    );
    assert_exit(
        &check(&conf, &["--starttls", "gopher", "127.0.0.1"]),
        2,
        &["invalid value 'gopher'"],
    );

    // A server that answers, but not in TLS; and one that never answers.
    let http = TcpListener::bind("127.0.0.1:0").unwrap();
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let (http_port, silent_port) = (
        http.local_addr().unwrap().port(),
        silent.local_addr().unwrap().port(),
    );
    std::thread::spawn(move || {
        for stream in http.incoming().take(1) {
            let _ = stream
                .unwrap()
                .write_all(b"HTTP/1.1 400 Bad Request\r\n\r\n");
        }
    });
    let held = std::thread::spawn(move || {
        silent.accept().map(|(stream, _)| {
            std::thread::sleep(Duration::from_secs(3));
            drop(stream)
        })
    });
    assert_exit(
        &check(&conf, &[&format!("127.0.0.1:{http_port}")]),
        2,
        &["does not speak TLS"],
    );
    assert_exit(
        &check(
            &conf,
            &["--timeout", "1", &format!("127.0.0.1:{silent_port}")],
        ),
        2,
        &["did not answer the TLS ClientHello in time"],
    );
    let _ = held.join();
    // A server that hangs up at once.
    let closing = TcpListener::bind("127.0.0.1:0").unwrap();
    let closing_port = closing.local_addr().unwrap().port();
    std::thread::spawn(move || closing.incoming().take(1).for_each(drop));
    assert_exit(
        &check(&conf, &[&format!("127.0.0.1:{closing_port}")]),
        2,
        &["closed the connection without answering"],
    );
    // SMTP STARTTLS against a server that is no SMTP server.
    let fake = TcpListener::bind("127.0.0.1:0").unwrap();
    let fake_port = fake.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in fake.incoming().take(1) {
            let _ = stream.unwrap().write_all(b"SSH-2.0-OpenSSH_9.2\r\n");
        }
    });
    assert_exit(
        &check(
            &conf,
            &["--starttls", "smtp", &format!("127.0.0.1:{fake_port}")],
        ),
        2,
        &["expected an SMTP greeting"],
    );
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "took {:?}",
        started.elapsed()
    );
}
