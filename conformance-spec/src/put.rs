//! `put` (CONTRACT §2 put): what is stored, what comes back, which values a read rebuilds.

use conformance_core::Capability;
use serde_json::json;

use crate::cx::{ensure, ensure_eq, CaseResult, Cx};
use crate::fixtures::{jv, Step};

/// The cases of this module.
pub fn cases() -> Vec<crate::SpecCase> {
    crate::spec_cases!(Capability::Put => [
        returns_config_of_stored_checkpoint ["test_put_returns_config"],
        roundtrip_channel_values ["test_put_roundtrip"],
    ])
}

async fn returns_config_of_stored_checkpoint(cx: Cx) -> CaseResult {
    let cfg = cx.config("main").with_ns("child:abc");
    let step = Step::fresh().value("k", json!("v"), 1);
    let id = step.id().to_owned();
    let got = cx.put(&cfg, step).await?;
    ensure_eq(format!("put({cfg}): returned config.thread_id"), &cfg.thread_id, &got.thread_id)?;
    ensure_eq(format!("put({cfg}): returned config.checkpoint_ns"), &cfg.checkpoint_ns, &got.checkpoint_ns)?;
    ensure_eq(format!("put({cfg}): returned config.checkpoint_id"), &Some(id), &got.checkpoint_id)
}

async fn roundtrip_channel_values(cx: Cx) -> CaseResult {
    let cfg = cx.config("main");
    let step = Step::fresh().value("msg", json!("hello"), 1).meta("source", json!("input")).meta("step", json!(-1));
    let stored = cx.put(&cfg, step).await?;
    let t = cx.get_some(&stored).await?;
    ensure_eq(
        format!("get_tuple({stored}): checkpoint.id"),
        &stored.checkpoint_id.clone().unwrap_or_default(),
        &t.checkpoint.id,
    )?;
    let want: std::collections::BTreeMap<String, _> = [("msg".to_owned(), jv(json!("hello")))].into();
    ensure_eq(format!("get_tuple({stored}): checkpoint.channel_values"), &want, &t.checkpoint.channel_values)?;
    ensure(t.checkpoint.v == 1, || format!("get_tuple({stored}): checkpoint.v: expected 1, got {}", t.checkpoint.v))
}
