#!/usr/bin/env bash
# Builds compat/ and runs the conformance catalog on every published saver it adapts, then
# the bug repros (docs/compat.md). Not part of the main test command or .ci/run.
#
#   compat/run.sh            # everything; reports in compat/reports/<registration>.json
#   compat/run.sh sqlite     # one conformance target of langgraph-rs (memory, memory_sync,
#                            # sqlite, postgres) or juncture-sqlite
#
# langgraph-rs-postgres and the Postgres repros need CHECKPOINT_POSTGRES_URL (a server the
# cases may create and drop schemas on). Exit status: 0 when everything ran (conformance
# failures are the findings, not errors of this script), 1 when a build or a repro failed.
set -uo pipefail
cd "$(dirname "$0")"
reports="$PWD/reports"
mkdir -p "$reports"
export NO_COLOR=1

start=$(date +%s)
cargo build --tests --workspace || exit 1
echo "build: $(( $(date +%s) - start )) s"

targets=("compat-langgraph-rs memory langgraph-rs-memory"
         "compat-langgraph-rs memory_sync langgraph-rs-memory-sync"
         "compat-langgraph-rs sqlite langgraph-rs-sqlite"
         "compat-langgraph-rs postgres langgraph-rs-postgres"
         "compat-juncture sqlite juncture-sqlite")
for t in "${targets[@]}"; do
    read -r pkg test name <<<"$t"
    if [ $# -gt 0 ] && [ "$1" != "$test" ] && [ "$1" != "$name" ]; then continue; fi
    out="$reports/$name.txt"
    CHECKPOINT_CONFORMANCE_REPORT="$reports/$name.json" cargo test -q -p "$pkg" --test "$test" >"$out" 2>&1
    printf '%-26s %s\n' "$name" "$(grep -E '^\s*Result:' "$out" | tail -1 | sed 's/^ *//') ($(grep -E '^\s*Tests:' "$out" | tail -1 | sed 's/^ *//'))"
done

[ $# -gt 0 ] && exit 0
cargo test -q -p compat-langgraph-rs --test bugs && cargo test -q -p compat-juncture --test bugs
