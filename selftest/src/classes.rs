//! Which mutants break each class of the spec's adversarial data (issue 36 item 2;
//! `conformance_spec::data::adversarial`): every identifier [`Class`] by its
//! [`Class::name`], and timestamps that run against id order. Each mutant listed breaks
//! that class only (an [`IdMap`](crate) rewriting one position, an order by another rule,
//! a lookup retried by another rule) and is caught by a case of its home capability, as
//! for every mutant (`selftest/tests/selftest.rs`). `docs/rules.md` renders the table;
//! `selftest/tests/rules.rs` checks that every class has a mutant and every name exists.
//!
//! [`Class`]: conformance_spec::data::adversarial::Class
//! [`Class::name`]: conformance_spec::data::adversarial::Class::name

/// The name of the timestamp class (not an identifier class): `ts` that decrease while
/// checkpoint ids increase ([`ts_against_ids`](conformance_spec::data::adversarial::ts_against_ids)).
pub const TIMESTAMPS: &str = "timestamps against id order";

/// The name of the length class: ids whose order by bytes is not their order length first
/// (`"ab"` < `"b"`; [`byte_order_pairs`](conformance_spec::data::adversarial::byte_order_pairs)).
pub const LENGTHS: &str = "lengths against byte order";

/// (class name, the mutants that break only that class).
pub const CLASS_MUTANTS: &[(&str, &[&str])] = &[
    (
        "case",
        &[
            "thread_ids_case_folded",
            "checkpoint_ids_case_folded",
            "get_tuple_namespace_fallback_case_folded",
            "get_tuple_checkpoint_id_fallback_case_folded",
            "task_ids_case_folded",
            "metadata_keys_case_folded",
            "delete_thread_case_insensitive",
            "delta_channels_case_folded",
            "list_filter_case_insensitive",
            "checkpoint_ids_ordered_case_insensitively",
            "pending_writes_ordered_case_insensitively",
        ],
    ),
    (
        "NFC/NFD",
        &[
            "thread_ids_nfc_normalised",
            "namespaces_nfc_normalised",
            "get_tuple_checkpoint_id_fallback_nfc",
            "delete_for_runs_nfc_normalised",
        ],
    ),
    ("leading/trailing space", &["thread_ids_trimmed", "get_tuple_thread_fallback_trimmed", "write_channels_trimmed"]),
    ("separators", &["thread_ids_separators_stripped"]),
    (
        "LIKE/glob metacharacters",
        &[
            "get_tuple_thread_like_pattern",
            "get_tuple_namespace_like",
            "list_namespace_like",
            "delete_thread_like",
            "delta_channels_like",
        ],
    ),
    ("prefix", &["get_tuple_thread_prefix"]),
    ("non-BMP vs high-BMP", &["checkpoint_ids_ordered_by_utf16", "pending_writes_ordered_by_utf16"]),
    (LENGTHS, &["checkpoint_ids_ordered_length_first"]),
    ("long", &["thread_ids_truncated_at_255_bytes", "checkpoint_ids_truncated_at_255_bytes"]),
    (
        TIMESTAMPS,
        &[
            "latest_by_ts",
            "latest_by_metadata_step",
            "list_ordered_by_ts",
            "prune_keeps_latest_ts",
            "delta_latest_by_ts",
        ],
    ),
];
