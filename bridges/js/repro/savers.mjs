// The saver a repro runs against, by name, through LangGraph JS's own API only:
// memory (MemorySaver), sqlite (SqliteSaver on an in-memory database), postgres
// (PostgresSaver on CHECKPOINT_POSTGRES_URL, in a fresh schema it sets up and drops).
import { randomUUID } from "node:crypto";

export async function open(name) {
  if (name === "memory") {
    const { MemorySaver } = await import("@langchain/langgraph-checkpoint");
    return { saver: new MemorySaver(), done: async () => {} };
  }
  if (name === "sqlite") {
    const { SqliteSaver } = await import("@langchain/langgraph-checkpoint-sqlite");
    const saver = SqliteSaver.fromConnString(":memory:");
    return { saver, done: async () => saver.db.close() };
  }
  if (name === "postgres") {
    const url = process.env.CHECKPOINT_POSTGRES_URL;
    if (!url) {
      console.error("SAVER=postgres needs CHECKPOINT_POSTGRES_URL");
      process.exit(2);
    }
    const { PostgresSaver } = await import("@langchain/langgraph-checkpoint-postgres");
    const schema = `repro_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
    const saver = PostgresSaver.fromConnString(url, { schema });
    await saver.setup();
    return {
      saver,
      done: async () => {
        await saver.pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await saver.end();
      },
    };
  }
  console.error(`unknown saver ${JSON.stringify(name)}: memory, sqlite or postgres`);
  process.exit(2);
}

/** Runs `show(saver)` on each saver named in SAVERS (comma-separated) or else `names`;
 * `show` prints what it sees and returns true when the bug is there. A postgres saver
 * without CHECKPOINT_POSTGRES_URL is skipped with a line saying so. Sets the exit code: 1
 * when some saver showed the bug, else 0. */
export async function each(names, show) {
  const wanted = process.env.SAVERS ? process.env.SAVERS.split(",") : names;
  let shown = false;
  for (const name of wanted) {
    if (name === "postgres" && !process.env.CHECKPOINT_POSTGRES_URL) {
      console.log("postgres: skipped (CHECKPOINT_POSTGRES_URL is not set)");
      continue;
    }
    const { saver, done } = await open(name);
    try {
      const bug = await show(saver, name);
      console.log(`${name}: ${bug ? "BUG PRESENT" : "bug absent"}`);
      shown ||= bug;
    } finally {
      await done();
    }
  }
  process.exitCode = shown ? 1 : 0;
}
