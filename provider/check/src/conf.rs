//! Reads OpenSSL configuration files the way OpenSSL's own parser does
//! (sections, `key = value`, `.include`), keeping where each line came
//! from, so that the check can name the mistakes that make a
//! configuration silently do nothing. What the configuration *does* is
//! asked of OpenSSL itself; this module only explains why.

use std::collections::HashSet;
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

/// The section lines go to before the first `[section]` header.
pub const DEFAULT_SECTION: &str = "default";
/// How deep `.include` may nest before the reader stops (OpenSSL has no
/// limit but refuses loops; this reader refuses both).
const MAX_INCLUDE_DEPTH: usize = 16;

/// A file and line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Place {
    /// The file.
    pub file: PathBuf,
    /// The line, counting from 1.
    pub line: usize,
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file.display(), self.line)
    }
}

/// One `key = value` line.
#[derive(Clone, Debug)]
pub struct Entry {
    /// The section it belongs to (after every `.include` is followed).
    pub section: String,
    /// The key.
    pub key: String,
    /// The value, quotes removed.
    pub value: String,
    /// Where it is.
    pub at: Place,
}

/// One `.include` line and what it did to the section of the lines after it.
#[derive(Clone, Debug)]
pub struct Include {
    /// Where the `.include` line is.
    pub at: Place,
    /// The file or directory it names.
    pub target: PathBuf,
    /// The section the including file's lines are in at the `.include`
    /// (where the lines after it belong).
    pub in_section: String,
    /// Whether the target could not be read.
    pub missing: bool,
    /// The first `key = value` line after the `.include`, in the including
    /// file, that joined the included file's last section instead of its own.
    pub swallowed: Option<Entry>,
}

/// A configuration file with everything it includes.
#[derive(Debug, Default)]
pub struct Config {
    /// Every `key = value`, in reading order.
    pub entries: Vec<Entry>,
    /// Every `.include`, in reading order.
    pub includes: Vec<Include>,
    /// Lines OpenSSL would refuse, and files that could not be read.
    pub errors: Vec<String>,
}

impl Config {
    /// Reads `file` and what it includes.
    pub fn read(file: &Path) -> Self {
        let mut config = Config::default();
        let mut reader = Reader {
            section: DEFAULT_SECTION.to_owned(),
            open: HashSet::new(),
        };
        match fs::read(file) {
            Ok(bytes) => reader.parse(file, &String::from_utf8_lossy(&bytes), 0, &mut config),
            Err(e) => config.errors.push(format!("{}: {e}", file.display())),
        }
        config
    }

    /// The value in effect for `key` in `section` (the last one: OpenSSL
    /// keeps the last of repeated keys).
    pub fn get(&self, section: &str, key: &str) -> Option<&Entry> {
        self.all(section, key).pop()
    }

    /// Every line that sets `key` in `section`, in reading order.
    pub fn all(&self, section: &str, key: &str) -> Vec<&Entry> {
        self.entries
            .iter()
            .filter(|e| e.section == section && e.key == key)
            .collect()
    }

    /// The keys of `section` with the values in effect, in the order
    /// OpenSSL keeps them (a repeated key moves to its last place).
    pub fn section(&self, section: &str) -> Vec<&Entry> {
        let in_section: Vec<&Entry> = self
            .entries
            .iter()
            .filter(|e| e.section == section)
            .collect();
        in_section
            .iter()
            .enumerate()
            .filter(|(i, e)| !in_section[i + 1..].iter().any(|later| later.key == e.key))
            .map(|(_, e)| *e)
            .collect()
    }

    /// Whether `section` exists (has at least one key).
    pub fn has_section(&self, section: &str) -> bool {
        self.entries.iter().any(|e| e.section == section)
    }
}

struct Reader {
    section: String,
    /// Files being read, to refuse include loops.
    open: HashSet<PathBuf>,
}

impl Reader {
    fn parse(&mut self, file: &Path, text: &str, depth: usize, config: &mut Config) {
        let key = fs::canonicalize(file).unwrap_or_else(|_| file.to_owned());
        if !self.open.insert(key.clone()) {
            config
                .errors
                .push(format!("{}: includes itself", file.display()));
            return;
        }
        // The section this file's own lines are in, and the include that
        // changed it for the lines that follow.
        let mut own_section = self.section.clone();
        let mut watching: Option<usize> = None;
        for (line, number) in logical_lines(text) {
            let at = Place {
                file: file.to_owned(),
                line: number,
            };
            let line = strip_comment(&line);
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            if let Some(rest) = line.strip_prefix('[') {
                match rest.split_once(']') {
                    Some((name, _)) => {
                        self.section = name.trim().to_owned();
                        own_section = self.section.clone();
                    }
                    None => config
                        .errors
                        .push(format!("{at}: a section header without ']'")),
                }
                watching = None;
            } else if let Some(rest) = directive(line, ".include") {
                let target = PathBuf::from(rest.trim_start_matches('=').trim());
                let missing = if depth >= MAX_INCLUDE_DEPTH {
                    config
                        .errors
                        .push(format!("{at}: includes nested too deep"));
                    true
                } else {
                    !self.include(&target, depth + 1, config)
                };
                if self.section != own_section && watching.is_none() {
                    watching = Some(config.includes.len());
                }
                config.includes.push(Include {
                    at,
                    target,
                    in_section: own_section.clone(),
                    missing,
                    swallowed: None,
                });
            } else if directive(line, ".pragma").is_some() {
                continue;
            } else if let Some((key, value)) = line.split_once('=') {
                let entry = Entry {
                    section: self.section.clone(),
                    key: key.trim().to_owned(),
                    value: unquote(value.trim()).to_owned(),
                    at,
                };
                if let Some(i) = watching.take() {
                    config.includes[i].swallowed = Some(entry.clone());
                }
                config.entries.push(entry);
            } else {
                config.errors.push(format!("{at}: missing equal sign"));
            }
        }
        self.open.remove(&key);
    }

    /// Reads an included file, or every `*.cnf`/`*.conf` of a directory in
    /// name order, as OpenSSL does; false if nothing could be read.
    fn include(&mut self, target: &Path, depth: usize, config: &mut Config) -> bool {
        let target = match std::env::var_os("OPENSSL_CONF_INCLUDE") {
            Some(dir) if target.is_relative() => Path::new(&dir).join(target),
            _ => target.to_owned(),
        };
        if target.is_dir() {
            let Ok(list) = fs::read_dir(&target) else {
                return false;
            };
            let mut files: Vec<PathBuf> = list
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "cnf" || x == "conf"))
                .collect();
            files.sort();
            for file in files {
                if let Ok(bytes) = fs::read(&file) {
                    self.parse(&file, &String::from_utf8_lossy(&bytes), depth, config);
                }
            }
            return true;
        }
        match fs::read(&target) {
            Ok(bytes) => {
                self.parse(&target, &String::from_utf8_lossy(&bytes), depth, config);
                true
            }
            Err(_) => false,
        }
    }
}

/// `.include path`, `.include=path` or `.include = path`: the part after
/// the directive's name.
fn directive<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    let rest = line.strip_prefix(name)?;
    (rest.is_empty() || rest.starts_with([' ', '\t', '='])).then(|| rest.trim())
}

/// Lines joined across a trailing backslash, each with its first line number.
fn logical_lines(text: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    let mut pending: Option<(String, usize)> = None;
    for (i, raw) in text.lines().enumerate() {
        let (mut line, first) = pending.take().unwrap_or((String::new(), i + 1));
        match raw.strip_suffix('\\') {
            Some(head) if !head.ends_with('\\') => {
                line.push_str(head);
                pending = Some((line, first));
            }
            _ => {
                line.push_str(raw);
                out.push((line, first));
            }
        }
    }
    out.extend(pending);
    out
}

/// The line without its comment: `#` starts one outside quotes, unless
/// escaped with a backslash.
fn strip_comment(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut quote: Option<char> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match (c, quote) {
            ('\\', _) => {
                out.push(c);
                out.extend(chars.next());
            }
            ('"' | '\'', None) => {
                quote = Some(c);
                out.push(c);
            }
            (q, Some(open)) if q == open => {
                quote = None;
                out.push(c);
            }
            ('#', None) => break,
            _ => out.push(c),
        }
    }
    out
}

fn unquote(value: &str) -> &str {
    for q in ['"', '\''] {
        if let Some(inner) = value.strip_prefix(q).and_then(|v| v.strip_suffix(q)) {
            return inner;
        }
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let path = dir.join(name);
        fs::write(&path, text).unwrap();
        path
    }

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("mlkem-check-{name}-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn later_keys_win_and_comments_quotes_continuations_are_read() {
        let dir = temp_dir("basic");
        let file = write(
            &dir,
            "a.cnf",
            "openssl_conf = init # comment\n[ init ]\nproviders = p1\nproviders = \"p2\"\n\
             groups = A:\\\nB\nx = 'a#b'\n",
        );
        let config = Config::read(&file);
        assert!(config.errors.is_empty(), "{:?}", config.errors);
        assert_eq!(
            config.get(DEFAULT_SECTION, "openssl_conf").unwrap().value,
            "init"
        );
        assert_eq!(config.all("init", "providers").len(), 2);
        assert_eq!(config.get("init", "providers").unwrap().value, "p2");
        assert_eq!(config.get("init", "groups").unwrap().value, "A:B");
        assert_eq!(config.get("init", "x").unwrap().value, "a#b");
        let keys: Vec<&str> = config
            .section("init")
            .iter()
            .map(|e| e.key.as_str())
            .collect();
        assert_eq!(keys, ["providers", "groups", "x"]);
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn an_include_before_the_end_swallows_the_lines_after_it() {
        let dir = temp_dir("early");
        let snippet = write(
            &dir,
            "snippet.cnf",
            "[openssl_init]\nproviders = ours\n[ours]\nx = 1\n",
        );
        let main = write(
            &dir,
            "main.cnf",
            &format!(
                ".include {}\nopenssl_conf = openssl_init\n",
                snippet.display()
            ),
        );
        let config = Config::read(&main);
        let include = &config.includes[0];
        assert!(!include.missing);
        let swallowed = include.swallowed.as_ref().unwrap();
        assert_eq!(
            (include.in_section.as_str(), swallowed.section.as_str()),
            ("default", "ours")
        );
        assert_eq!(
            (swallowed.key.as_str(), swallowed.at.line),
            ("openssl_conf", 2)
        );
        assert!(config.get(DEFAULT_SECTION, "openssl_conf").is_none());
        assert_eq!(
            config.get("ours", "openssl_conf").unwrap().value,
            "openssl_init"
        );

        // At the end of the file, nothing is swallowed.
        let good = write(
            &dir,
            "good.cnf",
            &format!(
                "openssl_conf = openssl_init\n[openssl_init]\n.include = {}\n",
                snippet.display()
            ),
        );
        let config = Config::read(&good);
        assert!(config.includes[0].swallowed.is_none());
        assert_eq!(
            config.get("openssl_init", "providers").unwrap().value,
            "ours"
        );
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn missing_includes_loops_and_garbage_are_reported() {
        let dir = temp_dir("bad");
        let missing = write(&dir, "missing.cnf", ".include /nonexistent/x.cnf\n");
        let config = Config::read(&missing);
        assert!(config.includes[0].missing);
        let looped = dir.join("loop.cnf");
        fs::write(&looped, format!(".include {}\n", looped.display())).unwrap();
        assert!(Config::read(&looped)
            .errors
            .iter()
            .any(|e| e.contains("includes itself")));
        let garbage = write(
            &dir,
            "garbage.cnf",
            "this is not a configuration\n[unclosed\n",
        );
        assert_eq!(Config::read(&garbage).errors.len(), 2);
        assert_eq!(Config::read(&dir.join("absent.cnf")).errors.len(), 1);
        fs::remove_dir_all(dir).unwrap();
    }
}
