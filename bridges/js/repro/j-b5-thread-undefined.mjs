// J-B5 (docs/langgraph-savers.md): MemorySaver.getTuple without a thread_id reads the
// thread named "undefined" (it indexes its storage with the missing value). Exits 1 when
// the bug is present.
import { each } from "./savers.mjs";

const cp = (id) => ({ v: 4, id, ts: "", channel_values: {}, channel_versions: {}, versions_seen: {} });
await each(["memory"], async (s, name) => {
  await s.put({ configurable: { thread_id: "undefined", checkpoint_ns: "" } }, cp("1"), {}, {});
  const t = await s.getTuple({ configurable: { checkpoint_ns: "" } });
  console.log(`${name}: getTuple({configurable: {checkpoint_ns: ""}}) ->`, t ? `checkpoint ${t.checkpoint.id} of the thread "undefined"` : "nothing");
  return Boolean(t);
});
