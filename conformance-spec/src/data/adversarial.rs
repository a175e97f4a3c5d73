//! Adversarial identifiers (CONTRACT §1 "Identifiers are opaque", §2 "strings by bytes"):
//! for each [`Class`] of bug a saver shows on identifiers (case folding, Unicode
//! normalisation, trimming, splitting on separators, `LIKE`/glob patterns, prefix matches,
//! UTF-16 order, a length limit), a set of identifiers that are all different byte for
//! byte and that such a bug makes equal, or orders differently.
//!
//! The cases cross these classes with the identifier positions a case can observe
//! ([`Position`]): each position gets every class's [`Class::variants`] of one base (a
//! case's thread, a namespace, a task id...), and each variant must stay apart from the
//! others and come back exactly as it was given. A saver may refuse an identifier it cannot
//! store (`InvalidInput`, nothing stored); the cases accept that for [`Class::Long`] only.
//!
//! Order: [`byte_order_pairs`] gives identifiers whose greatest by bytes is not the greatest
//! by UTF-16 code units (JavaScript's sort) nor case-insensitively (a database collation),
//! and [`ts_against_ids`] timestamps that run against id order.

/// A class of identifier bug (issue 36, item 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// `"a"` / `"A"`: a case-folding saver or collation makes them one.
    Case,
    /// `"é"` precomposed (NFC) / `"e"` + U+0301 (NFD): a normalising saver makes them one.
    Normalisation,
    /// `"a"` / `"a "` / `" a"`: a trimming saver makes them one.
    Space,
    /// `"a:b"`, `"a|b"`, `"a/b"`, `"a.b"` / `"ab"` / `"a"`: a saver that splits on, strips
    /// or escapes separators makes some of them one.
    Separator,
    /// `"a%"`, `"a_"`, `"a*"`, `"a?"`, `"a["` / `"ab"`: a saver that passes an identifier to
    /// `LIKE` or a glob matches `"ab"` with the first four.
    Pattern,
    /// `""` / `"1"` / `"_"` / `"10"` appended: a saver matching by prefix mixes them.
    Prefix,
    /// `"\u{FF61}"` / `"\u{1F600}"`: UTF-8 bytes order them one way, UTF-16 code units the
    /// other ([`byte_order_pairs`]).
    Plane,
    /// 1 KiB and 4 KiB identifiers that differ only in their last byte, or only past 255
    /// bytes: a length limit that truncates makes them one. The contract states no limit:
    /// they round-trip exactly, or the saver refuses them (`InvalidInput`, nothing stored).
    Long,
}

impl Class {
    /// Every class, in the order the cases go through them.
    pub const ALL: [Class; 8] = [
        Class::Case,
        Class::Normalisation,
        Class::Space,
        Class::Separator,
        Class::Pattern,
        Class::Prefix,
        Class::Plane,
        Class::Long,
    ];

    /// A short name for failure messages.
    pub fn name(self) -> &'static str {
        match self {
            Class::Case => "case",
            Class::Normalisation => "NFC/NFD",
            Class::Space => "leading/trailing space",
            Class::Separator => "separators",
            Class::Pattern => "LIKE/glob metacharacters",
            Class::Prefix => "prefix",
            Class::Plane => "non-BMP vs high-BMP",
            Class::Long => "long",
        }
    }

    /// The identifiers of this class built on `base`, all different byte for byte. The
    /// one a pattern or prefix bug would wrongly find comes last, so it has the greatest
    /// checkpoint id when the variants are put in order.
    pub fn variants(self, base: &str) -> Vec<String> {
        let with = |suffixes: &[&str]| suffixes.iter().map(|s| format!("{base}{s}")).collect::<Vec<_>>();
        match self {
            Class::Case => with(&["a", "A", "aB", "Ab"]),
            Class::Normalisation => with(&["\u{e9}", "e\u{301}"]),
            Class::Space => {
                let mut v = with(&["a", "a ", "a\t"]);
                v.push(format!(" {base}a"));
                v
            }
            Class::Separator => with(&["a:b", "a|b", "a/b", "a.b", "a", "ab"]),
            Class::Pattern => with(&["a%", "a_", "a*", "a?", "a[b]", "ab"]),
            Class::Prefix => with(&["1", "_", "10", ""]),
            Class::Plane => with(&["\u{FF61}", "\u{1F600}"]),
            Class::Long => {
                let kib = "x".repeat(1024 - base.len().min(1000));
                vec![format!("{base}{kib}"), format!("{base}{kib}y"), format!("{base}{}", "x".repeat(4096))]
            }
        }
    }

    /// Whether a saver may refuse these identifiers (`InvalidInput`, nothing stored) rather
    /// than store them: only the long ones (CONTRACT §1: "an identifier a saver cannot
    /// store is refused").
    pub fn may_be_refused(self) -> bool {
        self == Class::Long
    }
}

/// The identifier positions of CONTRACT §1 "Identifiers are opaque"; each case names the
/// one it observes in its failure messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Position {
    /// `thread_id`.
    Thread,
    /// `checkpoint_ns`.
    Namespace,
    /// `checkpoint_id`.
    CheckpointId,
    /// A write's `task_id`.
    TaskId,
    /// A write's `task_path`.
    TaskPath,
    /// A channel name (of a value or a write).
    Channel,
    /// A metadata key.
    MetadataKey,
    /// A metadata `run_id`.
    RunId,
}

impl Position {
    /// The field's name as the contract spells it.
    pub fn name(self) -> &'static str {
        match self {
            Position::Thread => "thread_id",
            Position::Namespace => "checkpoint_ns",
            Position::CheckpointId => "checkpoint_id",
            Position::TaskId => "task_id",
            Position::TaskPath => "task_path",
            Position::Channel => "channel",
            Position::MetadataKey => "metadata key",
            Position::RunId => "run_id",
        }
    }
}

/// Every class's variants on `base`, with their class: the identifiers of one position in
/// one world (every one of them different from every other, across classes too).
pub fn every_variant(base: &str) -> Vec<(Class, String)> {
    let mut out: Vec<(Class, String)> = Vec::new();
    for class in Class::ALL {
        for v in class.variants(base) {
            if !out.iter().any(|(_, o)| *o == v) {
                out.push((class, v));
            }
        }
    }
    out
}

/// Suffixes whose order by bytes is not their order by another rule, in pairs
/// `(smaller by bytes, greater by bytes, the rule that orders them the other way)`:
/// `"B"` < `"a"` by bytes but not case-insensitively; `"\u{FF61}"` < `"\u{1F600}"` by
/// UTF-8 bytes but not by UTF-16 code units (0xFF61 > 0xD83D); `"ab"` < `"b"` by bytes but
/// not length first (a numeric sort of ids, or a `(length, id)` index).
pub fn byte_order_pairs() -> [(&'static str, &'static str, &'static str); 3] {
    [("B", "a", "case-insensitively"), ("\u{FF61}", "\u{1F600}", "by UTF-16 code units"), ("ab", "b", "length first")]
}

/// `n` ISO-8601 timestamps that decrease: the `ts` of the i-th of `n` checkpoints whose ids
/// increase, so "latest by ts" and "latest by id" disagree.
pub fn ts_against_ids(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("20{:02}-01-01T00:00:00.000000+00:00", 90 - i.min(90))).collect()
}

/// `s` for a failure message: quoted and escaped (a combining accent, a tab show), a long
/// identifier cut to its first 40 characters and its length in bytes.
pub fn shown(s: &str) -> String {
    match s.char_indices().nth(40) {
        Some((cut, _)) if s.len() > 80 => format!("{:?}… ({} bytes)", &s[..cut], s.len()),
        _ => format!("{s:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variants_differ_and_plane_pair_orders_against_utf16() {
        let all = every_variant("t-base-");
        for (i, (_, a)) in all.iter().enumerate() {
            assert!(all[i + 1..].iter().all(|(_, b)| a != b), "{a:?} twice");
        }
        for (small, great, _) in byte_order_pairs() {
            assert!(small.as_bytes() < great.as_bytes());
            let (s16, g16): (Vec<u16>, Vec<u16>) = (small.encode_utf16().collect(), great.encode_utf16().collect());
            let (sl, gl) = (small.to_lowercase(), great.to_lowercase());
            assert!(s16 > g16 || sl > gl || small.len() > great.len());
        }
        let ts = ts_against_ids(3);
        assert!(ts[0] > ts[1] && ts[1] > ts[2]);
    }
}
