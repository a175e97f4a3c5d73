// One run of the binary on an initializer module, read back as the JSON report
// (docs/report-schema.md).

import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

import { UsageError, binaryEnv, binaryPath } from "./binary.mjs";
import { checkInitializer } from "./initializer.mjs";

function list(value) {
  return Array.isArray(value) ? value.join(",") : String(value);
}

/** The binary's flags for the options of `run` / `describeCheckpointer`. */
export function optionArgs(options = {}) {
  const args = [];
  if (options.capabilities) args.push("--capabilities", list(options.capabilities));
  if (options.cases) args.push("--cases", list(options.cases));
  for (const [cap, reason] of Object.entries(options.skip ?? {})) args.push("--skip", `${cap}=${reason}`);
  if (options.timeout !== undefined) args.push("--timeout", String(options.timeout));
  if (options.jobs !== undefined) args.push("--jobs", String(options.jobs));
  if (options.repeat !== undefined) args.push("--repeat", String(options.repeat));
  if (options.strict) args.push("--strict");
  if (options.failFast) args.push("--fail-fast");
  if (options.junit) args.push("--junit", String(options.junit));
  args.push(...(options.args ?? []));
  return args;
}

/** Runs the kit's catalog on the initializer module `initializer` (a path relative to the
 * current directory, or a file URL) once and resolves to `{report, code, name, output}`:
 * the JSON report, the binary's exit code (0 conformant, 1 not), the initializer's name and
 * the terminal report the binary printed (`options.json`: a path to keep the JSON report
 * at as well). A bad initializer or a usage error rejects with a
 * UsageError of one line; a run that ends with no report rejects with its stderr's end. */
export async function run(initializer, options = {}) {
  const { file, name } = await checkInitializer(initializer);
  const bin = binaryPath();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "checkpoint-conformance-"));
  const json = path.join(dir, "report.json");
  try {
    const args = ["--backend", "js", "--saver", file, "--json", json, "--progress", "quiet", ...optionArgs(options)];
    const { code, stdout, stderr } = await new Promise((resolve, reject) => {
      const child = spawn(bin, args, { env: binaryEnv({ NO_COLOR: "1" }), stdio: ["ignore", "pipe", "pipe"] });
      const out = [];
      const err = [];
      child.stdout.on("data", (d) => out.push(d));
      child.stderr.on("data", (d) => err.push(d));
      child.on("error", (e) => reject(new Error(`cannot run ${bin}: ${e.message}`)));
      child.on("close", (status, signal) =>
        resolve({ code: status ?? 128 + (os.constants.signals[signal] ?? 0), stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() }),
      );
    });
    const lastLine = stderr.trim().split("\n").pop() ?? "";
    if (code === 2) throw new UsageError(lastLine.replace(/^error: /, "") || "usage error");
    if (!fs.existsSync(json)) {
      throw new Error(`checkpoint-conformance exited ${code} without a report: ${stderr.trim().split("\n").slice(-5).join("\n")}`);
    }
    if (options.json) fs.copyFileSync(json, String(options.json));
    const report = JSON.parse(fs.readFileSync(json, "utf8"));
    return { report, code, name, output: stdout + stderr };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
