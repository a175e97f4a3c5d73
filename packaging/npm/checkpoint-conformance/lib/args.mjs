// The command line of `npx checkpoint-conformance`: the binary's flags, plus a bare path
// argument, the initializer module, which becomes `--backend js --saver PATH`.

import { UsageError } from "./binary.mjs";

/** The binary's flags that take a value (`checkpoint-conformance --help`). */
const VALUE_FLAGS = new Set([
  "--backend",
  "--saver",
  "--python",
  "--sqlite-path",
  "--postgres-url",
  "--capabilities",
  "--skip",
  "--json",
  "--junit",
  "--progress",
  "--timeout",
  "--repeat",
  "--jobs",
  "--cases",
]);

/** `{args, initializer}`: the binary's arguments, and the initializer module to check
 * first (the bare path, or `--saver` with `--backend js`), or null. */
export function mapArgs(argv) {
  const args = [];
  const positional = [];
  let backend = null;
  let saver = null;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--") {
      positional.push(...argv.slice(i + 1));
      break;
    }
    if (arg.startsWith("-") && arg !== "-") {
      const eq = arg.indexOf("=");
      const name = eq > 0 ? arg.slice(0, eq) : arg;
      let value = eq > 0 ? arg.slice(eq + 1) : undefined;
      args.push(arg);
      if (VALUE_FLAGS.has(name) && value === undefined && i + 1 < argv.length) {
        value = argv[++i];
        args.push(value);
      }
      if (name === "--backend") backend = value ?? null;
      if (name === "--saver") saver = value ?? null;
      continue;
    }
    positional.push(arg);
  }
  if (positional.length > 1) {
    throw new UsageError(`one initializer module at a time, got ${positional.length}: ${positional.join(" ")}`);
  }
  if (positional.length === 1) {
    if (backend !== null || saver !== null) {
      throw new UsageError(`give the initializer either as the argument (${positional[0]}) or with --backend/--saver, not both`);
    }
    return { args: ["--backend", "js", "--saver", positional[0], ...args], initializer: positional[0] };
  }
  if (backend === "js" && saver !== null) return { args, initializer: saver };
  if (backend?.startsWith("js:") && /\.[cm]?js$/.test(backend)) return { args, initializer: backend.slice(3) };
  return { args, initializer: null };
}
