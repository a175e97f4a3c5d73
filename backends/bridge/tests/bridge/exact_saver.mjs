// A JavaScript saver that keeps exactly what it is given (structuredClone, no serializer),
// for the bridge's own value test: whatever comes back changed was changed by the JS
// child's mapping, not by a saver. An initializer module (docs/bridge-protocol.md, "A
// saver of your own (JavaScript)"): the default export is called once per case.

export class ExactSaver {
  constructor() {
    this.checkpoints = new Map(); // key -> {checkpoint, metadata, parent}
    this.writes = new Map(); // key -> [[taskId, channel, value]]
  }

  key(c) {
    return JSON.stringify([c.thread_id, c.checkpoint_ns ?? "", c.checkpoint_id]);
  }

  async put(config, checkpoint, metadata) {
    const c = config.configurable;
    const at = { ...c, checkpoint_id: checkpoint.id };
    this.checkpoints.set(this.key(at), structuredClone({ checkpoint, metadata, parent: c.checkpoint_id }));
    return { configurable: { thread_id: c.thread_id, checkpoint_ns: c.checkpoint_ns ?? "", checkpoint_id: checkpoint.id } };
  }

  async putWrites(config, writes, taskId) {
    const k = this.key(config.configurable);
    const list = this.writes.get(k) ?? [];
    for (const [channel, value] of writes) list.push(structuredClone([taskId, channel, value]));
    this.writes.set(k, list);
  }

  async getTuple(config) {
    const c = config.configurable;
    let id = c.checkpoint_id;
    if (!id) {
      const prefix = JSON.stringify([c.thread_id, c.checkpoint_ns ?? ""]).slice(0, -1);
      const ids = [...this.checkpoints.keys()].filter((k) => k.startsWith(prefix)).map((k) => JSON.parse(k)[2]);
      id = ids.sort().at(-1);
    }
    const at = { thread_id: c.thread_id, checkpoint_ns: c.checkpoint_ns ?? "", checkpoint_id: id };
    const stored = this.checkpoints.get(this.key(at));
    if (!stored) return undefined;
    const { checkpoint, metadata, parent } = structuredClone(stored);
    return {
      config: { configurable: at },
      checkpoint,
      metadata,
      parentConfig: parent ? { configurable: { ...at, checkpoint_id: parent } } : undefined,
      pendingWrites: structuredClone(this.writes.get(this.key(at)) ?? []),
    };
  }

  async *list(config) {
    const c = config.configurable;
    const ids = [...this.checkpoints.keys()].map((k) => JSON.parse(k)).filter(([t]) => t === c.thread_id);
    ids.sort((a, b) => (a[2] < b[2] ? 1 : -1));
    for (const [thread_id, checkpoint_ns, checkpoint_id] of ids) {
      yield await this.getTuple({ configurable: { thread_id, checkpoint_ns, checkpoint_id } });
    }
  }

  async deleteThread(threadId) {
    for (const k of [...this.checkpoints.keys()]) if (JSON.parse(k)[0] === threadId) this.checkpoints.delete(k);
    for (const k of [...this.writes.keys()]) if (JSON.parse(k)[0] === threadId) this.writes.delete(k);
  }
}

export default function createSaver() {
  return new ExactSaver();
}
