//! The check against a corpus of configuration files (`tests/corpus`),
//! each judged first by OpenSSL's own tools: `openssl list -providers`
//! loads mlkem from it, and an `openssl s_server` and `s_client` reading it
//! negotiate a post-quantum group (the ServerHello's key share, from
//! `-trace`), and the file's own TLS settings still apply: `openssl ciphers
//! -s -v`, which prints what an SSL_CTX takes from the configuration
//! (cipher strings, protocol bounds, security level), prints the same with
//! and without the lines that include mlkem's snippets. The check must
//! agree: exit 0 with no FAIL line where OpenSSL passes, exit 1 where it
//! does not. Each file's first line names the
//! verdict it was written for, so that the corpus keeps both kinds.
//!
//! `@DIR@` in a file stands for the scratch directory, which holds this
//! workspace's mlkem.so, the package's two snippets, the corpus' own
//! subdirectories and `snippets.d` (the snippets as `*.CNF`/`*.Conf`).

mod common;

use std::fs;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use common::{accept_port, text, Scratch, CHECK};

/// The post-quantum groups' code points (X25519MLKEM768,
/// SecP256r1MLKEM768, SecP384r1MLKEM1024, MLKEM512/768/1024), as `-trace`
/// prints them.
const POST_QUANTUM: [u16; 6] = [0x11ec, 0x11eb, 0x11ed, 0x0200, 0x0201, 0x0202];

/// The corpus file's scratch copy, and the verdict it was written for.
fn install(s: &Scratch, corpus: &Path, name: &str) -> (std::path::PathBuf, bool) {
    let dir = s.dir.display().to_string();
    let raw = fs::read(corpus.join(name)).unwrap();
    let text = String::from_utf8(raw).unwrap().replace("@DIR@", &dir);
    let first = text
        .trim_start_matches('\u{feff}')
        .lines()
        .next()
        .unwrap_or("");
    let pass = match first.strip_prefix("# verdict: ") {
        Some(rest) if rest.starts_with("pass") => true,
        Some(rest) if rest.starts_with("fail") => false,
        _ => panic!("{name}: the first line must be `# verdict: pass|fail — why`"),
    };
    (s.write(name, &text), pass)
}

/// Copies the corpus' subdirectories (with `@DIR@` replaced) and writes
/// `snippets.d`.
fn prepare(s: &Scratch, corpus: &Path) {
    for entry in fs::read_dir(corpus).unwrap().filter_map(Result::ok) {
        if !entry.path().is_dir() {
            continue;
        }
        let target = s.dir.join(entry.file_name());
        fs::create_dir_all(&target).unwrap();
        for file in fs::read_dir(entry.path()).unwrap().filter_map(Result::ok) {
            let text = fs::read_to_string(file.path()).unwrap();
            let text = text.replace("@DIR@", &s.dir.display().to_string());
            fs::write(target.join(file.file_name()), text).unwrap();
        }
    }
    let snippets = s.dir.join("snippets.d");
    fs::create_dir_all(&snippets).unwrap();
    fs::copy(
        s.path("mlkem-provider.cnf"),
        snippets.join("10-mlkem-provider.CNF"),
    )
    .unwrap();
    fs::copy(
        s.path("mlkem-tls-groups.cnf"),
        snippets.join("20-mlkem-tls-groups.Conf"),
    )
    .unwrap();
    s.cert();
}

/// `openssl` with the corpus' environment.
fn openssl(s: &Scratch, conf: &Path) -> Command {
    let mut command = Command::new("openssl");
    command
        .env("OPENSSL_CONF", conf)
        .env("OPENSSL_MODULES", &s.dir)
        .env("MLKEM_CORPUS_DIR", &s.dir)
        .env_remove("OPENSSL_CONF_INCLUDE");
    command
}

/// What an SSL_CTX made under `conf` allows, as `openssl ciphers -s -v`
/// prints it.
fn ciphers(s: &Scratch, conf: &Path) -> String {
    let out = openssl(s, conf)
        .args(["ciphers", "-s", "-v"])
        .output()
        .unwrap();
    text(&out)
}

/// Whether the TLS settings of the file without its mlkem `.include`
/// lines still apply with them, by `openssl ciphers -s -v`; and if not,
/// what changed.
fn own_settings_kept(s: &Scratch, conf: &Path) -> Result<(), String> {
    let full = fs::read_to_string(conf).unwrap();
    let own: String = full
        .lines()
        .filter(|l| {
            let l = l.trim_start();
            !(l.starts_with(".include")
                && ["mlkem-provider.cnf", "mlkem-tls-groups.cnf", "snippets.d"]
                    .iter()
                    .any(|snippet| l.contains(snippet)))
        })
        .map(|l| format!("{l}\n"))
        .collect();
    let baseline = conf.with_extension("own.cnf");
    fs::write(&baseline, own).unwrap();
    let (before, after) = (ciphers(s, &baseline), ciphers(s, conf));
    fs::remove_file(&baseline).unwrap();
    if before == after {
        return Ok(());
    }
    let count = |t: &str| t.lines().count();
    Err(format!(
        "the file's own TLS settings are dropped: `openssl ciphers -s -v` lists {} entries \
         without the mlkem lines and {} with them",
        count(&before),
        count(&after)
    ))
}

/// OpenSSL's verdict: mlkem loaded, a post-quantum group negotiated
/// between its own s_server and s_client, and the file's own TLS settings
/// kept; with the evidence.
fn openssl_verdict(s: &Scratch, conf: &Path) -> (bool, String) {
    let (pass, evidence) = handshake_verdict(s, conf);
    if !pass {
        return (pass, evidence);
    }
    match own_settings_kept(s, conf) {
        Ok(()) => (true, evidence),
        Err(dropped) => (false, format!("{evidence}, but {dropped}")),
    }
}

/// mlkem loaded, and a post-quantum group negotiated between OpenSSL's own
/// s_server and s_client; with the evidence.
fn handshake_verdict(s: &Scratch, conf: &Path) -> (bool, String) {
    let list = openssl(s, conf)
        .args(["list", "-providers"])
        .output()
        .unwrap();
    let listed = text(&list);
    if !list.status.success() || !listed.contains("  mlkem\n") {
        return (false, format!("openssl list -providers: {listed}"));
    }
    let mut server = openssl(s, conf)
        .args([
            "s_server",
            "-accept",
            "127.0.0.1:0",
            "-naccept",
            "1",
            "-cert",
        ])
        .arg(s.path("cert.pem"))
        .arg("-key")
        .arg(s.path("key.pem"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(server.stdout.take().unwrap()).lines();
    let port = accept_port(lines.by_ref());
    let verdict = match port {
        None => (false, "s_server did not start".to_owned()),
        Some(port) => {
            let client = openssl(s, conf)
                .args([
                    "s_client",
                    "-trace",
                    "-connect",
                    &format!("127.0.0.1:{port}"),
                ])
                .stdin(Stdio::null())
                .output()
                .unwrap();
            let trace = text(&client);
            // The last ServerHello's key share.
            let group = trace.rsplit("ServerHello").next().and_then(|hello| {
                let at = hello.find("NamedGroup: ")?;
                let rest = &hello[at..];
                let open = rest.find('(')?;
                let close = rest.find(')')?;
                rest[open + 1..close].parse::<u16>().ok()
            });
            match group {
                Some(g) if POST_QUANTUM.contains(&g) => (true, format!("negotiated 0x{g:04x}")),
                Some(g) => (false, format!("negotiated classical 0x{g:04x}")),
                None => (false, format!("no key share in the ServerHello:\n{trace}")),
            }
        }
    };
    let _ = server.kill();
    let _ = server.wait();
    verdict
}

#[test]
fn the_check_agrees_with_openssl_on_every_file_of_the_corpus() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let s = Scratch::new("corpus");
    prepare(&s, &corpus);
    let mut names: Vec<String> = fs::read_dir(&corpus)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".cnf"))
        .collect();
    names.sort();
    assert!(names.len() >= 10, "the corpus: {names:?}");
    let mut disagreements = Vec::new();
    for name in &names {
        let (conf, written_for) = install(&s, &corpus, name);
        let (openssl_pass, evidence) = openssl_verdict(&s, &conf);
        let out = Command::new(CHECK)
            .env("OPENSSL_CONF", &conf)
            .env("OPENSSL_MODULES", &s.dir)
            .env("MLKEM_CORPUS_DIR", &s.dir)
            .env_remove("OPENSSL_CONF_INCLUDE")
            .output()
            .unwrap();
        let report = text(&out);
        let check_pass = out.status.code() == Some(0);
        let failed_lines = report.lines().filter(|l| l.contains("FAIL")).count();
        println!(
            "{name}: openssl {openssl_pass} ({evidence}), check exit {:?}",
            out.status.code()
        );
        if openssl_pass != written_for {
            disagreements.push(format!(
                "{name}: written for {written_for}, OpenSSL says {openssl_pass}: {evidence}"
            ));
        }
        if check_pass != openssl_pass || (openssl_pass && failed_lines > 0) {
            disagreements.push(format!(
                "{name}: OpenSSL says {openssl_pass} ({evidence}), the check exits {:?}:\n{report}",
                out.status.code()
            ));
        }
        if !openssl_pass && out.status.code() != Some(1) {
            disagreements.push(format!(
                "{name}: the check must exit 1, not {:?}",
                out.status.code()
            ));
        }
    }
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n\n"));
}
