#!/usr/bin/env bash
# Runs the Python repros (README.md) with the bridge's managed virtualenv, which a run of
# `cargo xtask conformance --backend python:memory` installs. Each script prints what it
# shows and exits 1 when the bug is present (0 when it is not, 2 when no saver could run).
# Prints each script's exit code; exits with the number of scripts that showed their bug.
#
#   bridges/python/repro/run.sh                              # every b*.py here, in number order
#   bridges/python/repro/run.sh b4_sqlite_dotted_filter_key.py ...
#   PYTHON=/other/venv/bin/python bridges/python/repro/run.sh
#
# The postgres parts need CHECKPOINT_POSTGRES_URL (each uses a schema of its own and drops
# it) and are skipped, saying so, without it. SAVERS=memory,sqlite picks savers.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
py="${PYTHON:-$here/../../../target/checkpoint-bridge/python/venv/bin/python}"
if ! "$py" -c 'import langgraph.checkpoint.sqlite, langgraph.checkpoint.postgres' 2>/dev/null; then
    echo "no python with langgraph-checkpoint-sqlite and -postgres at $py: run cargo xtask conformance --backend python:memory once, or set PYTHON" >&2
    exit 2
fi
if [[ $# -eq 0 ]]; then
    mapfile -t all < <(printf '%s\n' "$here"/b*.py | sort -V)
    set -- "${all[@]}"
fi
cd "$here" || exit 2
export PYTHONDONTWRITEBYTECODE=1
shown=0
for f in "$@"; do
    name="$(basename "$f")"
    echo "== $name${SAVERS:+ (SAVERS=$SAVERS)}"
    "$py" "$name"
    rc=$?
    echo "-- exit $rc"
    [[ $rc -eq 1 ]] && shown=$((shown + 1))
done
exit "$shown"
