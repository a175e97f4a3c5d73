// The JavaScript child of the bridge protocol (docs/bridge-protocol.md): newline-delimited
// JSON requests on stdin, answers on stdout, in any order, many in flight.
//
// stdout carries nothing but answers: the real stdout's write is kept for the protocol and
// process.stdout.write and console.log/info/debug go to stderr, so a saver that prints
// cannot break the stream.

import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

import { Num, parse, plain, write } from "./json.mjs";
import { Inexact, WireError, checkpoint, exact, listArguments, runnableConfig, wireConfig, wireHistory, wireTuple } from "./mapping.mjs";
import { resolve } from "./storage.mjs";
import { decodeValue } from "./values.mjs";

const PROTOCOL_VERSION = 1;
const SERVER = "checkpoint-bridge-js 0.1.0";
const SHUTDOWN_GRACE_MS = 10_000;
const PACKAGES = [
  "@langchain/langgraph-checkpoint",
  "@langchain/langgraph-checkpoint-sqlite",
  "@langchain/langgraph-checkpoint-postgres",
  "@langchain/core",
  "better-sqlite3",
  "pg",
];

// The package that defines each short name's saver (storage.mjs's SHORT_NAMES).
const SHORT_NAME_PACKAGES = {
  memory: "@langchain/langgraph-checkpoint",
  sqlite: "@langchain/langgraph-checkpoint-sqlite",
  postgres: "@langchain/langgraph-checkpoint-postgres",
};

// The kit's saver operations as the saver's methods: the method, its arguments from the
// request's `args`, the answer from its result and the saver's serde, and `stream` for a
// method whose result is iterated, not awaited (docs/bridge-protocol.md "Operations"). Adding an operation adds its entry here and
// nothing else in this child.
const OPERATIONS = {
  put: {
    method: "put",
    args: (a) => [runnableConfig(a.config), checkpoint(a.checkpoint), exact(a.metadata, "metadata"), exact(a.new_versions, "new_versions")],
    answer: (result) => wireConfig(result, "the config put returned"),
  },
  put_writes: {
    method: "putWrites",
    args: (a) => [runnableConfig(a.config), a.writes.map(([ch, v]) => [String(ch), decodeValue(v)]), a.task_id, a.task_path],
  },
  get_tuple: { method: "getTuple", args: (a) => [runnableConfig(a.config)], answer: wireTuple },
  list: {
    method: "list",
    // LangGraph's `list` returns an async generator: iterated as it is, not awaited (a
    // saver whose `list` gives a promise fails here, as it would under LangGraph).
    stream: true,
    args: (a) => listArguments(a.thread_id, a.options),
    answer: async (tuples, serde) => {
      if (typeof tuples?.[Symbol.asyncIterator] !== "function" && typeof tuples?.[Symbol.iterator] !== "function") {
        throw new TypeError("saver.list(...) is not a function or its return value is not async iterable");
      }
      const out = [];
      for await (const t of tuples) out.push(await wireTuple(t, serde));
      return out;
    },
  },
  delete_thread: { method: "deleteThread", args: (a) => [a.thread_id] },
  delete_for_runs: { method: "deleteForRuns", args: (a) => [[...a.run_ids]] },
  copy_thread: { method: "copyThread", args: (a) => [a.source, a.target] },
  prune: { method: "prune", args: (a) => [[...a.thread_ids], { strategy: a.strategy }] },
  delta_channel_history: {
    method: "getDeltaChannelHistory",
    args: (a) => [{ config: runnableConfig(a.config), channels: [...a.channels] }],
    answer: wireHistory,
  },
  get_next_version: {
    method: "getNextVersion",
    args: (a) => [a.current == null ? undefined : exact(a.current, "current")],
    answer: (version) => version,
  },
};

// The kit's operation -> the saver's method.
const METHODS = Object.fromEntries(Object.entries(OPERATIONS).map(([op, o]) => [op, o.method]));

class ProtocolError extends Error {}
class Unsupported extends Error {}

// ---- transport -------------------------------------------------------------------

const protoWrite = process.stdout.write.bind(process.stdout);
process.stdout.write = process.stderr.write.bind(process.stderr);
console.log = console.error;
console.info = console.error;
console.debug = console.error;

function send(id, payload) {
  let line;
  try {
    line = `{"id":${id === null ? "null" : id},${payload()}}\n`;
  } catch (e) {
    const message = `the saver's answer cannot be written as JSON: ${describe(e)}`;
    line = `{"id":${id},"error":${JSON.stringify({ kind: "Storage", message })}}\n`;
  }
  protoWrite(line);
}

function sendError(id, kind, message) {
  send(id, () => `"error":${JSON.stringify({ kind, message })}`);
}

/** The kit's error kind for an error a saver threw (docs/bridge-protocol.md, "Errors"). */
function errorKind(e) {
  if (e instanceof Unsupported) return "Unsupported";
  const name = e?.name ?? "";
  const message = String(e?.message ?? "");
  if (name === "NotImplementedError" || /^(method )?not implemented\b/i.test(message)) return "Unsupported";
  if (refusedByDatabase(e)) return "InvalidInput";
  if (e instanceof TypeError || e instanceof RangeError || e instanceof SyntaxError) return "InvalidInput";
  if (e instanceof Error && Object.getPrototypeOf(e) === Error.prototype) return "InvalidInput";
  return "Storage";
}

/** A database's refusal of the data it was given, not a failure of the storage: an error
 * carrying an SQLSTATE `code` of class 22 (data exception: "unsupported Unicode escape
 * sequence") or 23 (integrity constraint violation: "null value in column ... violates
 * not-null constraint"), as pg's DatabaseError does, or an SQLite constraint code
 * (better-sqlite3's SqliteError: SQLITE_CONSTRAINT_NOTNULL). A saver that leaves its
 * checks to its schema refuses a config without checkpoint_id this way. */
function refusedByDatabase(e) {
  const code = e?.code;
  if (typeof code !== "string") return false;
  return /^2[23][0-9A-Z]{3}$/.test(code) || /^SQLITE_CONSTRAINT(_[A-Z]+)?$/.test(code);
}

function describe(e) {
  if (!(e instanceof Error)) return String(e).replace(/\s*\n\s*/g, " ");
  const name = e.constructor?.name && e.constructor.name !== "Error" ? e.constructor.name : e.name || "Error";
  const text = String(e.message ?? "").replace(/\s*\n\s*/g, " ");
  return text ? `${name}: ${text}` : name;
}

// ---- instances -------------------------------------------------------------------

/** Per operation, who answers it: the saver's class (`async`), LangGraph's base class
 * (`base`), or nobody (`none`). */
function methodOwners(saver) {
  const out = {};
  for (const [op, name] of Object.entries(METHODS)) {
    let proto = Object.getPrototypeOf(saver);
    let owner = "none";
    if (Object.prototype.hasOwnProperty.call(saver, name) && typeof saver[name] === "function") owner = "async";
    while (owner === "none" && proto && proto !== Object.prototype) {
      if (Object.prototype.hasOwnProperty.call(proto, name) && typeof proto[name] === "function") {
        owner = proto.constructor?.name === "BaseCheckpointSaver" ? "base" : "async";
      }
      proto = Object.getPrototypeOf(proto);
    }
    out[op] = owner;
  }
  return out;
}

function className(saver) {
  return saver?.constructor?.name ?? typeof saver;
}

const state = { storage: null, instances: new Map(), next: 1 };

async function openInstance(location, caseHandle, owned) {
  const saver = await state.storage.open(location);
  if (saver === null || typeof saver !== "object" || typeof saver.getTuple !== "function") {
    throw new TypeError(`the saver's open gave ${className(saver)}, not a checkpoint saver`);
  }
  const h = state.next;
  state.next += 1;
  const inst = { saver, location, case: caseHandle ?? h, owned, reopened: [], methods: methodOwners(saver) };
  state.instances.set(h, inst);
  return [h, inst];
}

/** LangGraph's padded string version, as its Python savers produce (`"{n:032}.{fraction}"`). */
const PADDED_VERSION = "00000000000000000000000000000002.0.5";

/** Per saver class, what the probe found it lacks. */
const probed = new Map();

/** What this saver lacks beyond `hello`'s declarations, by probing it once per class:
 * `string_versions` when its `getNextVersion` takes the integer 1 but throws on a padded
 * string version (LangGraph JS's `BaseCheckpointSaver` does: "Please override this method to
 * use string versions", a saver that produces integers only); one that throws on integers
 * too declares nothing and is judged by the cases (docs/bridge-protocol.md, "Declared
 * limits"). */
async function probeLacks(saver) {
  const cls = saver.constructor;
  if (!probed.has(cls)) {
    const lacks = [];
    if (typeof saver.getNextVersion === "function") {
      let integers = true;
      try {
        await saver.getNextVersion(1);
      } catch {
        integers = false;
      }
      if (integers) {
        try {
          await saver.getNextVersion(PADDED_VERSION);
        } catch {
          lacks.push("string_versions");
        }
      }
    }
    probed.set(cls, lacks);
  }
  return [...probed.get(cls)];
}

function served(inst) {
  return { class: className(inst.saver), side: "async", methods: inst.methods, ...state.origin };
}

async function leave(h) {
  const inst = state.instances.get(h);
  state.instances.delete(h);
  if (inst && !inst.released && state.storage.close) await state.storage.close(inst.saver);
}

/** Closes an instance's saver and keeps its handle and storage: `reopen` from it and
 * `close` of it (which still removes a case's storage) work, its calls do not. */
async function release(h) {
  const inst = state.instances.get(h);
  if (inst.released) return null;
  inst.released = true;
  if (state.storage.close) await state.storage.close(inst.saver);
  return null;
}

/** Closes an instance; closing a case's own handle also closes the instances reopened
 * from it and removes the case's storage. */
async function close(h) {
  const inst = state.instances.get(h);
  const errors = [];
  const own = inst.owned && inst.case === h;
  for (const x of own ? [...inst.reopened, h] : [h]) {
    try {
      await leave(x);
    } catch (e) {
      errors.push(describe(e));
    }
  }
  if (own && state.storage.destroy) {
    try {
      await state.storage.destroy(inst.location);
    } catch (e) {
      errors.push(describe(e));
    }
  }
  if (errors.length) throw new Error(errors.join("; "));
  return null;
}

/** The versions of LangGraph's packages as the saver sees them: for an initializer module
 * (an absolute path) those its own imports resolve to, from its directory up; for a short
 * name the child's pinned install. */
function packageVersions(saver) {
  const require = createRequire(path.isAbsolute(saver) ? saver : import.meta.url);
  const out = {};
  for (const name of PACKAGES) {
    try {
      const file = require.resolve(`${name}/package.json`);
      out[name] = JSON.parse(fs.readFileSync(file, "utf8")).version;
    } catch {
      // not installed, or its package.json is not exported
    }
  }
  return out;
}

/** Where the served saver comes from (`open`'s `module`, `distribution`, `version`;
 * docs/bridge-protocol.md): for a short name, the LangGraph package that defines it, as the
 * child's pinned install resolves it (`packages`, from packageVersions); for an initializer module, that module's path and the
 * package it belongs to (the nearest package.json with a name, from its directory up), if any. */
function saverOrigin(saver, packages) {
  const short = SHORT_NAME_PACKAGES[saver];
  if (short) {
    return { module: short, distribution: short, ...(packages[short] ? { version: packages[short] } : {}) };
  }
  const module = path.resolve(saver);
  for (let dir = path.dirname(module); ; dir = path.dirname(dir)) {
    try {
      const { name, version } = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"));
      if (typeof name === "string" && name) {
        return { module, distribution: name, ...(typeof version === "string" ? { version } : {}) };
      }
    } catch {
      // no package.json here, or not JSON
    }
    if (path.dirname(dir) === dir) return { module };
  }
}

// ---- operations ------------------------------------------------------------------

async function hello(args) {
  const versions = plain(args.protocol);
  if (!Array.isArray(versions) || !versions.includes(PROTOCOL_VERSION)) {
    throw new ProtocolError(`this child speaks protocol ${PROTOCOL_VERSION}, the host offers ${JSON.stringify(versions)}`);
  }
  if (typeof args.saver !== "string") throw new ProtocolError("hello needs the saver to serve (a short name or a module path)");
  try {
    state.storage = await resolve(args.saver, typeof args.workdir === "string" ? args.workdir : undefined);
  } catch (e) {
    throw new ProtocolError(e.message);
  }
  const packages = packageVersions(args.saver);
  state.origin = saverOrigin(args.saver, packages);
  return {
    protocol: PROTOCOL_VERSION,
    server: SERVER,
    runtime: `node ${process.versions.node}`,
    packages,
    saver: args.saver,
    reopen: Boolean(state.storage.reopenable),
    // What every LangGraph JS saver lacks (docs/bridge-protocol.md, "Declared limits"):
    // its PendingWrite is [taskId, channel, value] (no read returns a path), it holds
    // numbers as JS numbers (no integer beyond 2^53, no 1.0 apart from 1), and its
    // Checkpoint type has no updated_channels.
    lacks: ["task_path_on_reads", "wide_numbers", "updated_channels"],
  };
}

async function dispatch(op, handle, args) {
  if (op === "hello") return hello(args);
  if (op === "ping") return null;
  const storage = state.storage;
  if (!storage) throw new ProtocolError(`${op} before hello`);
  if (op === "setup") return (await storage.setup?.()) ?? null;
  if (op === "teardown") return (await storage.teardown?.()) ?? null;
  if (op === "open") {
    const location = (await storage.create?.()) ?? null;
    let h;
    let inst;
    try {
      [h, inst] = await openInstance(location, null, true);
    } catch (e) {
      await storage.destroy?.(location);
      throw e;
    }
    const lacks = await probeLacks(inst.saver);
    return { handle: h, location, reopen: Boolean(storage.reopenable), saver: served(inst), lacks };
  }
  if (op === "open_at") {
    if (!storage.reopenable) throw new ProtocolError("this saver's storage cannot be opened by location");
    if (typeof args.location !== "string") throw new ProtocolError("open_at needs a string location");
    const [h, inst] = await openInstance(args.location, null, false);
    return { handle: h, saver: served(inst) };
  }
  const inst = typeof handle === "number" ? state.instances.get(handle) : undefined;
  if (!inst) throw new ProtocolError(`${op}: no open handle ${JSON.stringify(handle)}`);
  if (op === "reopen") {
    if (!storage.reopenable) throw new ProtocolError("this saver's storage cannot be reopened");
    const [h, created] = await openInstance(inst.location, inst.case, false);
    state.instances.get(inst.case)?.reopened.push(h);
    return { handle: h, saver: served(created) };
  }
  if (op === "close") return close(handle);
  if (op === "release") return release(handle);
  if (inst.released) throw new ProtocolError(`${op}: handle ${handle} was released`);
  return saverCall(inst, op, args);
}

async function saverCall(inst, op, args) {
  const operation = Object.hasOwn(OPERATIONS, op) ? OPERATIONS[op] : undefined;
  if (operation === undefined) throw new ProtocolError(`unknown operation ${JSON.stringify(op)}`);
  let call;
  try {
    call = operation.args(args ?? {});
  } catch (e) {
    if (e instanceof ProtocolError || e instanceof Inexact) throw e;
    throw new ProtocolError(`${op}: bad arguments: ${describe(e)}`);
  }
  const { saver } = inst;
  const name = operation.method;
  if (typeof saver[name] !== "function") throw new Unsupported(`${className(saver)} has no ${name} method`);
  const result = operation.stream ? saver[name](...call) : await saver[name](...call);
  return operation.answer ? operation.answer(result, saver.serde) : null;
}

async function handle(id, op, h, args) {
  try {
    const result = await dispatch(op, h, args ?? {});
    send(id, () => `"ok":${write(result === undefined ? null : result)}`);
  } catch (e) {
    if (e instanceof ProtocolError) sendError(id, "Protocol", e.message);
    else if (e instanceof WireError) sendError(id, "Storage", `the saver's answer does not fit: ${e.message}`);
    else sendError(id, errorKind(e), describe(e));
  }
}

const inFlight = new Set();

function onLine(text) {
  let req;
  try {
    req = parse(text);
    if (req === null || typeof req !== "object") throw new SyntaxError("not an object");
  } catch (e) {
    sendError(null, "Protocol", `not a request: ${describe(e)}`);
    return;
  }
  const id = req.id instanceof Num ? req.id.value : undefined;
  if (!Number.isSafeInteger(id) || typeof req.op !== "string") {
    sendError(Number.isSafeInteger(id) ? id : null, "Protocol", "not a request: id must be an integer and op a string");
    return;
  }
  const h = req.handle == null ? undefined : plain(req.handle);
  const p = handle(id, req.op, h, req.args);
  inFlight.add(p);
  p.finally(() => inFlight.delete(p));
}

async function shutdown() {
  const cases = [...state.instances.entries()].filter(([h, i]) => i.owned && i.case === h).map(([h]) => h);
  const others = [...state.instances.keys()].filter((h) => !cases.includes(h));
  for (const h of [...others, ...cases]) {
    if (!state.instances.has(h)) continue;
    try {
      await close(h);
    } catch (e) {
      console.error(`checkpoint-bridge: closing handle ${h} at exit: ${describe(e)}`);
    }
  }
}

function main() {
  const expected = process.env.CHECKPOINT_BRIDGE_PARENT_PID;
  if (expected && /^\d+$/.test(expected)) {
    if (process.ppid !== Number(expected)) process.exit(1);
    // The host owns this process: an interrupt reaches it and it ends the child.
    process.on("SIGINT", () => {});
  }
  let pending = [];
  process.stdin.on("data", (chunk) => {
    let start = 0;
    for (let nl = chunk.indexOf(10); nl >= 0; nl = chunk.indexOf(10, start)) {
      pending.push(chunk.subarray(start, nl));
      const line = Buffer.concat(pending).toString("utf8");
      pending = [];
      start = nl + 1;
      if (line.trim()) onLine(line);
    }
    if (start < chunk.length) pending.push(chunk.subarray(start));
  });
  process.stdin.on("end", async () => {
    // stdin closed: the host is done (or gone). Close what is open, bounded in time.
    const timer = setTimeout(() => {
      console.error("checkpoint-bridge: savers did not close in time; exiting");
      process.exit(0);
    }, SHUTDOWN_GRACE_MS);
    await Promise.allSettled([...inFlight]);
    await shutdown();
    clearTimeout(timer);
    // Pools and timers of savers must not keep a child alive after stdin closed.
    process.stdout.write = protoWrite;
    process.stdout.end(() => process.exit(0));
  });
}

main();
