// J-B12 (docs/langgraph-savers.md): SqliteSaver.list reads a filter key as a JSON path
// (`$.${key}`), so the key "a.b" finds metadata {a: {b: 1}} and misses {"a.b": 1}.
// The same bug as Python's B4. Exits 1 when the bug is present.
import { each } from "./savers.mjs";

const cp = (id) => ({ v: 4, id, ts: "", channel_values: {}, channel_versions: {}, versions_seen: {} });
const cfg = { configurable: { thread_id: "t", checkpoint_ns: "" } };
await each(["sqlite"], async (s, name) => {
  await s.put(cfg, cp("dotted"), { "a.b": 1 }, {});
  await s.put(cfg, cp("nested"), { a: { b: 1 } }, {});
  const ids = [];
  for await (const t of s.list(cfg, { filter: { "a.b": 1 } })) ids.push(t.checkpoint.id);
  console.log(`${name}: list(filter {"a.b": 1}) -> ${JSON.stringify(ids)} (the metadata with the key "a.b" is "dotted")`);
  return ids.join() !== "dotted";
});
