#!/usr/bin/env bash
# CI check of the Python wheel (issue 37): builds it from the checkout with maturin, reusing
# the binary `cargo build` already made (target/debug, the dev profile: maturin's cargo call
# is fresh, it compiles nothing), installs it into a fresh virtualenv with no cargo on PATH,
# and runs, as a Python user would:
#   (a) the official kit's own tests/test_validate_memory.py (langgraph-checkpoint-conformance
#       0.0.2's sdist) with only its import changed, via `python -m pytest -v`: one result
#       per case of the catalog, plus the file's own test;
#   (b) its --junitxml file, checked to list every case of the catalog;
#   (c) bad input: `--checkpointer` without a value, a module that does not import, a
#       factory that is not an async generator: each one line `error: ...` and exit 2;
#   (d) `-k` runs only the selected cases.
# Prints the time from `pip install` to the verdict. Everything it makes is in one mktemp
# directory, removed on exit.
#
# Usage: packaging/python/check.sh   (after `cargo build`, from anywhere; needs python3 with
# venv and pip access to PyPI)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
python="${PYTHON:-python3}"
maturin_pin="maturin==1.16.0"
official="langgraph-checkpoint-conformance==0.0.2"
work="$(mktemp -d "${TMPDIR:-/tmp}/checkpoint-conformance-pycheck.XXXXXX")"
trap 'rm -rf "$work"' EXIT
fail() { echo "packaging/python/check.sh: FAILED: $*" >&2; exit 1; }

echo "== build the wheel (maturin, dev profile, reusing target/debug/checkpoint-conformance)"
"$python" -m venv "$work/build"
"$work/build/bin/pip" install -q "$maturin_pin"
start=$(date +%s)
(cd "$root/packaging/python" && "$work/build/bin/maturin" build --profile dev --out "$work/wheels") >"$work/maturin.log" 2>&1 ||
  { cat "$work/maturin.log"; fail "maturin build"; }
grep -v '^ *Downloaded ' "$work/maturin.log" | grep -v '^ *Downloading ' || true
compiled=$(grep -c '^ *Compiling ' "$work/maturin.log" || true)
echo "maturin build: $(($(date +%s) - start)) s, $compiled crates compiled"
wheel="$(ls "$work"/wheels/checkpoint_conformance-*.whl)"
ls -l "$wheel"

# PATH without cargo or rustc: the user has no Rust.
clean_path=""
IFS=: read -r -a dirs <<<"$PATH"
for d in "${dirs[@]}"; do
  [ -n "$d" ] && [ ! -e "$d/cargo" ] && [ ! -e "$d/rustc" ] && clean_path="${clean_path:+$clean_path:}$d"
done
"$python" -m venv "$work/venv"
export PATH="$work/venv/bin:$clean_path" XDG_CACHE_HOME="$work/cache" NO_COLOR=1
unset CHECKPOINT_BRIDGE_PYTHON CHECKPOINT_KIT_BINARY CARGO_TARGET_DIR VIRTUAL_ENV PYTHONPATH
! command -v cargo >/dev/null || fail "cargo is still on PATH: $(command -v cargo)"
py="$work/venv/bin/python"

echo "== fresh virtualenv, no cargo on PATH: pip install the wheel, langgraph-checkpoint (pinned), pytest"
t0=$(date +%s)
"$py" -m pip install -q -c "$root/bridges/python/constraints.txt" "$wheel" langgraph-checkpoint pytest==9.0.3 pytest-asyncio==1.4.0
command -v checkpoint-conformance | grep -q "^$work/venv/bin/" || fail "the wheel did not install the binary into the venv"

echo "== (a) the official kit's test_validate_memory.py, its import changed"
mkdir -p "$work/official" "$work/dl"
if "$py" -m pip download -q --no-deps --no-binary :all: -d "$work/dl" "$official" 2>"$work/dl.log"; then
  tar -xzf "$work"/dl/*.tar.gz -C "$work/dl"
  original="$(ls "$work"/dl/*/tests/test_validate_memory.py)"
  sed 's/^from langgraph\.checkpoint\.conformance import /from checkpoint_conformance import /' "$original" \
    >"$work/official/test_validate_memory.py"
  changed=$(diff "$original" "$work/official/test_validate_memory.py" | grep -c '^>' || true)
  [ "$changed" = 1 ] || fail "expected exactly the import line changed, got $changed lines"
  echo "from $official's sdist; the one changed line:"
  diff "$original" "$work/official/test_validate_memory.py" || true
else
  echo "(could not download $official: $(tail -1 "$work/dl.log")); the equivalent test:"
  cat >"$work/official/test_validate_memory.py" <<'EOF'
import pytest
from langgraph.checkpoint.memory import InMemorySaver

from checkpoint_conformance import checkpointer_test, validate


@checkpointer_test(name="InMemorySaver")
async def memory_checkpointer():
    yield InMemorySaver()


@pytest.mark.asyncio
async def test_validate_memory_base():
    report = await validate(memory_checkpointer)
    report.print_report()
    assert report.passed_all_base(), f"Base tests failed: {report.to_dict()}"
EOF
fi
cases=$(checkpoint-conformance --list-cases | wc -l)
rc=0
(cd "$work/official" && "$py" -m pytest -v -rs -p no:cacheprovider --junitxml="$work/junit.xml") >"$work/pytest.log" 2>&1 || rc=$?
cat "$work/pytest.log"
[ "$rc" = 0 ] || fail "python -m pytest exited $rc"
echo "verdict: python -m pytest exited 0; pip install to verdict: $(($(date +%s) - t0)) s"
per_case=$(grep -c '^test_validate_memory.py::memory_checkpointer::.* \(PASSED\|SKIPPED\|FAILED\)' "$work/pytest.log" || true)
[ "$per_case" = "$cases" ] || fail "expected one result line per case ($cases), got $per_case"

echo "== (b) --junitxml lists every case"
"$py" - "$work/junit.xml" <<'EOF' || fail "the JUnit file"
import subprocess, sys
import xml.etree.ElementTree as ET

cases = [l.split()[0] for l in subprocess.run(["checkpoint-conformance", "--list-cases"], capture_output=True, text=True, check=True).stdout.splitlines()]
testcases = ET.parse(sys.argv[1]).getroot().iter("testcase")
listed = {f"{t.get('classname').rsplit('.', 1)[-1]}::{t.get('name')}": t for t in testcases}
missing = [c for c in cases if c not in listed]
assert not missing, f"missing from the JUnit file: {missing[:5]}"
assert "test_validate_memory::test_validate_memory_base" in {f"{t.get('classname')}::{t.get('name')}" for t in listed.values()}
kinds = {k: sum(listed[c].find(k) is not None for c in cases) for k in ("failure", "skipped")}
print(f"{sys.argv[1]}: {len(cases)} cases listed ({kinds['skipped']} skipped, {kinds['failure']} failed) and test_validate_memory_base")
EOF

echo "== (c) bad input: one line and exit 2"
mkdir -p "$work/bad"
printf 'from langgraph.checkpoint.memory import InMemorySaver\n\n\ndef not_async():\n    return InMemorySaver()\n' >"$work/bad/savers.py"
for args in "--checkpointer" "--checkpointer no_such_module:factory" "--checkpointer savers:not_async"; do
  rc=0
  # shellcheck disable=SC2086
  (cd "$work/bad" && "$py" -m pytest -p no:cacheprovider $args) >"$work/out" 2>"$work/err" || rc=$?
  echo "pytest $args -> exit $rc: $(cat "$work/err")"
  [ "$rc" = 2 ] || fail "pytest $args exited $rc, not 2"
  [ "$(wc -l <"$work/err")" = 1 ] && grep -q '^error: ' "$work/err" || fail "pytest $args: not one line 'error: ...'"
  [ ! -s "$work/out" ] || fail "pytest $args printed on stdout: $(cat "$work/out")"
done

echo "== (d) -k runs only the selected cases"
(cd "$work/official" && "$py" -m pytest -q -p no:cacheprovider -k "memory_checkpointer and returns_config_of_stored_checkpoint") >"$work/k.log" 2>&1 ||
  { cat "$work/k.log"; fail "pytest -k"; }
tail -2 "$work/k.log"
grep -q "^checkpoint-conformance: InMemorySaver: 1 of $cases cases selected" "$work/k.log" || fail "-k did not run one case"

echo "packaging/python/check.sh: OK (pip install to verdict $(($(date +%s) - t0)) s in all)"
