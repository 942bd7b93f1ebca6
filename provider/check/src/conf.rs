//! Reads OpenSSL configuration files the way OpenSSL's own parser
//! (`crypto/conf/conf_def.c`) does — sections, `section::key = value`,
//! quotes and escapes, `$variables`, `.pragma` and `.include` — keeping
//! where each line came from. What the configuration says is asked of
//! libcrypto itself (`crate::settings`); this reader only explains where a
//! value came from and names the mistakes that make a file silently do
//! nothing, so a finding of its own is never more than a warning.

use std::fmt;
use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

/// The section lines go to before the first `[section]` header.
pub const DEFAULT_SECTION: &str = "default";
/// How deep `.include` may nest before this reader stops explaining
/// (OpenSSL itself goes on until it runs out of file descriptors).
const MAX_INCLUDE_DEPTH: usize = 32;
/// How many files this reader parses in all before it stops explaining:
/// files that include each other more than once would otherwise be read
/// a number of times exponential in their depth.
const MAX_FILES_READ: usize = 512;
/// OpenSSL's limit on a value after `$variable` expansion.
const MAX_VALUE_LENGTH: usize = 65_536;

/// A file and line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Place {
    /// The file.
    pub file: PathBuf,
    /// The line, counting from 1; 0 where the line is not known.
    pub line: usize,
}

impl Place {
    /// Somewhere in `file` or in what it includes.
    pub fn unknown(file: &Path) -> Self {
        Self {
            file: file.to_owned(),
            line: 0,
        }
    }
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            0 => write!(f, "{} (or a file it includes)", self.file.display()),
            line => write!(f, "{}:{line}", self.file.display()),
        }
    }
}

/// One `key = value` line.
#[derive(Clone, Debug)]
pub struct Entry {
    /// The section it belongs to (after every `.include` is followed).
    pub section: String,
    /// The key.
    pub key: String,
    /// The value, with quotes, escapes and `$variables` resolved.
    pub value: String,
    /// Where it is.
    pub at: Place,
}

/// One `.include` line and what it did to the section of the lines after it.
#[derive(Clone, Debug)]
pub struct Include {
    /// Where the `.include` line is.
    pub at: Place,
    /// The file or directory it names, as OpenSSL resolves it.
    pub target: PathBuf,
    /// The section the including file's lines are in at the `.include`
    /// (where the lines after it belong).
    pub in_section: String,
    /// Why OpenSSL skips it (it goes on without it: not an error), if it
    /// does: no such file, no permission, a directory inside a directory.
    pub skipped: Option<String>,
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
    /// Lines OpenSSL would refuse, files that could not be read, and where
    /// this reader stopped explaining.
    pub errors: Vec<String>,
}

impl Config {
    /// Reads `file` and what it includes.
    pub fn read(file: &Path) -> Self {
        let mut config = Config::default();
        let mut reader = Reader {
            section: DEFAULT_SECTION.to_owned(),
            pragmas: Pragmas::default(),
            in_directory: false,
            files_read: 0,
            stopped: false,
        };
        match fs::read(file) {
            Ok(bytes) => {
                // OpenSSL takes a UTF-8 byte-order mark off the first line
                // it reads (of the top file only).
                let text = String::from_utf8_lossy(&bytes);
                let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
                reader.parse(file, text, 0, &mut config);
            }
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
}

/// `.pragma` settings: they hold from their line to the end of the load,
/// across includes, as in OpenSSL.
#[derive(Default)]
struct Pragmas {
    /// `dollarid:on`: `$` is part of names; only `${..}` and `$(..)` expand.
    dollarid: bool,
    /// `abspath:on`: a relative `.include` is an error.
    abspath: bool,
    /// `includedir:DIR`: where relative includes are looked up
    /// (`OPENSSL_CONF_INCLUDE` takes precedence).
    includedir: Option<String>,
}

struct Reader {
    section: String,
    pragmas: Pragmas,
    /// Whether a directory's files are being read: OpenSSL refuses a
    /// directory include from inside one.
    in_directory: bool,
    files_read: usize,
    /// Whether the depth or file limit stopped the explanation.
    stopped: bool,
}

/// What one logical line is.
enum Line<'a> {
    Section(&'a str),
    Pragma(&'a str),
    Include(&'a str),
    Value {
        section: Option<&'a str>,
        key: &'a str,
        value: &'a str,
    },
}

impl Reader {
    fn parse(&mut self, file: &Path, text: &str, depth: usize, config: &mut Config) {
        self.files_read += 1;
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
            let parsed = match classify(&line) {
                Ok(Some(parsed)) => parsed,
                Ok(None) => continue,
                Err(why) => {
                    config.errors.push(format!("{at}: {why}"));
                    continue;
                }
            };
            match parsed {
                Line::Section(name) => {
                    self.section = match self.copy(name, None, config) {
                        Ok(name) => name,
                        Err(why) => {
                            config.errors.push(format!("{at}: {why}"));
                            name.to_owned()
                        }
                    };
                    own_section = self.section.clone();
                    watching = None;
                }
                Line::Pragma(text) => {
                    if let Err(why) = self.pragma(text) {
                        config.errors.push(format!("{at}: {why}"));
                    }
                }
                Line::Include(text) => {
                    let section = self.section.clone();
                    let target = match self.copy(text, Some(&section), config) {
                        Ok(target) => self.resolve(&target),
                        Err(why) => {
                            config.errors.push(format!("{at}: {why}"));
                            continue;
                        }
                    };
                    if self.pragmas.abspath && target.is_relative() {
                        config.errors.push(format!(
                            "{at}: `.include {}` is relative, and `.pragma abspath:on` is set",
                            target.display()
                        ));
                        continue;
                    }
                    let skipped = self.include(&at, &target, depth + 1, config);
                    if self.section != own_section && watching.is_none() {
                        watching = Some(config.includes.len());
                    }
                    config.includes.push(Include {
                        at,
                        target,
                        in_section: own_section.clone(),
                        skipped,
                        swallowed: None,
                    });
                }
                Line::Value {
                    section,
                    key,
                    value,
                } => {
                    let section = section.map_or_else(|| self.section.clone(), str::to_owned);
                    let value = match self.copy(value, Some(&section), config) {
                        Ok(value) => value,
                        Err(why) => {
                            config.errors.push(format!("{at}: {why}"));
                            continue;
                        }
                    };
                    let entry = Entry {
                        section,
                        key: key.to_owned(),
                        value,
                        at,
                    };
                    if let Some(i) = watching.take() {
                        config.includes[i].swallowed = Some(entry.clone());
                    }
                    config.entries.push(entry);
                }
            }
        }
    }

    /// `.pragma keyword:value`.
    fn pragma(&mut self, text: &str) -> Result<(), String> {
        let invalid = || format!("`.pragma {text}` is not `keyword:value`");
        let (keyword, value) = text.split_once(':').ok_or_else(invalid)?;
        let (keyword, value) = (keyword.trim(), value.trim_start());
        if keyword.is_empty() || value.is_empty() {
            return Err(invalid());
        }
        let flag = || match value.to_ascii_lowercase().as_str() {
            "on" | "true" => Ok(true),
            "off" | "false" => Ok(false),
            _ => Err(format!("`.pragma {text}`: {keyword} takes on or off")),
        };
        match keyword {
            "dollarid" => self.pragmas.dollarid = flag()?,
            "abspath" => self.pragmas.abspath = flag()?,
            "includedir" => self.pragmas.includedir = Some(value.to_owned()),
            _ => {} // OpenSSL ignores unknown pragmas
        }
        Ok(())
    }

    /// A relative include under `OPENSSL_CONF_INCLUDE`, else under
    /// `.pragma includedir`.
    fn resolve(&self, target: &str) -> PathBuf {
        let target = Path::new(target);
        let base = std::env::var_os("OPENSSL_CONF_INCLUDE")
            .map(PathBuf::from)
            .or_else(|| self.pragmas.includedir.as_ref().map(PathBuf::from));
        match base {
            Some(dir) if target.is_relative() => dir.join(target),
            _ => target.to_owned(),
        }
    }

    /// Reads an included file, or the `*.cnf`/`*.conf` files of a directory
    /// in the order the directory lists them (suffixes compared without
    /// case), as OpenSSL does; why OpenSSL skips it, if it does.
    fn include(
        &mut self,
        at: &Place,
        target: &Path,
        depth: usize,
        config: &mut Config,
    ) -> Option<String> {
        let metadata = match fs::metadata(target) {
            Ok(metadata) => metadata,
            Err(e) if e.kind() == ErrorKind::NotFound => return Some("no such file".into()),
            Err(e) => return Some(format!("cannot look at it: {e}")),
        };
        if depth > MAX_INCLUDE_DEPTH || self.files_read >= MAX_FILES_READ {
            if !self.stopped {
                self.stopped = true;
                config.errors.push(format!(
                    "{at}: includes nest deeper than {MAX_INCLUDE_DEPTH} or read more than \
                     {MAX_FILES_READ} files: this explanation stops there (OpenSSL reads on)"
                ));
            }
            return None;
        }
        if metadata.is_dir() {
            if self.in_directory {
                return Some(
                    "a directory included from a file of an included directory: OpenSSL \
                     refuses it (recursive directory include)"
                        .into(),
                );
            }
            let list = match fs::read_dir(target) {
                Ok(list) => list,
                Err(e) => return Some(format!("cannot list it: {e}")),
            };
            self.in_directory = true;
            for file in list.filter_map(|e| e.ok().map(|e| e.path())) {
                let name = file
                    .file_name()
                    .map_or(String::new(), |n| n.to_string_lossy().to_ascii_lowercase());
                let wanted = (name.len() > 5 && name.ends_with(".conf"))
                    || (name.len() > 4 && name.ends_with(".cnf"));
                if !wanted {
                    continue;
                }
                // OpenSSL skips a file it cannot open without a word.
                if let Ok(bytes) = fs::read(&file) {
                    self.parse(&file, &String::from_utf8_lossy(&bytes), depth, config);
                }
            }
            self.in_directory = false;
            return None;
        }
        match fs::read(target) {
            Ok(bytes) => {
                self.parse(target, &String::from_utf8_lossy(&bytes), depth, config);
                None
            }
            Err(e) => Some(format!("cannot read it: {e}")),
        }
    }

    /// OpenSSL's `str_copy`: quotes taken off (a backslash inside them
    /// keeps the next character), `\r \n \b \t` and other escapes, and
    /// `$name`, `${name}`, `$(name)`, `$section::name` and `$ENV::NAME`
    /// replaced by their values.
    fn copy(&self, from: &str, section: Option<&str>, config: &Config) -> Result<String, String> {
        let chars: Vec<char> = from.chars().collect();
        let mut out = String::new();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if c == '"' || c == '\'' {
                i += 1;
                while i < chars.len() && chars[i] != c {
                    if chars[i] == '\\' {
                        i += 1;
                        if i == chars.len() {
                            break;
                        }
                    }
                    out.push(chars[i]);
                    i += 1;
                }
                i += 1; // the closing quote
            } else if c == '\\' {
                let Some(&next) = chars.get(i + 1) else {
                    break;
                };
                out.push(match next {
                    'r' => '\r',
                    'n' => '\n',
                    'b' => '\u{8}',
                    't' => '\t',
                    other => other,
                });
                i += 2;
            } else if c == '$'
                && (!self.pragmas.dollarid || matches!(chars.get(i + 1), Some('{' | '(')))
            {
                let (value, next) = self.variable(&chars, i + 1, section, config)?;
                out.push_str(&value);
                if out.len() > MAX_VALUE_LENGTH {
                    return Err("a $variable expands to more than 64 KiB".into());
                }
                i = next;
            } else {
                out.push(c);
                i += 1;
            }
        }
        Ok(out)
    }

    /// The value of the variable named at `chars[start..]` (after the `$`),
    /// and where the text after it starts.
    fn variable(
        &self,
        chars: &[char],
        start: usize,
        section: Option<&str>,
        config: &Config,
    ) -> Result<(String, usize), String> {
        let close = match chars.get(start) {
            Some('{') => Some('}'),
            Some('(') => Some(')'),
            _ => None,
        };
        let mut i = start + usize::from(close.is_some());
        let name_char = |c: char| is_name_char(c) || (self.pragmas.dollarid && c == '$');
        let take = |mut i: usize| {
            let begin = i;
            while i < chars.len() && name_char(chars[i]) {
                i += 1;
            }
            (chars[begin..i].iter().collect::<String>(), i)
        };
        let (mut name, next) = take(i);
        i = next;
        let mut from_section = section.map(str::to_owned);
        if chars.get(i) == Some(&':') && chars.get(i + 1) == Some(&':') {
            let (inner, next) = take(i + 2);
            from_section = Some(std::mem::replace(&mut name, inner));
            i = next;
        }
        if let Some(close) = close {
            if chars.get(i) != Some(&close) {
                return Err(format!("`${name}`: no closing {close}"));
            }
            i += 1;
        }
        let found = from_section
            .as_deref()
            .and_then(|s| {
                config
                    .get(s, &name)
                    .map(|e| e.value.clone())
                    .or_else(|| (s == "ENV").then(|| std::env::var(&name).ok()).flatten())
            })
            .or_else(|| config.get(DEFAULT_SECTION, &name).map(|e| e.value.clone()));
        match found {
            Some(value) => Ok((value, i)),
            None => Err(format!(
                "the variable `{name}`{} has no value",
                from_section.map_or(String::new(), |s| format!(" (section [{s}])"))
            )),
        }
    }
}

/// Characters OpenSSL takes as part of a name (`IS_ALNUM`): letters,
/// digits and `_`.
fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Characters of a key or section name (`eat_alpha_numeric`): a name's
/// and the punctuation OpenSSL allows in keys.
fn is_key_char(c: char) -> bool {
    is_name_char(c) || "!%&*+,-./;?@^~|".contains(c)
}

/// A key: its characters, backslash escapes included, as OpenSSL's
/// `eat_alpha_numeric` takes them.
fn key_end(text: &str) -> usize {
    let mut chars = text.char_indices().peekable();
    while let Some(&(i, c)) = chars.peek() {
        if c == '\\' {
            chars.next();
            chars.next();
        } else if is_key_char(c) {
            chars.next();
        } else {
            return i;
        }
    }
    text.len()
}

/// What a logical line (its comment already taken off) is, or `None` for a
/// blank one.
fn classify(line: &str) -> Result<Option<Line<'_>>, String> {
    let s = line.trim_start();
    if s.is_empty() {
        return Ok(None);
    }
    if let Some(rest) = s.strip_prefix('[') {
        return match rest.split_once(']') {
            Some((name, _)) => Ok(Some(Line::Section(name.trim()))),
            None => Err("a section header without ']'".into()),
        };
    }
    let end = key_end(s);
    let (mut section, mut key, mut after) = (None, &s[..end], &s[end..]);
    if let Some(rest) = after.strip_prefix("::") {
        let end = key_end(rest);
        (section, key, after) = (Some(key), &rest[..end], &rest[end..]);
    }
    let p = after.trim_start();
    let spaced = p.len() != after.len();
    for (name, is_pragma) in [(".pragma", true), (".include", false)] {
        if key.starts_with(name) && (key.len() > name.len() || spaced || p.starts_with('=')) {
            let argument = p.strip_prefix('=').unwrap_or(p).trim();
            return Ok(Some(if is_pragma {
                Line::Pragma(argument)
            } else {
                Line::Include(argument)
            }));
        }
    }
    match p.strip_prefix('=') {
        Some(value) => Ok(Some(Line::Value {
            section,
            key,
            value: value.trim(),
        })),
        None => Err("missing equal sign".into()),
    }
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
        assert!(include.skipped.is_none());
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
        assert_eq!(config.includes[0].skipped.as_deref(), Some("no such file"));
        // OpenSSL follows a self-include until it runs out of file
        // descriptors; this reader stops explaining, once.
        let looped = dir.join("loop.cnf");
        fs::write(&looped, format!(".include {}\nx = 1\n", looped.display())).unwrap();
        let errors = Config::read(&looped).errors;
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(
            errors[0].contains("this explanation stops there"),
            "{errors:?}"
        );
        let garbage = write(
            &dir,
            "garbage.cnf",
            "this is not a configuration\n[unclosed\n",
        );
        assert_eq!(Config::read(&garbage).errors.len(), 2);
        assert_eq!(Config::read(&dir.join("absent.cnf")).errors.len(), 1);
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn quotes_escapes_variables_pragmas_and_a_bom_are_read_as_openssl_reads_them() {
        let dir = temp_dir("syntax");
        let snippet = write(&dir, "snippet.cnf", "[ours]\nmodule = /opt/mlkem.so\n");
        std::env::set_var("MLKEM_CHECK_CONF_TEST", "from-env");
        let main = write(
            &dir,
            "main.cnf",
            &format!(
                "\u{feff}openssl_conf = init\nbase = /opt\n[init]\n\
                 path = $base/lib\nbraced = ${{base}}/x\nenv = $ENV::MLKEM_CHECK_CONF_TEST\n\
                 other = $(default::base)\nescaped = a\\tb\\#c\nmixed = \"a b\"'c'd\n\
                 ours::set = elsewhere\n.pragma dollarid:on\nkeep = a$b\n\
                 .include \"{}\"\n",
                snippet.display()
            ),
        );
        let config = Config::read(&main);
        assert!(config.errors.is_empty(), "{:?}", config.errors);
        let value = |s: &str, k: &str| config.get(s, k).unwrap().value.clone();
        assert_eq!(value(DEFAULT_SECTION, "openssl_conf"), "init");
        assert_eq!(value("init", "path"), "/opt/lib");
        assert_eq!(value("init", "braced"), "/opt/x");
        assert_eq!(value("init", "env"), "from-env");
        assert_eq!(value("init", "other"), "/opt");
        assert_eq!(value("init", "escaped"), "a\tb#c");
        assert_eq!(value("init", "mixed"), "a bcd");
        assert_eq!(value("ours", "set"), "elsewhere");
        assert_eq!(value("init", "keep"), "a$b");
        assert!(config.includes[0].skipped.is_none());
        assert_eq!(config.includes[0].target, snippet);
        assert_eq!(value("ours", "module"), "/opt/mlkem.so");

        let undefined = write(&dir, "undefined.cnf", "x = $nothing\n");
        assert!(Config::read(&undefined).errors[0].contains("has no value"));
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn directories_take_cnf_and_conf_of_any_case_and_never_a_directory_inside() {
        let dir = temp_dir("dir");
        let drop_in = dir.join("openssl.d");
        fs::create_dir_all(&drop_in).unwrap();
        write(&drop_in, "a.CNF", "[a]\nx = 1\n");
        write(&drop_in, "b.Conf", "[b]\nx = 1\n");
        write(&drop_in, "c.txt", "[c]\nx = 1\n");
        write(
            &drop_in,
            "d.cnf",
            &format!("[d]\nx = 1\n.include {}\n", drop_in.display()),
        );
        let main = write(
            &dir,
            "main.cnf",
            &format!(".include {}\n", drop_in.display()),
        );
        let config = Config::read(&main);
        for section in ["a", "b", "d"] {
            assert!(config.get(section, "x").is_some(), "[{section}]");
        }
        assert!(config.get("c", "x").is_none());
        let inner = config
            .includes
            .iter()
            .find(|i| i.at.file.ends_with("d.cnf"));
        assert!(
            inner
                .and_then(|i| i.skipped.as_deref())
                .is_some_and(|s| s.contains("recursive directory include")),
            "{:?}",
            config.includes
        );
        fs::remove_dir_all(dir).unwrap();
    }
}
