//! A saver with two bugs in one case's scope gets both named in that case's message, not
//! only the first (issue 14; the compare module's `Diffs` collects every difference).

use std::collections::BTreeSet;
use std::sync::Arc;

use conformance_core::{Capability, CheckpointTuple, Outcome, Progress, RunOptions};
use conformance_selftest::{registration_of, Base, Bug};

/// Two bugs on every read: the checkpoint's format version comes back wrong and every
/// channel value is lost.
struct TwoBugs;

impl Bug for TwoBugs {
    fn tuple_output(&self, tuple: &mut CheckpointTuple) {
        let checkpoint = Arc::make_mut(&mut tuple.checkpoint);
        checkpoint.v += 1;
        checkpoint.channel_values.clear();
    }
}

fn make() -> Arc<dyn Bug> {
    Arc::new(TwoBugs)
}

#[test]
fn both_bugs_are_named_in_one_message() {
    let options = RunOptions {
        progress: Progress::Quiet,
        capabilities: Some(BTreeSet::from([Capability::Put])),
        ..RunOptions::default()
    };
    let report = conformance_spec::validate(&registration_of("two-bugs", Base::Memory, make), &options);
    let case = report.tests.iter().find(|t| t.name == "roundtrip_channel_values").expect("the case ran");
    assert_eq!(case.outcome, Outcome::Failed);
    let message = case.message.as_deref().unwrap_or_default();
    assert!(message.contains("checkpoint.v"), "{message}");
    assert!(message.contains("checkpoint.channel_values"), "{message}");
}
