// Where the kit's binary is, and how it is run from node.
//
// The binary comes in a per-platform package, an optional dependency of this one (the
// layout of esbuild and biome): npm installs only the package whose `os`/`cpu`/`libc`
// match the machine. docs/npm-package.md lists the platforms.

import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

/** A bad input or a missing piece: the front end prints `error: <message>` and exits 2. */
export class UsageError extends Error {
  constructor(message) {
    super(message);
    this.name = "UsageError";
    // One line wherever it shows (vitest prints a failed file's error with its stack).
    this.stack = `${this.name}: ${message}`;
  }
}

/** The platform packages, by `${process.platform}-${process.arch}`; only these are built. */
export const PLATFORMS = {
  "linux-x64": "@checkpoint-conformance/linux-x64",
};

/** The environment variable naming another binary (a development build), as for the wheel. */
export const BINARY_ENV = "CHECKPOINT_KIT_BINARY";

/** The binary to run: $CHECKPOINT_KIT_BINARY, else the one in this platform's package. */
export function binaryPath() {
  const override = process.env[BINARY_ENV];
  if (override) {
    if (!fs.existsSync(override)) throw new UsageError(`${BINARY_ENV}=${override}: no such file`);
    return override;
  }
  const platform = `${process.platform}-${process.arch}`;
  const pkg = PLATFORMS[platform];
  if (!pkg) {
    throw new UsageError(
      `checkpoint-conformance has no binary for ${platform} yet (built for: ${Object.keys(PLATFORMS).join(", ")}); ` +
        `build one from the repository (cargo install --locked --path cli) and set ${BINARY_ENV} to it`,
    );
  }
  const require = createRequire(import.meta.url);
  let dir;
  try {
    dir = path.dirname(require.resolve(`${pkg}/package.json`));
  } catch {
    throw new UsageError(
      `the platform package ${pkg} is not installed: it is an optional dependency of checkpoint-conformance ` +
        `(reinstall without --omit=optional / --no-optional)`,
    );
  }
  const bin = path.join(dir, "bin", process.platform === "win32" ? "checkpoint-conformance.exe" : "checkpoint-conformance");
  if (!fs.existsSync(bin)) throw new UsageError(`${pkg} has no binary at ${bin} (a broken install: reinstall it)`);
  return bin;
}

/** The environment for the binary: its bridge runs the JS child with this very node. */
export function binaryEnv(extra = {}) {
  const env = { ...process.env, ...extra };
  if (!env.CHECKPOINT_BRIDGE_NODE) env.CHECKPOINT_BRIDGE_NODE = process.execPath;
  return env;
}
