//! Listings (`list`'s result): which tuples came back, in which order, and what each
//! carries, compared tuple by tuple (issue 35, false failure 9). A listed tuple is matched
//! with the expected one of the same namespace and checkpoint id, never by its position, so
//! a missing, extra or misplaced tuple is one difference each and every later tuple is still
//! compared field by field. A listed config that names another checkpoint than the tuple's
//! own is a difference of its own, not a reason to stop.
//!
//! Order (CONTRACT §2 list "Order"): id descending within a namespace is MUST
//! ([`Order::WithinNamespace`]); one id order across namespaces, equal ids namespace
//! ascending, is SHOULD ([`Order::Global`], used only by the SHOULD cases about it).

use std::collections::BTreeMap;
use std::fmt::Display;

use conformance_core::CheckpointTuple;

use super::{order_field, Diffs};

/// How a listing comparison judges order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// Within each namespace, the expected order (id descending); tuples of different
    /// namespaces may come in any order relative to each other (the MUST rule).
    WithinNamespace,
    /// Exactly the expected sequence, across namespaces too (the SHOULD rule: one id order,
    /// equal ids namespace ascending).
    Global,
}

/// One tuple of a listing as the comparison sees it: its namespace, its checkpoint id, and
/// how a message shows it (a label such as `c2`, or a whole config).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The namespace.
    pub ns: String,
    /// The checkpoint id.
    pub id: String,
    /// How messages name it.
    pub shown: String,
}

impl Entry {
    /// An entry shown as `shown`.
    pub fn new(ns: impl Into<String>, id: impl Into<String>, shown: impl Display) -> Self {
        Self { ns: ns.into(), id: id.into(), shown: shown.to_string() }
    }

    fn key(&self) -> (&str, &str) {
        (&self.ns, &self.id)
    }
}

/// How often each (namespace, id) is in `list`.
fn count(list: &[Entry]) -> BTreeMap<(&str, &str), usize> {
    let mut n = BTreeMap::new();
    for e in list {
        *n.entry(e.key()).or_default() += 1;
    }
    n
}

/// `tuple` as a listing entry: its config's namespace and its checkpoint's own id (the
/// tuple's identity even when its config names another), shown as its config.
pub fn entry_of(tuple: &CheckpointTuple) -> Entry {
    let mut config = tuple.config.clone();
    config.checkpoint_id = Some(tuple.checkpoint.id.clone());
    Entry::new(&tuple.config.checkpoint_ns, &tuple.checkpoint.id, format_args!("({config})"))
}

/// The entries of a listing whose count differs, as a summary shows them: all of a short
/// one, the first [`BRIEF`] of a long one and how many more (`[(..), (..), … and 9 more]`).
fn brief(shown: &[String]) -> String {
    if shown.len() <= BRIEF {
        return format!("[{}]", shown.join(", "));
    }
    format!("[{}, … and {} more]", shown[..BRIEF].join(", "), shown.len() - BRIEF)
}

/// How many entries a summary of a listing whose count differs shows ([`brief`]).
const BRIEF: usize = 6;

impl Diffs {
    /// Compares two listings given as entries. When they differ: one summary difference
    /// (`field`, with both sequences as shown, and `legend` after the listed one; when the
    /// counts differ, `{field}: expected N tuple(s), got M` and the start of each sequence), then one
    /// difference per tuple expected but not listed, listed but not expected, or listed more
    /// than once, and, for a listing spanning several namespaces, one per namespace whose
    /// order differs. Under [`Order::WithinNamespace`], listings that differ only in how
    /// namespaces interleave are equal.
    pub fn entries(
        &mut self,
        field: &str,
        expected: &[Entry],
        got: &[Entry],
        order: Order,
        legend: Option<&str>,
    ) -> &mut Self {
        let (want_n, got_n) = (count(expected), count(got));
        let mut lines: Vec<(String, String, String)> = Vec::new();
        for e in expected.iter().filter(|e| !got_n.contains_key(&e.key())) {
            lines.push((format!("tuple {}", e.shown), "listed".into(), "not listed".into()));
        }
        let mut seen = BTreeMap::new();
        for g in got {
            let n = got_n[&g.key()];
            if seen.insert(g.key(), ()).is_some() {
                continue;
            }
            match want_n.get(&g.key()) {
                None => lines.push((format!("tuple {}", g.shown), "not listed".into(), "listed".into())),
                Some(&w) if w != n => lines.push((
                    format!("tuple {}", g.shown),
                    format!("listed {w} time(s)"),
                    format!("listed {n} times"),
                )),
                Some(_) => {}
            }
        }
        // Order: of the tuples both listings have, namespace by namespace.
        let common = |list: &[Entry], ns: &str| -> Vec<String> {
            list.iter()
                .filter(|e| e.ns == ns && want_n.contains_key(&e.key()) && got_n.contains_key(&e.key()))
                .map(|e| e.shown.clone())
                .collect()
        };
        let mut namespaces: Vec<&str> = expected.iter().chain(got).map(|e| e.ns.as_str()).collect();
        namespaces.sort_unstable();
        namespaces.dedup();
        let mut misordered = false;
        for ns in &namespaces {
            let (w, g) = (common(expected, ns), common(got, ns));
            if w != g {
                misordered = true;
                if namespaces.len() > 1 {
                    lines.push((
                        format!("order in namespace {ns:?}"),
                        format!("[{}]", w.join(", ")),
                        format!("[{}]", g.join(", ")),
                    ));
                }
            }
        }
        let shown = |list: &[Entry]| list.iter().map(|e| e.shown.clone()).collect::<Vec<_>>();
        let (want_shown, got_shown) = (shown(expected), shown(got));
        let differs = match order {
            Order::WithinNamespace => misordered || !lines.is_empty(),
            Order::Global => want_shown != got_shown,
        };
        if !differs {
            return self;
        }
        let legend = legend.map(|l| format!(" ({l})")).unwrap_or_default();
        if want_shown.len() == got_shown.len() {
            // The order is the difference: both sequences whole.
            self.push(
                order_field(field, &want_shown, &got_shown),
                format_args!("[{}]", want_shown.join(", ")),
                format_args!("[{}]{legend}", got_shown.join(", ")),
            );
        } else {
            // The count first; each missing or extra tuple has its own line below, so
            // the sequences are only their start.
            self.push(
                format_args!("{field}: expected {} tuple(s), got {}", want_shown.len(), got_shown.len()),
                brief(&want_shown),
                format_args!("{}{legend}", brief(&got_shown)),
            );
        }
        for (field, expected, got) in lines {
            self.push(field, expected, got);
        }
        self
    }

    /// Compares two listings of whole tuples: every listed config that names another
    /// checkpoint than its tuple's ([`Diffs::configs_match`]), the tuples listed
    /// ([`Diffs::entries`], order within each namespace), and every tuple listed in both,
    /// matched by namespace and checkpoint id, field by field ([`Diffs::tuple`]) under the
    /// place `{place}: tuple ({config})`.
    pub fn tuples(&mut self, expected: &[CheckpointTuple], got: &[CheckpointTuple]) -> &mut Self {
        self.configs_match(got);
        let (want, have): (Vec<Entry>, Vec<Entry>) =
            (expected.iter().map(entry_of).collect(), got.iter().map(entry_of).collect());
        self.entries("tuples", &want, &have, Order::WithinNamespace, None);
        let place = self.place.clone();
        for (e, key) in expected.iter().zip(&want) {
            if let Some(g) = got.iter().zip(&have).find(|(_, h)| h.key() == key.key()).map(|(g, _)| g) {
                self.of(format_args!("{place}: tuple ({})", e.config)).tuple(e, g);
            }
        }
        self.place = place;
        self
    }
}
