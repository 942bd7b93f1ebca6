//! Tests of `test_tools::measure`: per-call statistics, trials and interleaving.

use std::hint::black_box;

use test_tools::measure::*;

#[test]
fn per_call_statistics() {
    let t = Trial::from_samples(&mut [5, 1, 3], 1.0);
    assert_eq!(t.per_call, Some(PerCall { median: 3, min: 1 }));
    assert_eq!((t.operations, t.ticks, t.ops_per_sec), (3, Some(9), 3.0));
    assert_eq!(
        Trial::from_samples(&mut [4, 1, 3, 10], 2.0)
            .per_call
            .unwrap()
            .median,
        3
    );
    let max = Trial::from_samples(&mut [u64::MAX, u64::MAX], 1.0);
    assert_eq!((max.per_call.unwrap().median, max.ticks), (u64::MAX, None));
    assert_eq!(Trial::from_samples(&mut [], 1.0).per_call, None);
}

#[test]
fn statistics_over_trials() {
    let mut m = Measurement::new("x", "ML-KEM-768", Operation::Keygen);
    m.trials = vec![
        Trial::from_samples(&mut [100; 10], 2.0),
        Trial::from_samples(&mut [300; 30], 6.0),
        Trial::from_samples(&mut [200; 10], 1.0),
    ];
    assert_eq!(
        (m.median_ticks(), m.min_ticks(), m.operations()),
        (Some(200), Some(100), 50)
    );
    // Weighted by calls: (1000 + 9000 + 2000) / 50.
    assert_eq!(m.mean_ticks(), Some(240.0));
    assert_eq!((m.ops_per_sec(), m.median_seconds_per_op()), (5.0, 0.2));
    assert_eq!(m.mean_seconds_per_op(), 9.0 / 50.0);
    m.trials.push(Trial::rate(7.0));
    assert_eq!((m.median_ticks(), m.mean_ticks()), (None, None));
}

#[test]
fn medians_of_even_and_odd_counts() {
    let mut m = Measurement::new("x", "S", Operation::Encaps);
    m.trials = [3.0, 1.0, 2.0].map(Trial::rate).into();
    assert_eq!(m.ops_per_sec(), 2.0);
    m.trials.push(Trial::rate(4.0));
    assert_eq!(m.ops_per_sec(), 2.5);
    m.trials.clear();
    assert!(m.ops_per_sec().is_nan());
}

#[test]
fn interleaved_trials_run_every_bench() {
    let (mut a, mut b) = (0usize, 0usize);
    let mut benches = vec![
        Bench::new("a", Operation::Keygen, || {
            a += 1;
            vec![0u8; 16]
        }),
        Bench::new("b", Operation::Encaps, || {
            b += 1;
            black_box(b)
        }),
    ];
    let config = Config {
        warmup: 2,
        iterations: 10,
    };
    let mut heard = Vec::new();
    let results = measure_trials("S", config, &mut benches, 3, 2, |t| heard.push(t));
    drop(benches);
    assert_eq!(heard, [1, 2]);
    assert_eq!(
        (results[0].implementation.as_str(), results[1].operation),
        ("a", Operation::Encaps)
    );
    assert!(results
        .iter()
        .all(|m| m.operations() == 20 && m.parameter_set == "S"));
    // 2 warm-up + 2 x (3 re-warm + 10 timed) calls each.
    assert_eq!((a, b), (28, 28));
}

#[test]
fn counterpart_is_the_same_set_and_operation_of_the_other_implementation() {
    let rows = [
        Measurement::new("ours", "ML-KEM-768", Operation::Keygen),
        Measurement::new("peer", "ML-KEM-512", Operation::Keygen),
        Measurement::new("peer", "ML-KEM-768", Operation::Encaps),
        Measurement::new("peer", "ML-KEM-768", Operation::Keygen),
    ];
    let found = rows[0].counterpart(&rows, "peer").expect("a peer row");
    assert_eq!(
        (
            found.implementation.as_str(),
            found.parameter_set.as_str(),
            found.operation
        ),
        ("peer", "ML-KEM-768", Operation::Keygen)
    );
    assert!(std::ptr::eq(found, &rows[3]));
    assert!(rows[0].counterpart(&rows, "other").is_none());
    assert!(rows[1].counterpart(&rows, "ours").is_none());
}
