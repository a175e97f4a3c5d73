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
// The recording saver is src/record.mjs's (what it keeps of each call, and why, is said
// there); a user's own app is recorded by src/record_app.mjs (docs/traces.md).

import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { makeRecorder, sortedJson } from "./src/record.mjs";

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

const Recorder = makeRecorder({ BaseCheckpointSaver, WRITES_IDX_MAP });

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
