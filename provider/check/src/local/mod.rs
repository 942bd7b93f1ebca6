//! Local mode: the OpenSSL and configuration in effect on this machine,
//! step by step, ending in handshakes through the system's libssl.

use std::env;
use std::path::{Path, PathBuf};

use serde::Serialize;

mod handshakes;
mod release_bugs;

use handshakes::handshakes;
pub use release_bugs::GROUP_LIST_LIMIT;
use release_bugs::{long_group_list, tls12_group_choice};

use crate::diagnosis::{self, Setup, PROVIDER};
use crate::elf;
use crate::groups;
use crate::layout::{CryptoPolicy, Layout};
use crate::ossl;
use crate::report::{Status, Step};
use crate::settings::Settings;

/// What local mode found.
#[derive(Debug, Serialize)]
pub struct LocalReport {
    /// Always "local".
    pub mode: &'static str,
    /// Whether no step failed: post-quantum TLS is in effect, and enabling
    /// it dropped none of the file's own settings.
    pub ok: bool,
    /// The steps, in order.
    pub steps: Vec<Step>,
    /// One line: in effect or not, and why.
    pub conclusion: String,
}

/// Runs every local step.
pub fn run() -> LocalReport {
    let mut steps = Vec::new();
    let info = ossl::openssl_info();
    let supported = info.version.starts_with("OpenSSL 3") || info.version.starts_with("OpenSSL 4");
    steps.push(Step::new(
        "OpenSSL",
        if supported { Status::Ok } else { Status::Fail },
        format!(
            "{} (libssl {}); OPENSSLDIR {}; MODULESDIR {}",
            info.version,
            info.libssl
                .as_deref()
                .map_or("?".into(), |p| p.display().to_string()),
            info.openssl_dir.display(),
            info.modules_dir.display()
        ),
    ));

    let layout = Layout::detect(&info.openssl_dir, &info.modules_dir);
    let (file, setup) = configuration(&info.openssl_dir, &mut steps);
    let policy = setup.groups.as_ref().and_then(CryptoPolicy::of);
    steps.extend(crypto_policy(&setup, policy.as_ref()));
    if let Some(step) = tls12_group_choice(&info.version, &setup) {
        steps.push(step);
    }
    if let Some(step) = long_group_list(&info.version, setup.groups.as_ref()) {
        // Initialising libssl with this list would corrupt this process too.
        steps.push(step);
        return finish(steps, &[]);
    }
    if let Err(errors) = ossl::init_ssl() {
        steps.push(Step::problem(
            "initialisation",
            Status::Fail,
            format!(
                "libssl fails to initialise with this configuration: {}",
                ossl::describe(&errors)
            ),
            "config_diagnostics = 1 makes every program that reads this file fail the same way",
            "fix the configuration error above, or take the .include lines out again",
        ));
        return finish(steps, &[]);
    }
    module(&info.modules_dir, &setup, &layout, &mut steps);
    providers(&file, &setup, &layout, &mut steps);
    steps.push(fips(&setup));
    let groups_fix = layout.enable_groups(policy.as_ref());
    handshakes(
        &setup,
        ossl::provider_available(PROVIDER),
        &groups_fix,
        &mut steps,
    );
    finish(steps, &setup.replaced)
}

/// The conclusion. `replaced`: the findings that say enabling mlkem set a
/// key of the file's own initialisation section again. Post-quantum TLS
/// may be on all the same, so the conclusion says so when nothing else
/// failed, and names what enabling it undid; where that dropped settings
/// of the file's own (a failed step), the check still fails.
fn finish(steps: Vec<Step>, replaced: &[String]) -> LocalReport {
    let failed = steps
        .iter()
        .find(|s| s.status == Status::Fail && !replaced.contains(&s.detail));
    let leading = steps
        .iter()
        .find(|s| s.name == "default handshake")
        .map_or(String::new(), |s| format!(": {}", s.detail));
    let conclusion = match failed {
        None if replaced.is_empty() => format!("post-quantum TLS is in effect{leading}"),
        None => format!(
            "post-quantum TLS is in effect{leading}; but enabling it replaced the file's own \
             settings: {}",
            replaced.join("; ")
        ),
        Some(step) => format!(
            "post-quantum TLS is NOT in effect: {}: {}",
            step.name, step.detail
        ),
    };
    let ok = steps.iter().all(|s| s.status != Status::Fail);
    LocalReport {
        mode: "local",
        ok,
        steps,
        conclusion,
    }
}

/// The configuration file in effect, and how: `OPENSSL_CONF` or
/// OpenSSL's default.
pub fn configuration_file(openssl_dir: &Path) -> (PathBuf, String) {
    let default_file = openssl_dir.join("openssl.cnf");
    match env::var_os("OPENSSL_CONF") {
        Some(set) => (
            PathBuf::from(set),
            format!(
                "OPENSSL_CONF overrides the default {}",
                default_file.display()
            ),
        ),
        None => (
            default_file,
            "OpenSSL's default; OPENSSL_CONF is not set".to_owned(),
        ),
    }
}

/// The configuration file in effect, what it sets up and its mistakes.
fn configuration(openssl_dir: &Path, steps: &mut Vec<Step>) -> (PathBuf, Setup) {
    let (file, source) = configuration_file(openssl_dir);
    if !file.is_file() {
        steps.push(Step::problem(
            "configuration",
            Status::Fail,
            format!("{} ({source}) does not exist", file.display()),
            "OpenSSL runs without a configuration: no provider is loaded, TLS stays classical",
            "point OPENSSL_CONF at an existing file, or unset it",
        ));
        return (file, Setup::default());
    }
    let settings = match Settings::load(&file) {
        Ok(settings) => settings,
        Err(unreadable) => {
            steps.push(Step::problem(
                "configuration",
                Status::Fail,
                format!(
                    "OpenSSL cannot read {} ({source}): {}",
                    file.display(),
                    unreadable.why
                ),
                "programs read none of it (or, with config_diagnostics = 1, fail to start)",
                "correct the line named",
            ));
            // Where the explaining reader also stumbled: the file and line.
            for error in &unreadable.explain.errors {
                steps.push(Step::new(
                    "configuration",
                    Status::Info,
                    format!("the line: {error}"),
                ));
            }
            return (file, Setup::default());
        }
    };
    steps.push(Step::new(
        "configuration",
        Status::Ok,
        format!("{} ({source})", file.display()),
    ));
    for error in &settings.explain().errors {
        steps.push(Step::problem(
            "configuration",
            Status::Warn,
            error.clone(),
            "OpenSSL reads the file all the same; only this check's explanation of where a \
             setting comes from may be incomplete",
            "nothing needed; correct the line if it is a mistake",
        ));
    }
    let setup = diagnosis::diagnose(&settings);
    for finding in &setup.findings {
        steps.push(Step::problem(
            "configuration",
            finding.status,
            finding.problem.clone(),
            finding.why.clone(),
            finding.fix.clone(),
        ));
    }
    match ossl::load_config_strictly(&file, PROVIDER) {
        Ok(true) => steps.push(Step::new(
            "configuration",
            Status::Ok,
            "OpenSSL applies it without an error and loads mlkem from it",
        )),
        Ok(false) => steps.push(Step::new(
            "configuration",
            Status::Info,
            "OpenSSL applies it without reporting an error, and without mlkem (OpenSSL treats \
             a provider that fails to load as a non-fatal error: nothing is printed)",
        )),
        Err(errors) => steps.push(Step::problem(
            "configuration",
            Status::Fail,
            format!("OpenSSL reports an error applying it: {}", ossl::describe(&errors)),
            if setup.config_diagnostics {
                "config_diagnostics = 1: every program that reads this file fails to start"
            } else {
                "config_diagnostics is off: programs start anyway, without what failed, and say nothing"
            },
            "correct what the error names",
        )),
    }
    steps.push(Step::new(
        "config_diagnostics",
        Status::Info,
        if setup.config_diagnostics {
            "on: an error in the configuration stops the programs that read it (a module that \
             fails to load is not such an error: OpenSSL goes on without it)"
        } else {
            "off: an error in the configuration is ignored and programs run without what failed \
             (`config_diagnostics = 1` at the top of the file makes it stop them instead)"
        },
    ));
    (file, setup)
}

/// Where OpenSSL looks for mlkem.so: the `module` setting, OPENSSL_MODULES,
/// then MODULESDIR.
fn module_path(modules_dir: &Path, setup: &Setup) -> (PathBuf, &'static str) {
    // A relative `module` is looked up where a bare name is (DSO_merge).
    let (dir, from) = match env::var_os("OPENSSL_MODULES") {
        Some(dir) => (PathBuf::from(dir), "OPENSSL_MODULES"),
        None => (modules_dir.to_owned(), "OpenSSL's MODULESDIR"),
    };
    match &setup.module {
        Some(module) if Path::new(module).is_absolute() => (
            PathBuf::from(module),
            "the configuration's `module` setting",
        ),
        Some(module) => (
            dir.join(module),
            if from == "OPENSSL_MODULES" {
                "the configuration's relative `module`, under OPENSSL_MODULES"
            } else {
                "the configuration's relative `module`, under MODULESDIR"
            },
        ),
        None => (dir.join("mlkem.so"), from),
    }
}

fn module(modules_dir: &Path, setup: &Setup, layout: &Layout, steps: &mut Vec<Step>) {
    let (path, from) = module_path(modules_dir, setup);
    let shown = format!("{} (from {from})", path.display());
    // Opened rather than stat'ed: the same call OpenSSL's loader makes (and
    // the one qemu's -L root redirects, where the check runs emulated).
    if let Err(e) = std::fs::File::open(&path) {
        if e.kind() != std::io::ErrorKind::NotFound {
            steps.push(Step::problem(
                "module",
                Status::Fail,
                format!("cannot read {shown}: {e}"),
                "OpenSSL cannot load it: TLS stays classical",
                "make the file readable by the users that run the programs",
            ));
            return;
        }
        steps.push(Step::problem(
            "module",
            Status::Fail,
            format!("no mlkem.so at {shown}"),
            "programs that load the provider run without it: TLS stays classical",
            format!(
                "{}, or point `module =` in [mlkem_sect] at the file",
                layout.install()
            ),
        ));
        return;
    }
    match elf::machine(&path) {
        Ok(machine) if machine != elf::HOST_MACHINE => {
            steps.push(Step::problem(
                "module",
                Status::Fail,
                format!(
                    "{shown} is built for {}, this OpenSSL for {}",
                    elf::machine_name(machine),
                    elf::machine_name(elf::HOST_MACHINE)
                ),
                "OpenSSL cannot load it: TLS stays classical",
                "install the package built for this machine's architecture",
            ));
            return;
        }
        Ok(_) => {}
        Err(why) => {
            steps.push(Step::problem(
                "module",
                Status::Fail,
                format!("{shown}: {why}"),
                "OpenSSL cannot load it: TLS stays classical",
                "install the package again",
            ));
            return;
        }
    }
    match ossl::probe_module(&path) {
        Ok(buildinfo) => steps.push(Step::new(
            "module",
            Status::Ok,
            format!("{shown} loads: {buildinfo}"),
        )),
        Err(errors) => steps.push(Step::problem(
            "module",
            Status::Fail,
            format!("{shown} does not load: {}", ossl::describe(&errors)),
            "OpenSSL cannot load it: TLS stays classical",
            "install the package again (and for this OpenSSL: 3.0 or later)",
        )),
    }
}

fn providers(file: &Path, setup: &Setup, layout: &Layout, steps: &mut Vec<Step>) {
    let mlkem = ossl::provider_available(PROVIDER);
    let default = ossl::provider_available("default");
    let explained = if setup.findings.is_empty() {
        layout.enable_provider(file)
    } else {
        "see the configuration findings above".to_owned()
    };
    match (mlkem, default) {
        (true, true) => steps.push(Step::new(
            "providers",
            Status::Ok,
            format!(
                "the configuration activates mlkem and default (providers section [{}]{})",
                setup.providers_section.as_deref().unwrap_or("?"),
                setup
                    .provider_line
                    .as_ref()
                    .map_or(String::new(), |e| format!("; mlkem named at {}", e.at))
            ),
        )),
        (false, _) => steps.push(Step::problem(
            "providers",
            Status::Fail,
            "mlkem is not active in programs that read this configuration",
            "they run without ML-KEM: TLS stays classical, silently",
            explained.clone(),
        )),
        (true, false) => steps.push(Step::problem(
            "providers",
            Status::Fail,
            "mlkem is active but default is not",
            "every algorithm but ML-KEM is gone (RSA, ECDSA, AES, SHA-2, X25519): most programs fail",
            explained.clone(),
        )),
    }
    if !mlkem {
        return;
    }
    let properties = setup
        .default_properties
        .as_ref()
        .map_or("no default_properties".to_owned(), |p| {
            format!("default_properties = {}", p.value)
        });
    match ossl::kem_provider("ML-KEM-768") {
        Some(name) if name == PROVIDER => steps.push(Step::new(
            "ML-KEM",
            Status::Ok,
            format!("ML-KEM-768 comes from mlkem for programs without a property query ({properties})"),
        )),
        Some(name) => steps.push(Step::problem(
            "ML-KEM",
            Status::Warn,
            format!("ML-KEM-768 comes from {name}, not mlkem ({properties})"),
            "this OpenSSL has an ML-KEM of its own, which programs get unless they ask for ours",
            "set `default_properties = ?provider=mlkem` in the configuration's alg_section (mlkem-provider.cnf does)",
        )),
        None => steps.push(Step::new("ML-KEM", Status::Fail, "no provider serves ML-KEM-768")),
    }
}

/// Where crypto-policies writes the `Groups` line: whether its policy
/// leaves the post-quantum groups off (the one-line step that turns them
/// on), and lines a `local.d` file put in the wrong section.
fn crypto_policy(setup: &Setup, policy: Option<&CryptoPolicy>) -> Vec<Step> {
    let (Some(groups), Some(policy)) = (setup.groups.as_ref(), policy) else {
        return Vec::new();
    };
    let mut steps = Vec::new();
    let post_quantum = groups
        .value
        .split(':')
        .any(|g| groups::post_quantum_named(g).is_some());
    steps.push(if post_quantum {
        Step::new(
            "crypto-policies",
            Status::Ok,
            format!(
                "{} lists the post-quantum groups (Groups at {})",
                policy.describe(),
                groups.at
            ),
        )
    } else {
        Step::problem(
            "crypto-policies",
            Status::Fail,
            format!(
                "{} keeps the post-quantum groups off (Groups = {} at {}); turn them on: {}",
                policy.describe(),
                groups.value,
                groups.at,
                policy.step()
            ),
            "the provider may be loaded, but programs never offer or accept its groups",
            policy.step(),
        )
    });
    for misplaced in &setup.misplaced_groups {
        steps.push(Step::problem(
            "crypto-policies",
            Status::Warn,
            format!(
                "`{} = {}` at {} is in [{}], not [{}]: a local.d file without its \
                 `[ {} ]` line",
                misplaced.key,
                misplaced.value,
                misplaced.at,
                misplaced.section,
                groups.section,
                groups.section
            ),
            "crypto-policies appends local.d files to the back-end file, which ends in another \
             section: the line never reaches the TLS settings",
            format!(
                "open the local.d file with `[ {} ]` (as {} does), then run update-crypto-policies",
                groups.section,
                crate::layout::POLICY_SNIPPET
            ),
        ));
    }
    steps
}

/// FIPS mode: OpenSSL then fetches only algorithms with `fips=yes`, which
/// mlkem's are not (it is not FIPS-validated).
fn fips(setup: &Setup) -> Step {
    let kernel =
        std::fs::read_to_string("/proc/sys/crypto/fips_enabled").is_ok_and(|s| s.trim() == "1");
    let provider = ossl::provider_available("fips");
    let properties = setup
        .default_properties
        .as_ref()
        .filter(|p| p.value.replace(' ', "").contains("fips=yes"));
    let mut evidence = Vec::new();
    if provider {
        evidence.push("the fips provider is active".to_owned());
    }
    if let Some(p) = properties {
        evidence.push(format!("default_properties = {} at {}", p.value, p.at));
    }
    let why = "OpenSSL then fetches only algorithms with fips=yes, which mlkem's are not (it is \
               not FIPS-validated): programs never use it, and TLS stays classical";
    if !evidence.is_empty() {
        return Step::problem(
            "FIPS",
            Status::Fail,
            format!("FIPS mode is in effect: {}", evidence.join("; ")),
            why,
            "post-quantum TLS through this provider needs FIPS mode off (RHEL: \
             fips-mode-setup --disable); a FIPS-validated ML-KEM comes with the distribution's \
             own OpenSSL 3.5+",
        );
    }
    if kernel {
        return Step::problem(
            "FIPS",
            Status::Warn,
            "the kernel is in FIPS mode (/proc/sys/crypto/fips_enabled = 1), this OpenSSL's \
             configuration is not",
            "RHEL's own OpenSSL follows the kernel and loads only its FIPS provider, without \
             a word in openssl.cnf",
            "on RHEL, post-quantum TLS through this provider needs FIPS mode off",
        );
    }
    Step::new(
        "FIPS",
        Status::Info,
        "off: no fips provider, no fips=yes, the kernel not in FIPS mode",
    )
}
