// J-B2 (docs/langgraph-savers.md): JsonPlusSerializer (MemorySaver's and SqliteSaver's
// checkpoint serializer) writes a 16 MiB Uint8Array channel value as a JSON array of 16 M
// numbers, synchronously (the event loop answers nothing meanwhile), and revives it with
// one promise per number (timers starve meanwhile): the put and the read back take longer
// than the kit's 30 s. (PostgresSaver stores each channel value as its own blob, bytes as
// bytes.) Each saver runs in a worker thread, so this thread can time it. Exits 1 when the
// put and the read back of some saver take more than BUDGET_S (30) seconds together or the
// value differs.
import { Worker, isMainThread, parentPort, workerData } from "node:worker_threads";
import { open } from "./savers.mjs";

const cp = (id) => ({ v: 4, id, ts: "", channel_values: {}, channel_versions: {}, versions_seen: {} });
const cfg = { configurable: { thread_id: "t", checkpoint_ns: "" } };

if (!isMainThread) {
  const big = new Uint8Array(16 * 1024 * 1024).map((_, i) => (i * 31) & 255);
  const { saver: s, done } = await open(workerData.name);
  const t0 = performance.now();
  const at = await s.put(cfg, { ...cp("1"), channel_values: { big }, channel_versions: { big: 1 } }, {}, { big: 1 });
  parentPort.postMessage({ put: performance.now() - t0 });
  const t1 = performance.now();
  const got = (await s.getTuple(at)).checkpoint.channel_values.big;
  const same = got instanceof Uint8Array && got.length === big.length && got.every((b, i) => b === big[i]);
  parentPort.postMessage({ read: performance.now() - t1, same });
  await done();
} else {
  const budget = Number(process.env.BUDGET_S ?? 30) * 1000;
  const names = process.env.SAVERS ? process.env.SAVERS.split(",") : ["memory", "sqlite"];
  let shown = false;
  for (const name of names) {
    const bug = await new Promise((resolve) => {
      const w = new Worker(new URL(import.meta.url), { workerData: { name } });
      let put = 0;
      const timer = setTimeout(() => {
        console.log(`${name}: ${put ? "getTuple" : "put"} not finished ${budget / 1000} s after the worker started; stopped`);
        w.terminate();
        resolve(true);
      }, budget);
      w.on("message", (m) => {
        if (m.put !== undefined) {
          put = m.put;
          console.log(`${name}: put of a 16 MiB Uint8Array: ${(m.put / 1000).toFixed(1)} s`);
        } else {
          clearTimeout(timer);
          console.log(`${name}: getTuple: ${(m.read / 1000).toFixed(1)} s, value ${m.same ? "intact" : "differs"}`);
          resolve(!m.same || put + m.read > budget);
        }
      });
      w.on("error", (e) => {
        clearTimeout(timer);
        console.log(`${name}: ${e.name}: ${e.message}`);
        resolve(true);
      });
    });
    console.log(`${name}: ${bug ? "BUG PRESENT" : "bug absent"}`);
    shown ||= bug;
  }
  process.exit(shown ? 1 : 0);
}
