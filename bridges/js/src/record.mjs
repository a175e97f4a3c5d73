// The recording saver of the JS recorders (traces/README.md, docs/traces.md, issue 41): it
// wraps a LangGraph JS saver, passes every call through and keeps each one as a step of a
// trace in the kit's format checkpoint-trace/1 (docs/trace-format.md). Used by
// bridges/js/record_traces.mjs (the shipped traces) and src/record_app.mjs (a user's app).
//
// As the Python recorder (bridges/python/checkpoint_bridge/record.py): every value, on the
// way in and out, is the saver's own `serde.dumpsTyped(value)` (tag and bytes); pending
// writes are in the contract's order (task_path, task_id, index), each with the task_path
// its putWrites was given; getNextVersion is passed through, not recorded. One choice more
// than the Python recorder: a read's checkpoint keeps only the channels of its
// channel_versions (see Recorder.checkpoint).
//
// The LangGraph JS classes come from the caller (`makeRecorder`), so that the recorder is
// built on the same copy of @langchain/langgraph-checkpoint as the graph it records.

/** `config.configurable` in the trace's form: thread_id, checkpoint_ns, checkpoint_id. */
export function wireConfig(config) {
  const c = config?.configurable ?? {};
  const out = { thread_id: c.thread_id, checkpoint_ns: c.checkpoint_ns ?? "" };
  if (c.checkpoint_id != null) out.checkpoint_id = c.checkpoint_id;
  return out;
}

/** The recording saver's class, on `BaseCheckpointSaver` and `WRITES_IDX_MAP` of the
 * caller's @langchain/langgraph-checkpoint: `new Recorder(inner)` records `inner`'s calls in
 * `.steps`. */
export function makeRecorder({ BaseCheckpointSaver, WRITES_IDX_MAP }) {
  return class Recorder extends BaseCheckpointSaver {
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
}

/** `v` as JSON with sorted keys, one space of indent a level (stable diffs when re-recorded). */
export function sortedJson(v, indent = "") {
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
