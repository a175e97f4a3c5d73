//! `get_tuple` and identifiers (CONTRACT §1 "Identifiers are opaque"): identifiers that
//! differ in one [`Class`] stay apart and come back exact, and an identifier never stored
//! finds nothing, however close it is to one that was.

use conformance_core::CheckpointConfig;
use serde_json::json;

use crate::calls::Cx;
use crate::compare::Checked;
use crate::data::adversarial::{every_variant, shown, Class, Position};
use crate::data::{at, jv, new_id, Step};

/// CONTRACT §1 "Identifiers are opaque", in the `thread_id` and `checkpoint_ns` positions:
/// one checkpoint on each of `ids` (every class's variants, [`every_variant`]), each
/// carrying its own identifier as the value of `who`; then each reads back, latest and by
/// id, its own checkpoint with its identifier exact. A long identifier may be refused
/// ([`Cx::put_or_refused`]).
async fn expect_apart(
    cx: &Cx,
    position: Position,
    ids: Vec<(Class, String)>,
    cfg: impl Fn(&str) -> CheckpointConfig,
) -> Checked {
    let mut stored = Vec::new();
    for (class, id) in ids {
        let step = Step::fresh().value("who", json!(id), 1);
        if let Some(c) = cx.put_or_refused(class, &cfg(&id), step).await? {
            stored.push((class, id, c));
        }
    }
    for (class, id, c) in &stored {
        let same: Vec<String> = stored.iter().filter(|(k, ..)| k == class).map(|(_, i, _)| shown(i)).collect();
        let note = format!(
            "after putting one checkpoint on each {} [{}] ({} class)",
            position.name(),
            same.join(", "),
            class.name()
        );
        for read in [cfg(id), c.clone()] {
            let t = cx.after(&note).get_some(&read).await?;
            t.diffs().config(c, &t.config).channel_value("who", &jv(json!(id)), &t.checkpoint).finish()?;
        }
    }
    Ok(())
}

/// CONTRACT §1 "Identifiers are opaque": threads whose ids differ only by case, Unicode
/// normalisation, a space, a separator, a `LIKE`/glob metacharacter, a suffix, the plane of
/// a character or past 255 bytes stay apart, and each reads back its own checkpoint with
/// its thread id exact.
pub(super) async fn thread_ids_stay_apart_and_exact(cx: Cx) -> Checked {
    let base = cx.thread("id");
    expect_apart(&cx, Position::Thread, every_variant(&base), |t| at(t, "")).await
}

/// CONTRACT §1 "Identifiers are opaque": namespaces of one thread that differ only by an
/// identifier class ([`thread_ids_stay_apart_and_exact`]) stay apart and come back exact.
pub(super) async fn namespaces_stay_apart_and_exact(cx: Cx) -> Checked {
    let thread = cx.thread("ns");
    expect_apart(&cx, Position::Namespace, every_variant("sub"), |ns| at(&thread, ns)).await
}

/// CONTRACT §1 "Identifiers are opaque" and §2 get_tuple: checkpoint ids of one thread that
/// differ only by an identifier class ([`every_variant`], one thread per class) are
/// different checkpoints: each reads back by id with its id exact, and the latest is the
/// greatest of them by bytes.
pub(super) async fn checkpoint_ids_stay_apart_and_exact(cx: Cx) -> Checked {
    for class in Class::ALL {
        let cfg = cx.config("ids");
        let mut stored = Vec::new();
        // Each at its own version of `who`: a saver may key values by (channel, version).
        for (version, id) in (1..).zip(class.variants(&new_id())) {
            let step = Step::new(&id).value("who", json!(id), version);
            if let Some(c) = cx.put_or_refused(class, &cfg, step).await? {
                stored.push((id, c));
            }
        }
        let all: Vec<String> = stored.iter().map(|(id, _)| shown(id)).collect();
        let cx = cx.after(format!("after putting the checkpoints [{}] ({} class)", all.join(", "), class.name()));
        for (id, c) in &stored {
            let t = cx.get_some(c).await?;
            t.diffs().config(c, &t.config).channel_value("who", &jv(json!(id)), &t.checkpoint).finish()?;
        }
        if let Some((greatest, _)) = stored.iter().max_by(|a, b| a.0.cmp(&b.0)) {
            let t = cx.get_some(&cfg).await?;
            t.diffs().eq("checkpoint.id (the greatest by bytes)", greatest, &t.checkpoint.id).finish()?;
        }
    }
    Ok(())
}

/// The rounds of a never-stored case for `class`: the variant put alone (the class's
/// first, then its last: a pattern or prefix bug finds the last from the others, a
/// trimming or folding one the first), with the class's other variants, never stored; each
/// round on its own base, `base(round)`.
fn rounds(class: Class, base: impl Fn(usize) -> String) -> Vec<(String, Vec<String>)> {
    let last = class.variants("").len() - 1;
    let mut picks = vec![0, last];
    picks.dedup();
    picks
        .into_iter()
        .enumerate()
        .map(|(round, i)| {
            let mut others = class.variants(&base(round));
            let stored = others.remove(i);
            (stored, others)
        })
        .collect()
}

/// What a never-stored lookup's failure names: the identifier put alone and its class.
fn only(position: Position, stored: &str, class: Class) -> String {
    format!(
        "after putting only the {} {} ({} class); the {} asked for was never stored",
        position.name(),
        shown(stored),
        class.name(),
        position.name()
    )
}

/// CONTRACT §1 "Identifiers are opaque", `thread_id`: a thread that was never put finds
/// nothing, however close its id is to one that was. For each class, one thread id is put
/// alone (the class's first variant, then its last, on bases of their own) and
/// `get_tuple` on each other variant of the class returns none. A saver that looks a
/// thread up exactly and then falls back to a case-insensitive, normalised, trimmed,
/// pattern or prefix match passes [`thread_ids_stay_apart_and_exact`] (the exact thread
/// exists there) and fails here.
pub(super) async fn never_stored_thread_finds_nothing(cx: Cx) -> Checked {
    for (k, class) in Class::ALL.into_iter().enumerate() {
        for (stored, others) in rounds(class, |r| cx.thread(&format!("nf{k}r{r}"))) {
            if cx.put_or_refused(class, &at(&stored, ""), Step::fresh()).await?.is_none() {
                continue;
            }
            let cx = cx.after(only(Position::Thread, &stored, class));
            for other in others {
                cx.get_none(&at(&other, "")).await?;
            }
        }
    }
    Ok(())
}

/// CONTRACT §1 "Identifiers are opaque", `checkpoint_ns`: a namespace never put in a
/// thread finds nothing there, latest or with the id of the checkpoint put in its
/// look-alike ([`never_stored_thread_finds_nothing`], one thread per round).
pub(super) async fn never_stored_namespace_finds_nothing(cx: Cx) -> Checked {
    for (k, class) in Class::ALL.into_iter().enumerate() {
        let thread = cx.thread(&format!("nf{k}"));
        for (stored, others) in rounds(class, |r| format!("sub{r}-")) {
            let Some(put) = cx.put_or_refused(class, &at(&thread, &stored), Step::fresh()).await? else { continue };
            let cx = cx.after(only(Position::Namespace, &stored, class));
            for other in others {
                let asked = at(&thread, &other);
                cx.get_none(&asked).await?;
                cx.get_none(&asked.with_id(put.checkpoint_id.clone().unwrap_or_default())).await?;
            }
        }
    }
    Ok(())
}

/// CONTRACT §1 "Identifiers are opaque" and §2 get_tuple ("exactly that checkpoint"): a
/// checkpoint id never put finds nothing, however close it is to one that was
/// ([`never_stored_thread_finds_nothing`], one thread per round).
pub(super) async fn never_stored_checkpoint_id_finds_nothing(cx: Cx) -> Checked {
    for (k, class) in Class::ALL.into_iter().enumerate() {
        let base = new_id();
        for (round, (stored, others)) in rounds(class, |r| format!("{base}{r}")).into_iter().enumerate() {
            let cfg = cx.config(&format!("nf{k}r{round}"));
            if cx.put_or_refused(class, &cfg, Step::new(&stored)).await?.is_none() {
                continue;
            }
            let cx = cx.after(only(Position::CheckpointId, &stored, class));
            for other in others {
                cx.get_none(&cfg.clone().with_id(other)).await?;
            }
        }
    }
    Ok(())
}
