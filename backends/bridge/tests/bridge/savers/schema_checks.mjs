// A JavaScript saver that leaves its config checks to its database schema, as LangGraph
// JS's PostgresSaver does: putWrites without checkpoint_id or checkpoint_ns fails with the
// error pg gives for a NULL in a NOT NULL column (a DatabaseError with SQLSTATE 23502) and
// stores nothing. Everything else is tests/bridge/exact_saver.mjs.

import { ExactSaver } from "../exact_saver.mjs";

/** Shaped like pg's DatabaseError: an Error subclass with the SQLSTATE in `code`. */
class DatabaseError extends Error {
  constructor(message, code) {
    super(message);
    this.name = "error";
    this.code = code;
  }
}

class SchemaChecksSaver extends ExactSaver {
  async putWrites(config, writes, taskId) {
    for (const column of ["checkpoint_ns", "checkpoint_id"]) {
      if (config.configurable[column] == null) {
        throw new DatabaseError(`null value in column "${column}" of relation "checkpoint_writes" violates not-null constraint`, "23502");
      }
    }
    return super.putWrites(config, writes, taskId);
  }
}

export default function createSaver() {
  return new SchemaChecksSaver();
}
