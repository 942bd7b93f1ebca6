//! Tests of `test_tools::kem_core_ops`: kem-core's self-check on every backend and its measurement table.

use kem_core::{with_backend, BackendKind};
use kem_core::{MlKem1024, MlKem512, MlKem768};
use test_tools::kem_core_ops::*;
use test_tools::measure::{Config, Operation};

#[test]
fn kem_core_is_consistent() {
    for backend in kem_core::available_backends() {
        let answers = [
            with_backend(backend, check_kem_core::<MlKem512>)
                .unwrap()
                .unwrap(),
            with_backend(backend, check_kem_core::<MlKem768>)
                .unwrap()
                .unwrap(),
            with_backend(backend, check_kem_core::<MlKem1024>)
                .unwrap()
                .unwrap(),
        ];
        let lengths = answers.map(|a| (a.ek.len(), a.dk.len(), a.ct.len()));
        assert_eq!(
            lengths,
            [(800, 1632, 768), (1184, 2400, 1088), (1568, 3168, 1568)]
        );
    }
}

#[test]
fn table_of_measurements() {
    let config = Config {
        warmup: 1,
        iterations: 20,
    };
    let backends = [BackendKind::Portable];
    let measured = measure_kem_core::<MlKem512>(&backends, Vec::new(), config, (2, 2), |_| {});
    let table = measurement_table(&measured, "kem-core/portable", 1e9, true);
    let text = table
        .clone()
        .show(&["implementation", "operation", "ratio_vs_kem_core", "n"])
        .render();
    assert!(
        text.starts_with("implementation     operation            ratio vs kem-core       n\n"),
        "{text}"
    );
    assert!(
        text.contains("kem-core/portable  keygen                            1.00  2 × 20\n"),
        "{text}"
    );
    let csv = table.to_csv();
    assert!(
        csv.starts_with("parameter_set,implementation,operation,median_"),
        "{csv}"
    );
    assert!(csv.contains(",1.0000,40\n"), "{csv}");
    assert_eq!(
        table.to_json()[0]["raw_trials"].as_array().unwrap().len(),
        2
    );
    // Ratios are per set: every set's reference rows read 1.
    let mut both = measured.clone();
    both.extend(measure_kem_core::<MlKem768>(
        &backends,
        Vec::new(),
        config,
        (2, 2),
        |_| {},
    ));
    let csv = measurement_table(&both, "kem-core/portable", 1e9, false).to_csv();
    assert_eq!(csv.matches(",1.0000,40\n").count(), 10, "{csv}");
}

#[test]
fn five_benches_per_backend() {
    let benches = kem_core_benches::<MlKem512>(BackendKind::Portable);
    let operations: Vec<Operation> = benches.iter().map(|b| b.operation).collect();
    assert_eq!(operations, Operation::KEM);
    assert!(benches
        .iter()
        .all(|b| b.implementation == "kem-core/portable"));
}
