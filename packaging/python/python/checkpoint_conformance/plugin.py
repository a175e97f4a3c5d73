"""The pytest plugin (entry point ``pytest11``): one pytest test per case of the kit's
catalog, with the kit's case ids (``<file>::<factory>::<capability>::<case>``).

- ``pytest --checkpointer module:factory`` judges that factory (a ``@checkpointer_test``
  registration or a plain async generator function; ``module`` is imported from the
  current directory or ``sys.path``).
- A ``@checkpointer_test`` registration at the top level of a test module is collected
  too (ini ``checkpointer_collect = false`` turns that off).

The selected cases of a factory run in one run of the kit's binary (``--cases`` when
``-k``/``-m`` deselected some; ``--fail-fast`` under ``-x``), started by the first of
them; each test then reports its case: passed; passed not strict (a SHOULD rule the saver
does not meet) as passed with a warning; failed with the kit's message; not run, not
implemented or skipped as skipped with the reason."""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

import pytest

from checkpoint_conformance import _run
from checkpoint_conformance.initializer import RegisteredCheckpointer, factory_problem, registration
from checkpoint_conformance.report import NOT_RUN_OUTCOMES, CapabilityReport
from checkpoint_conformance.validate import remember

# `--checkpointer` given without a value.
_NO_VALUE = "\0"


class PassedNotStrict(UserWarning):
    """A case whose SHOULD rule the saver does not meet: passed, not strict (CONTRACT §5)."""


class CaseFailure(Exception):
    """A failed case; its text is the kit's message."""


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("checkpoint-conformance", "checkpoint-conformance: judge a LangGraph checkpointer")
    group.addoption(
        "--checkpointer",
        action="append",
        nargs="?",
        const=_NO_VALUE,
        default=[],
        metavar="MODULE:FACTORY",
        help="collect one test per case of the kit's catalog for this factory (an async generator function "
        "yielding a saver, or a @checkpointer_test registration); repeatable",
    )
    parser.addini(
        "checkpointer_collect",
        type="bool",
        default=True,
        help="collect the @checkpointer_test registrations of test modules as one test per case (default true)",
    )


class error(pytest.exit.Exception):  # noqa: N801 - pytest prints "<class name>: <message>"
    """Bad input: pytest prints ``error: <message>`` (one line, as the kit's binary does) and
    exits 2."""


def _usage(message: str) -> None:
    raise error(message, returncode=_run.USAGE)


def load_spec(spec: str) -> RegisteredCheckpointer:
    """The registration ``module:factory`` names. Raises ValueError with one line."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"--checkpointer {spec}: expected MODULE:FACTORY (e.g. tests.savers:my_checkpointer)")
    cwd = os.getcwd()
    added = cwd not in sys.path
    if added:
        sys.path.insert(0, cwd)
    try:
        module = importlib.import_module(module_name)
    except BaseException as e:  # an import that exits or fails any way is bad input
        if added:
            sys.path.remove(cwd)
        last = str(e).strip().splitlines()[-1:] or [""]
        raise ValueError(f"--checkpointer {spec}: cannot import {module_name}: {type(e).__name__}: {last[0]}") from None
    obj = getattr(module, attr, None)
    if obj is None:
        raise ValueError(f"--checkpointer {spec}: module {module_name} has no attribute {attr}")
    if not isinstance(obj, RegisteredCheckpointer):
        problem = factory_problem(obj, "the factory")
        if problem:
            raise ValueError(f"--checkpointer {spec}: {problem}")
        try:
            obj = registration(obj, attr)
        except ValueError as e:
            raise ValueError(f"--checkpointer {spec}: {e}") from None
    problem = obj.problem()
    if problem:
        raise ValueError(f"--checkpointer {spec}: {problem}")
    return obj


def pytest_configure(config: pytest.Config) -> None:
    specs = config.getoption("checkpointer") or []
    explicit = []
    for spec in specs:
        if spec == _NO_VALUE or not spec.strip():
            _usage("--checkpointer needs a value: MODULE:FACTORY (an async generator function yielding a saver)")
        try:
            explicit.append((spec, load_spec(spec)))
        except ValueError as e:
            _usage(str(e))
    config.stash[_EXPLICIT] = explicit


_EXPLICIT = pytest.StashKey[list]()
_CATALOG: list[tuple[str, str]] = []


def catalog() -> list[tuple[str, str]]:
    if not _CATALOG:
        _CATALOG.extend(_run.list_cases())
    return _CATALOG


class CheckpointerNode(pytest.Collector):
    """A factory: one child per capability, one test per case below it."""

    def __init__(self, *, registered: RegisteredCheckpointer, **kw: Any) -> None:
        super().__init__(**kw)
        self.registered = registered
        self.run: _run.Run | None = None
        self.report: CapabilityReport | None = None
        self.error: str | None = None
        self.full = False

    def collect(self) -> list[Any]:
        problem = self.registered.problem()
        if problem:
            raise self.CollectError(f"{self.name}: {problem}")
        try:
            cases = catalog()
        except _run.UsageError as e:
            raise self.CollectError(str(e)) from None
        caps: dict[str, list[tuple[str, str]]] = {}
        for case_id, strength in cases:
            cap, _, name = case_id.partition("::")
            caps.setdefault(cap, []).append((name, strength))
        return [CapabilityNode.from_parent(self, name=cap, cases=names) for cap, names in caps.items()]

    def results(self, session: pytest.Session) -> None:
        """Runs the kit once on the selected cases of this factory (first call only)."""
        if self.run is not None or self.error is not None:
            return
        mine = [i.case_id for i in session.items if isinstance(i, CaseItem) and i.parent.parent is self]
        full = self.full = len(mine) == len(catalog())
        try:
            self.run = _run.run(
                self.registered,
                cases=None if full else mine,
                fail_fast=session.config.option.maxfail == 1,
            )
        except _run.UsageError as e:
            self.error = str(e)
            return
        if self.run.code == _run.USAGE:
            self.error = self.run.usage_line()
        elif self.run.data is None:
            self.error = f"{_run.BINARY} exited {self.run.code} without a report: {self.run.stderr.strip()[-2000:]}"
        else:
            self.report = CapabilityReport.from_json(
                self.run.data, self.registered.name, self.run.stdout, selection=not full
            )
            if full:
                remember(self.registered, self.report)


class CapabilityNode(pytest.Collector):
    def __init__(self, *, cases: list[tuple[str, str]], **kw: Any) -> None:
        super().__init__(**kw)
        self.cases = cases

    def collect(self) -> list[Any]:
        return [CaseItem.from_parent(self, name=name, strength=strength) for name, strength in self.cases]


class CaseItem(pytest.Item):
    """One case of the catalog."""

    def __init__(self, *, strength: str, **kw: Any) -> None:
        super().__init__(**kw)
        self.strength = strength
        self.case_id = f"{self.parent.name}::{self.name}"

    def runtest(self) -> None:
        node: CheckpointerNode = self.parent.parent  # type: ignore[assignment]
        node.results(self.session)
        if node.error is not None:
            raise CaseFailure(node.error)
        assert node.report is not None and node.run is not None
        case = next((t for t in node.report.tests if t.id == self.case_id), None)
        if case is None:
            raise CaseFailure(
                f"the kit's report has no case {self.case_id} (exit {node.run.code}): {node.run.stderr.strip()[-1000:]}"
            )
        if case.outcome == "failed":
            raise CaseFailure(case.message or "failed")
        if case.outcome == "not_strict":
            self.warn(PassedNotStrict(f"{self.case_id} (SHOULD): passed, not strict: {case.message}"))
            return
        if case.outcome in NOT_RUN_OUTCOMES:
            reason = case.message or case.outcome.replace("_", " ")
            if case.outcome == "not_implemented" and not case.message:
                reason = f"not implemented: the saver does not implement {case.capability}"
            try:  # reported at the test's own location, not this line (pytest >= 7)
                raise pytest.skip.Exception(reason, _use_item_location=True)
            except TypeError:
                pytest.skip(reason)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, CaseFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Any, int, str]:
        code = getattr(self.parent.parent.registered.factory, "__code__", None)
        line = code.co_firstlineno - 1 if code is not None and str(self.path) == code.co_filename else 0
        return self.path, line, f"{self.parent.parent.name}::{self.case_id} ({self.strength})"


def pytest_pycollect_makeitem(collector: pytest.Collector, name: str, obj: object) -> Any:
    if not isinstance(obj, RegisteredCheckpointer) or not isinstance(collector, pytest.Module):
        return None
    if not collector.config.getini("checkpointer_collect"):
        return None
    if getattr(obj.factory, "__module__", None) != getattr(collector.obj, "__name__", None):
        return None  # imported from another module: collected there
    return CheckpointerNode.from_parent(collector, name=name, registered=obj)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Adds the tests of each ``--checkpointer`` before ``-k``/``-m`` deselect."""
    added: list[pytest.Item] = []
    for spec, registered in config.stash.get(_EXPLICIT, []):
        node = CheckpointerNode.from_parent(session, name=spec, nodeid=spec, registered=registered)
        try:
            for cap in node.collect():
                added.extend(cap.collect())
        except pytest.Collector.CollectError as e:
            _usage(str(e.args[0]))
    if added:
        # Counted in "collected N items" as any collected test.
        config.hook.pytest_collectreport(report=pytest.CollectReport("", "passed", None, added))
    items[:0] = added


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """One line per factory judged: its level and counts."""
    seen = set()
    for item in terminalreporter.config.stash.get(_SEEN, []):
        node = item.parent.parent
        if id(node) in seen or node.report is None:
            continue
        seen.add(id(node))
        r = node.report
        counts = {o: sum(t.outcome == o for t in r.tests) for o in ("passed", "not_strict", "failed")}
        level = (
            f"{r.conformance_level()} ({r.capabilities_passed}/{r.capabilities_detected})"
            if node.full
            else f"{len(r.tests)} of {len(catalog())} cases selected (no level)"
        )
        terminalreporter.write_line(
            f"checkpoint-conformance: {r.checkpointer_name}: {level}; "
            f"{counts['passed']} passed, {counts['not_strict']} passed not strict, {counts['failed']} failed"
            + (f"; {r.saver}" if r.saver else "")
        )


_SEEN = pytest.StashKey[list]()


def pytest_runtest_setup(item: pytest.Item) -> None:
    if isinstance(item, CaseItem):
        item.config.stash.setdefault(_SEEN, []).append(item)
