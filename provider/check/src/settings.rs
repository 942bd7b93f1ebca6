//! The configuration as OpenSSL reads it: every value from libcrypto's own
//! parser (`NCONF_load`), each with the place where the explaining reader
//! ([`crate::conf`]) found it. Where the two disagree, OpenSSL's value
//! counts; the place is then only as good as the explaining reader.

use std::path::{Path, PathBuf};

use crate::conf::{Config, Entry, Place};
use crate::ossl::Nconf;

/// A configuration file loaded by libcrypto, with its explanation.
pub struct Settings {
    file: PathBuf,
    nconf: Nconf,
    explain: Config,
}

/// A file libcrypto refuses to load.
pub struct Unreadable {
    /// OpenSSL's reason, with the line it stopped at.
    pub why: String,
    /// What the explaining reader made of the file.
    pub explain: Config,
}

impl Settings {
    /// Loads `file` with libcrypto and reads it with the explaining reader.
    pub fn load(file: &Path) -> Result<Self, Unreadable> {
        let explain = Config::read(file);
        match Nconf::load(file) {
            Ok(nconf) => Ok(Self {
                file: file.to_owned(),
                nconf,
                explain,
            }),
            Err(why) => Err(Unreadable { why, explain }),
        }
    }

    /// The explaining reader's view: includes, repeated keys, its own
    /// problems with the file.
    pub fn explain(&self) -> &Config {
        &self.explain
    }

    /// The value OpenSSL holds for `key` in `section`.
    pub fn get(&self, section: &str, key: &str) -> Option<Entry> {
        self.section(section).into_iter().find(|e| e.key == key)
    }

    /// The keys of `section` with their values, in OpenSSL's order (a
    /// repeated key keeps its last value, at its last place); empty if
    /// there is no such section.
    pub fn section(&self, section: &str) -> Vec<Entry> {
        self.nconf
            .section(section)
            .unwrap_or_default()
            .into_iter()
            .map(|(key, value)| {
                let at = self
                    .explain
                    .get(section, &key)
                    .map_or_else(|| Place::unknown(&self.file), |e| e.at.clone());
                Entry {
                    section: section.to_owned(),
                    key,
                    value,
                    at,
                }
            })
            .collect()
    }

    /// Whether `section` exists with at least one key.
    pub fn has_section(&self, section: &str) -> bool {
        !self.section(section).is_empty()
    }
}
