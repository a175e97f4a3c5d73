// J-B18 (docs/langgraph-savers.md): PostgresSaver.list with thread_id "" lists the
// checkpoints of every thread: `if (thread_id)` adds no thread condition for a falsy id,
// so a read that names no thread finds other threads' state (CONTRACT §1
// config.missing_thread). The fuzz trial finds it as list::fuzz_model_sequences.
// MemorySaver refuses the empty id (an error), SqliteSaver lists nothing. Exits 1 when
// the bug is present.
import { each } from "./savers.mjs";

const cp = (id) => ({ v: 4, id, ts: "", channel_values: {}, channel_versions: {}, versions_seen: {} });
await each(["postgres"], async (s, name) => {
  await s.put({ configurable: { thread_id: "a", checkpoint_ns: "" } }, cp("10"), {}, {});
  const got = [];
  try {
    for await (const t of s.list({ configurable: { thread_id: "", checkpoint_ns: "" } })) {
      got.push(`${t.config.configurable.thread_id}/${t.checkpoint.id}`);
    }
  } catch (e) {
    console.log(`${name}: list(thread_id "") refused: ${e.message}`);
    return false;
  }
  console.log(`${name}: list(thread_id "") after a put on thread "a" -> ${JSON.stringify(got)}`);
  return got.length > 0;
});
