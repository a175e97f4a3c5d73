//! The fuzzer checked like the cases: the reference saver passes a few sequences, a planted
//! bug is found, shrunk, and its trace replays failing on the mutant and passing on the
//! reference (issue 15 must-show, kept small for CI).

use conformance_spec::fuzz::trace::Trace;
use conformance_spec::fuzz::{fuzz, replay, FuzzOptions};

use crate::catalog::{mutant, Base};
use crate::registration::{reference, registration};

#[test]
fn reference_passes_and_a_mutant_is_found_shrunk_and_replayed() {
    let options = FuzzOptions { seed: 1, cases: 40, ..Default::default() };
    let clean = fuzz(&reference(Base::Memory), &options).unwrap();
    assert!(clean.divergence.is_none(), "{:?}", clean.divergence.map(|d| d.message));
    assert_eq!(clean.sequences, 40);

    let bug = registration(mutant("reput_ignored").unwrap());
    let found = fuzz(&bug, &FuzzOptions { seed: 0, cases: 200, ..Default::default() }).unwrap();
    let d = found.divergence.expect("the fuzzer finds reput_ignored");
    assert!(d.trace.steps.len() <= 6, "not shrunk: {}", d.trace.readable());
    let trace = Trace::parse(&d.trace.to_json()).unwrap();
    assert_eq!(trace, d.trace, "the trace file round-trips");
    let err = replay(&bug, &trace).unwrap_err();
    assert!(err.starts_with("step "), "{err}");
    replay(&reference(Base::Memory), &trace).unwrap();
}
