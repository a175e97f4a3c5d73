// J-B1 (docs/langgraph-savers.md): MemorySaver.putWrites keeps only the bytes of a
// Uint8Array write value and drops its type ("bytes"); getTuple then parses them as JSON
// and throws, so the checkpoint cannot be read any more. Exits 1 when the bug is present.
import { each } from "./savers.mjs";

const cp = (id) => ({ v: 4, id, ts: "", channel_values: {}, channel_versions: {}, versions_seen: {} });
const cfg = { configurable: { thread_id: "t", checkpoint_ns: "" } };
await each(["memory"], async (s, name) => {
  const at = await s.put(cfg, cp("1"), {}, {});
  await s.putWrites(at, [["w", new Uint8Array([1, 2, 3])]], "task");
  try {
    const v = (await s.getTuple(at)).pendingWrites[0][2];
    const same = v instanceof Uint8Array && v.length === 3 && v[0] === 1 && v[1] === 2 && v[2] === 3;
    console.log(`${name}: getTuple -> write value`, v);
    return !same;
  } catch (e) {
    console.log(`${name}: getTuple after putWrites of Uint8Array [1, 2, 3] throws ${e.name}: ${e.message}`);
    return true;
  }
});
