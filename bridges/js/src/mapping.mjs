// The kit's contract types in their wire form <-> LangGraph JS's shapes
// (docs/bridge-protocol.md, "Mapping to LangGraph's API"). Wire objects come from
// json.mjs's `parse` (numbers as `Num`); everything handed to a saver is plain JS.

import { Num, plain } from "./json.mjs";
import { decodeValue, encodeValue } from "./values.mjs";

/** A request or an answer that does not fit the protocol's shapes. */
export class WireError extends Error {}

/** A number in metadata or a channel version that no JS number holds exactly (an integer
 * beyond 2^53, a float spelled `1.0`): LangGraph JS's runtime cannot hand it to a saver,
 * so the call is refused (InvalidInput) instead of passing a different number. */
export class Inexact extends RangeError {
  get name() {
    return "Inexact";
  }
}

/** `plain(v)`, refusing a number a JS number does not hold exactly. */
export function exact(v, what) {
  if (v instanceof Num) {
    // A float literal comes back as a float unless the double is a safe integer (then it
    // would come back as an integer); an integer literal needs a safe integer.
    const float = /[.eE]/.test(v.raw);
    const integral = Number.isSafeInteger(v.value) && !Object.is(v.value, -0);
    if (!Number.isFinite(v.value) || float === integral) {
      throw new Inexact(`${what}: the number ${v.raw} has no exact JavaScript number (LangGraph JS holds numbers as doubles)`);
    }
    return v.value;
  }
  if (Array.isArray(v)) return v.map((x, i) => exact(x, `${what}[${i}]`));
  if (v !== null && typeof v === "object") {
    const out = {};
    for (const k of Object.keys(v)) {
      Object.defineProperty(out, k, { value: exact(v[k], `${what}.${k}`), enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  return v;
}

function str(v, what) {
  if (typeof v !== "string") throw new WireError(`${what} must be a string, got ${v === null ? "null" : typeof v}`);
  return v;
}

function obj(v, what) {
  if (v === null || typeof v !== "object" || Array.isArray(v)) throw new WireError(`${what} must be an object`);
  return v;
}

/** A kit config as a RunnableConfig: everything under `configurable`, each field only when
 * the request has it (a missing `thread_id` or `checkpoint_ns` stays missing, as LangGraph
 * JS's runtime would pass it: the saver decides what that means, not the child). */
export function runnableConfig(wire) {
  obj(wire, "config");
  const configurable = {};
  for (const key of ["thread_id", "checkpoint_ns", "checkpoint_id"]) {
    if (wire[key] != null) configurable[key] = str(wire[key], `config.${key}`);
  }
  return { configurable };
}

/** A RunnableConfig a saver returned, as a kit config: a missing `thread_id` is the kit's
 * empty one (no thread), a missing `checkpoint_ns` the root, so the case judges what came
 * back (a saver answering a read without a thread with the config it was given). */
export function wireConfig(config, what) {
  const c = config?.configurable;
  if (c === null || typeof c !== "object") throw new WireError(`${what} has no 'configurable' object`);
  const out = { thread_id: c.thread_id ?? "", checkpoint_ns: c.checkpoint_ns ?? "" };
  if (c.checkpoint_id != null) out.checkpoint_id = c.checkpoint_id;
  for (const [k, v] of Object.entries(out)) {
    if (typeof v !== "string") throw new WireError(`${what}: configurable.${k} is ${typeof v} ${String(v)}, not a string`);
  }
  return out;
}

function versions(wire, what) {
  return exact(obj(wire, what), what);
}

/** A kit checkpoint as LangGraph JS's Checkpoint; channel values as the runtime hands
 * them. `updated_channels` is passed along (LangGraph JS's Checkpoint type has no such
 * field; a saver may keep it or drop it). */
export function checkpoint(wire) {
  obj(wire, "checkpoint");
  const values = {};
  for (const [k, v] of Object.entries(obj(wire.channel_values, "checkpoint.channel_values"))) values[k] = decodeValue(v);
  const seen = {};
  for (const [k, v] of Object.entries(obj(wire.versions_seen, "checkpoint.versions_seen"))) {
    seen[k] = versions(v, `checkpoint.versions_seen.${k}`);
  }
  const cp = {
    v: plain(wire.v),
    id: str(wire.id, "checkpoint.id"),
    ts: plain(wire.ts),
    channel_values: values,
    channel_versions: versions(wire.channel_versions, "checkpoint.channel_versions"),
    versions_seen: seen,
  };
  if (wire.updated_channels != null) cp.updated_channels = plain(wire.updated_channels);
  return cp;
}

async function wireCheckpoint(cp, serde) {
  const values = {};
  for (const [k, v] of Object.entries(cp.channel_values ?? {})) values[k] = await encodeValue(v, serde);
  return {
    v: cp.v,
    id: cp.id,
    ts: cp.ts ?? "",
    channel_values: values,
    channel_versions: { ...(cp.channel_versions ?? {}) },
    versions_seen: { ...(cp.versions_seen ?? {}) },
    updated_channels: cp.updated_channels ?? null,
  };
}

/** LangGraph JS's pending write `[taskId, channel, value]` in the kit's form. Its read API
 * returns no task path, so it is always "". */
export async function wireWrite(write, serde) {
  if (!Array.isArray(write) || write.length < 3) throw new WireError("a pending write is not [taskId, channel, value]");
  const [taskId, channel, value] = write;
  return { task_id: taskId, task_path: "", channel, value: await encodeValue(value, serde) };
}

/** A CheckpointTuple in the kit's form (undefined is null). */
export async function wireTuple(t, serde) {
  if (t == null) return null;
  const writes = [];
  for (const w of t.pendingWrites ?? []) writes.push(await wireWrite(w, serde));
  return {
    config: wireConfig(t.config, "tuple.config"),
    checkpoint: await wireCheckpoint(t.checkpoint, serde),
    metadata: t.metadata ?? {},
    parent_config: t.parentConfig ? wireConfig(t.parentConfig, "tuple.parentConfig") : null,
    pending_writes: writes,
  };
}

/** The kit's `list(thread_id, options)` as `list(config, {filter, before, limit})`: no
 * `checkpoint_ns` in `configurable` means every namespace. */
export function listArguments(threadId, options) {
  obj(options, "list options");
  const configurable = { thread_id: str(threadId, "thread_id") };
  if (options.checkpoint_ns != null) configurable.checkpoint_ns = str(options.checkpoint_ns, "options.checkpoint_ns");
  if (options.checkpoint_id != null) configurable.checkpoint_id = str(options.checkpoint_id, "options.checkpoint_id");
  const opts = {};
  const filter = options.filter == null ? null : exact(options.filter, "options.filter");
  if (filter && Object.keys(filter).length > 0) opts.filter = filter;
  if (options.before != null) opts.before = { configurable: { checkpoint_id: str(options.before, "options.before") } };
  if (options.limit != null) opts.limit = plain(options.limit);
  return [{ configurable }, opts];
}

/** `getDeltaChannelHistory`'s mapping in the kit's form: per channel `writes` and, only
 * when the saver gave one, `seed`. */
export async function wireHistory(history, serde) {
  const out = {};
  for (const [ch, entry] of Object.entries(history ?? {})) {
    const writes = [];
    for (const w of entry?.writes ?? []) writes.push(await wireWrite(w, serde));
    const item = { writes };
    if (entry && Object.prototype.hasOwnProperty.call(entry, "seed")) item.seed = await encodeValue(entry.seed, serde);
    out[ch] = item;
  }
  return out;
}
