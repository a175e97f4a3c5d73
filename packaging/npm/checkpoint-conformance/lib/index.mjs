// checkpoint-conformance for node: run the kit's catalog on an initializer module and read
// the JSON report (docs/report-schema.md). The vitest entry is "checkpoint-conformance/vitest".

export { run, optionArgs } from "./run.mjs";
export { checkInitializer } from "./initializer.mjs";
export { binaryPath, UsageError, PLATFORMS } from "./binary.mjs";
