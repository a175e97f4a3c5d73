"""``validate``: the official kit's entry point, running this kit's catalog."""

from __future__ import annotations

import asyncio
import os
from typing import Any

from checkpoint_conformance import _run
from checkpoint_conformance.initializer import RegisteredCheckpointer, registration
from checkpoint_conformance.report import CapabilityReport, ProgressCallbacks

# Full runs the pytest plugin made in this process, by registration: a validate() of the
# same registration with the same options reuses one instead of running the catalog again.
_SESSION_RUNS: dict[int, tuple[RegisteredCheckpointer, CapabilityReport]] = {}


def remember(registered: RegisteredCheckpointer, report: CapabilityReport) -> None:
    _SESSION_RUNS[id(registered)] = (registered, report)


def _reusable(registered: RegisteredCheckpointer) -> CapabilityReport | None:
    kept = _SESSION_RUNS.get(id(registered))
    return kept[1] if kept and kept[0] is registered else None


async def validate(
    registered: RegisteredCheckpointer,
    *,
    capabilities: set[str] | None = None,
    progress: ProgressCallbacks | None = None,
    strict: bool = False,
    timeout: float | None = None,
    cases: list[str] | None = None,
) -> CapabilityReport:
    """Runs the kit's catalog on ``registered`` (a ``@checkpointer_test`` registration, or
    an async generator function yielding a saver) and returns its report.

    ``capabilities`` and ``progress`` are the official kit's (the callbacks are called
    after the run, case by case). The kit's own options: ``strict`` (judge the SHOULD
    rules too), ``timeout`` (seconds per case, default 30), ``cases`` (ids to run, as
    ``checkpoint-conformance --list-cases`` prints them).

    Raises ``checkpoint_conformance.UsageError`` (one line) for a factory that is not an
    async generator function, one that no module holds at its top level, or options the
    kit refuses; ``RuntimeError`` when the binary wrote no report."""
    if os.environ.get("CHECKPOINT_BRIDGE_RUN") and os.environ.get("CHECKPOINT_KIT_PYTHON_FACTORY"):
        raise RuntimeError(
            "validate() called while the kit's bridge child imports your module: call it from a test "
            "function or under `if __name__ == '__main__':`"
        )
    try:
        registered = registration(registered, getattr(registered, "__name__", "checkpointer"))
    except ValueError as e:
        raise _run.UsageError(str(e)) from None
    report = None
    if capabilities is None and not strict and timeout is None and cases is None:
        report = _reusable(registered)
    if report is None:
        done = await asyncio.to_thread(
            _run.run, registered, capabilities=capabilities, strict=strict, timeout=timeout, cases=cases
        )
        if done.code == _run.USAGE:
            raise _run.UsageError(done.usage_line())
        if done.data is None:
            raise RuntimeError(f"{_run.BINARY} exited {done.code} without a report: {done.stderr.strip()[-2000:]}")
        report = CapabilityReport.from_json(
            done.data, registered.name, done.stdout, selection=capabilities is not None or cases is not None
        )
    if progress is not None:
        _replay(report, progress)
    return report


def _replay(report: CapabilityReport, progress: Any) -> None:
    for cap, result in report.results.items():
        cases = [t for t in report.tests if t.capability == cap]
        ran = [t for t in cases if t.outcome in ("passed", "not_strict", "failed")]
        start = getattr(progress, "on_capability_start", None)
        if start:
            start(cap, bool(ran))
        if not ran:
            continue
        on_result = getattr(progress, "on_test_result", None)
        for t in ran:
            if on_result:
                # Passed, not strict, is a pass on the MUST rules, a failure under strict.
                ok = t.outcome == "passed" or (t.outcome == "not_strict" and not report.strict)
                on_result(cap, t.name, ok, t.message if t.outcome != "passed" else None)
        end = getattr(progress, "on_capability_end", None)
        if end:
            end(cap)
