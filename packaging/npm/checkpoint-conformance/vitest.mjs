// The vitest entry: one test per case of the kit's catalog.
//
//   // conformance.test.mjs
//   import { describeCheckpointer } from "checkpoint-conformance/vitest";
//   describeCheckpointer("./init.mjs");          // or new URL("./init.mjs", import.meta.url)
//
// While vitest collects the file, the binary runs the whole catalog once on the
// initializer (with --json); then each case is one test named by its id
// (`put::returns_config_of_stored_checkpoint`): passed passes; failed fails with the kit's
// message; not run, not implemented or skipped is skipped with the reason; "passed, not
// strict" (a SHOULD rule) passes, and fails under `strict: true`. A bad initializer fails
// the file with one line.

import { describe, it } from "vitest";

import { run } from "./lib/run.mjs";

class ConformanceFailure extends Error {
  constructor(message) {
    super(message);
    this.name = "ConformanceFailure";
    // The kit's message says which call and what differed; a stack into this file does not.
    this.stack = `${this.name}: ${message}`;
  }
}

/** Declares a vitest suite with one test per case of the catalog run on `initializer`.
 * Options: `name` (the suite's title; default the initializer's checkpointerName),
 * `capabilities`, `cases`, `skip` ({capability: reason}), `timeout` (seconds per case),
 * `jobs`, `repeat`, `strict`, `failFast`, `json` and `junit` (paths to keep the kit's JSON
 * and JUnit reports at), `args` (more flags). */
export function describeCheckpointer(initializer, options = {}) {
  const title = options.name ?? (initializer instanceof URL ? initializer.pathname.split("/").pop() : String(initializer));
  describe(title, async () => {
    const { report, name } = await run(initializer, options);
    const strict = Boolean(report.strict);
    console.log(
      `checkpoint-conformance: ${name}: ${report.conformance_level} (${report.capabilities_passed}/${report.capabilities_detected}), ` +
        `${report.tests.length} cases in ${(report.duration_ms / 1000).toFixed(1)} s`,
    );
    for (const w of report.warnings ?? []) console.warn(`checkpoint-conformance: warning: ${w}`);
    if (report.setup_error) {
      it("lifespan::setup", () => {
        throw new ConformanceFailure(`the lifespan setup failed: ${report.setup_error}`);
      });
    }
    for (const t of report.tests) {
      switch (t.outcome) {
        case "passed":
          it(t.id, () => {});
          break;
        case "not_strict":
          it(t.id, () => {
            if (strict) throw new ConformanceFailure(`SHOULD rule failed (strict): ${t.message}`);
          });
          break;
        case "failed":
          it(t.id, () => {
            throw new ConformanceFailure(t.message ?? "failed");
          });
          break;
        default:
          it(t.id, (ctx) => {
            // The kit's reason: "not run: needs put_writes, not implemented", "prune is
            // not implemented: ...", "not selected", or the reason given to skip.
            ctx.skip(t.message || t.outcome.replace("_", " "));
          });
      }
    }
  });
}
