//! `openssl speed` drives the provider's KEM on 3.5 and 4.0 (functional
//! check only: the measurements themselves belong to test-tools).

mod common;

use common::{natives, ours_with, scratch};

#[test]
fn openssl_speed_runs_our_ml_kem() {
    for ssl in natives() {
        let dir = scratch(&format!("speed-{}", ssl.series));
        let mut flags = ours_with("default");
        flags.extend(["-propquery".into(), "provider=mlkem".into()]);
        let out = ssl.ok(&dir, "speed", &flags, &["-seconds", "1", "ML-KEM-768"]);
        let text = String::from_utf8_lossy(&out.stdout);
        let row = text
            .lines()
            .find(|l| l.trim_start().starts_with("ML-KEM-768 "))
            .unwrap_or_else(|| panic!("no ML-KEM-768 row:\n{text}"));
        let fields: Vec<&str> = row.split_whitespace().collect();
        // name, 3 times, 3 rates
        assert_eq!(fields.len(), 7, "{row}");
        for rate in &fields[4..] {
            let rate: f64 = rate.parse().unwrap_or_else(|_| panic!("{row}"));
            assert!(rate > 100.0, "implausible rate in {row}");
        }
    }
}
