// J-B6 (docs/langgraph-savers.md): a MemorySaver.getTuple (latest form) that runs while a
// put of a new thread awaits its serializer throws instead of seeing no checkpoint (put
// creates the namespace's object first; CONTRACT §4: a reader sees none or all of a
// checkpoint). Exits 1 when the bug is present.
import { each } from "./savers.mjs";

const cp = (id) => ({ v: 4, id, ts: "", channel_values: {}, channel_versions: {}, versions_seen: {} });
const cfg = { configurable: { thread_id: "t", checkpoint_ns: "" } };
await each(["memory"], async (s, name) => {
  const put = s.put(cfg, cp("1"), {}, {}); // not awaited
  let bug = false;
  try {
    const t = await s.getTuple(cfg);
    console.log(`${name}: getTuple during the put ->`, t ? `checkpoint ${t.checkpoint.id}` : "nothing");
  } catch (e) {
    console.log(`${name}: getTuple during the put throws ${e.name}: ${e.message}`);
    bug = true;
  }
  await put;
  return bug;
});
