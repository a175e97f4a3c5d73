// J-B13 (docs/langgraph-savers.md): SqliteSaver.list ignores the config's checkpoint_id
// and lists the whole thread; MemorySaver and PostgresSaver list that checkpoint only.
// Exits 1 when the bug is present.
import { each } from "./savers.mjs";

const cp = (id) => ({ v: 4, id, ts: "", channel_values: {}, channel_versions: {}, versions_seen: {} });
const cfg = { configurable: { thread_id: "t", checkpoint_ns: "" } };
await each(["sqlite"], async (s, name) => {
  for (const id of ["1", "2", "3"]) await s.put(cfg, cp(id), {}, {});
  const ids = [];
  for await (const t of s.list({ configurable: { ...cfg.configurable, checkpoint_id: "2" } })) ids.push(t.checkpoint.id);
  console.log(`${name}: list({checkpoint_id: "2"}) -> ${JSON.stringify(ids)}`);
  return ids.join() !== "2";
});
