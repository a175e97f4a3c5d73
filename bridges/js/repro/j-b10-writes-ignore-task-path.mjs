// J-B10 (docs/langgraph-savers.md): SqliteSaver and PostgresSaver take no taskPath in
// putWrites (LangGraph JS 1.2.2's BaseCheckpointSaver.putWrites has it, and its
// compareWritesSortKeys orders a superstep's writes by (taskPath, taskId, idx) "for live
// execution and every saver"), so their pending writes come back in taskId order, not in
// the order the run applied them. MemorySaver keeps the path and orders by it.
// Exits 1 when the bug is present.
import { each } from "./savers.mjs";

const cp = (id) => ({ v: 4, id, ts: "", channel_values: {}, channel_versions: {}, versions_seen: {} });
const cfg = { configurable: { thread_id: "t", checkpoint_ns: "" } };
await each(["memory", "sqlite", "postgres"], async (s, name) => {
  const at = await s.put(cfg, cp("1"), {}, {});
  // task "a" ran at path "~2", task "z" at path "~1": z's writes come first.
  await s.putWrites(at, [["x", "from a"]], "a", "~2");
  await s.putWrites(at, [["x", "from z"]], "z", "~1");
  const tasks = (await s.getTuple(at)).pendingWrites.map(([task]) => task);
  console.log(`${name}: pending writes by task: ${JSON.stringify(tasks)} (by path: ["z","a"])`);
  return tasks.join() !== "z,a";
});
