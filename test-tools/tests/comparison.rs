//! Tests of `test_tools::comparison`: rounds, medians, ratios and the comparison table.

use serde_json::{json, Value as Json};
use test_tools::comparison::*;
use test_tools::measure::{Measurement, Operation};

fn r(implementation: &str, round: usize, alg: &str, op: Operation, ops: f64) -> SpeedResult {
    SpeedResult {
        implementation: implementation.into(),
        round,
        algorithm: alg.into(),
        operation: op,
        ops_per_sec: ops,
    }
}

fn implementations() -> Vec<Implementation> {
    vec![
        Implementation::new("ours", Some("3.5.5")),
        Implementation::new("native", Some("3.5.5")),
        Implementation::new("oqsprovider", Some("3.4.1")),
    ]
}

/// Three rounds of ours and native on ML-KEM-768 keygen, one round of
/// native decaps, oqsprovider on ML-KEM-512 only, native on a hybrid.
fn sample() -> Comparison {
    use Operation::*;
    let results = [
        r("ours", 1, "ML-KEM-768", Keygen, 80000.0),
        r("native", 1, "ML-KEM-768", Keygen, 24000.0),
        r("ours", 2, "ML-KEM-768", Keygen, 70000.0),
        r("native", 2, "ML-KEM-768", Keygen, 25000.0),
        r("ours", 3, "ML-KEM-768", Keygen, 75000.0),
        r("native", 3, "ML-KEM-768", Keygen, 20000.0),
        r("native", 1, "ML-KEM-768", Decaps, 23207.0),
        r("oqsprovider", 1, "mlkem512", Encaps, 79507.7),
        r("native", 1, "X25519MLKEM768", Keygen, 11238.7),
    ];
    Comparison::new(implementations(), "native", &results).unwrap()
}

#[test]
fn medians_and_ratios() {
    let c = sample();
    let order: Vec<(&str, Operation, &str)> = c
        .measurements()
        .iter()
        .map(|m| {
            (
                m.parameter_set.as_str(),
                m.operation,
                m.implementation.as_str(),
            )
        })
        .collect();
    assert_eq!(
        order,
        [
            ("ML-KEM-512", Operation::Encaps, "oqsprovider"),
            ("ML-KEM-768", Operation::Keygen, "ours"),
            ("ML-KEM-768", Operation::Keygen, "native"),
            ("ML-KEM-768", Operation::Decaps, "native"),
            ("X25519MLKEM768", Operation::Keygen, "native"),
        ]
    );
    let ours = &c.measurements()[1];
    assert_eq!(ours.ops_per_sec(), 75000.0);
    let ratio = |m: &Measurement| m.ratio_to(m.counterpart(c.measurements(), "native"));
    assert_eq!(ratio(ours), Some(75000.0 / 24000.0));
    assert_eq!(ratio(&c.measurements()[0]), None);
    assert_eq!(
        c.parameter_sets(),
        ["ML-KEM-512", "ML-KEM-768", "X25519MLKEM768"]
    );
    let json = c.to_json();
    assert_eq!(
        json["results"][1]["ops_per_sec_per_round"],
        json!([80000.0, 70000.0, 75000.0])
    );
    assert_eq!(json["results"][1]["ratio_to_baseline"], 3.125);
    assert_eq!(json["results"][0]["ratio_to_baseline"], Json::Null);
    assert_eq!(json["implementations"][2]["openssl_version"], "3.4.1");
}

#[test]
fn rounds_are_ordered_by_round_number() {
    let c = Comparison::new(
        implementations(),
        "ours",
        &[
            r("ours", 3, "ML-KEM-512", Operation::Keygen, 3.0),
            r("ours", 1, "ML-KEM-512", Operation::Keygen, 1.0),
            r("ours", 2, "mlkem512", Operation::Keygen, 2.0),
            r("ours", 4, "ML-KEM-512", Operation::Keygen, 10.0),
        ],
    )
    .unwrap();
    let m = &c.measurements()[0];
    let rounds: Vec<f64> = m.trials.iter().map(|t| t.ops_per_sec).collect();
    assert_eq!((rounds, m.ops_per_sec()), (vec![1.0, 2.0, 3.0, 10.0], 2.5));
    assert_eq!(m.algorithm, "ML-KEM-512");
}

#[test]
fn tables_and_csv() {
    let c = sample();
    assert_eq!(
        c.table(Some("ML-KEM-768")).render(),
        "\
operation  implementation  algorithm          s/op    ops/s  rounds  vs native
---------  --------------  ----------  -----------  -------  ------  ---------
keygen     ours            ML-KEM-768  0.000013333  75000.0       3      3.12x
keygen     native          ML-KEM-768  0.000041667  24000.0       3      1.00x

decaps     native          ML-KEM-768  0.000043090  23207.0       1      1.00x
"
    );
    let all = c.render();
    assert!(all.starts_with("ML-KEM-512\noperation"), "{all}");
    assert!(
        all.contains("encaps     oqsprovider     mlkem512   0.000012577  79507.7       1          -\n\nML-KEM-768\n"),
        "{all}"
    );
    let csv = c.table(None).to_csv();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[..3],
        [
            "algorithm,parameter_set,operation,implementation,openssl_version,\
             ops_per_sec,seconds_per_op,ratio_to_baseline,rounds",
            "mlkem512,ML-KEM-512,encaps,oqsprovider,3.4.1,79507.70,0.000012577398,,1",
            "ML-KEM-768,ML-KEM-768,keygen,ours,3.5.5,75000.00,0.000013333333,3.1250,3",
        ]
    );
    assert_eq!(lines.len(), 6);
}

#[test]
fn errors() {
    let keygen = |imp: &str, round, ops| r(imp, round, "ML-KEM-768", Operation::Keygen, ops);
    let err = Comparison::new(implementations(), "liboqs", &[]).unwrap_err();
    assert_eq!(
        err,
        "baseline \"liboqs\" is not one of the implementations (ours, native, oqsprovider)"
    );
    let err = Comparison::new(implementations(), "ours", &[keygen("x", 1, 1.0)]).unwrap_err();
    assert!(err.contains("unlisted implementation \"x\""), "{err}");
    let twice = [
        keygen("ours", 1, 1.0),
        r("ours", 1, "mlkem768", Operation::Keygen, 2.0),
    ];
    let err = Comparison::new(implementations(), "ours", &twice).unwrap_err();
    assert_eq!(err, "ours has two ML-KEM-768 keygen results in round 1");
    for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let err = Comparison::new(implementations(), "ours", &[keygen("ours", 1, bad)]);
        assert!(err.unwrap_err().contains("not a positive number"), "{bad}");
    }
}
