#!/usr/bin/env bash
# Runs the JS repros (README.md) with node from a copy of this directory placed inside the
# directory where LangGraph JS's savers are installed (DIR/repro), so that their bare
# imports resolve to DIR/node_modules. Each script prints what it shows and
# exits 1 when the bug is present (0 when it is not). Prints each script's exit code; exits
# with the number of scripts that showed their bug.
#
#   bridges/js/repro/run.sh                       # every j-b*.mjs here, in number order
#   bridges/js/repro/run.sh j-b5-thread-undefined.mjs ...
#   JS_REPRO_DIR=/path/with/node_modules bridges/js/repro/run.sh
#
# The postgres parts need CHECKPOINT_POSTGRES_URL (each uses a schema of its own and
# drops it) and are skipped, saying so, without it. SAVERS=memory,sqlite picks savers.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dir="${JS_REPRO_DIR:-}"
if [[ -z "$dir" ]]; then
    # The JS child's own install (`cargo xtask conformance --backend js:memory` makes it).
    dir="$(ls -d "$here"/../../../target/checkpoint-bridge/js/src-*/ 2>/dev/null | head -1)"
fi
if [[ -z "$dir" || ! -d "$dir/node_modules/@langchain/langgraph-checkpoint" ]]; then
    echo "no install of @langchain/langgraph-checkpoint found: run cargo xtask conformance --backend js:memory once, or set JS_REPRO_DIR" >&2
    exit 2
fi
if [[ $# -eq 0 ]]; then
    mapfile -t all < <(printf '%s\n' "$here"/j-b*.mjs | sort -V)
    set -- "${all[@]}"
fi
mkdir -p "$dir/repro" && cp "$here"/*.mjs "$dir/repro/" || exit 2
shown=0
for f in "$@"; do
    name="$(basename "$f")"
    echo "== $name${SAVER:+ (SAVER=$SAVER)}"
    node "$dir/repro/$name"
    rc=$?
    echo "-- exit $rc"
    [[ $rc -eq 1 ]] && shown=$((shown + 1))
done
exit "$shown"
