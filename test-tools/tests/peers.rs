//! Every peer gives kem-core's bytes on every parameter set, and its
//! benches are the rows the bench tables expect.
#![cfg(feature = "peers")]

use kem_core::{MlKem1024, MlKem512, MlKem768, ParameterSet};
use test_tools::kem_core_ops::check_kem_core;
use test_tools::measure::Operation;
use test_tools::peers::Peer;

fn matches_kem_core<P: ParameterSet>() {
    let ours = check_kem_core::<P>().expect("kem-core's own checks");
    for peer in Peer::ALL {
        let label = peer.label();
        let theirs = peer.known_answer::<P>();
        assert_eq!(
            theirs.differences(&ours),
            Vec::<&str>::new(),
            "{label}, {}",
            P::NAME
        );
        let benches = peer.benches::<P>();
        assert!(benches.iter().all(|b| b.implementation == label), "{label}");
        let operations: Vec<Operation> = benches.iter().map(|b| b.operation).collect();
        let mut expected = vec![Operation::Keygen, Operation::Encaps, Operation::Decaps];
        if peer == Peer::RustCrypto {
            expected.extend([Operation::EncapsCached, Operation::DecapsCached]);
        }
        assert_eq!(operations, expected, "{label}");
    }
}

#[test]
fn peers_match_kem_core_on_every_set() {
    matches_kem_core::<MlKem512>();
    matches_kem_core::<MlKem768>();
    matches_kem_core::<MlKem1024>();
}

#[test]
fn labels_and_descriptions() {
    let labels: Vec<String> = Peer::ALL.iter().map(|peer| peer.label()).collect();
    assert_eq!(labels[..2], ["rustcrypto-ml-kem", "libcrux/portable"]);
    assert!(labels[2].starts_with("libcrux/auto("), "{}", labels[2]);
    assert!(Peer::ALL.iter().all(|peer| !peer.description().is_empty()));
}

/// The system's liboqs is labelled with the version its description names.
#[cfg(liboqs_system)]
#[test]
fn liboqs_system_label_names_its_version() {
    let label = Peer::Liboqs.label();
    let version = label
        .strip_prefix("liboqs-system-")
        .and_then(|rest| rest.split('/').next())
        .unwrap_or_else(|| panic!("{label}"));
    let description = Peer::Liboqs.description();
    assert!(
        description.starts_with(&format!("liboqs {version} ")),
        "{description}"
    );
}
