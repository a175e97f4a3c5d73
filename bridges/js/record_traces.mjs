#!/usr/bin/env node
// Records the shipped traces made with LangGraph JS (traces/README.md, issue 41): runs small
// graphs over a recorder around LangGraph JS's MemorySaver and writes each trace to
// traces/NAME.json, in the kit's format checkpoint-trace/1 (docs/trace-format.md).
//
//     node bridges/js/record_traces.mjs                 # every trace
//     node bridges/js/record_traces.mjs js-time-travel  # one trace
//     node bridges/js/record_traces.mjs --out DIR ...   # into DIR instead of traces/
//
// Needs @langchain/langgraph (the versions of PINS) in target/record-js; without it the
// script runs `npm install` there first (from the npm registry). No model, no API key.
//
// As the Python recorder (bridges/python/checkpoint_bridge/record.py): every value, on the
// way in and out, is the saver's own `serde.dumpsTyped(value)` (tag and bytes); pending
// writes are in the contract's order (task_path, task_id, index), each with the task_path
// its putWrites was given; getNextVersion is passed through, not recorded. One choice more
// than the Python recorder: a read's checkpoint keeps only the channels of its
// channel_versions (see Recorder.checkpoint).

import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const MODULES = join(ROOT, "target/record-js");
const PINS = {
  "@langchain/langgraph": "1.5.0",
  "@langchain/core": "1.4.0",
  "@langchain/langgraph-checkpoint": "1.2.2",
  zod: "3.25.76",
};

function ensureModules() {
  const pkg = join(MODULES, "package.json");
  const want = JSON.stringify({ name: "record-js", private: true, dependencies: PINS });
  if (!existsSync(join(MODULES, "node_modules/@langchain/langgraph")) || readFileSync(pkg, "utf8") !== want) {
    mkdirSync(MODULES, { recursive: true });
    writeFileSync(pkg, want);
    execFileSync("npm", ["install", "--no-audit", "--no-fund", "--silent"], { cwd: MODULES, stdio: "inherit" });
  }
  return createRequire(pkg);
}

const require = ensureModules();
const { StateGraph, Annotation, START, END, Command, interrupt } = require("@langchain/langgraph");
const { MemorySaver, BaseCheckpointSaver, WRITES_IDX_MAP } = require("@langchain/langgraph-checkpoint");

const VERSIONS = Object.fromEntries(
  ["@langchain/langgraph", "@langchain/langgraph-checkpoint"].map((p) => [
    p,
    JSON.parse(readFileSync(join(MODULES, "node_modules", p, "package.json"), "utf8")).version,
  ]),
);

function wireConfig(config) {
  const c = config?.configurable ?? {};
  const out = { thread_id: c.thread_id, checkpoint_ns: c.checkpoint_ns ?? "" };
  if (c.checkpoint_id != null) out.checkpoint_id = c.checkpoint_id;
  return out;
}

class Recorder extends BaseCheckpointSaver {
  constructor(inner) {
    super(inner.serde);
    this.inner = inner;
    this.steps = [];
    this.paths = new Map(); // "thread|ns|id" -> Map("taskId,idx" -> taskPath)
  }

  async value(v) {
    const [tag, data] = await this.serde.dumpsTyped(v);
    const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : Buffer.from(data);
    return { $type: String(tag), $base64: bytes.toString("base64") };
  }

  // `read`: a checkpoint a read returned, in the contract's form: LangGraph JS's MemorySaver
  // stores the checkpoint whole, so it gives back channel values that are not in
  // channel_versions (an empty reducer channel, `__pregel_tasks`); CONTRACT §2 put reads
  // only the channels of channel_versions (put.outside_versions).
  async checkpoint(cp, read = false) {
    const values = {};
    const versions = cp.channel_versions ?? {};
    for (const [k, v] of Object.entries(cp.channel_values ?? {})) {
      if (read && !(k in versions)) continue;
      values[k] = await this.value(v);
    }
    return {
      v: cp.v,
      id: cp.id,
      ts: cp.ts ?? "",
      channel_values: values,
      channel_versions: { ...(cp.channel_versions ?? {}) },
      versions_seen: Object.fromEntries(Object.entries(cp.versions_seen ?? {}).map(([k, v]) => [k, { ...v }])),
      updated_channels: cp.updated_channels ?? null,
    };
  }

  async tuple(t) {
    if (t == null) return null;
    const config = wireConfig(t.config);
    const paths = this.paths.get(`${config.thread_id}|${config.checkpoint_ns}|${config.checkpoint_id}`) ?? new Map();
    const seen = new Map();
    const writes = [];
    for (const [taskId, channel, value] of t.pendingWrites ?? []) {
      let idx = WRITES_IDX_MAP[channel];
      if (idx === undefined) {
        const n = seen.get(`${taskId}\0${channel}`) ?? 0;
        seen.set(`${taskId}\0${channel}`, n + 1);
        const cands = [...paths.entries()]
          .filter(([k, [, ch]]) => k.startsWith(`${taskId},`) && ch === channel && Number(k.slice(taskId.length + 1)) >= 0)
          .map(([k]) => Number(k.slice(taskId.length + 1)))
          .sort((a, b) => a - b);
        idx = n < cands.length ? cands[n] : 0;
      }
      const path = paths.get(`${taskId},${idx}`)?.[0] ?? "";
      writes.push({ key: [path, taskId, idx], w: { task_id: taskId, task_path: path, channel, value: await this.value(value) } });
    }
    const cmp = (a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b));
    writes.sort((a, b) => cmp(a.key[0], b.key[0]) || cmp(a.key[1], b.key[1]) || a.key[2] - b.key[2]);
    return {
      config,
      checkpoint: await this.checkpoint(t.checkpoint, true),
      metadata: t.metadata ?? {},
      parent_config: t.parentConfig ? wireConfig(t.parentConfig) : null,
      pending_writes: writes.map((x) => x.w),
    };
  }

  getNextVersion(current, channel) {
    return this.inner.getNextVersion(current, channel);
  }

  async put(config, checkpoint, metadata, newVersions) {
    const step = {
      call: "put",
      config: wireConfig(config),
      checkpoint: await this.checkpoint(checkpoint),
      metadata: JSON.parse(JSON.stringify(metadata ?? {})),
      new_versions: { ...newVersions },
    };
    const result = await this.inner.put(config, checkpoint, metadata, newVersions);
    this.steps.push({ ...step, expect: { config: wireConfig(result) } });
    return result;
  }

  async putWrites(config, writes, taskId, taskPath = "") {
    const c = wireConfig(config);
    const step = { call: "put_writes", config: c, writes: [], task_id: taskId, task_path: taskPath ?? "" };
    for (const [ch, v] of writes) step.writes.push([ch, await this.value(v)]);
    await this.inner.putWrites(config, writes, taskId, taskPath);
    const key = `${c.thread_id}|${c.checkpoint_ns}|${c.checkpoint_id}`;
    if (!this.paths.has(key)) this.paths.set(key, new Map());
    const paths = this.paths.get(key);
    writes.forEach(([ch], i) => {
      const idx = WRITES_IDX_MAP[ch] ?? i;
      if (idx >= 0 && paths.has(`${taskId},${idx}`)) return; // a regular write's first wins
      paths.set(`${taskId},${idx}`, [taskPath ?? "", ch]);
    });
    this.steps.push({ ...step, expect: "done" });
  }

  async getTuple(config) {
    const result = await this.inner.getTuple(config);
    this.steps.push({ call: "get_tuple", config: wireConfig(config), expect: { tuple: await this.tuple(result) } });
    return result;
  }

  async *list(config, options = {}) {
    const result = [];
    for await (const t of this.inner.list(config, options)) result.push(t);
    const c = config?.configurable ?? {};
    const tuples = [];
    for (const t of result) tuples.push(await this.tuple(t));
    this.steps.push({
      call: "list",
      thread_id: c.thread_id,
      options: {
        checkpoint_ns: c.checkpoint_ns ?? null,
        checkpoint_id: c.checkpoint_id ?? null,
        filter: { ...(options.filter ?? {}) },
        before: options.before?.configurable?.checkpoint_id ?? null,
        limit: options.limit ?? null,
      },
      expect: { tuples },
    });
    yield* result;
  }

  async deleteThread(threadId) {
    await this.inner.deleteThread(threadId);
    this.steps.push({ call: "delete_thread", thread_id: threadId, expect: "done" });
  }
}

const Doc = Annotation.Root({
  text: Annotation(),
  log: Annotation({ reducer: (a, b) => a.concat(b), default: () => [] }),
});

function docGraph(rec) {
  return new StateGraph(Doc)
    .addNode("outline", (s) => ({ text: `${s.text} outlined`, log: ["outline"] }))
    .addNode("write", (s) => ({ text: `${s.text} written`, log: ["write"] }))
    .addNode("edit", (s) => ({ text: `${s.text} edited`, log: ["edit"] }))
    .addEdge(START, "outline")
    .addEdge("outline", "write")
    .addEdge("write", "edit")
    .addEdge("edit", END)
    .compile({ checkpointer: rec });
}

async function history(app, config) {
  const out = [];
  for await (const s of app.getStateHistory(config)) out.push(s);
  return out;
}

/** Time travel in LangGraph JS: a run, a replay from its step-1 checkpoint, an
 * updateState on its step-0 checkpoint and a run from there (forks of older checkpoints). */
async function timeTravel(rec) {
  const app = docGraph(rec);
  const config = { configurable: { thread_id: "js-time-travel" } };
  await app.invoke({ text: "plan", log: [] }, config);
  const byStep = Object.fromEntries((await history(app, config)).map((s) => [s.metadata.step, s.config]));
  await app.invoke(null, byStep[1]);
  await app.getState(config);
  await history(app, config);
}

const Review = Annotation.Root({ draft: Annotation(), verdict: Annotation() });

/** interrupt() and a resume with Command({resume}), then updateState with asNode. */
async function interruptUpdate(rec) {
  const app = new StateGraph(Review)
    .addNode("write", (s) => ({ draft: `${s.draft}!` }))
    .addNode("ask", (s) => ({ verdict: String(interrupt({ question: "approve?", draft: s.draft })) }))
    .addNode("finish", (s) => ({ verdict: `${s.verdict} (filed)` }))
    .addEdge(START, "write")
    .addEdge("write", "ask")
    .addEdge("ask", "finish")
    .addEdge("finish", END)
    .compile({ checkpointer: rec });
  const config = { configurable: { thread_id: "js-interrupt-update" } };
  await app.invoke({ draft: "release notes", verdict: "" }, config);
  await app.getState(config);
  await app.invoke(new Command({ resume: "approved" }), config);
  await app.getState(config);
  await app.updateState(config, { verdict: "reopened" }, "ask");
  await app.getState(config);
  await app.updateState(config, { draft: "release notes v2" });
  await history(app, config);
}

const TRACES = { "js-time-travel": timeTravel, "js-interrupt-update": interruptUpdate };

function sortedJson(v, indent = "") {
  if (v === null || typeof v !== "object") return JSON.stringify(v);
  const inner = `${indent} `;
  if (Array.isArray(v)) {
    if (v.length === 0) return "[]";
    return `[\n${v.map((x) => inner + sortedJson(x, inner)).join(",\n")}\n${indent}]`;
  }
  const keys = Object.keys(v).filter((k) => v[k] !== undefined).sort();
  if (keys.length === 0) return "{}";
  return `{\n${keys.map((k) => `${inner}${JSON.stringify(k)}: ${sortedJson(v[k], inner)}`).join(",\n")}\n${indent}}`;
}

async function main(argv) {
  let out = join(ROOT, "traces");
  let names = argv;
  if (names[0] === "--out") [out, names] = [resolve(names[1]), names.slice(2)];
  const unknown = names.filter((n) => !(n in TRACES));
  if (unknown.length) {
    console.error(`record_traces.mjs: unknown trace ${unknown[0]} (known: ${Object.keys(TRACES).join(", ")})`);
    return 2;
  }
  mkdirSync(out, { recursive: true });
  for (const name of names.length ? names : Object.keys(TRACES)) {
    const rec = new Recorder(new MemorySaver());
    await TRACES[name](rec);
    const trace = {
      format: "checkpoint-trace/1",
      recorded_with: {
        app_id: name,
        langgraph: VERSIONS["@langchain/langgraph"],
        langgraph_checkpoint: VERSIONS["@langchain/langgraph-checkpoint"],
      },
      source: `node bridges/js/record_traces.mjs ${name} (LangGraph JS ${VERSIONS["@langchain/langgraph"]}, MemorySaver)`,
      steps: rec.steps,
    };
    writeFileSync(join(out, `${name}.json`), `${sortedJson(trace)}\n`);
    console.log(`${join(out, name)}.json: ${rec.steps.length} steps`);
  }
  return 0;
}

process.exitCode = await main(process.argv.slice(2));
