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
#   (d) `-k` runs only the selected cases;
#   (e) the report's verdicts: validate(capabilities=["put"], strict=True) of InMemorySaver
#       (2 cases passed, not strict) is NONE and not passed_all(), put not passed, and
#       print_report() is the binary's report ("N not strict", PASSED, NOT STRICT, the
#       strict level); a saver declaring lacks={"namespaces"} (or a plain factory's
#       conformance_lacks) gets the namespace cases not run with the declaration as the
#       reason, an unknown name is one ValueError; durability without location= says so;
#   (f) record's and replay's --python default; (g) `python -m checkpoint_conformance replay`
#       of a shipped trace on LangGraph's InMemorySaver in the venv.
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
# A virtualenv with pip. `python -m venv` hides why ensurepip failed (one CI run failed there
# with only "ensurepip ... returned non-zero exit status 1"): on failure this prints
# ensurepip's own output, then installs pip into the venv with the base interpreter's pip.
make_venv() {
  "$python" -m venv "$1" 2>"$work/venv-error.log" && return 0
  echo "$python -m venv $1 failed: $(tail -1 "$work/venv-error.log"); ensurepip's own output:" >&2
  rm -rf "$1"
  "$python" -m venv --without-pip "$1" || fail "$python -m venv --without-pip $1"
  "$1/bin/python" -m ensurepip --upgrade --default-pip >&2 && return 0
  echo "installing pip into $1 with $python's pip instead" >&2
  "$python" -m pip --python "$1/bin/python" install -q pip || fail "no pip in the virtualenv $1"
}

echo "== build the wheel (maturin, dev profile, reusing target/debug/checkpoint-conformance)"
make_venv "$work/build"
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
make_venv "$work/venv"
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

echo "== (e) the report's verdicts, print_report, declared limits (lacks), the durability hint"
mkdir -p "$work/report"
cat >"$work/report/verdicts.py" <<'PYEOF'
import asyncio
import contextlib
import io

from langgraph.checkpoint.memory import InMemorySaver

from checkpoint_conformance import checkpointer_test, validate

@checkpointer_test(name="InMemorySaver")
async def memory():
    yield InMemorySaver()


@checkpointer_test(name="RootOnly", lacks={"namespaces"})
async def root_only():
    yield InMemorySaver()


async def plain_root_only():
    yield InMemorySaver()


plain_root_only.conformance_lacks = ["namespaces"]


def printed(report):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        report.print_report()
    return out.getvalue()


async def main():
    # Strict: put, with cases passed not strict, is not passed; nor is the run.
    r = await validate(memory, capabilities=["put"], strict=True)
    level, put = r.conformance_level(), r.results["put"]
    assert put.tests_not_strict and put.passed is False and put.status == "failed", put
    assert not r.passed_all() and not r.passed_all_base() and level == "NONE", (level, r.passed_all())
    assert r.to_dict()["conformance_level"] == level and r.to_dict()["results"]["put"]["passed"] is False
    text = printed(r)
    for said in ("Checkpointer Validation: InMemorySaver", "not strict)", "PASSED, NOT STRICT", "--strict", "passed_all() False"):
        assert said in text, f"print_report() does not say {said!r}:\n{text}"
    print(f"strict: {level}, passed_all() {r.passed_all()}, put: {put.tests_not_strict} cases not strict, passed {put.passed}")
    # Not strict: the same cases pass (a selection: passed_all, not passed_all_base).
    r = await validate(memory, capabilities=["put"])
    assert r.passed_all() and not r.passed_all_base() and r.conformance_level() == "BASE", r.conformance_level()
    text = printed(r)
    for said in ("not strict)", "PASSED, NOT STRICT", "on MUST rules; NONE counting SHOULD rules (--strict)"):
        assert said in text, f"print_report() does not say {said!r}:\n{text}"
    print(next(line.strip() for line in text.splitlines() if line.strip().startswith("put ") or "✅ put " in line))
    print(next(line.strip() for line in text.splitlines() if line.strip().startswith("Result:")))
    # Declared limits: the drop-in's lacks= and a plain factory's conformance_lacks.
    for factory, name in ((root_only, "lacks={'namespaces'}"), (plain_root_only, "conformance_lacks")):
        r = await validate(factory, capabilities=["put"])
        ns = [t for t in r.tests if t.outcome == "not_run" and "root namespace only" in (t.message or "")]
        assert ns, [(t.id, t.outcome, t.message) for t in r.tests if t.outcome != "passed"]
        assert any("feature `namespaces`" in w for w in r.data.get("warnings") or []), r.data.get("warnings")
        print(f"{name}: {len(ns)} cases not run, e.g. {ns[0].id}: {ns[0].message}")
    try:
        checkpointer_test(name="typo", lacks={"namespace"})
    except ValueError as e:
        assert "'namespace' is no feature" in str(e) and "namespaces" in str(e) and "\n" not in str(e), e
        print(f"lacks={{'namespace'}}: ValueError: {e}")
    else:
        raise AssertionError("lacks={'namespace'} was accepted")
    # Durability without location=: the case says what to give.
    r = await validate(memory, capabilities=["durability"])
    said = {t.message for t in r.tests if t.capability == "durability"}
    assert len(said) == 1 and "location=" in next(iter(said)), said
    assert not any(rust in next(iter(said)) for rust in ("Fixture::", "Reach::", "Storage")), said
    print(f"durability: {next(iter(said))}")


if __name__ == "__main__":  # the bridge child imports this module for its factories
    asyncio.run(main())
PYEOF
(cd "$work/report" && "$py" verdicts.py) || fail "the report's verdicts"

echo "== (f) python -m checkpoint_conformance record: --python (this interpreter) added for a Python graph only"
"$py" - <<'PYEOF' || fail "record's --python default"
from checkpoint_conformance.__main__ import js_graph
assert js_graph(["record", "--graph", "./app.mjs:build"]) and js_graph(["record", "--graph=./app.js:g"])
assert not js_graph(["record", "--graph", "my_app:build"]) and not js_graph(["record"])
from checkpoint_conformance.__main__ import python_backend
assert python_backend(["replay", "t.json", "--backend", "python:memory"]) and python_backend(["replay", "--backend=python:x:y"])
assert not python_backend(["replay", "t.json", "--backend", "sqlite"]) and not python_backend(["replay", "t.json"])
print("a JS graph is recorded under node, without --python; a python:* replay runs in this interpreter")
PYEOF

echo "== (g) python -m checkpoint_conformance replay: a recorded trace on LangGraph's InMemorySaver in this venv"
"$py" -m checkpoint_conformance replay "$root/traces/interrupt.json" --backend python:memory \
  | tee "$work/replay.txt" || fail "replay through the package"
grep -q "the saver gave what the trace says" "$work/replay.txt" || fail "replay's line"

echo "packaging/python/check.sh: OK (pip install to verdict $(($(date +%s) - t0)) s in all)"
