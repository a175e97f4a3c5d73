// J-B11 (docs/langgraph-savers.md): SqliteSaver.list with { limit: 0 } returns every
// checkpoint (`if (limit)` adds no LIMIT for 0); MemorySaver and PostgresSaver return
// none. Exits 1 when the bug is present.
import { each } from "./savers.mjs";

const cp = (id) => ({ v: 4, id, ts: "", channel_values: {}, channel_versions: {}, versions_seen: {} });
const cfg = { configurable: { thread_id: "t", checkpoint_ns: "" } };
await each(["sqlite"], async (s, name) => {
  for (const id of ["1", "2", "3"]) await s.put(cfg, cp(id), {}, {});
  const ids = [];
  for await (const t of s.list(cfg, { limit: 0 })) ids.push(t.checkpoint.id);
  console.log(`${name}: list(limit 0) -> ${JSON.stringify(ids)}`);
  return ids.length > 0;
});
