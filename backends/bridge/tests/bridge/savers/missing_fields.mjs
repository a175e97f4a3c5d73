// A JavaScript saver with the two known bugs of a config field that is missing
// (issue 35): it spells a missing `thread_id` as the string "undefined" when it reads, so a
// read without a thread finds the thread named "undefined"; and it files writes without a
// `checkpoint_ns` under the namespace "undefined", which no read looks up, so they are
// acknowledged and lost. Everything else is tests/bridge/exact_saver.mjs.

import { ExactSaver } from "../exact_saver.mjs";

class MissingFieldsSaver extends ExactSaver {
  async getTuple(config) {
    const c = config.configurable;
    return super.getTuple({ configurable: { ...c, thread_id: `${c.thread_id}` } });
  }

  async putWrites(config, writes, taskId) {
    const c = config.configurable;
    return super.putWrites({ configurable: { ...c, checkpoint_ns: `${c.checkpoint_ns}` } }, writes, taskId);
  }
}

export default function createSaver() {
  return new MissingFieldsSaver();
}
