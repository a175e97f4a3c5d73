// J-B16 (docs/langgraph-savers.md): MemorySaver orders checkpoint ids by UTF-16 code units
// (`Object.keys(...).sort()`), not by bytes (code points): of the ids "x\u{1F600}" (😀,
// a surrogate pair D83D DE00) and "x\uFF61" (｡), getTuple without an id returns "x｡" as
// the latest, and list puts it first. By bytes (UTF-8; also code points, as Python's `max`)
// "x😀" is the greater, and SqliteSaver (BINARY collation) says so. Exits 1 when the bug
// is present.
import { each } from "./savers.mjs";

const cp = (id) => ({ v: 4, id, ts: "", channel_values: {}, channel_versions: {}, versions_seen: {} });
const cfg = { configurable: { thread_id: "t", checkpoint_ns: "" } };
const emoji = "x\u{1F600}", halfwidth = "x\uFF61";
await each(["memory"], async (s, name) => {
  await s.put(cfg, cp(emoji), {}, {});
  await s.put(cfg, cp(halfwidth), {}, {});
  const latest = (await s.getTuple(cfg))?.checkpoint.id;
  const ids = [];
  for await (const t of s.list(cfg)) ids.push(t.checkpoint.id);
  console.log(`${name}: latest -> ${JSON.stringify(latest)}, list -> ${JSON.stringify(ids)} (greatest by bytes: ${JSON.stringify(emoji)})`);
  return latest !== emoji || ids[0] !== emoji;
});
