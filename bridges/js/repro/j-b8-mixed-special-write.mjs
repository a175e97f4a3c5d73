// J-B8 (docs/langgraph-savers.md): SqliteSaver and PostgresSaver decide per call, not per
// write, whether a write replaces an earlier one: a retried special write (__error__) is
// kept old when its call also carries a regular write (INSERT OR IGNORE / ON CONFLICT DO
// NOTHING unless every write of the call is special). MemorySaver decides per write.
// The same bug as Python's B5 (langgraph issue #8833). Exits 1 when the bug is present.
import { each } from "./savers.mjs";

const cp = (id) => ({ v: 4, id, ts: "", channel_values: {}, channel_versions: {}, versions_seen: {} });
const cfg = { configurable: { thread_id: "t", checkpoint_ns: "" } };
await each(["sqlite", "postgres"], async (s, name) => {
  const at = await s.put(cfg, cp("1"), {}, {});
  await s.putWrites(at, [["__error__", "old"], ["x", 1]], "A");
  await s.putWrites(at, [["__error__", "new"], ["x", 1]], "A");
  const writes = (await s.getTuple(at)).pendingWrites;
  const error = writes.find(([, ch]) => ch === "__error__")?.[2];
  console.log(`${name}: after putWrites([__error__ "old", x 1]) then ([__error__ "new", x 1]) of task A: __error__ = ${JSON.stringify(error)} (the last special write, "new", should win)`);
  return error !== "new";
});
