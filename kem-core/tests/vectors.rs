//! Public known-answer vectors for kem-core (FIPS 203 final ML-KEM), read
//! from the shared vector directory (`MLKEM_VECTORS_DIR`, else
//! `../shared/vectors` from the workspace root; see its README.md).
//!
//! Covered, one test per vector family, each asserting how many cases it
//! checked:
//!
//! - ACVP 2024 `internalProjection.json`: keyGen (KeyGen_internal(d, z) gives
//!   ek and the expanded dk) and encapDecap (Encaps_internal(ek, m) gives c
//!   and K; Decaps(dk, c) gives K, including implicit rejection).
//! - ACVP v1.1.0.40 `prompt.json` + `expectedResults.json`, matched by
//!   tgId/tcId: the same, plus encapsulationKeyCheck (§7.2) and
//!   decapsulationKeyCheck (§7.3): testPassed ⇔ the key parses.
//! - Wycheproof `mlkem_{512,768,1024}_test.json` (KeyGen from seed, Decaps),
//!   `_encaps_test.json` (Encaps_internal; unreduced or wrong-length ek is
//!   rejected), `_keygen_seed_test.json` (KeyGen) and
//!   `_semi_expanded_decaps_test.json` (Decaps with an expanded dk; wrong
//!   lengths and a failed hash check are rejected).
//! - CCTV: `strcmp` (Decaps), `modulus` (every ek fails the modulus check),
//!   `unluckysample-final` (KeyGen, Encaps, Decaps), and from the ipd draft
//!   only what is still valid for final: Encaps(ek, m) and Decaps(dk, c) of
//!   `ipd-draft/unluckysample` and `ipd-draft/intermediate` (never KeyGen,
//!   which changed between ipd and final).
//!
//! Not covered here: `nist-kat/` and `liboqs/kats.json` (tested in
//! test-tools).
//!
//! Missing vectors skip a test with a message, except under `CI=true`, where
//! they fail it.

// The `pub fn`s are test entry points for `libtest_tests!` (the
// single-threaded runner calls them too); their names say what they check.
#![allow(missing_docs)]

mod backends;
mod common;
mod libtest_tests;

use std::collections::HashMap;

use backends::for_each_backend;
use common::{
    array32, array_field, assert_bytes, assert_count, assigned_hex, hex, hex_field,
    parse_assignments, read_gz_text, read_json, read_text, str_field, u64_field, vector_files,
    with_parameter_set, PARAMETER_SETS,
};
use kem_core::{
    Ciphertext, DecapsulationKey, EncapsulationKey, Error, MlKem1024, MlKem512, MlKem768,
    ParameterSet,
};
use serde_json::Value;

// ---------------------------------------------------------------------------
// Checks shared by the vector families, generic over the parameter set.
// ---------------------------------------------------------------------------

fn parse_ek<P: ParameterSet>(ctx: &str, ek: &[u8]) -> EncapsulationKey<P> {
    EncapsulationKey::from_bytes(ek).unwrap_or_else(|e| panic!("{ctx}: ek rejected: {e}"))
}

fn parse_dk<P: ParameterSet>(ctx: &str, dk: &[u8]) -> DecapsulationKey<P> {
    DecapsulationKey::from_bytes(dk).unwrap_or_else(|e| panic!("{ctx}: dk rejected: {e}"))
}

fn parse_ct<P: ParameterSet>(ctx: &str, c: &[u8]) -> Ciphertext<P> {
    Ciphertext::from_bytes(c).unwrap_or_else(|e| panic!("{ctx}: ciphertext rejected: {e}"))
}

/// The expanded encoding of a decapsulation key.
fn dk_bytes<P: ParameterSet>(key: &DecapsulationKey<P>) -> Vec<u8> {
    let bytes = key.to_bytes();
    let slice: &[u8] = (*bytes).as_ref();
    slice.to_vec()
}

/// A generated key must have the expected ek and expanded dk, and the
/// expected dk must parse back to the same encoding.
fn check_generated_key<P: ParameterSet>(
    ctx: &str,
    key: &DecapsulationKey<P>,
    ek: &[u8],
    dk: &[u8],
) {
    assert_bytes(ctx, "ek", key.encapsulation_key().as_bytes(), ek);
    assert_bytes(ctx, "dk", &dk_bytes(key), dk);
    assert_bytes(ctx, "re-encoded dk", &dk_bytes(&parse_dk::<P>(ctx, dk)), dk);
}

/// ML-KEM.KeyGen_internal(d, z) → (ek, dk).
fn check_keygen<P: ParameterSet>(ctx: &str, d: &[u8], z: &[u8], ek: &[u8], dk: &[u8]) {
    let key = DecapsulationKey::<P>::from_seed_parts(&array32(ctx, "d", d), &array32(ctx, "z", z));
    check_generated_key(ctx, &key, ek, dk);
}

/// ML-KEM.Encaps_internal(ek, m) → (c, K).
fn check_encaps<P: ParameterSet>(ctx: &str, ek: &[u8], m: &[u8], c: &[u8], k: &[u8]) {
    let key = parse_ek::<P>(ctx, ek);
    let (ct, secret) = key.encapsulate_deterministic(&array32(ctx, "m", m));
    assert_bytes(ctx, "c", ct.as_bytes(), c);
    assert_bytes(ctx, "K", secret.as_bytes(), k);
}

/// ML-KEM.Decaps(dk, c) → K, with dk in the expanded form.
fn check_decaps<P: ParameterSet>(ctx: &str, dk: &[u8], c: &[u8], k: &[u8]) {
    let key = parse_dk::<P>(ctx, dk);
    let ct = parse_ct::<P>(ctx, c);
    let secret = key.decapsulate(&ct);
    assert_bytes(ctx, "K", secret.as_bytes(), k);
    // The one-shot form, which computes J while it parses the key.
    let once = DecapsulationKey::<P>::decapsulate_bytes(dk, &ct)
        .unwrap_or_else(|e| panic!("{ctx}: decapsulate_bytes: {e:?}"));
    assert_bytes(ctx, "K (decapsulate_bytes)", once.as_bytes(), k);
}

/// The error of a parse that must fail.
fn rejection<T>(ctx: &str, what: &str, result: Result<T, Error>) -> Error {
    match result {
        Ok(_) => panic!("{ctx}: {what} was accepted but must be rejected"),
        Err(err) => err,
    }
}

fn assert_length_error(ctx: &str, what: &str, err: Error, expected: usize, actual: usize) {
    assert!(
        matches!(err, Error::InvalidLength { expected: e, actual: a, .. } if e == expected && a == actual),
        "{ctx}: {what}: expected InvalidLength (expected {expected}, actual {actual}), got {err:?}"
    );
}

/// An ek parse that must fail: on length if the length is wrong, else on
/// the modulus check (FIPS 203 §7.2).
fn check_ek_rejected<P: ParameterSet>(ctx: &str, ek: &[u8]) {
    let err = rejection(ctx, "ek", EncapsulationKey::<P>::from_bytes(ek));
    if ek.len() == P::EK_LEN {
        assert_eq!(err, Error::EncapsulationKeyNotReduced, "{ctx}");
    } else {
        assert_length_error(ctx, "ek", err, P::EK_LEN, ek.len());
    }
}

// ---------------------------------------------------------------------------
// ACVP
// ---------------------------------------------------------------------------

pub fn acvp_2024_keygen() {
    for_each_backend(|| {
        let Some(files) = vector_files(&["acvp/ML-KEM-keyGen-FIPS203/internalProjection.json"])
        else {
            return;
        };
        let json = read_json(&files[0]);
        let mut checked = 0;
        for group in array_field(&json, "testGroups") {
            let set = str_field(group, "parameterSet");
            for test in array_field(group, "tests") {
                let ctx = format!("ACVP 2024 keyGen tcId {} ({set})", u64_field(test, "tcId"));
                let [d, z, ek, dk] = ["d", "z", "ek", "dk"].map(|key| hex_field(test, key));
                with_parameter_set!(set, check_keygen(&ctx, &d, &z, &ek, &dk));
                checked += 1;
            }
        }
        assert_count("ACVP 2024 keyGen", checked, 75);
    });
}

pub fn acvp_2024_encap_decap() {
    for_each_backend(|| {
        let Some(files) = vector_files(&["acvp/ML-KEM-encapDecap-FIPS203/internalProjection.json"])
        else {
            return;
        };
        let json = read_json(&files[0]);
        let (mut encaps, mut decaps) = (0, 0);
        for group in array_field(&json, "testGroups") {
            let set = str_field(group, "parameterSet");
            let function = str_field(group, "function");
            for test in array_field(group, "tests") {
                let ctx = format!(
                    "ACVP 2024 {function} tcId {} ({set})",
                    u64_field(test, "tcId")
                );
                let c = hex_field(test, "c");
                let k = hex_field(test, "k");
                match function {
                    // AFT: Encaps_internal(ek, m); the case's dk must decapsulate c to k too.
                    "encapsulation" => {
                        let [ek, dk, m] = ["ek", "dk", "m"].map(|key| hex_field(test, key));
                        with_parameter_set!(set, check_encaps(&ctx, &ek, &m, &c, &k));
                        with_parameter_set!(set, check_decaps(&ctx, &dk, &c, &k));
                        encaps += 1;
                    }
                    // VAL: the group holds ek and dk; c may be modified (implicit rejection).
                    "decapsulation" => {
                        let [ek, dk] = ["ek", "dk"].map(|key| hex_field(group, key));
                        with_parameter_set!(set, check_dk_embeds_ek(&ctx, &dk, &ek));
                        with_parameter_set!(set, check_decaps(&ctx, &dk, &c, &k));
                        decaps += 1;
                    }
                    other => panic!("{ctx}: unknown function {other:?}"),
                }
            }
        }
        assert_count("ACVP 2024 encapsulation", encaps, 75);
        assert_count("ACVP 2024 decapsulation", decaps, 30);
    });
}

fn check_dk_embeds_ek<P: ParameterSet>(ctx: &str, dk: &[u8], ek: &[u8]) {
    let key = parse_dk::<P>(ctx, dk);
    assert_bytes(
        ctx,
        "ek embedded in dk",
        key.encapsulation_key().as_bytes(),
        ek,
    );
}

/// expectedResults tests by (tgId, tcId).
fn results_by_id(expected: &Value) -> HashMap<(u64, u64), &Value> {
    let mut results = HashMap::new();
    for group in array_field(expected, "testGroups") {
        let tg_id = u64_field(group, "tgId");
        for test in array_field(group, "tests") {
            let id = (tg_id, u64_field(test, "tcId"));
            assert!(
                results.insert(id, test).is_none(),
                "duplicate result {id:?}"
            );
        }
    }
    results
}

/// Pairs every prompt test with its expected result, calling
/// `check(group, prompt_test, result, ctx)`, and checks that no result is
/// left unused. Returns the number of pairs.
fn for_each_acvp_case(
    name: &str,
    prompt: &Value,
    expected: &Value,
    mut check: impl FnMut(&Value, &Value, &Value, &str),
) -> usize {
    let results = results_by_id(expected);
    let mut paired = 0;
    for group in array_field(prompt, "testGroups") {
        let tg_id = u64_field(group, "tgId");
        for test in array_field(group, "tests") {
            let tc_id = u64_field(test, "tcId");
            let ctx = format!(
                "{name} tgId {tg_id} tcId {tc_id} ({})",
                str_field(group, "parameterSet")
            );
            let result = results
                .get(&(tg_id, tc_id))
                .unwrap_or_else(|| panic!("{ctx}: no expected result"));
            check(group, test, result, &ctx);
            paired += 1;
        }
    }
    assert_eq!(
        paired,
        results.len(),
        "{name}: expected results without a prompt"
    );
    paired
}

pub fn acvp_v1_1_0_40_keygen() {
    for_each_backend(|| {
        let Some(files) = vector_files(&[
            "acvp/v1.1.0.40/ML-KEM-keyGen-FIPS203/prompt.json",
            "acvp/v1.1.0.40/ML-KEM-keyGen-FIPS203/expectedResults.json",
        ]) else {
            return;
        };
        let (prompt, expected) = (read_json(&files[0]), read_json(&files[1]));
        let name = "ACVP v1.1.0.40 keyGen";
        let checked = for_each_acvp_case(name, &prompt, &expected, |group, test, result, ctx| {
            let [d, z] = ["d", "z"].map(|key| hex_field(test, key));
            let [ek, dk] = ["ek", "dk"].map(|key| hex_field(result, key));
            let set = str_field(group, "parameterSet");
            with_parameter_set!(set, check_keygen(ctx, &d, &z, &ek, &dk));
        });
        assert_count(name, checked, 75);
    });
}

pub fn acvp_v1_1_0_40_encap_decap() {
    for_each_backend(|| {
        let Some(files) = vector_files(&[
            "acvp/v1.1.0.40/ML-KEM-encapDecap-FIPS203/prompt.json",
            "acvp/v1.1.0.40/ML-KEM-encapDecap-FIPS203/expectedResults.json",
        ]) else {
            return;
        };
        let (prompt, expected) = (read_json(&files[0]), read_json(&files[1]));
        let name = "ACVP v1.1.0.40 encapDecap";
        let mut per_function: HashMap<String, usize> = HashMap::new();
        let checked = for_each_acvp_case(name, &prompt, &expected, |group, test, result, ctx| {
            let set = str_field(group, "parameterSet");
            let function = str_field(group, "function");
            let ctx = &format!("{ctx} {function}");
            match function {
                "encapsulation" => {
                    let [ek, m] = ["ek", "m"].map(|key| hex_field(test, key));
                    let [c, k] = ["c", "k"].map(|key| hex_field(result, key));
                    with_parameter_set!(set, check_encaps(ctx, &ek, &m, &c, &k));
                }
                "decapsulation" => {
                    let [dk, c] = ["dk", "c"].map(|key| hex_field(test, key));
                    let k = hex_field(result, "k");
                    with_parameter_set!(set, check_decaps(ctx, &dk, &c, &k));
                }
                "encapsulationKeyCheck" => {
                    let ek = hex_field(test, "ek");
                    let passed = test_passed(ctx, result);
                    with_parameter_set!(set, check_ek_verdict(ctx, &ek, passed));
                }
                "decapsulationKeyCheck" => {
                    let dk = hex_field(test, "dk");
                    let passed = test_passed(ctx, result);
                    with_parameter_set!(set, check_dk_verdict(ctx, &dk, passed));
                }
                other => panic!("{ctx}: unknown function {other:?}"),
            }
            *per_function.entry(function.to_owned()).or_default() += 1;
        });
        assert_count(name, checked, 165);
        for (function, expected) in [
            ("encapsulation", 75),
            ("decapsulation", 30),
            ("encapsulationKeyCheck", 30),
            ("decapsulationKeyCheck", 30),
        ] {
            let got = per_function.get(function).copied().unwrap_or(0);
            assert_count(&format!("{name} {function}"), got, expected);
        }
    });
}

fn test_passed(ctx: &str, result: &Value) -> bool {
    result
        .get("testPassed")
        .and_then(Value::as_bool)
        .unwrap_or_else(|| panic!("{ctx}: result has no boolean testPassed"))
}

/// encapsulationKeyCheck (§7.2): testPassed ⇔ the ek parses.
fn check_ek_verdict<P: ParameterSet>(ctx: &str, ek: &[u8], passed: bool) {
    if passed {
        parse_ek::<P>(ctx, ek);
    } else {
        check_ek_rejected::<P>(ctx, ek);
    }
}

/// decapsulationKeyCheck (§7.3): testPassed ⇔ the dk parses.
fn check_dk_verdict<P: ParameterSet>(ctx: &str, dk: &[u8], passed: bool) {
    match DecapsulationKey::<P>::from_bytes(dk) {
        Ok(_) => assert!(passed, "{ctx}: dk accepted but testPassed is false"),
        Err(err) => assert!(!passed, "{ctx}: dk rejected ({err}) but testPassed is true"),
    }
}

// ---------------------------------------------------------------------------
// Wycheproof
// ---------------------------------------------------------------------------

/// A per-case check for one parameter set.
type WycheproofCase = fn(&str, &Value);

/// Runs `cases[i]` over every test of `wycheproof/mlkem_{512,768,1024}_{kind}.json`
/// and checks the per-file counts.
fn run_wycheproof(kind: &str, expected: [usize; 3], cases: [WycheproofCase; 3]) {
    let names = [512, 768, 1024].map(|n| format!("wycheproof/mlkem_{n}_{kind}.json"));
    let Some(files) = vector_files(&names.each_ref().map(String::as_str)) else {
        return;
    };
    for (i, path) in files.iter().enumerate() {
        let json = read_json(path);
        let mut checked = 0;
        for group in array_field(&json, "testGroups") {
            let set = str_field(group, "parameterSet");
            assert_eq!(set, PARAMETER_SETS[i], "{}: parameter set", names[i]);
            for test in array_field(group, "tests") {
                let ctx = format!(
                    "{} tcId {} ({})",
                    names[i],
                    u64_field(test, "tcId"),
                    test.get("comment").and_then(Value::as_str).unwrap_or("")
                );
                cases[i](&ctx, test);
                checked += 1;
            }
        }
        let declared = u64_field(&json, "numberOfTests") as usize;
        assert_count(&format!("{} (numberOfTests)", names[i]), checked, declared);
        assert_count(&names[i], checked, expected[i]);
    }
}

/// `result`: "valid" or "invalid" (no "acceptable" cases are expected).
fn is_valid(ctx: &str, test: &Value) -> bool {
    match str_field(test, "result") {
        "valid" => true,
        "invalid" => false,
        other => panic!("{ctx}: unexpected result {other:?}"),
    }
}

fn flags(test: &Value) -> Vec<&str> {
    test.get("flags")
        .and_then(Value::as_array)
        .map(|flags| flags.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// `mlkem_N_test.json`: KeyGen from the 64-byte seed (ek must match), then
/// Decaps(dk, c) = K. Invalid cases have a wrong-length seed or ciphertext.
fn wycheproof_seed_decaps<P: ParameterSet>(ctx: &str, test: &Value) {
    let valid = is_valid(ctx, test);
    let seed = hex_field(test, "seed");
    let c = hex_field(test, "c");
    let key = match DecapsulationKey::<P>::from_seed(&seed) {
        Ok(key) => key,
        Err(err) => {
            assert!(!valid, "{ctx}: seed rejected: {err}");
            return assert_length_error(ctx, "seed", err, 64, seed.len());
        }
    };
    let ek = hex_field(test, "ek");
    assert_bytes(ctx, "ek", key.encapsulation_key().as_bytes(), &ek);
    match Ciphertext::<P>::from_bytes(&c) {
        Ok(ct) => {
            assert!(
                valid,
                "{ctx}: invalid case, but seed and ciphertext both parse"
            );
            assert_bytes(
                ctx,
                "K",
                key.decapsulate(&ct).as_bytes(),
                &hex_field(test, "K"),
            );
        }
        Err(err) => {
            assert!(!valid, "{ctx}: ciphertext rejected: {err}");
            assert_length_error(ctx, "ciphertext", err, P::CT_LEN, c.len());
        }
    }
}

/// `mlkem_N_encaps_test.json`: Encaps_internal(ek, m) = (c, K); invalid
/// cases are unreduced (incl. flag ModulusOverflow) or wrong-length keys.
fn wycheproof_encaps<P: ParameterSet>(ctx: &str, test: &Value) {
    let ek = hex_field(test, "ek");
    if is_valid(ctx, test) {
        let [m, c, k] = ["m", "c", "K"].map(|key| hex_field(test, key));
        check_encaps::<P>(ctx, &ek, &m, &c, &k);
    } else {
        if flags(test).contains(&"ModulusOverflow") {
            assert_eq!(ek.len(), P::EK_LEN, "{ctx}: ModulusOverflow ek length");
        }
        check_ek_rejected::<P>(ctx, &ek);
    }
}

/// `mlkem_N_keygen_seed_test.json`: KeyGen from the seed d ‖ z.
fn wycheproof_keygen_seed<P: ParameterSet>(ctx: &str, test: &Value) {
    assert!(
        is_valid(ctx, test),
        "{ctx}: only valid keygen cases expected"
    );
    let [seed, ek, dk] = ["seed", "ek", "dk"].map(|key| hex_field(test, key));
    let key = DecapsulationKey::<P>::from_seed(&seed)
        .unwrap_or_else(|e| panic!("{ctx}: seed rejected: {e}"));
    check_generated_key(ctx, &key, &ek, &dk);
}

/// `mlkem_N_semi_expanded_decaps_test.json`: Decaps with an expanded dk.
/// Each invalid case has one flag saying what must fail:
/// - IncorrectDecapsulationKeyLength: dk parse, InvalidLength;
/// - InvalidDecapsulationKey (corrupted H(ek), or corrupted embedded ek with
///   the old hash): dk parse, the §7.3 hash check;
/// - IncorrectCiphertextLength: the dk is good, the ciphertext parse fails.
fn wycheproof_semi_expanded_decaps<P: ParameterSet>(ctx: &str, test: &Value) {
    let [dk, ek, c] = ["dk", "ek", "c"].map(|key| hex_field(test, key));
    if is_valid(ctx, test) {
        // Includes the MalleableCiphertext cases, which must be rejected implicitly.
        check_dk_embeds_ek::<P>(ctx, &dk, &ek);
        check_decaps::<P>(ctx, &dk, &c, &hex_field(test, "K"));
        return;
    }
    let flags = flags(test);
    assert_eq!(flags.len(), 1, "{ctx}: expected one flag, got {flags:?}");
    match flags[0] {
        "IncorrectDecapsulationKeyLength" => {
            let err = rejection(ctx, "dk", DecapsulationKey::<P>::from_bytes(&dk));
            assert_length_error(ctx, "dk", err, P::DK_LEN, dk.len());
        }
        "InvalidDecapsulationKey" => {
            let err = rejection(ctx, "dk", DecapsulationKey::<P>::from_bytes(&dk));
            assert_eq!(err, Error::DecapsulationKeyHashMismatch, "{ctx}");
            if let Ok(ct) = Ciphertext::<P>::from_bytes(&c) {
                let once = DecapsulationKey::<P>::decapsulate_bytes(&dk, &ct);
                let err = rejection(ctx, "dk (decapsulate_bytes)", once);
                assert_eq!(err, Error::DecapsulationKeyHashMismatch, "{ctx}");
            }
        }
        "IncorrectCiphertextLength" => {
            check_dk_embeds_ek::<P>(ctx, &dk, &ek);
            let err = rejection(ctx, "ciphertext", Ciphertext::<P>::from_bytes(&c));
            assert_length_error(ctx, "ciphertext", err, P::CT_LEN, c.len());
        }
        other => panic!("{ctx}: unexpected flag {other:?} on an invalid case"),
    }
}

pub fn wycheproof_keygen_and_decaps() {
    for_each_backend(|| {
        run_wycheproof(
            "test",
            [193, 193, 193],
            [
                wycheproof_seed_decaps::<MlKem512>,
                wycheproof_seed_decaps::<MlKem768>,
                wycheproof_seed_decaps::<MlKem1024>,
            ],
        );
    });
}

pub fn wycheproof_encaps_vectors() {
    for_each_backend(|| {
        run_wycheproof(
            "encaps_test",
            [261, 265, 269],
            [
                wycheproof_encaps::<MlKem512>,
                wycheproof_encaps::<MlKem768>,
                wycheproof_encaps::<MlKem1024>,
            ],
        );
    });
}

pub fn wycheproof_keygen_seed_vectors() {
    for_each_backend(|| {
        run_wycheproof(
            "keygen_seed_test",
            [100, 100, 100],
            [
                wycheproof_keygen_seed::<MlKem512>,
                wycheproof_keygen_seed::<MlKem768>,
                wycheproof_keygen_seed::<MlKem1024>,
            ],
        );
    });
}

pub fn wycheproof_semi_expanded_decaps_vectors() {
    for_each_backend(|| {
        run_wycheproof(
            "semi_expanded_decaps_test",
            [9, 9, 9],
            [
                wycheproof_semi_expanded_decaps::<MlKem512>,
                wycheproof_semi_expanded_decaps::<MlKem768>,
                wycheproof_semi_expanded_decaps::<MlKem1024>,
            ],
        );
    });
}

// ---------------------------------------------------------------------------
// CCTV
// ---------------------------------------------------------------------------

/// The three per-set files `<dir>/ML-KEM-{512,768,1024}<suffix>`, with their
/// parameter set names.
fn cctv_files(dir: &str, suffix: &str) -> Option<Vec<(&'static str, std::path::PathBuf)>> {
    let names = PARAMETER_SETS.map(|set| format!("cctv/{dir}/{set}{suffix}"));
    let files = vector_files(&names.each_ref().map(String::as_str))?;
    Some(PARAMETER_SETS.into_iter().zip(files).collect())
}

/// Runs `check(set, ctx, assignments)` on each file of a CCTV directory of
/// `name = value` text files, then checks that all three were read. Skips
/// (returns) when the files are missing.
fn for_each_cctv_text(dir: &str, mut check: impl FnMut(&str, &str, &[(&str, &str)])) {
    let Some(files) = cctv_files(dir, ".txt") else {
        return;
    };
    let mut checked = 0;
    for (set, path) in &files {
        let text = read_text(path);
        let ctx = format!("cctv/{dir}/{set}.txt");
        check(set, &ctx, &parse_assignments(&text));
        checked += 1;
    }
    assert_count(&format!("cctv/{dir}"), checked, 3);
}

pub fn cctv_strcmp() {
    for_each_backend(|| {
        for_each_cctv_text("strcmp", |set, ctx, pairs| {
            let [dk, c, k] = ["dk", "c", "K"].map(|name| assigned_hex(ctx, pairs, name));
            with_parameter_set!(set, check_decaps(ctx, &dk, &c, &k));
        });
    });
}

pub fn cctv_unlucky_sample_final() {
    for_each_backend(|| {
        for_each_cctv_text("unluckysample-final", |set, ctx, pairs| {
            let [d, z, ek, dk, m, k, c] =
                ["d", "z", "ek", "dk", "m", "K", "c"].map(|name| assigned_hex(ctx, pairs, name));
            with_parameter_set!(set, check_keygen(ctx, &d, &z, &ek, &dk));
            with_parameter_set!(set, check_encaps(ctx, &ek, &m, &c, &k));
            with_parameter_set!(set, check_decaps(ctx, &dk, &c, &k));
        });
    });
}

/// ipd-draft files: only Encaps(ek, m) = (c, K) and Decaps(dk, c) = K hold
/// for final; d → (ek, dk) is ipd KeyGen and is deliberately not checked.
fn check_ipd_encaps_decaps(set: &str, ctx: &str, pairs: &[(&str, &str)]) {
    let [ek, dk, m, c, k] = ["ek", "dk", "m", "c", "K"].map(|name| assigned_hex(ctx, pairs, name));
    with_parameter_set!(set, check_encaps(ctx, &ek, &m, &c, &k));
    with_parameter_set!(set, check_decaps(ctx, &dk, &c, &k));
}

pub fn cctv_ipd_unlucky_sample_encaps_decaps() {
    for_each_backend(|| {
        for_each_cctv_text("ipd-draft/unluckysample", check_ipd_encaps_decaps);
    });
}

pub fn cctv_ipd_intermediate_encaps_decaps() {
    for_each_backend(|| {
        for_each_cctv_text("ipd-draft/intermediate", check_ipd_encaps_decaps);
    });
}

pub fn cctv_modulus() {
    for_each_backend(|| {
        let Some(files) = cctv_files("modulus", ".txt.gz") else {
            return;
        };
        let expected = [775, 780, 1040];
        for ((set, path), expected) in files.iter().zip(expected) {
            let text = read_gz_text(path);
            let mut checked = 0;
            for (line_no, line) in text
                .lines()
                .enumerate()
                .filter(|(_, l)| !l.trim().is_empty())
            {
                let ctx = format!("cctv/modulus/{set}.txt.gz line {}", line_no + 1);
                with_parameter_set!(*set, check_ek_not_reduced(&ctx, &hex(line)));
                checked += 1;
            }
            assert_count(&format!("cctv/modulus/{set}"), checked, expected);
        }
    });
}

/// A full-length ek that must fail the §7.2 modulus check.
fn check_ek_not_reduced<P: ParameterSet>(ctx: &str, ek: &[u8]) {
    assert_eq!(ek.len(), P::EK_LEN, "{ctx}: ek length");
    let err = rejection(ctx, "ek", EncapsulationKey::<P>::from_bytes(ek));
    assert_eq!(err, Error::EncapsulationKeyNotReduced, "{ctx}");
}

libtest_tests::libtest_tests!(
    acvp_2024_keygen,
    acvp_2024_encap_decap,
    acvp_v1_1_0_40_keygen,
    acvp_v1_1_0_40_encap_decap,
    wycheproof_keygen_and_decaps,
    wycheproof_encaps_vectors,
    wycheproof_keygen_seed_vectors,
    wycheproof_semi_expanded_decaps_vectors,
    cctv_strcmp,
    cctv_unlucky_sample_final,
    cctv_ipd_unlucky_sample_encaps_decaps,
    cctv_ipd_intermediate_encaps_decaps,
    cctv_modulus,
);
