// J-B9 (docs/langgraph-savers.md): SqliteSaver.putWrites with a config without
// checkpoint_ns binds NULL to the NOT NULL column, and its INSERT OR IGNORE ignores that
// violation too: the call returns, nothing is stored, no read finds the writes. (put
// defaults a missing namespace to ""; MemorySaver and PostgresSaver refuse such writes.)
// Exits 1 when the bug is present.
import { each } from "./savers.mjs";

const cp = (id) => ({ v: 4, id, ts: "", channel_values: {}, channel_versions: {}, versions_seen: {} });
const cfg = { configurable: { thread_id: "t", checkpoint_ns: "" } };
await each(["sqlite"], async (s, name) => {
  const at = await s.put(cfg, cp("1"), {}, {});
  let refused = null;
  try {
    await s.putWrites({ configurable: { thread_id: "t", checkpoint_id: "1" } }, [["ch", "v"]], "task");
  } catch (e) {
    refused = `${e.name}: ${e.message}`;
  }
  const writes = (await s.getTuple(at)).pendingWrites;
  console.log(`${name}: putWrites without checkpoint_ns ${refused ? `refused (${refused})` : "returned"}; getTuple of its checkpoint has ${writes.length} pending writes`);
  return refused === null && writes.length === 0;
});
