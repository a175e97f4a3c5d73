// Types of the main export (lib/index.mjs).
import type { CheckpointerOptions } from "../vitest.js";

export type { CheckpointerOptions };

/** The kit's JSON report (docs/report-schema.md); only the keys used most are typed. */
export interface Report {
  checkpointer_name: string;
  conformance_level: "FULL" | "BASE+PARTIAL" | "BASE" | "NONE";
  capabilities_passed: number;
  capabilities_detected: number;
  setup_error: string | null;
  warnings: string[];
  tests: { id: string; capability: string; name: string; strength?: string; outcome: string; message: string | null; duration_ms: number }[];
  [key: string]: unknown;
}

/** Runs the catalog once on the initializer module; rejects with a UsageError (one line)
 * on bad input. `code`: 0 conformant, 1 not. */
export function run(initializer: string | URL, options?: CheckpointerOptions): Promise<{ report: Report; code: number; name: string; output: string }>;
/** The binary's flags for these options. */
export function optionArgs(options?: CheckpointerOptions): string[];
/** Checks an initializer module: `{file, name}`, or a UsageError of one line. */
export function checkInitializer(initializer: string | URL): Promise<{ file: string; name: string }>;
/** The binary the launcher runs. */
export function binaryPath(): string;
export class UsageError extends Error {}
export const PLATFORMS: Record<string, string>;
