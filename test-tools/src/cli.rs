//! What every test-tools binary does the same way: `clap` for the command
//! line (`--help`, usage errors with exit status 2), the final error (exit
//! status 1), the `--csv` / `--json` output files, value parsers, the
//! parameter-set lists and the provider's default location.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::nist_kat::KatParams;
use crate::table::Table;

/// `--csv PATH` and `--json PATH`, the same in every measuring tool.
#[derive(clap::Args, Clone, Debug, Default, PartialEq, Eq)]
pub struct Files {
    /// Write the results as CSV to PATH
    #[arg(long, value_name = "PATH", value_parser = path)]
    pub csv: Option<PathBuf>,
    /// Write the settings, the results and every trial's raw numbers as JSON
    /// to PATH
    #[arg(long, value_name = "PATH", value_parser = path)]
    pub json: Option<PathBuf>,
}

impl Files {
    /// Writes `table` as CSV and `json` (pretty, with `results` set to the
    /// table's rows unless it has them) where asked, naming each file on
    /// stderr.
    pub fn write(&self, table: &Table, mut json: serde_json::Value) -> Result<(), String> {
        if let Some(path) = &self.csv {
            write_file(path, &table.to_csv())?;
            eprintln!("wrote {}", path.display());
        }
        if let Some(path) = &self.json {
            if json.get("results").is_none() {
                json["results"] = table.to_json().into();
            }
            let text = serde_json::to_string_pretty(&json).map_err(|e| e.to_string())?;
            write_file(path, &(text + "\n"))?;
            eprintln!("wrote {}", path.display());
        }
        Ok(())
    }
}

/// Exits with clap's usage error (status 2) for a check clap cannot make.
pub fn usage_error<A: clap::CommandFactory>(message: impl std::fmt::Display) -> ! {
    A::command()
        .error(clap::error::ErrorKind::ValueValidation, message)
        .exit()
}

/// Progress on stderr: overwriting one line on a terminal, a line per
/// update otherwise.
pub struct Progress {
    terminal: bool,
}

impl Progress {
    /// Progress to this process's stderr.
    pub fn stderr() -> Self {
        Progress {
            terminal: std::io::IsTerminal::is_terminal(&std::io::stderr()),
        }
    }

    /// Shows `text`.
    pub fn update(&self, text: &str) {
        match self.terminal {
            true => eprint!("\r\x1b[2K{text}"),
            false => eprintln!("{text}"),
        }
    }

    /// Clears the line on a terminal.
    pub fn finish(&self) {
        if self.terminal {
            eprint!("\r\x1b[2K");
        }
    }
}

/// The exit status of a tool's run: 0, or 1 with the error on stderr.
pub fn exit(tool: &str, result: Result<(), String>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{tool}: error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Writes `contents` to `path`, with the path in the error.
pub fn write_file(path: &Path, contents: &str) -> Result<(), String> {
    std::fs::write(path, contents).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// A value parser: a whole number above 0.
pub fn positive(value: &str) -> Result<usize, String> {
    match value.parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!("expected a whole number above 0, got {value:?}")),
    }
}

/// A value parser: a path that is not empty.
pub fn path(value: &str) -> Result<PathBuf, String> {
    match value {
        "" => Err("needs a non-empty path".to_owned()),
        _ => Ok(PathBuf::from(value)),
    }
}

/// A value parser: an ML-KEM parameter set, `768` or `ML-KEM-768`.
pub fn parameter_set(value: &str) -> Result<KatParams, String> {
    KatParams::from_name(value.trim())
        .ok_or_else(|| format!("unknown parameter set {value:?} (512, 768 or 1024)"))
}

/// The parameter sets of a `--params` list in order, each once; all three
/// when none is given.
pub fn sets_or_all(chosen: &[KatParams]) -> Vec<KatParams> {
    if chosen.is_empty() {
        KatParams::ALL.to_vec()
    } else {
        unique(chosen.iter().copied())
    }
}

/// `items` in order, each once.
pub fn unique<T: PartialEq>(items: impl IntoIterator<Item = T>) -> Vec<T> {
    unique_by(items, T::eq)
}

/// `items` in order, leaving out each that is the `same` as an earlier one.
pub fn unique_by<T>(items: impl IntoIterator<Item = T>, same: impl Fn(&T, &T) -> bool) -> Vec<T> {
    let mut kept = Vec::new();
    for item in items {
        if !kept.iter().any(|k| same(k, &item)) {
            kept.push(item);
        }
    }
    kept
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

/// An error unless `dir` holds the built provider module.
pub fn require_provider(dir: &Path) -> Result<(), String> {
    match dir.join("mlkem.so").is_file() {
        true => Ok(()),
        false => Err(format!(
            "{}/mlkem.so is missing: run `bash scripts/build-provider.sh` first \
             (or pass --provider-dir)",
            dir.display()
        )),
    }
}
