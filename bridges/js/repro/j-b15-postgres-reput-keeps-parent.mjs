// J-B15 (docs/langgraph-savers.md): PostgresSaver's upsert of a checkpoint id put again
// updates the checkpoint and metadata but not parent_checkpoint_id: the old parent stays.
// MemorySaver and SqliteSaver replace it. The same bug as Python's B6. Exits 1 when the
// bug is present.
import { each } from "./savers.mjs";

const cp = (id) => ({ v: 4, id, ts: "", channel_values: {}, channel_versions: {}, versions_seen: {} });
const cfg = { configurable: { thread_id: "t", checkpoint_ns: "" } };
await each(["postgres"], async (s, name) => {
  const a = await s.put(cfg, cp("1"), {}, {});
  const b = await s.put(cfg, cp("2"), {}, {});
  await s.put(a, cp("3"), { n: 1 }, {}); // "3" as a child of "1"
  const again = await s.put(b, cp("3"), { n: 2 }, {}); // "3" again, now as a child of "2"
  const t = await s.getTuple(again);
  const parent = t.parentConfig?.configurable?.checkpoint_id;
  console.log(`${name}: after putting "3" again as a child of "2": metadata n = ${t.metadata.n}, parent = ${JSON.stringify(parent)}`);
  return parent !== "2";
});
