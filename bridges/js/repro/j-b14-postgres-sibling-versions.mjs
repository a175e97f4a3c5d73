// J-B14 (docs/langgraph-savers.md): PostgresSaver keys channel values by (thread,
// namespace, channel, version) and inserts them with ON CONFLICT DO NOTHING, while its
// getNextVersion (BaseCheckpointSaver's) gives plain integers: two children of one
// checkpoint (a fork, as time travel makes) both get version 2 for a channel, and the
// second child's value is dropped: it reads the first child's. Python's PostgresSaver adds
// a random fraction to each version for this. Exits 1 when the bug is present.
import { each } from "./savers.mjs";

const cp = (id, values, versions) => ({ v: 4, id, ts: "", channel_values: values, channel_versions: versions, versions_seen: {} });
const cfg = { configurable: { thread_id: "t", checkpoint_ns: "" } };
await each(["postgres"], async (s, name) => {
  const v1 = s.getNextVersion(undefined);
  const parent = await s.put(cfg, cp("1", { a: "base" }, { a: v1 }), {}, { a: v1 });
  const v2 = s.getNextVersion(v1);
  const left = await s.put(parent, cp("2", { a: "left" }, { a: v2 }), {}, { a: v2 });
  const right = await s.put(parent, cp("3", { a: "right" }, { a: s.getNextVersion(v1) }), {}, { a: s.getNextVersion(v1) });
  const got = (await s.getTuple(right)).checkpoint.channel_values.a;
  console.log(`${name}: children of checkpoint 1 put a = "left" (id 2) and a = "right" (id 3), both at version ${v2}; checkpoint 3 reads a = ${JSON.stringify(got)}, checkpoint 2 ${JSON.stringify((await s.getTuple(left)).checkpoint.channel_values.a)}`);
  return got !== "right";
});
