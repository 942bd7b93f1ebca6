//! The implementations measured: library contexts, property queries, how
//! each spells the groups and what a group it lacks does to the run.

use std::ffi::{CStr, CString};

use test_tools::cli;
use test_tools::comparison::Implementation;
use test_tools::evp_harness::Library;
use test_tools::system_info::openssl_version;
use tls_groups::{Group, Kind};

use crate::args::{Added, Args};
use crate::groups::known_group;
use crate::tls::{Identity, TlsContext};
use crate::wire::GroupContexts;

/// The property query of `ours`' SSL_CTXs: a preference, not a
/// requirement, as for every implementation here, because libssl fetches
/// everything the handshake uses with it (digests, ciphers, signatures,
/// KDFs), which the ML-KEM providers lack. What makes a row measure the
/// provider it names is the check of every handshake's key exchange
/// ([`crate::groups::check_key_exchange`]).
pub(crate) const OURS: &CStr = c"?provider=mlkem";
/// Our provider's name.
pub(crate) const MLKEM: &CStr = c"mlkem";
/// The first OpenSSL version (`OPENSSL_VERSION_NUMBER`) whose default
/// provider has ML-KEM; oqsprovider switches its own off there.
pub(crate) const OPENSSL_3_5: i64 = 0x3050_0000;

/// How an implementation names groups.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Spelling {
    /// OpenSSL 3.5's names, which ours uses and `--groups` takes.
    OpenSsl,
    /// oqsprovider's: lower case for the pure parameter sets.
    Oqsprovider,
}

impl Spelling {
    /// `group`, a `--groups` name, as this spelling writes it: oqsprovider
    /// spells the pure ML-KEM groups as the table's alias (`mlkem768`), and
    /// its hybrids (0.8+) as OpenSSL 3.5 does.
    pub(crate) fn of(self, group: &str) -> &str {
        match (self, tls_groups::named(group)) {
            (Spelling::Oqsprovider, Some(g)) if g.kind == Kind::MlKem => {
                g.aliases().next().unwrap_or(group)
            }
            _ => group,
        }
    }
}

/// What a group an implementation lacks does to the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Lacking {
    /// Ours: an error, at once.
    Fails,
    /// Native: a note, and no row.
    LeftOut,
    /// An added provider: an n/a row, and an error after the table.
    NotAvailable,
}

/// What runs an [`Implementation`]: a library context, the property query
/// its SSL_CTXs use and the provider that must serve its post-quantum
/// groups' key exchanges.
pub(crate) struct Loaded {
    pub(crate) library: Library,
    pub(crate) propquery: Option<CString>,
    pub(crate) provider: CString,
    pub(crate) spelling: Spelling,
    pub(crate) lacking: Lacking,
    pub(crate) description: String,
}

impl Loaded {
    pub(crate) fn contexts(
        &self,
        group: &str,
        identity: &Identity,
    ) -> Result<GroupContexts<'_>, String> {
        let (propquery, spelled) = (self.propquery.as_deref(), self.spelling.of(group));
        let end = |identity| TlsContext::new(&self.library, propquery, spelled, identity);
        let ends = [end(None)?, end(Some(identity))?];
        let group = known_group(group)?;
        let provider = group.post_quantum().then_some(self.provider.as_c_str());
        Ok(GroupContexts {
            group,
            provider,
            ends,
        })
    }

    /// Whether `SSL_CTX_set1_groups_list` takes `group` (as this
    /// implementation spells it) in its library context.
    pub(crate) fn has_group(&self, group: &str) -> bool {
        let (propquery, spelled) = (self.propquery.as_deref(), self.spelling.of(group));
        TlsContext::new(&self.library, propquery, spelled, None).is_ok()
    }
}

/// Loads an added provider and `default` into a library context of their
/// own; `None`, with a note, for oqsprovider where it has no ML-KEM.
pub(crate) fn load_added(added: &Added, notes: &mut Vec<String>) -> Result<Option<Loaded>, String> {
    let name = &added.name;
    let version = openssl::version::number();
    if added.spelling == Spelling::Oqsprovider && version >= OPENSSL_3_5 {
        notes.push(format!(
            "{name}: skipped: oqsprovider switches its own ML-KEM off on OpenSSL 3.5 and later, \
             where the default provider has it (linked: OpenSSL {}); compare with native instead",
            openssl_version()
        ));
        return Ok(None);
    }
    let module = added.dir.join(format!("{name}.so"));
    if !module.is_file() {
        return Err(format!("{name}: {} is missing", module.display()));
    }
    let library = Library::load(Some(&added.dir), name).map_err(|e| format!("{name}: {e}"))?;
    let propquery = format!("?provider={name}");
    let description = format!(
        "{name}: providers {name} ({}) + default in one OSSL_LIB_CTX, SSL_CTX_new_ex with \
         propquery {propquery}",
        module.display()
    );
    Ok(Some(Loaded {
        library,
        propquery: Some(CString::new(propquery).map_err(|e| format!("{name}: {e}"))?),
        provider: CString::new(name.as_str()).map_err(|e| format!("{name}: {e}"))?,
        spelling: added.spelling,
        lacking: Lacking::NotAvailable,
        description,
    }))
}

/// Loads `ours`, `native` when the linked libssl has ML-KEM groups, and the
/// added providers; `skipped` gets the names of those left out.
pub(crate) fn load_implementations(
    args: &Args,
    notes: &mut Vec<String>,
    skipped: &mut Vec<String>,
) -> Result<Vec<Implementation<Loaded>>, String> {
    cli::require_provider(&args.provider_dir)?;
    let ours = Loaded {
        library: Library::load(Some(&args.provider_dir), "mlkem")
            .map_err(|e| format!("ours: {e}"))?,
        propquery: Some(OURS.to_owned()),
        provider: MLKEM.to_owned(),
        spelling: Spelling::OpenSsl,
        lacking: Lacking::Fails,
        description: format!(
            "ours: providers mlkem ({}) + default in one OSSL_LIB_CTX, SSL_CTX_new_ex with \
             propquery ?provider=mlkem",
            args.provider_dir.display()
        ),
    };
    let native = Loaded {
        library: Library::load(None, "default").map_err(|e| format!("native: {e}"))?,
        propquery: None,
        provider: c"default".to_owned(),
        spelling: Spelling::OpenSsl,
        lacking: Lacking::LeftOut,
        description: "native: provider default alone in one OSSL_LIB_CTX".to_owned(),
    };
    let implementation = |name: &str, run| Implementation {
        name: name.to_owned(),
        openssl_version: Some(openssl_version()),
        run,
    };
    let ours = implementation("ours", ours);
    let native = implementation("native", native);
    let mut implementations = vec![ours];
    // Native runs where the linked libssl has a non-classical group of the
    // list; on 3.0-3.4 it would only repeat ours' X25519.
    let groups = args.groups();
    let post_quantum: Vec<&str> = groups
        .iter()
        .filter(|g| known_group(g).is_ok_and(Group::post_quantum))
        .map(String::as_str)
        .collect();
    if post_quantum.iter().any(|g| native.run.has_group(g)) {
        implementations.push(native);
    } else {
        skipped.push(native.name);
        if !post_quantum.is_empty() {
            let (version, groups) = (openssl_version(), post_quantum.join(", "));
            notes.push(format!(
                "native: the linked OpenSSL {version} has none of {groups}; skipped (OpenSSL 3.5+ has them)"
            ));
        }
    }
    for added in args.added() {
        match load_added(&added, notes)? {
            Some(run) => implementations.push(implementation(&added.name, run)),
            None => skipped.push(added.name),
        }
    }
    Ok(implementations)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings() {
        assert_eq!(Spelling::Oqsprovider.of("MLKEM768"), "mlkem768");
        assert_eq!(Spelling::Oqsprovider.of("mlkem1024"), "mlkem1024");
        assert_eq!(Spelling::Oqsprovider.of("X25519MLKEM768"), "X25519MLKEM768");
        assert_eq!(Spelling::OpenSsl.of("MLKEM512"), "MLKEM512");
    }
}
