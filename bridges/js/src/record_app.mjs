// Records a user's LangGraph JS application as a trace (docs/traces.md, issue 41): what
// `checkpoint-conformance record --graph ./app.mjs:build ...` runs for a graph module that
// ends in .mjs, .js or .cjs, as the Python recorder (bridges/python/checkpoint_bridge/
// record_app.py) does for a Python module.
//
//     node record_app.mjs --graph ./app.mjs:build --inputs inputs.jsonl --out my-app.json [--app-id ID]
//
// `--graph FILE:EXPORT` names a compiled graph, a function returning one, or a function
// returning a builder (`StateGraph`, compiled here with the recording checkpointer); a
// function that takes one argument is given the checkpointer. LangGraph JS is imported from
// where the graph module finds it (its own node_modules), so the recording runs on the
// user's versions; the recorder wraps that copy's MemorySaver.
//
// The inputs file has one JSON object per line, one action each, as for Python:
// {"invoke": INPUT}, {"resume": VALUE}, {"update_state": {"values": V, "as_node": "node"}},
// {"invoke_from": STEP_OR_ID, "input": INPUT}, {"get_state": {"subgraphs": true}},
// {"get_state_history": {"limit": N, "filter": {...}}}; each may carry "thread_id"
// (default "thread-1"), "config" (more configurable keys) and, on invoke, resume and
// invoke_from, "durability" ("exit", "async", "sync"). A graph that throws is recorded as it
// happened and the run goes on with the next line, each said on stderr.
//
// Exit codes: 0 written; 2 a bad argument or inputs line (one line naming the file and line
// number); 1 the graph could not be imported or built, or made no saver call.

import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

import { makeRecorder, sortedJson } from "./record.mjs";

const USAGE = 2;
const THREAD = "thread-1";
const ACTIONS = ["invoke", "resume", "update_state", "invoke_from", "get_state", "get_state_history"];
const COMMON = ["thread_id", "config", "durability", "input"];
const DURABILITY = ["exit", "async", "sync"];

class BadInput extends Error {}

const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

/** The inputs file as [line number, action, line object], blank lines skipped. */
function parseInputs(path) {
  let text;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    throw new BadInput(`--inputs ${path}: ${e.code === "ENOENT" ? "no such file" : e.message}`);
  }
  const out = [];
  text.split(/\r?\n/).forEach((line, i) => {
    if (!line.trim()) return;
    const where = `${path}:${i + 1}`;
    let obj;
    try {
      obj = JSON.parse(line);
    } catch (e) {
      throw new BadInput(`${where}: not JSON (${e.message})`);
    }
    if (!isObject(obj)) throw new BadInput(`${where}: a line is a JSON object with one of ${ACTIONS.join(", ")}`);
    const keys = Object.keys(obj);
    const unknown = keys.filter((k) => !ACTIONS.includes(k) && !COMMON.includes(k));
    if (unknown.length) {
      throw new BadInput(`${where}: unknown key '${unknown[0]}' (actions: ${ACTIONS.join(", ")}; also ${COMMON.join(", ")})`);
    }
    const actions = keys.filter((k) => ACTIONS.includes(k));
    if (actions.length !== 1) {
      throw new BadInput(`${where}: exactly one action of ${ACTIONS.join(", ")} per line, found ${actions.length}`);
    }
    const action = actions[0];
    const arg = obj[action];
    if (["update_state", "get_state", "get_state_history"].includes(action) && !isObject(arg)) {
      throw new BadInput(`${where}: ${action} takes an object`);
    }
    if (action === "update_state" && (!("values" in arg) || Object.keys(arg).some((k) => k !== "values" && k !== "as_node"))) {
      throw new BadInput(`${where}: update_state takes {"values": ..., "as_node": "node"} (as_node optional)`);
    }
    if (action === "get_state" && Object.keys(arg).some((k) => k !== "subgraphs")) {
      throw new BadInput(`${where}: get_state takes {"subgraphs": true|false}`);
    }
    if (action === "get_state_history" && Object.keys(arg).some((k) => !["limit", "filter", "before"].includes(k))) {
      throw new BadInput(`${where}: get_state_history takes limit, filter and before`);
    }
    if (action === "invoke_from" && !(Number.isInteger(arg) || typeof arg === "string")) {
      throw new BadInput(`${where}: invoke_from takes a step number or a checkpoint_id string`);
    }
    if ("input" in obj && action !== "invoke_from") throw new BadInput(`${where}: \`input\` goes with invoke_from only`);
    if ("durability" in obj && (!["invoke", "resume", "invoke_from"].includes(action) || !DURABILITY.includes(obj.durability))) {
      throw new BadInput(`${where}: durability is one of ${DURABILITY.join(", ")}, on invoke, resume or invoke_from`);
    }
    if (typeof (obj.thread_id ?? THREAD) !== "string" || !isObject(obj.config ?? {})) {
      throw new BadInput(`${where}: thread_id is a string and config an object`);
    }
    out.push([i + 1, action, obj]);
  });
  if (!out.length) throw new BadInput(`${path}: no input lines, so the recording would be empty`);
  return out;
}

/** Package `spec` as the file `from` imports it (its ESM entry), with its version; null
 * when it cannot be found from there. */
async function importFrom(from, spec) {
  const req = createRequire(from);
  let pkgPath;
  try {
    pkgPath = req.resolve(`${spec}/package.json`);
  } catch {
    return null;
  }
  const pkg = JSON.parse(readFileSync(pkgPath, "utf8"));
  let entry = pkg.exports?.["."] ?? pkg.exports ?? pkg.module ?? pkg.main ?? "index.js";
  while (isObject(entry)) entry = entry.import ?? entry.node ?? entry.default;
  const module = await import(pathToFileURL(join(dirname(pkgPath), entry)).href);
  return { module, version: pkg.version, path: pkgPath };
}

/** The compiled graph `--graph FILE:EXPORT` names, with the recorder as its checkpointer,
 * and the LangGraph JS it runs on. */
async function loadGraph(spec) {
  const at = spec.lastIndexOf(":");
  const [file, name] = at > 0 ? [spec.slice(0, at), spec.slice(at + 1)] : [spec, ""];
  if (!file || !name) throw new BadInput(`--graph ${spec}: give FILE:EXPORT (a compiled graph, or a function returning one)`);
  const path = resolve(file);
  if (!existsSync(path)) throw new BadInput(`--graph ${spec}: no such file ${path}`);
  const langgraph = await importFrom(path, "@langchain/langgraph");
  if (!langgraph) {
    throw new Error(`@langchain/langgraph is not found from ${path}: install it where the graph's module finds it`);
  }
  const checkpoint =
    (await importFrom(path, "@langchain/langgraph-checkpoint")) ??
    (await importFrom(langgraph.path, "@langchain/langgraph-checkpoint"));
  if (!checkpoint) throw new Error(`@langchain/langgraph-checkpoint is not found from ${path} or @langchain/langgraph`);
  const Recorder = makeRecorder(checkpoint.module);
  const saver = new Recorder(new checkpoint.module.MemorySaver());
  const module = await import(pathToFileURL(path).href);
  if (!(name in module)) throw new BadInput(`--graph ${spec}: ${basename(path)} exports no ${name}`);
  let graph = module[name];
  if (typeof graph === "function" && typeof graph.invoke !== "function") {
    graph = await (graph.length === 1 ? graph(saver) : graph());
  }
  if (graph && typeof graph.compile === "function" && typeof graph.invoke !== "function") {
    graph = graph.compile({ checkpointer: saver });
  }
  if (!graph || typeof graph.invoke !== "function" || typeof graph.getState !== "function") {
    throw new BadInput(`--graph ${spec}: not a compiled LangGraph graph, a builder, or a function returning one`);
  }
  graph.checkpointer = saver;
  return { graph, saver, Command: langgraph.module.Command, versions: { langgraph, checkpoint } };
}

const configOf = (obj) => ({ configurable: { ...(obj.config ?? {}), thread_id: obj.thread_id ?? THREAD } });

/** The config of the thread's checkpoint at metadata step `at` (the latest of that step) or
 * with id `at`, looked up in the inner saver (not recorded). */
async function from(saver, config, at) {
  for await (const t of saver.inner.list(config)) {
    if ((typeof at === "number" && t.metadata?.step === at) || t.config.configurable.checkpoint_id === at) {
      return t.config;
    }
  }
  throw new Error(`the thread has no checkpoint ${typeof at === "number" ? "at step " : ""}${at}`);
}

/** Runs every line; returns how many threw (each said on stderr). */
async function run({ graph, saver, Command }, lines, path) {
  let threw = 0;
  for (const [n, action, obj] of lines) {
    const config = configOf(obj);
    const opts = (c) => ("durability" in obj ? { ...c, durability: obj.durability } : c);
    const arg = obj[action];
    try {
      if (action === "invoke") await graph.invoke(arg, opts(config));
      else if (action === "resume") await graph.invoke(new Command({ resume: arg }), opts(config));
      else if (action === "update_state") await graph.updateState(config, arg.values, arg.as_node);
      else if (action === "invoke_from") await graph.invoke(obj.input ?? null, opts(await from(saver, config, arg)));
      else if (action === "get_state") await graph.getState(config, { subgraphs: Boolean(arg.subgraphs) });
      else for await (const _ of graph.getStateHistory(config, arg)) void _;
    } catch (e) {
      threw += 1;
      console.error(`record: ${path}:${n}: ${action} threw ${e?.name ?? "Error"}: ${e?.message ?? e} (recorded; going on)`);
    }
  }
  return threw;
}

function parseArgs(argv) {
  const args = {};
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1]];
    const key = { "--graph": "graph", "--inputs": "inputs", "--out": "out", "--app-id": "appId" }[flag];
    if (!key) throw new BadInput(`unknown argument ${flag} (give --graph, --inputs, --out and optionally --app-id)`);
    if (value === undefined) throw new BadInput(`${flag} needs a value`);
    args[key] = value;
  }
  for (const flag of ["graph", "inputs", "out"]) if (!args[flag]) throw new BadInput(`--${flag} is required`);
  return args;
}

async function main(argv) {
  let args;
  let lines;
  let loaded;
  try {
    args = parseArgs(argv);
    lines = parseInputs(args.inputs);
    loaded = await loadGraph(args.graph);
  } catch (e) {
    if (e instanceof BadInput) {
      console.error(`error: ${e.message}`);
      return USAGE;
    }
    console.error(`error: --graph ${args?.graph}: cannot import or build it: ${e?.name ?? "Error"}: ${e?.message ?? e}`);
    return 1;
  }
  const threw = await run(loaded, lines, args.inputs);
  const { saver, versions } = loaded;
  if (!saver.steps.length) {
    console.error("error: the graph made no saver call, so the trace would check nothing");
    return 1;
  }
  const trace = {
    format: "checkpoint-trace/1",
    recorded_with: {
      app_id: args.appId ?? args.graph,
      langgraph: versions.langgraph.version,
      langgraph_checkpoint: versions.checkpoint.version,
    },
    source: `checkpoint-conformance record --graph ${args.graph} --inputs ${basename(args.inputs)} (LangGraph JS)`,
    steps: saver.steps,
  };
  try {
    // Whole or not at all: a temporary file beside --out, renamed over it when complete.
    const tmp = `${args.out}.${process.pid}.tmp`;
    try {
      writeFileSync(tmp, `${sortedJson(trace)}\n`);
      renameSync(tmp, args.out);
    } finally {
      rmSync(tmp, { force: true });
    }
  } catch (e) {
    console.error(`error: --out ${args.out}: cannot write the trace: ${e.message}`);
    return 1;
  }
  const errs = threw ? `, ${threw} line(s) threw` : "";
  console.log(`${args.out}: ${saver.steps.length} steps from ${lines.length} input lines${errs}`);
  return 0;
}

process.exitCode = await main(process.argv.slice(2));
