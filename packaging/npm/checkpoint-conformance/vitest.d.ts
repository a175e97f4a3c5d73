// Types of the vitest entry (vitest.mjs).

export interface CheckpointerOptions {
  /** The suite's title; default the initializer's path. */
  name?: string;
  /** Run only these capabilities (put, put_writes, get_tuple, list, delete_thread, ...). */
  capabilities?: string | string[];
  /** Run only these cases, by id (`npx checkpoint-conformance --list-cases`). */
  cases?: string | string[];
  /** Capabilities to skip, with the reason shown on their cases. */
  skip?: Record<string, string>;
  /** Per-case time limit in seconds (default 30). */
  timeout?: number;
  /** Cases run at once (default: the number of CPUs). */
  jobs?: number;
  /** Run every case this many times; a case whose runs disagree fails. */
  repeat?: number;
  /** Judge the SHOULD rules too: "passed, not strict" fails. */
  strict?: boolean;
  /** Stop at the first failed case; the rest are skipped. */
  failFast?: boolean;
  /** Keep the kit's JSON report (docs/report-schema.md) at this path. */
  json?: string;
  /** Write the kit's JUnit XML report to this path. */
  junit?: string;
  /** More flags for the binary. */
  args?: string[];
}

/** Declares a vitest suite with one test per case of the kit's catalog, run once on the
 * initializer module (a path from the current directory, or a file URL). */
export function describeCheckpointer(initializer: string | URL, options?: CheckpointerOptions): void;
