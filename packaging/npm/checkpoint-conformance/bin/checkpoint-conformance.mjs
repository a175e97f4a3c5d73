#!/usr/bin/env node
// `npx checkpoint-conformance ./init.mjs [flags]`: judges the saver of an initializer module
// (the official JS validation kit's format) with the kit's binary, as
// `checkpoint-conformance --backend js --saver ./init.mjs [flags]`; any other command line
// goes to the binary as it is (`npx checkpoint-conformance --help`). Exit codes are the
// binary's: 0 conformant, 1 not, 2 a usage error (one line `error: ...`).

import { spawn } from "node:child_process";
import os from "node:os";

import { mapArgs } from "../lib/args.mjs";
import { UsageError, binaryEnv, binaryPath } from "../lib/binary.mjs";
import { checkInitializer } from "../lib/initializer.mjs";

async function main() {
  const { args, initializer } = mapArgs(process.argv.slice(2));
  if (initializer !== null) await checkInitializer(initializer);
  const bin = binaryPath();
  const child = spawn(bin, args, { stdio: "inherit", env: binaryEnv() });
  // The binary cleans up at SIGINT/SIGTERM/SIGHUP and exits 128 + the signal: pass the
  // signal on and wait for it (a Ctrl-C reaches both processes; a repeated one is fine).
  for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) {
    process.on(sig, () => {
      if (child.exitCode === null) child.kill(sig);
    });
  }
  const code = await new Promise((resolve) => {
    child.on("error", (e) => {
      console.error(`error: cannot run ${bin}: ${e.message}`);
      resolve(2);
    });
    child.on("exit", (status, signal) => resolve(status ?? 128 + (os.constants.signals[signal] ?? 0)));
  });
  process.exit(code);
}

main().catch((e) => {
  if (e instanceof UsageError) {
    console.error(`error: ${e.message}`);
    process.exit(2);
  }
  console.error(`error: ${e?.stack ?? e}`);
  process.exit(2);
});
