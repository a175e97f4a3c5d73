// J-B7 (docs/langgraph-savers.md): SqliteSaver stores a Uint8Array write value as a BLOB
// with its type "bytes", but getTuple and list read every write back through
// `CAST(value AS TEXT)` and JSON: bytes that are not UTF-8 come back replaced by U+FFFD
// (EF BF BD), so the value read differs from the one written. Exits 1 when the bug is
// present.
import { each } from "./savers.mjs";

const cp = (id) => ({ v: 4, id, ts: "", channel_values: {}, channel_versions: {}, versions_seen: {} });
const cfg = { configurable: { thread_id: "t", checkpoint_ns: "" } };
await each(["sqlite"], async (s, name) => {
  const at = await s.put(cfg, cp("1"), {}, {});
  const written = new Uint8Array([1, 0, 0xff, 0xfe, 3]);
  await s.putWrites(at, [["w", written]], "task");
  const got = (await s.getTuple(at)).pendingWrites[0][2];
  const same = got instanceof Uint8Array && got.length === written.length && got.every((b, i) => b === written[i]);
  console.log(`${name}: write value written [${[...written]}], read back`, got instanceof Uint8Array ? `[${[...got]}]` : got);
  return !same;
});
