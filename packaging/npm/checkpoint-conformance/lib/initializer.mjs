// The initializer module a user gives: checked here, in node, before the binary runs, so
// that a missing file, a module that does not import or one without an initializer is one
// line and exit 2 (the binary's JS child would make it a failed run instead).
//
// Accepted, as the kit's JS child accepts them (docs/bridge-protocol.md, "The JavaScript
// child"): a default export (or `storage` / `createSaver`) that is
//   - the official validation kit's CheckpointerTestInitializer: { checkpointerName?,
//     createCheckpointer, destroyCheckpointer?, beforeAll?, afterAll? };
//   - a function returning a saver (or a saver class);
//   - a storage object { reopenable, open(location), ... } (the reopen and crash cases).

import fs from "node:fs";
import path from "node:path";
import { pathToFileURL, fileURLToPath } from "node:url";

import { UsageError } from "./binary.mjs";

const EXTENSIONS = [".mjs", ".js", ".cjs"];

/** The absolute path of an initializer given as a path (relative to the current
 * directory), a file: URL or a URL object. */
export function initializerFile(spec) {
  if (spec instanceof URL) return fileURLToPath(spec);
  if (typeof spec !== "string" || spec === "") {
    throw new UsageError("give the initializer module's path, e.g. ./init.mjs");
  }
  return spec.startsWith("file:") ? fileURLToPath(spec) : path.resolve(spec);
}

function firstLine(e) {
  const text = String(e?.message ?? e);
  return text.split("\n").find((l) => l.trim() !== "") ?? text;
}

/** Checks that `spec` names an initializer module that imports and exports one. Returns
 * `{file, name}` (name: its `checkpointerName`, else the file's name). Throws UsageError
 * with one line otherwise. */
export async function checkInitializer(spec) {
  const shown = spec instanceof URL ? fileURLToPath(spec) : String(spec);
  const file = initializerFile(spec);
  let stat;
  try {
    stat = fs.statSync(file);
  } catch {
    throw new UsageError(`${shown}: no such file (give the initializer module to judge, e.g. npx checkpoint-conformance ./init.mjs)`);
  }
  if (!stat.isFile()) throw new UsageError(`${shown}: not a file (give the initializer module to judge, e.g. ./init.mjs)`);
  if (!EXTENSIONS.some((ext) => file.endsWith(ext))) {
    throw new UsageError(
      `${shown}: the initializer must be a JavaScript module (${EXTENSIONS.join(", ")}); compile a TypeScript one first`,
    );
  }
  let mod;
  try {
    mod = await import(pathToFileURL(file).href);
  } catch (e) {
    throw new UsageError(`${shown} does not import: ${e?.name ?? "Error"}: ${firstLine(e)}`);
  }
  const exported = mod.default ?? mod.storage ?? mod.createSaver;
  const fallback = path.basename(file).replace(/\.[cm]?js$/, "");
  if (typeof exported === "function") return { file, name: exported.name || fallback };
  if (exported && typeof exported === "object") {
    if (typeof exported.createCheckpointer === "function") return { file, name: exported.checkpointerName || fallback };
    if (typeof exported.open === "function") return { file, name: exported.name || fallback };
    if ("checkpointerName" in exported || "createCheckpointer" in exported) {
      throw new UsageError(`${shown}: its default export has no createCheckpointer function (the official kit's initializer format)`);
    }
  }
  throw new UsageError(
    `${shown} exports no initializer: make its default export the official kit's ` +
      `{ checkpointerName, createCheckpointer, destroyCheckpointer?, beforeAll?, afterAll? }, ` +
      `a function returning a saver, or a storage object with open()`,
  );
}
