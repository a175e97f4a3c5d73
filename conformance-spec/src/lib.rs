//! # conformance-spec
//!
//! The checkpointer conformance spec: one module per capability, each a list of small async
//! cases named after the rule of docs/contract.md they check; [`catalog`] gathers them;
//! [`validate`] runs them against a [`Registration`]. `docs/upstream-mapping.md` maps every
//! upstream Python test to its counterpart here.
//!
//! A case is an `async fn(Cx) -> Checked`: it gets a fresh saver (through [`Cx`]) and
//! fails with a message naming the call, the checkpoint, the field, what was expected and
//! what came back, for every difference it found. Three modules serve the cases, one job
//! each: [`calls`] makes the saver calls (each read is a [`Reply`] that carries its call's
//! description), [`compare`] compares what came back ([`compare::Diffs`]), and [`data`]
//! builds what is put and expected. A case module uses those three and never another
//! case module.
//!
//! The property capabilities of CONTRACT §4 are [`concurrency`] (many tasks, and two
//! instances, at once) and [`durability`] (a new instance reads what was written; a child
//! process killed with SIGKILL loses nothing it acknowledged, see [`crash`]). The crash test
//! re-executes the test binary, so every front end calls [`child_main_if_requested`] first
//! in `main`; `docs/crash-durability.md` says what each backend guarantees and how a
//! registration enables the crash test.

#![warn(missing_docs)]

pub mod calls;
pub mod compare;
pub mod crash;
pub mod data;
pub mod fuzz;
pub mod harness;
pub mod model;
pub mod outputs;
pub mod reply;
pub mod rules;

pub mod concurrency;
pub mod delete_thread;
pub mod durability;
pub mod get_tuple;
pub mod list;
pub mod put;
pub mod put_writes;
pub mod upstream;

pub mod copy_thread;
pub mod delete_for_runs;
pub mod delta_channel_history;
pub mod prune;
pub mod traces;

pub use calls::{Cx, Reply};
pub use compare::Checked;
pub use conformance_core::{
    async_trait, BoxError, Budget, Capability, CaseInstance, Failure, Feature, Fixture, Reach, Registration, Report,
    RunOptions, SpecCase, Storage, Strength,
};
pub use crash::{child_main_if_requested, child_main_if_requested_among};

/// Builds a module's case list: `spec_cases!(Capability::Put => [roundtrip ["test_put_roundtrip"], other])`.
/// Each entry is an `async fn(Cx) -> Checked` in scope, optionally followed by the
/// upstream test names it is the counterpart of. Attributes before an entry:
/// - `#[multi_thread]` runs it on a multi-thread runtime ([`SpecCase::multi_thread`]), for
///   cases that need real parallelism;
/// - `#[should]` marks its rule `SHOULD` (CONTRACT §5 "Strength of a rule";
///   [`SpecCase::strength`]): stricter than LangGraph's own savers, so a failure is "passed,
///   not strict" and costs no level. Without it the rule is `MUST`;
/// - `#[uses(Namespaces, WideNumbers)]` names what the case assumes of the saver beyond
///   its capabilities ([`SpecCase::uses`], [`conformance_core::Feature`]): on a saver that
///   declares it lacks one, the case is not run, with the declaration as the reason.
/// - `#[budget(f)]` gives it a time budget of its own, `f()` ([`conformance_core::Budget::Own`]),
///   used instead of the registration's case timeout when longer;
/// - `#[closed_instance]` starts it without an open instance
///   ([`conformance_core::CaseInstance::Closed`]).
/// - `#[rules(put.reput, list.order)]` names the docs/contract.md rules it checks
///   ([`SpecCase::rules`], [`rules::RULES`]); each is a const of [`rules::ids`], so an
///   unknown id does not compile. Every case names at least one ([`rules::untraced`]).
///
/// The capabilities a case calls besides its own ([`SpecCase::needs`]) are declared once:
/// a module default after the capability (`Capability::List, needs [GetTuple] => [...]`)
/// and additions or removals per entry (`removes_pending_writes +[PutWrites] ["test_..."]`,
/// `seed_without_any_write -[PutWrites]`). The
/// selftest `setup_needs` checks the declarations against the calls each case makes.
#[macro_export]
#[doc(hidden)]
macro_rules! spec_cases {
    ($cap:expr => [ $($rest:tt)* ]) => {
        $crate::spec_cases!($cap, needs [] => [ $($rest)* ])
    };
    ($cap:expr, needs $dn:tt => [ $( $(#[$mark:ident $(($($arg:tt)*))?])* $f:ident $( +[ $($n:ident),* $(,)? ] )? $( -[ $($m:ident),* $(,)? ] )? $( [ $($u:literal),* $(,)? ] )? ),* $(,)? ]) => {
        vec![ $( {
            #[allow(unused_mut)]
            let mut case = $crate::SpecCase {
                upstream: &[$($($u),*)?],
                needs: $crate::__spec_case_needs!($dn [$($($n),*)?] [$($($m),*)?]),
                ..$crate::SpecCase::new($cap, stringify!($f), |ctx| Box::pin($crate::Cx::run(ctx, $cap, $f)))
            };
            $( $crate::__spec_case_mark!(case, $mark $(($($arg)*))?); )*
            case
        } ),* ]
    };
}

/// Applies one attribute of a [`spec_cases!`] entry to its case, or refuses one it does
/// not know.
#[macro_export]
#[doc(hidden)]
macro_rules! __spec_case_mark {
    ($case:ident, multi_thread) => {
        $case.multi_thread = true;
    };
    ($case:ident, should) => {
        $case.strength = $crate::Strength::Should;
    };
    ($case:ident, uses($($feature:ident),* $(,)?)) => {
        $case.uses = &[$($crate::Feature::$feature),*];
    };
    ($case:ident, budget($f:path)) => {
        $case.budget = $crate::Budget::Own($f);
    };
    ($case:ident, closed_instance) => {
        $case.instance = $crate::CaseInstance::Closed;
    };
    ($case:ident, rules($($area:ident . $rule:ident),* $(,)?)) => {
        $case.rules = &[$($crate::rules::ids::$area::$rule),*];
    };
    ($case:ident, $other:ident $($rest:tt)*) => {
        compile_error!(concat!(
            "unknown spec_cases! attribute #[",
            stringify!($other),
            "]; valid: #[multi_thread], #[should], #[uses(Feature, ...)], #[budget(f)], #[closed_instance], #[rules(area.rule, ...)]"
        ))
    };
}

/// The needs of a [`spec_cases!`] entry: the module default, plus the entry's additions,
/// less its removals (a `const` slice).
#[macro_export]
#[doc(hidden)]
macro_rules! __spec_case_needs {
    ([ $($d:ident),* $(,)? ] [ $($n:ident),* ] [ $($m:ident),* ]) => {{
        const ALL: &[$crate::Capability] = &[$($crate::Capability::$d,)* $($crate::Capability::$n,)*];
        const DROP: &[$crate::Capability] = &[$($crate::Capability::$m,)*];
        const OUT: [$crate::Capability; $crate::__needs_len(ALL, DROP)] = $crate::__needs_without(ALL, DROP);
        &OUT
    }};
}

/// How many of `all` are not in `drop` (for [`__spec_case_needs!`]).
#[doc(hidden)]
pub const fn __needs_len(all: &[Capability], drop: &[Capability]) -> usize {
    let (mut i, mut n) = (0, 0);
    while i < all.len() {
        if !__needs_has(drop, all[i]) {
            n += 1;
        }
        i += 1;
    }
    n
}

/// `all` without the capabilities in `drop`, in order (for [`__spec_case_needs!`]).
#[doc(hidden)]
pub const fn __needs_without<const N: usize>(all: &[Capability], drop: &[Capability]) -> [Capability; N] {
    let mut out = [Capability::Put; N];
    let (mut i, mut n) = (0, 0);
    while i < all.len() {
        if !__needs_has(drop, all[i]) {
            out[n] = all[i];
            n += 1;
        }
        i += 1;
    }
    out
}

const fn __needs_has(list: &[Capability], c: Capability) -> bool {
    let mut i = 0;
    while i < list.len() {
        if list[i] as u8 == c as u8 {
            return true;
        }
        i += 1;
    }
    false
}

/// Writes the `main` of a conformance test binary: one libtest-mimic trial per spec case
/// and registration against the given [`Registration`]s (see [`harness`] for trial names,
/// skips, detection cost and reports).
///
/// Put it in a `[[test]]` target with `harness = false`:
///
/// ```toml
/// [[test]]
/// name = "conformance"
/// harness = false
/// ```
///
/// ```ignore
/// // tests/conformance.rs
/// conformance_spec::checkpointer_test!(my_crate::registration());
/// // or, the same:
/// conformance_spec::checkpointer_test! { registration: my_crate::registration() }
/// // several registrations (variants of one saver), each with its own name:
/// conformance_spec::checkpointer_test!(my_crate::registration(), my_crate::registration_with_full_sync());
/// ```
///
/// Each expression is evaluated once per process, at the start of `main`; keep them cheap
/// (nextest starts the binary once per test). Every registration needs its own name: the
/// trials are `{name}::{capability}::{case}`, and the durability crash child picks its
/// registration by name. It expands to `fn main() -> std::process::ExitCode`, which hands
/// over to the crash child when the process is one, then returns libtest's exit code (101
/// when a trial failed) rather than calling `exit`, so destructors run.
#[macro_export]
macro_rules! checkpointer_test {
    (registration: $registration:expr $(,)?) => {
        $crate::checkpointer_test!($registration);
    };
    ($($registration:expr),+ $(,)?) => {
        fn main() -> ::std::process::ExitCode {
            $crate::harness::run_main(::std::vec![$($registration),+])
        }
    };
}

/// Every case of every capability, in run order (capability order, then module order).
pub fn catalog() -> Vec<SpecCase> {
    let mut all = Vec::new();
    all.extend(put::cases());
    all.extend(put_writes::cases());
    all.extend(get_tuple::cases());
    all.extend(list::cases());
    all.extend(delete_thread::cases());
    all.extend(delete_for_runs::cases());
    all.extend(copy_thread::cases());
    all.extend(prune::cases());
    all.extend(delta_channel_history::cases());
    all.extend(concurrency::cases());
    all.extend(durability::cases());
    all.extend(traces::cases());
    all
}

/// Runs the whole catalog against `registration` and returns the report (the programmatic
/// front end; `cargo xtask conformance` and `checkpointer_test!` use the same path).
///
/// ```no_run
/// use conformance_spec::{validate, Registration, RunOptions};
/// # use conformance_core::{Fixture, CheckpointSaver};
/// # struct MySaver; impl CheckpointSaver for MySaver {}
/// let reg = Registration::new("mine", || async { Ok(Fixture::new(MySaver)) });
/// let report = validate(&reg, &RunOptions::default());
/// println!("{}", conformance_core::render::render_terminal(&report));
/// assert_eq!(report.conformance_level.as_str(), "NONE");
/// ```
pub fn validate(registration: &Registration, options: &RunOptions) -> Report {
    conformance_core::run::run(registration, &catalog(), options)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn case_names_are_unique_and_snake_case() {
        let mut seen = BTreeSet::new();
        for c in catalog() {
            assert!(seen.insert(c.id()), "duplicate case {}", c.id());
            assert!(
                c.name.chars().all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '_'),
                "case name {} is not snake_case",
                c.id()
            );
        }
    }
}
