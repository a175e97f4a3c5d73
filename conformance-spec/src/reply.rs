//! Replies: what a [`crate::Cx`] call returned, carrying the call's description, so a
//! failure about the value names the call (`get_tuple(thread=…): metadata["step"]: …`).
//! Its `expect_*` methods compare it in one step ([`crate::compare`]).

use std::fmt::{self, Debug, Display};
use std::ops::Deref;
use std::sync::Arc;

use conformance_core::{Call, CheckpointConfig, CheckpointError, CheckpointTuple, Failure, PendingWrite};

use crate::compare::{expect_invalid_config, Checked, Diffs};

/// What a call returned, with the call that returned it.
///
/// It dereferences to the value (`reply.checkpoint.channel_values`), and its
/// [`Display`] is the call's description, with the context of the [`crate::Cx`] that
/// made it in front (`after delete_thread(t): get_tuple(thread=t, ns="", id=none)`), the
/// place a failure about this value names.
#[derive(Clone, Debug)]
pub struct Reply<T> {
    pub(crate) call: Call,
    pub(crate) note: Option<Arc<str>>,
    /// True for a call of another capability made before the case's first call of its own:
    /// the case was still preparing its data ([`crate::Cx`]).
    pub(crate) setup: bool,
    /// True for a call of a form detection found missing (get_tuple's latest form), in a
    /// case of another capability (see [`crate::Cx`]): an `Unsupported` answer means the
    /// case cannot check its rule.
    pub(crate) form_missing: bool,
    pub(crate) value: T,
}

impl<T> Reply<T> {
    /// The call.
    pub fn call(&self) -> &Call {
        &self.call
    }

    /// The value, without the call.
    pub fn into_value(self) -> T {
        self.value
    }

    /// The same call with the value changed by `f`.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Reply<U> {
        Reply {
            call: self.call,
            note: self.note,
            setup: self.setup,
            form_missing: self.form_missing,
            value: f(self.value),
        }
    }

    /// An accumulator of differences placed at this call ([`Diffs::of`]).
    pub fn diffs(&self) -> Diffs {
        let mut d = Diffs::new();
        d.of(self);
        d
    }

    /// Fails unless `got == expected`, with `"{call}: {field}: expected .., got .."`.
    ///
    /// # Errors
    /// The failure naming the call, the field and both values.
    pub fn expect_eq<V: PartialEq + Debug + ?Sized>(&self, field: impl Display, expected: &V, got: &V) -> Checked {
        self.diffs().eq(field, expected, got).finish()
    }
}

impl<T> Deref for Reply<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.value
    }
}

impl<T> Display for Reply<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.note {
            Some(note) => write!(f, "{note}: {}", self.call),
            None => write!(f, "{}", self.call),
        }
    }
}

impl<T> Reply<Result<T, CheckpointError>> {
    /// The value of a call that succeeded; a call that returned an error fails the case with
    /// `"{call}: returned error {kind}: {chain}"`, or, for a setup call (one of another
    /// capability made before the case's first call of its own, see [`crate::Cx`]), with
    /// `"setup: {call} failed: {kind}: {chain} (the case's own rule was not checked)"`, so
    /// the verdict does not read as a failure of the rule. A latest `get_tuple` of a case of
    /// another capability, on a saver that detection found reading by id only, that answers
    /// `Unsupported` gives a [`Failure::not_run`] instead, `"not run: needs get_tuple's
    /// latest form (a config without checkpoint_id), not implemented ({call} answered
    /// Unsupported), ..."`: the case is reported not run, as for a need detection finds
    /// missing.
    ///
    /// # Errors
    /// That failure.
    pub fn or_fail(self) -> Result<Reply<T>, Failure> {
        match self.value {
            Ok(value) => Ok(Reply {
                call: self.call,
                note: self.note,
                setup: self.setup,
                form_missing: self.form_missing,
                value,
            }),
            Err(CheckpointError::Unsupported(_)) if self.form_missing => Err(Failure::not_run(format!(
                "{} {}, not implemented ({} answered Unsupported), so the case's own rule was not checked",
                conformance_core::run::NEEDS_PREFIX,
                LATEST_FORM,
                Reply {
                    call: self.call.clone(),
                    note: self.note.clone(),
                    setup: self.setup,
                    form_missing: true,
                    value: ()
                }
            ))),
            Err(e) => {
                let (setup, call) = (
                    self.setup,
                    Reply {
                        call: self.call,
                        note: self.note,
                        setup: self.setup,
                        form_missing: self.form_missing,
                        value: (),
                    },
                );
                let (kind, chain) = (e.kind(), e.display_chain());
                Err(Failure::new(if setup {
                    format!("setup: {call} failed: {kind}: {chain} (the case's own rule was not checked)")
                } else {
                    format!("{call}: returned error {kind}: {chain}")
                }))
            }
        }
    }

    /// Fails unless the call returned [`CheckpointError::InvalidConfig`] (CONTRACT §1 Config).
    ///
    /// # Errors
    /// A failure naming the call and what it returned instead.
    pub fn expect_invalid_config(&self) -> Checked
    where
        T: Debug,
    {
        expect_invalid_config(self, &self.value)
    }
}

/// What a saver that reads by id only lacks (it has `get_tuple`, CONTRACT §5, but not
/// this form).
const LATEST_FORM: &str = "get_tuple's latest form (a config without checkpoint_id)";

impl Reply<CheckpointTuple> {
    /// Fails unless the tuple's `config` is `expected` ([`Diffs::config`]).
    ///
    /// # Errors
    /// The failure showing both configs.
    pub fn expect_config(&self, expected: &CheckpointConfig) -> Checked {
        self.diffs().config(expected, &self.config).finish()
    }

    /// Fails unless the tuple's `parent_config` is `expected` ([`Diffs::parent_config`]).
    ///
    /// # Errors
    /// The failure showing both parents.
    pub fn expect_parent(&self, expected: Option<&CheckpointConfig>) -> Checked {
        self.diffs().parent_config(expected, self.parent_config.as_ref()).finish()
    }

    /// Fails unless the tuple's `pending_writes` are exactly `expected` (order included).
    ///
    /// # Errors
    /// The failure showing both lists.
    pub fn expect_writes(&self, expected: &[PendingWrite]) -> Checked {
        self.diffs().writes("pending_writes", expected, &self.pending_writes).finish()
    }
}

impl Reply<Vec<CheckpointTuple>> {
    /// The checkpoint ids listed, in order.
    pub fn ids(&self) -> Vec<String> {
        self.iter().map(|t| t.config.checkpoint_id.clone().unwrap_or_default()).collect()
    }
}
