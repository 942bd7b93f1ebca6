//! What every test-tools binary does the same way: the outcome of parsing
//! the command line (usage on `--help`, a usage error with exit status 2),
//! the final error (exit status 1), writing output files, positive-number
//! options and the provider's default location.

use std::fmt::Display;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Runs a tool: `parsed` is its command line (`Ok(None)` = `--help`), `run`
/// its work. Prints the usage or the error (prefixed with `tool`) and
/// returns the exit status: 0 on success and for `--help`, 2 for a usage
/// error, 1 when `run` fails.
pub fn main_with<A, E: Display>(
    tool: &str,
    usage: &str,
    parsed: Result<Option<A>, String>,
    run: impl FnOnce(A) -> Result<(), E>,
) -> ExitCode {
    match parsed {
        Ok(None) => {
            print!("{usage}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{tool}: {e}\n\n{usage}");
            ExitCode::from(2)
        }
        Ok(Some(args)) => match run(args) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("{tool}: error: {e}");
                ExitCode::FAILURE
            }
        },
    }
}

/// Writes `contents` to `path`, with the path in the error.
pub fn write_file(path: &Path, contents: &str) -> Result<(), String> {
    std::fs::write(path, contents).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// The value of option `flag` as a number above 0.
pub fn positive(flag: &str, value: &str) -> Result<usize, String> {
    match value.parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!(
            "{flag}: expected a whole number above 0, got {value:?}"
        )),
    }
}

/// The workspace root (test-tools' parent folder).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

/// `<workspace>/target/provider`, where scripts/build-provider.sh puts
/// mlkem.so.
pub fn default_provider_dir() -> PathBuf {
    workspace_root().join("target/provider")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positive_numbers() {
        assert_eq!(positive("--n", "12"), Ok(12));
        assert!(positive("--n", "0").unwrap_err().contains("--n"));
        assert!(positive("--n", "-1").is_err());
        assert!(positive("--n", "x").unwrap_err().contains("\"x\""));
    }

    #[test]
    fn exit_statuses() {
        let ok = |_: ()| Ok::<(), String>(());
        assert_eq!(main_with("t", "u\n", Ok(None), ok), ExitCode::SUCCESS);
        assert_eq!(main_with("t", "u\n", Ok(Some(())), ok), ExitCode::SUCCESS);
        assert_eq!(
            main_with("t", "u\n", Err::<Option<()>, _>("bad".into()), ok),
            ExitCode::from(2)
        );
        let fail = |_: ()| Err::<(), _>("broken");
        assert_eq!(main_with("t", "u\n", Ok(Some(())), fail), ExitCode::FAILURE);
    }

    #[test]
    fn provider_dir_is_in_the_workspace() {
        assert!(default_provider_dir().ends_with("target/provider"));
        assert!(workspace_root().join("Cargo.toml").exists());
    }
}
