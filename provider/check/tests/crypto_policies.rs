//! Local mode on a RHEL-shaped configuration whose `Groups` line
//! crypto-policies writes: the provider loaded from the distribution's own
//! providers section, the groups off until the documented local.d step,
//! and a local.d file that lost its `[ crypto_policy ]` line.

mod common;

use std::fs;

use common::{assert_exit, check_with_modules, text, Scratch};

/// RHEL 9's crypto-policies back-end file, as far as this matters: the
/// TLS settings, then a section of its own at the end (RHEL's ends in
/// `[evp_properties]`), so that appended lines without a header land there.
const BACK_END: &str =
    "CipherString = @SECLEVEL=2:kEECDH:kRSA:kEDH:kPSK:-aDSS:!DES:!RC4:!eNULL:!aNULL:!MD5\n\
    TLS.MinProtocol = TLSv1.2\n\
    Groups = X25519:secp256r1:X448:secp521r1:secp384r1:ffdhe2048:ffdhe3072\n\
    \n[policy_tail]\nnote = the back-end file's last section\n";

/// The package's crypto-policies file (what the admin copies to local.d).
const LOCAL_D: &str = "[ crypto_policy ]\n\
    Groups = X25519MLKEM768:SecP256r1MLKEM768:SecP384r1MLKEM1024:X25519:secp256r1:X448:secp521r1:secp384r1:ffdhe2048:ffdhe3072\n";

fn rhel_cnf(s: &Scratch) -> String {
    format!(
        "openssl_conf = openssl_init\nconfig_diagnostics = 1\n[openssl_init]\n\
         providers = provider_sect\nssl_conf = ssl_module\n[provider_sect]\n\
         default = default_sect\nmlkem = mlkem_sect\n[default_sect]\nactivate = 1\n\
         [mlkem_sect]\nactivate = 1\n[ ssl_module ]\nsystem_default = crypto_policy\n\
         [ crypto_policy ]\n.include = {}\n",
        s.path("crypto-policies/back-ends/opensslcnf.config")
            .display()
    )
}

#[test]
fn crypto_policies_groups_are_named_with_the_step_that_turns_them_on() {
    let s = Scratch::new("crypto-policies");
    fs::create_dir_all(s.path("crypto-policies/back-ends")).unwrap();
    fs::create_dir_all(s.path("crypto-policies/state")).unwrap();
    fs::write(s.path("crypto-policies/state/current"), "DEFAULT\n").unwrap();
    let back_end = s.path("crypto-policies/back-ends/opensslcnf.config");
    let conf = s.write("openssl.cnf", &rhel_cnf(&s));

    // The package installed, the groups not yet turned on.
    fs::write(&back_end, BACK_END).unwrap();
    let step = format!(
        "cp /usr/share/mlkem-provider/crypto-policies/opensslcnf-mlkem.config {}/ && \
         update-crypto-policies",
        s.path("crypto-policies/local.d").display()
    );
    let off = check_with_modules(&conf, Some(&s.dir), &[]);
    assert_exit(
        &off,
        1,
        &[
            "ok    providers: the configuration activates mlkem and default (providers section \
             [provider_sect]; mlkem named at ",
            "FAIL  crypto-policies: crypto-policies (policy DEFAULT) keeps the post-quantum \
             groups off (Groups = X25519:secp256r1",
            &format!("; turn them on: {step}\n"),
            "info  FIPS: off",
        ],
    );

    // --enable-lines adds no Groups line of its own over the policy's: it
    // names the same step.
    let lines = check_with_modules(&conf, Some(&s.dir), &["--enable-lines"]);
    assert_exit(&lines, 0, &[&format!("turn them on with `{step}`")]);
    assert!(!text(&lines).contains("Groups ="), "{}", text(&lines));

    // The documented step: update-crypto-policies appends local.d's files.
    fs::write(&back_end, format!("{BACK_END}{LOCAL_D}")).unwrap();
    let on = check_with_modules(&conf, Some(&s.dir), &[]);
    assert_exit(
        &on,
        0,
        &[
            "ok    crypto-policies: crypto-policies (policy DEFAULT) lists the post-quantum groups",
            "negotiate X25519MLKEM768",
        ],
    );
    assert!(!text(&on).contains("FAIL"), "{}", text(&on));

    // A local.d file without its section line: its Groups joins the
    // back-end file's last section and never reaches the TLS settings.
    let headless = LOCAL_D.replace("[ crypto_policy ]\n", "");
    fs::write(&back_end, format!("{BACK_END}{headless}")).unwrap();
    let misplaced = check_with_modules(&conf, Some(&s.dir), &[]);
    assert_exit(
        &misplaced,
        1,
        &[
            "warn  crypto-policies: `Groups = X25519MLKEM768:",
            "is in [policy_tail], not [crypto_policy]: a local.d file without its \
             `[ crypto_policy ]` line",
            "FAIL  crypto-policies: crypto-policies (policy DEFAULT) keeps the post-quantum groups off",
        ],
    );
}
