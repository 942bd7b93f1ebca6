//! Tests of `test_tools::system_info` on this machine.

use test_tools::system_info::*;

#[test]
fn timestamps() {
    assert_eq!(utc_timestamp(0), "1970-01-01T00:00:00Z");
    assert_eq!(utc_timestamp(951_782_400), "2000-02-29T00:00:00Z");
    // 2026-11-29 23:17:44 UTC.
    assert_eq!(utc_timestamp(1_795_994_264), "2026-11-29T23:17:44Z");
}

#[test]
fn facts_on_linux() {
    let facts = facts();
    let get = |label: &str| facts.iter().find(|(l, _)| *l == label).unwrap().1.clone();
    assert!(
        get("logical CPUs online")
            .unwrap()
            .parse::<usize>()
            .unwrap()
            >= 1
    );
    assert!(get("memory").unwrap().ends_with("GiB"));
    assert!(get("kernel").is_some());
    assert!(openssl_version().starts_with('3'), "{}", openssl_version());
    assert!(get("rustc (building these tools)")
        .unwrap()
        .starts_with("rustc "));
}
