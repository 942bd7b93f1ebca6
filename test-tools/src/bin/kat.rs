//! `kat`: writes the NIST-format ML-KEM known-answer tests (the text liboqs
//! `kat_kem --all` prints) and their SHA-256 digests, and optionally checks
//! the digests against the ones liboqs publishes.
//!
//! ```text
//! kat [--params 512|768|1024|all] [--count N] [--out DIR] [--check]
//! ```

use std::fmt;
use std::fs;
use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use test_tools::nist_kat::{sha256_hex, KatParams, KAT_COUNT};

const USAGE: &str = "\
usage: kat [--params 512|768|1024|all] [--count N] [--out DIR] [--check]

Generates the NIST-format ML-KEM KAT text, byte-identical to liboqs
`kat_kem <alg> --all` (count 100) or `kat_kem <alg>` (count 1).

  --params SET  parameter set: 512, 768, 1024 or all (default: all)
  --count N     number of entries, counts 0..N-1 (default: 100)
  --out DIR     write DIR/ML-KEM-<n>.rsp for each set (DIR is created)
  --check       compare each SHA-256 with the liboqs kats.json digest
                (needs --count 1 or 100); exit 1 on a mismatch
  -h, --help    print this message

Without --out, one set's text goes to stdout and its SHA-256 to stderr;
with several sets only the SHA-256 lines are printed.
Each SHA-256 line reads `<sha256>  <name or file>`.";

/// The parsed command line.
#[derive(Debug)]
struct Options {
    sets: Vec<KatParams>,
    count: usize,
    out: Option<PathBuf>,
    check: bool,
}

/// A command-line error, reported with the usage text and exit status 2.
#[derive(Debug)]
struct UsageError(String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// What the command line asks for.
enum Command {
    Help,
    Run(Options),
}

fn parse_args(args: impl IntoIterator<Item = String>) -> Result<Command, UsageError> {
    let mut sets = None;
    let mut count = None;
    let mut out = None;
    let mut check = false;

    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        // Accept both `--flag value` and `--flag=value`.
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_owned(), Some(v.to_owned())),
            _ => (arg.clone(), None),
        };
        let mut value = |name: &str| -> Result<String, UsageError> {
            inline
                .clone()
                .or_else(|| args.next())
                .ok_or_else(|| UsageError(format!("{name} needs a value")))
        };
        match flag.as_str() {
            "-h" | "--help" => return Ok(Command::Help),
            "--params" => {
                let v = value("--params")?;
                let chosen = if v.eq_ignore_ascii_case("all") {
                    KatParams::ALL.to_vec()
                } else {
                    vec![KatParams::from_name(&v).ok_or_else(|| {
                        UsageError(format!(
                            "unknown parameter set `{v}` (use 512, 768, 1024 or all)"
                        ))
                    })?]
                };
                set_once(&mut sets, chosen, "--params")?;
            }
            "--count" => {
                let v = value("--count")?;
                let n = v
                    .parse::<usize>()
                    .map_err(|_| UsageError(format!("--count: `{v}` is not a count")))?;
                set_once(&mut count, n, "--count")?;
            }
            "--out" => {
                let v = value("--out")?;
                if v.is_empty() {
                    return Err(UsageError("--out needs a directory".into()));
                }
                set_once(&mut out, PathBuf::from(v), "--out")?;
            }
            "--check" if inline.is_none() => check = true,
            _ => return Err(UsageError(format!("unexpected argument `{arg}`"))),
        }
    }

    let options = Options {
        sets: sets.unwrap_or_else(|| KatParams::ALL.to_vec()),
        count: count.unwrap_or(KAT_COUNT),
        out,
        check,
    };
    if options.check && options.count != 1 && options.count != KAT_COUNT {
        return Err(UsageError(format!(
            "--check needs --count 1 or {KAT_COUNT}: liboqs publishes no digest for {}",
            options.count
        )));
    }
    Ok(Command::Run(options))
}

fn set_once<T>(slot: &mut Option<T>, value: T, name: &str) -> Result<(), UsageError> {
    if slot.replace(value).is_some() {
        return Err(UsageError(format!("{name} given twice")));
    }
    Ok(())
}

/// Generates, writes and (optionally) checks every chosen set. Returns
/// whether all checks passed.
fn run(options: &Options) -> io::Result<bool> {
    if let Some(dir) = &options.out {
        fs::create_dir_all(dir)?;
    }
    let to_stdout = options.out.is_none() && options.sets.len() == 1;
    let mut all_ok = true;
    for &set in &options.sets {
        let text = set.generate(options.count);
        let digest = sha256_hex(&text);

        let label = match &options.out {
            Some(dir) => {
                let path = dir.join(format!("{}.rsp", set.name()));
                fs::write(&path, &text)?;
                path.display().to_string()
            }
            None => set.name().to_owned(),
        };
        let digest_line = format!("{digest}  {label}");
        if to_stdout {
            let mut stdout = io::stdout().lock();
            stdout.write_all(text.as_bytes())?;
            stdout.flush()?;
            eprintln!("{digest_line}");
        } else {
            println!("{digest_line}");
        }

        if options.check {
            let expected = set
                .expected_digest(options.count)
                .expect("count checked when parsing");
            if digest == expected {
                eprintln!("{}: OK, matches liboqs kats.json", set.name());
            } else {
                eprintln!(
                    "{}: MISMATCH with liboqs kats.json: expected {expected}, got {digest}",
                    set.name()
                );
                all_ok = false;
            }
        }
    }
    Ok(all_ok)
}

fn main() -> ExitCode {
    let options = match parse_args(std::env::args().skip(1)) {
        Ok(Command::Help) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Ok(Command::Run(options)) => options,
        Err(err) => {
            eprintln!("kat: {err}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(&options) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(err) => {
            eprintln!("kat: {err}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Command, UsageError> {
        parse_args(args.iter().map(|s| s.to_string()))
    }

    fn options(args: &[&str]) -> Options {
        match parse(args) {
            Ok(Command::Run(o)) => o,
            Ok(Command::Help) => panic!("help"),
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn defaults() {
        let o = options(&[]);
        assert_eq!(o.sets, KatParams::ALL);
        assert_eq!(o.count, KAT_COUNT);
        assert!(o.out.is_none());
        assert!(!o.check);
    }

    #[test]
    fn flags() {
        let o = options(&["--params", "768", "--count=1", "--out", "d", "--check"]);
        assert_eq!(o.sets, [KatParams::MlKem768]);
        assert_eq!(o.count, 1);
        assert_eq!(o.out, Some(PathBuf::from("d")));
        assert!(o.check);
        assert!(matches!(parse(&["--help"]), Ok(Command::Help)));
    }

    #[test]
    fn bad_arguments() {
        for args in [
            &["--params"][..],
            &["--params", "640"],
            &["--count", "-1"],
            &["--count", "x"],
            &["--count", "5", "--check"],
            &["--params", "512", "--params", "768"],
            &["--check=yes"],
            &["extra"],
            &["--out="],
        ] {
            assert!(parse(args).is_err(), "{args:?}");
        }
    }
}
