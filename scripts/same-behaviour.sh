#!/usr/bin/env bash
# Shows that a change kept the kit's behaviour (CONTRIBUTING.md, "Before each commit"):
# builds REV (default: HEAD~1) in a temporary worktree, then runs the same things on REV and
# on the working tree, and diffs them:
#   - `cargo xtask conformance --backend B --json` for memory, sqlite and postgres (the
#     fuzz trial off; durations, the crash test's seed and its acknowledged count, which
#     are random per run, left out);
#   - `cargo xtask replay traces/ --backend sqlite` and `--backend memory`;
#   - `cargo xtask mutants` (the table, its time column left out).
# Exit 0 when nothing differs, 1 with the differences printed.
#
# The worktree's build shares nothing with target/: it is a hard-linked copy (cp -al), so
# only what REV changed is rebuilt. Postgres: $CHECKPOINT_POSTGRES_URL, else a throwaway
# server (scripts/pg-test-server.sh), stopped at the end. Everything it makes is removed on
# exit.
#
# Usage: scripts/same-behaviour.sh [REV]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
rev="${1:-HEAD~1}"
work="$(mktemp -d "${TMPDIR:-/tmp}/same-behaviour.XXXXXX")"
server=""
cleanup() {
  git -C "$root" worktree remove --force "$work/tree" 2>/dev/null || true
  [ -n "$server" ] && PG_TEST_STATE="$work/pg.state" "$root/scripts/pg-test-server.sh" stop >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
if [ -z "${CHECKPOINT_POSTGRES_URL:-}" ]; then
  CHECKPOINT_POSTGRES_URL="$(PG_TEST_STATE="$work/pg.state" "$root/scripts/pg-test-server.sh" start)"
  server=yes
fi
export CHECKPOINT_POSTGRES_URL

git -C "$root" worktree add -q --detach "$work/tree" "$rev"
[ -d "$root/target" ] && cp -al "$root/target" "$work/target"

# run TREE TARGET_DIR OUT: the outputs of one tree, normalised.
run() {
  local tree="$1" out="$3"
  mkdir -p "$out"
  (
    cd "$tree"
    export CARGO_TARGET_DIR="$2"
    for b in memory sqlite postgres; do
      cargo xtask conformance --backend "$b" --json "$out/$b.json" --progress quiet --fuzz-budget 0 >/dev/null 2>&1 || true
      python3 - "$out/$b.json" >"$out/$b.norm" <<'PY'
import json, sys
random = ("duration_ms", "durability.seed", "durability.acknowledged")
def strip(o):
    if isinstance(o, dict):
        return {k: strip(v) for k, v in o.items() if k not in random}
    if isinstance(o, list):
        return [strip(x) for x in o]
    return o
print(json.dumps(strip(json.load(open(sys.argv[1]))), indent=1, sort_keys=True))
PY
    done
    for b in sqlite memory; do
      cargo xtask replay traces/ --backend "$b" 2>/dev/null >"$out/replay-$b.txt" || true
    done
    # The table without its time column (the 8th cell of a row).
    cargo xtask mutants 2>/dev/null | awk -F'|' 'BEGIN { OFS = "|" } NF > 8 { $8 = "" } { print }' \
      | sed -E 's/, [0-9.]+ s\.$/./' >"$out/mutants.txt" || true
  )
}

echo "same-behaviour: $rev ($(git -C "$root" rev-parse --short "$rev")) against the working tree"
run "$work/tree" "$work/target" "$work/before"
run "$root" "${CARGO_TARGET_DIR:-$root/target}" "$work/after"
status=0
for f in memory.norm sqlite.norm postgres.norm replay-sqlite.txt replay-memory.txt mutants.txt; do
  if diff -u "$work/before/$f" "$work/after/$f" >"$work/diff"; then
    echo "  same: $f ($(wc -l <"$work/after/$f") lines)"
  else
    echo "  DIFFERS: $f"
    sed 's/^/    /' "$work/diff" | head -40
    status=1
  fi
done
exit $status
