// Where the savers the JS child serves come from (docs/bridge-protocol.md, "A saver of
// your own (JavaScript)"): a storage gives a fresh storage per case, opens saver
// instances on it and removes it; LangGraph JS's own savers have short names.
//
// An initializer module (`--saver ./initializer.mjs`) exports (as `default`, or as
// `storage` / `createSaver`):
// - the official validation kit's CheckpointerTestInitializer (`createCheckpointer`,
//   optional `beforeAll`, `afterAll`, `destroyCheckpointer`): the same file serves both
//   kits; or
// - a function returning a saver (or a promise of one): called once per case, the storage
//   cannot be reopened, so the kit's durability cases are not implemented; or
// - a storage object: `{ reopenable, setup?(), teardown?(), create?() -> location,
//   open(location) -> saver, close?(saver), destroy?(location) }` (each may be async);
//   with `reopenable: true` the kit also runs its reopen, two-instance and crash cases.

import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { randomUUID } from "node:crypto";

export const POSTGRES_URL_ENV = "CHECKPOINT_POSTGRES_URL";

/** `memory`: MemorySaver, one per case. */
function memoryStorage() {
  return {
    reopenable: false,
    async open() {
      const { MemorySaver } = await import("@langchain/langgraph-checkpoint");
      return new MemorySaver();
    },
  };
}

/** `sqlite`: SqliteSaver.fromConnString on a fresh file per case in the run's work
 * directory, removed after the case. */
function sqliteStorage(workdir) {
  return {
    reopenable: true,
    create() {
      const dir = fs.mkdtempSync(path.join(workdir ?? fs.realpathSync(process.env.TMPDIR ?? "/tmp"), "sqlite-"));
      return path.join(dir, "checkpoints.sqlite");
    },
    async open(location) {
      const { SqliteSaver } = await import("@langchain/langgraph-checkpoint-sqlite");
      return SqliteSaver.fromConnString(location);
    },
    close(saver) {
      saver.db?.close();
    },
    destroy(location) {
      if (location) fs.rmSync(path.dirname(location), { recursive: true, force: true });
    },
  };
}

function postgresUrl() {
  const url = process.env[POSTGRES_URL_ENV] ?? "";
  if (!url) throw new Error(`${POSTGRES_URL_ENV} is not set: js:postgres needs a server URL`);
  return url;
}

/** `cp_bridge_<run token>_`: every child of one host run names its schemas with the token
 * the host gives it (CHECKPOINT_BRIDGE_RUN), so the host can drop those of a run it stops
 * (docs/bridge-protocol.md "Storage"); `cp_bridge_` without a token. */
function schemaPrefix() {
  const token = (process.env.CHECKPOINT_BRIDGE_RUN ?? "").replace(/[^0-9a-f]/g, "").slice(0, 16);
  return token ? `cp_bridge_${token}_` : "cp_bridge_";
}

/** `postgres`: PostgresSaver.fromConnString with a schema of its own per case (the
 * saver's `schema` option), set up once and dropped after the case. The location is the
 * schema's name; the URL comes from CHECKPOINT_POSTGRES_URL. */
function postgresStorage() {
  const admin = async (sql) => {
    const { default: pg } = await import("pg");
    const client = new pg.Client({ connectionString: postgresUrl() });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  const saverOn = async (schema) => {
    const { PostgresSaver } = await import("@langchain/langgraph-checkpoint-postgres");
    return PostgresSaver.fromConnString(postgresUrl(), { schema });
  };
  return {
    reopenable: true,
    async setup() {
      await admin("SELECT 1");
    },
    async create() {
      const schema = `${schemaPrefix()}${randomUUID().replaceAll("-", "").slice(0, 16)}`;
      const saver = await saverOn(schema);
      try {
        await saver.setup();
      } finally {
        await saver.end();
      }
      return schema;
    },
    open: saverOn,
    async close(saver) {
      await saver.end();
    },
    async destroy(schema) {
      if (schema) await admin(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    },
  };
}

export const SHORT_NAMES = { memory: memoryStorage, sqlite: sqliteStorage, postgres: postgresStorage };

function factoryStorage(factory) {
  // A saver class (it has getTuple on its prototype) is constructed, any other function called.
  const isClass = typeof factory.prototype?.getTuple === "function";
  return { reopenable: false, open: () => (isClass ? new factory() : factory()) };
}

/** The official validation kit's CheckpointerTestInitializer
 * (@langchain/langgraph-checkpoint-validation): `beforeAll`/`afterAll` are the lifespan,
 * `createCheckpointer` opens a fresh saver per case, `destroyCheckpointer` closes it. It
 * cannot reopen a storage, so the kit's durability cases are not implemented. */
function validationKitStorage(init) {
  return {
    reopenable: false,
    setup: () => init.beforeAll?.(),
    teardown: () => init.afterAll?.(),
    open: () => init.createCheckpointer(),
    close: (saver) => init.destroyCheckpointer?.(saver),
  };
}

/** The storage `spec` names: a short name, or the path of an initializer module
 * (relative to the current directory). Throws an Error with a one-line reason. */
export async function resolve(spec, workdir) {
  if (Object.prototype.hasOwnProperty.call(SHORT_NAMES, spec)) return SHORT_NAMES[spec](workdir);
  const file = path.resolve(spec);
  if (!fs.existsSync(file)) {
    throw new Error(`unknown saver ${JSON.stringify(spec)}: give one of ${Object.keys(SHORT_NAMES).join(", ")} or the path of an initializer module`);
  }
  let mod;
  try {
    mod = await import(pathToFileURL(file).href);
  } catch (e) {
    throw new Error(`saver ${spec}: cannot import ${file}: ${e?.message ?? e}`);
  }
  const exported = mod.default ?? mod.storage ?? mod.createSaver;
  if (typeof exported === "function") return factoryStorage(exported);
  if (exported && typeof exported.createCheckpointer === "function") return validationKitStorage(exported);
  if (exported && typeof exported.open === "function") return exported;
  throw new Error(`saver ${spec}: the module exports neither a function (default or createSaver) nor a storage object with open()`);
}
