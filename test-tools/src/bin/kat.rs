//! `kat`: writes the NIST-format ML-KEM known-answer tests (the text liboqs
//! `kat_kem --all` prints) and their SHA-256 digests, and optionally checks
//! the digests against the ones liboqs publishes.

use std::fs;
use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use test_tools::cli;
use test_tools::nist_kat::{sha256_hex, KatParams, KAT_COUNT};

/// Generates the NIST-format ML-KEM KAT text, byte-identical to liboqs
/// `kat_kem <alg> --all` (count 100) or `kat_kem <alg>` (count 1).
///
/// Without --out, one set's text goes to stdout and its SHA-256 to stderr;
/// with several sets only the SHA-256 lines are printed. Each SHA-256 line
/// reads `<sha256>  <name or file>`.
#[derive(Parser, Debug)]
#[command(name = "kat")]
struct Args {
    /// Parameter set: 512, 768, 1024 or all
    #[arg(long, value_name = "SET", default_value = "all", value_parser = sets)]
    params: ::std::vec::Vec<KatParams>,
    /// Number of entries, counts 0..N-1
    #[arg(long, value_name = "N", default_value_t = KAT_COUNT)]
    count: usize,
    /// Write each set's responses to DIR/ML-KEM-512.rsp, DIR/ML-KEM-768.rsp, ... (DIR is created)
    #[arg(long, value_name = "DIR", value_parser = cli::path)]
    out: Option<PathBuf>,
    /// Compare each SHA-256 with the liboqs kats.json digest (needs --count 1
    /// or 100); exit 1 on a mismatch
    #[arg(long)]
    check: bool,
}

/// `all` or one parameter set.
fn sets(value: &str) -> Result<Vec<KatParams>, String> {
    match value.eq_ignore_ascii_case("all") {
        true => Ok(KatParams::ALL.to_vec()),
        false => cli::parameter_set(value).map(|set| vec![set]),
    }
}

/// Generates, writes and (optionally) checks every chosen set. Returns
/// whether all checks passed.
fn run(args: &Args) -> io::Result<bool> {
    if let Some(dir) = &args.out {
        fs::create_dir_all(dir)?;
    }
    let mut all_ok = true;
    for &set in &args.params {
        let (text, name) = (set.generate(args.count), set.name());
        let digest = sha256_hex(&text);
        let label = match &args.out {
            Some(dir) => {
                let path = dir.join(format!("{name}.rsp"));
                fs::write(&path, &text)?;
                path.display().to_string()
            }
            None => name.to_owned(),
        };
        if args.out.is_none() && args.params.len() == 1 {
            let mut stdout = io::stdout().lock();
            stdout.write_all(text.as_bytes())?;
            stdout.flush()?;
            eprintln!("{digest}  {label}");
        } else {
            println!("{digest}  {label}");
        }
        let expected = set.expected_digest(args.count);
        match expected.filter(|_| args.check) {
            None => {}
            Some(expected) if digest == expected => {
                eprintln!("{name}: OK, matches liboqs kats.json")
            }
            Some(expected) => {
                eprintln!(
                    "{name}: MISMATCH with liboqs kats.json: expected {expected}, got {digest}"
                );
                all_ok = false;
            }
        }
    }
    Ok(all_ok)
}

fn main() -> ExitCode {
    let args = Args::parse();
    if args.check && args.count != 1 && args.count != KAT_COUNT {
        cli::usage_error::<Args>(format!(
            "--check needs --count 1 or {KAT_COUNT}: liboqs publishes no digest for {}",
            args.count
        ));
    }
    match run(&args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(err) => {
            eprintln!("kat: {err}");
            ExitCode::FAILURE
        }
    }
}
