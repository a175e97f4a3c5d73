#!/usr/bin/env bash
# CI check of the npm packages (issue 37): packs them from the binary `cargo build` already
# made (target/debug/checkpoint-conformance; nothing is compiled here), installs the two
# tarballs into a fresh project with no cargo on PATH, beside @langchain/langgraph-checkpoint
# (the version bridges/js/package-lock.json pins) and vitest, and runs, as a JS user would:
#   (a) `npx checkpoint-conformance ./init.mjs` on LangGraph JS's MemorySaver, the
#       initializer in the official JS validation kit's format (checkpointerName,
#       createCheckpointer, destroyCheckpointer, beforeAll, afterAll): a report with a
#       level, exit 0 or 1 (MemorySaver's known bugs fail cases: docs/langgraph-savers.md,
#       "JavaScript savers"), at least 140 cases run, the lifespan hooks called;
#   (b) the vitest entry: one test per case of the catalog (`--list-cases`), the failed
#       ones failing with the kit's message, the others passed or skipped with the reason;
#   (c) bad input: a missing initializer, one that does not import, one without an
#       initializer export, two of them: each one line `error: ...` and exit 2; and the
#       vitest entry on a missing export fails the file with that line.
# Prints each step's time and the time from `npm install` to the verdict; each run of the
# catalog is bounded by `timeout 600` (MemorySaver is slow on 16 MiB values, J-B2; a run
# takes under a minute here, so 10 minutes means something is wrong).
# Everything it makes is in one mktemp directory, removed on exit.
#
# Usage: packaging/npm/check.sh [BINARY]   (default target/debug/checkpoint-conformance,
# after `cargo build`; needs node 20+ and npm with access to the npm registry)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
binary="${1:-$root/target/debug/checkpoint-conformance}"
vitest_pin="vitest@3.2.7"
work="$(mktemp -d "${TMPDIR:-/tmp}/checkpoint-conformance-npmcheck.XXXXXX")"
trap 'rm -rf "$work"' EXIT
fail() { echo "packaging/npm/check.sh: FAILED: $*" >&2; exit 1; }
since() { echo "$(($(date +%s) - $1)) s"; }
[ -x "$binary" ] || fail "$binary: no binary (run cargo build -p checkpoint-conformance first)"

# The versions the kit's own JS child pins (its package-lock.json): the user's project
# gets the same LangGraph packages.
pinned() {
  node -e 'const l = require(process.argv[1]).packages; console.log(l["node_modules/" + process.argv[2]].version)' \
    "$root/bridges/js/package-lock.json" "$1"
}
checkpoint_pin="@langchain/langgraph-checkpoint@$(pinned @langchain/langgraph-checkpoint)"
core_pin="@langchain/core@$(pinned @langchain/core)"

echo "== pack (packaging/npm/pack.sh, the binary of cargo build, stripped)"
t=$(date +%s)
mapfile -t tarballs < <("$root/packaging/npm/pack.sh" "$binary" "$work/tarballs")
ls -l "${tarballs[@]}"
has() { # tarball files...
  local listing
  listing="$(tar -tzf "$1")"
  for f in "${@:2}"; do grep -qx "package/$f" <<<"$listing" || fail "$1 has no $f"; done
}
has "${tarballs[0]}" bin/checkpoint-conformance package.json
has "${tarballs[1]}" bin/checkpoint-conformance.mjs lib/run.mjs lib/index.d.ts vitest.mjs vitest.d.ts README.md package.json
echo "pack: $(since "$t")"

# PATH without cargo or rustc: the user has no Rust.
clean_path=""
IFS=: read -r -a dirs <<<"$PATH"
for d in "${dirs[@]}"; do
  [ -n "$d" ] && [ ! -e "$d/cargo" ] && [ ! -e "$d/rustc" ] && clean_path="${clean_path:+$clean_path:}$d"
done
export PATH="$clean_path" XDG_CACHE_HOME="$work/cache" NO_COLOR=1
unset CHECKPOINT_KIT_BINARY CHECKPOINT_BRIDGE_NODE CHECKPOINT_BRIDGE_NPM CARGO_TARGET_DIR NODE_PATH
! command -v cargo >/dev/null || fail "cargo is still on PATH: $(command -v cargo)"
project="$work/project"
mkdir -p "$project"
cd "$project"

echo "== fresh project, no cargo on PATH: npm install the two tarballs, $checkpoint_pin, $core_pin, $vitest_pin"
t0=$(date +%s)
npm init -y >/dev/null
npm install --no-audit --no-fund --loglevel=error "${tarballs[@]}" "$checkpoint_pin" "$core_pin" "$vitest_pin"
installed="$(node -e 'import("checkpoint-conformance").then((m) => console.log(m.binaryPath()))')"
case "$installed" in
  "$project"/node_modules/@checkpoint-conformance/linux-x64/bin/checkpoint-conformance) echo "binary: $installed" ;;
  *) fail "the launcher does not run the platform package's binary: $installed" ;;
esac
echo "npm install: $(since "$t0")"

# LangGraph JS's MemorySaver in the official JS validation kit's initializer format, every
# hook used; afterAll leaves a note of what the hooks saw.
cat >init.mjs <<'EOF'
import fs from "node:fs";
import { MemorySaver } from "@langchain/langgraph-checkpoint";

const seen = { beforeAll: 0, created: 0, destroyed: 0 };

export default {
  checkpointerName: "MemorySaver",
  beforeAll() {
    seen.beforeAll += 1;
  },
  afterAll() {
    fs.writeFileSync(new URL("./hooks.json", import.meta.url), JSON.stringify(seen));
  },
  async createCheckpointer() {
    seen.created += 1;
    return new MemorySaver();
  },
  destroyCheckpointer() {
    seen.destroyed += 1;
  },
};
EOF

echo "== (a) npx checkpoint-conformance ./init.mjs"
t=$(date +%s)
rc=0
timeout 600 npx checkpoint-conformance ./init.mjs --json report.json >run.out 2>run.err || rc=$?
echo "npx checkpoint-conformance ./init.mjs: exit $rc, $(since "$t")"
grep -aE "Checkpointer Validation|Judged through|Tests:|Result:" run.out || true
[ "$rc" -le 1 ] || { tail -20 run.out run.err; fail "npx checkpoint-conformance ./init.mjs exited $rc"; }
node - <<'EOF' || fail "the report of (a)"
const fs = require("node:fs");
const r = JSON.parse(fs.readFileSync("report.json", "utf8"));
const ran = r.tests.filter((t) => ["passed", "not_strict", "failed"].includes(t.outcome)).length;
const pkgs = r.facts["bridge.packages"] ?? {};
console.log(`report: ${r.checkpointer_name} level ${r.conformance_level}, cases run ${ran}, ` +
  `bridge.class ${r.facts["bridge.class"]}, @langchain/langgraph-checkpoint ${pkgs["@langchain/langgraph-checkpoint"]}`);
if (!r.conformance_level || ran < 140) process.exit(1);
if (r.facts["bridge.class"] !== "MemorySaver") process.exit(1);
const own = JSON.parse(fs.readFileSync("node_modules/@langchain/langgraph-checkpoint/package.json", "utf8")).version;
if (pkgs["@langchain/langgraph-checkpoint"] !== own) { console.error(`the child used ${pkgs["@langchain/langgraph-checkpoint"]}, the project has ${own}`); process.exit(1); }
const hooks = JSON.parse(fs.readFileSync("hooks.json", "utf8"));
console.log(`initializer hooks: ${JSON.stringify(hooks)}`);
if (hooks.beforeAll < 1 || hooks.created < 1 || hooks.destroyed < 1) process.exit(1);
EOF
# The kit's own pinned packages were not installed (no npm ci): the saver ran on the project's.
! ls -d "$XDG_CACHE_HOME"/checkpoint-conformance/js/src-* >/dev/null 2>&1 ||
  fail "the run installed the kit's pinned JS packages (npm ci): an initializer needs none"

echo "== (b) the vitest entry: one test per case"
cat >conformance.test.mjs <<'EOF'
import { describeCheckpointer } from "checkpoint-conformance/vitest";

describeCheckpointer("./init.mjs", { json: "vitest-report.json" });
EOF
t=$(date +%s)
rc=0
timeout 600 npx vitest run --reporter=verbose --reporter=json --outputFile.json=vitest.json conformance.test.mjs >vitest.out 2>&1 || rc=$?
echo "npx vitest run: exit $rc, $(since "$t")"
grep -aE "^ +(✓|×|↓) " vitest.out | head -3 || true
grep -aE "FAIL .*put_writes::" vitest.out | head -1 || true
grep -a -A1 -E "FAIL .*put_writes::" vitest.out | sed -n 2p | cut -c1-200 || true
grep -aE "Tests +[0-9]" vitest.out || true
[ "$rc" -le 1 ] || { tail -30 vitest.out; fail "vitest exited $rc"; }
npx checkpoint-conformance --list-cases >cases.txt
node - <<'EOF' || { tail -30 vitest.out; fail "the vitest run of (b)"; }
const fs = require("node:fs");
const cases = fs.readFileSync("cases.txt", "utf8").trim().split("\n").map((l) => l.split(" ")[0]);
// The run vitest made (MemorySaver has a racy case, J-B6: two runs may differ).
const report = JSON.parse(fs.readFileSync("vitest-report.json", "utf8"));
const v = JSON.parse(fs.readFileSync("vitest.json", "utf8"));
const results = v.testResults.flatMap((f) => f.assertionResults);
const by = new Map(results.map((a) => [a.title, a]));
const problems = [];
// The fuzz trial after the cases adds one test when it diverges (`<capability>::fuzz_model_sequences`).
const trial = results.filter((a) => a.title.endsWith("::fuzz_model_sequences") && !cases.includes(a.title)).length;
if (results.length !== cases.length + trial) problems.push(`${results.length} tests for ${cases.length} cases and ${trial} fuzz trial results`);
for (const id of cases) if (!by.has(id)) problems.push(`no test for ${id}`);
// Each test's status is its case's outcome in the kit's report of that run.
const want = { passed: "passed", not_strict: "passed", failed: "failed" };
let failed = 0;
for (const t of report.tests) {
  const a = by.get(t.id);
  if (!a) continue;
  const status = want[t.outcome] ?? "skipped";
  if (a.status !== status) problems.push(`${t.id}: ${a.status}, the report says ${t.outcome}`);
  if (status === "failed") {
    failed += 1;
    const shown = (a.failureMessages ?? []).join("\n");
    if (!shown.includes("ConformanceFailure")) problems.push(`${t.id}: the failure does not show the kit's message: ${shown.slice(0, 200)}`);
  }
}
const counts = {};
for (const a of results) counts[a.status] = (counts[a.status] ?? 0) + 1;
console.log(`vitest: ${results.length} tests for ${cases.length} cases: ${JSON.stringify(counts)}`);
if (problems.length) { console.error(problems.slice(0, 10).join("\n")); process.exit(1); }
EOF
grep -aqE "↓ .*\[not run: the saver declares " vitest.out && grep -aqE "↓ .*\[prune is not implemented: " vitest.out ||
  fail "vitest does not show the reason of a case not run or not implemented"

echo "== (c) bad input: one line 'error: ...' and exit 2"
printf 'import { MemorySaver } from "@langchain/no-such-package";\nexport default { createCheckpointer: () => new MemorySaver() };\n' >no-import.mjs
printf 'export default { checkpointerName: "NoFactory" };\n' >no-factory.mjs
printf 'export const checkpointer = 1;\n' >no-export.mjs
bad() { # expected-text args...
  local want="$1" rc=0
  shift
  npx checkpoint-conformance "$@" >bad.out 2>bad.err || rc=$?
  echo "npx checkpoint-conformance $*: exit $rc: $(cat bad.err)"
  [ "$rc" -eq 2 ] || fail "exit $rc, not 2"
  [ "$(wc -l <bad.err)" -eq 1 ] && [ ! -s bad.out ] && grep -q "^error: .*$want" bad.err || fail "not one line 'error: ...$want'"
}
bad "no such file" ./missing.mjs
bad "does not import" ./no-import.mjs
bad "has no createCheckpointer" ./no-factory.mjs
bad "exports no initializer" ./no-export.mjs
bad "one initializer module at a time" ./init.mjs ./no-export.mjs
bad "unknown backend" --backend nope
printf 'import { describeCheckpointer } from "checkpoint-conformance/vitest";\ndescribeCheckpointer("./no-factory.mjs");\n' >bad.test.mjs
rc=0
npx vitest run bad.test.mjs >bad-vitest.out 2>&1 || rc=$?
echo "npx vitest run on ./no-factory.mjs: exit $rc: $(grep -a -m1 -o "UsageError: .*has no createCheckpointer.*" bad-vitest.out || true)"
[ "$rc" -eq 1 ] && grep -q "has no createCheckpointer" bad-vitest.out || { tail -20 bad-vitest.out; fail "vitest on a bad initializer"; }

echo "npm package check passed: npm install to verdict $(since "$t0")"
