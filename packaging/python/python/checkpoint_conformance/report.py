"""The report of a run, with the official kit's methods (``passed_all_base``,
``passed_all``, ``conformance_level``, ``print_report``, ``to_dict``) over the kit's JSON
report (docs/report-schema.md), and the official kit's ``ProgressCallbacks``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

BASE_CAPABILITIES = ("put", "put_writes", "get_tuple", "list", "delete_thread")

# What a case that did not run shows as, by its outcome.
NOT_RUN_OUTCOMES = ("skipped", "not_implemented", "not_run")


class ProgressCallbacks:
    """Callbacks the official kit's ``validate(progress=...)`` takes. The kit's binary runs
    the cases in parallel; the callbacks are called once it is done, case by case in
    catalog order (``on_test_result(capability, case, passed, message)``)."""

    def __init__(
        self,
        *,
        on_capability_start: Callable[[str, bool], None] | None = None,
        on_test_result: Callable[[str, str, bool, str | None], None] | None = None,
        on_capability_end: Callable[[str], None] | None = None,
    ) -> None:
        self.on_capability_start = on_capability_start
        self.on_test_result = on_test_result
        self.on_capability_end = on_capability_end

    @classmethod
    def default(cls) -> ProgressCallbacks:
        """``.`` per passed case, ``F`` per failed one."""
        return cls(
            on_capability_start=lambda cap, detected: print(
                f"  {cap}: " if detected else f"  ⊘ {cap} (not implemented)", end="" if detected else "\n", flush=True
            ),
            on_test_result=lambda cap, name, ok, err: print("." if ok else "F", end="", flush=True),
            on_capability_end=lambda cap: print(),
        )

    @classmethod
    def verbose(cls) -> ProgressCallbacks:
        """One line per case, with the message of a failure."""

        def result(cap: str, name: str, ok: bool, err: str | None) -> None:
            print(f"    {'✓' if ok else '✗'} {name}")
            for line in (err or "").rstrip().splitlines() if not ok else ():
                print(f"      {line}")

        return cls(
            on_capability_start=lambda cap, detected: print(
                f"  {cap}:" if detected else f"  ⊘ {cap} (not implemented)"
            ),
            on_test_result=result,
        )

    @classmethod
    def quiet(cls) -> ProgressCallbacks:
        return cls()


@dataclass
class CapabilityResult:
    """One capability (the official kit's fields first, then the kit's own)."""

    detected: bool = False
    passed: bool | None = None
    tests_passed: int = 0
    tests_failed: int = 0
    tests_skipped: int = 0
    failures: list[str] = field(default_factory=list)
    kind: str = "extended"
    status: str = ""
    skip_reason: str | None = None
    tests_not_strict: int = 0


@dataclass
class CaseResult:
    """One case of the catalog: ``id`` is ``capability::name``."""

    id: str
    capability: str
    name: str
    outcome: str
    message: str | None = None
    strength: str = "MUST"
    duration_ms: float = 0.0


@dataclass
class CapabilityReport:
    """The kit's report. ``data`` is the whole JSON report, ``terminal`` the binary's own
    text report."""

    checkpointer_name: str
    results: dict[str, CapabilityResult] = field(default_factory=dict)
    tests: list[CaseResult] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)
    terminal: str = ""

    @classmethod
    def from_json(cls, data: dict[str, Any], name: str | None = None, terminal: str = "") -> CapabilityReport:
        results = {}
        for cap, r in (data.get("results") or {}).items():
            known = {k: r[k] for k in CapabilityResult.__dataclass_fields__ if k in r}
            results[cap] = CapabilityResult(**known)
        tests = [
            CaseResult(**{k: t[k] for k in CaseResult.__dataclass_fields__ if k in t}) for t in data.get("tests") or []
        ]
        return cls(
            checkpointer_name=name or data.get("checkpointer_name", ""),
            results=results,
            tests=tests,
            data=data,
            terminal=terminal,
        )

    def passed_all_base(self) -> bool:
        """Whether every base capability ran and passed its MUST cases."""
        return all((r := self.results.get(c)) is not None and r.passed is True for c in BASE_CAPABILITIES)

    def passed_all(self) -> bool:
        """Whether no capability failed and at least one passed (a capability that is not
        implemented, skipped or not selected does not count; a base one that is not
        implemented fails, CONTRACT §5)."""
        values = self.results.values()
        return all(r.passed is not False for r in values) and any(r.passed is True for r in values)

    def conformance_level(self) -> str:
        """``FULL``, ``BASE+PARTIAL``, ``BASE`` or ``NONE``: the kit's level (CONTRACT §5,
        docs/report-schema.md "Levels")."""
        return str(self.data.get("conformance_level") or "NONE")

    @property
    def saver(self) -> str | None:
        """The judged saver's class, with its distribution and version when it has one."""
        facts = self.data.get("facts") or {}
        cls = facts.get("bridge.class")
        if not cls:
            return None
        dist = facts.get("bridge.distribution")
        origin = f" from {dist} {facts.get('bridge.version', '')}".rstrip() if dist else " (of no installed distribution)"
        side = facts.get("bridge.side")
        return f"{cls}{origin}" + (f", its {side} methods" if side else "")

    def failed(self) -> list[CaseResult]:
        return [t for t in self.tests if t.outcome == "failed"]

    def render(self) -> str:
        """The report as ``print_report`` prints it."""
        width = 52
        border = "  " + "=" * width
        lines = [border, f"    Checkpointer Validation: {self.checkpointer_name}"]
        if self.saver:
            lines.append(f"    {self.saver}")
        lines.append(border)
        for title, kind in (("BASE CAPABILITIES", "base"), ("EXTENDED CAPABILITIES", "extended")):
            lines.append(f"    {title}")
            for cap, r in self.results.items():
                if r.kind != kind:
                    continue
                ran = r.tests_passed + r.tests_failed + r.tests_not_strict
                if r.passed is True:
                    icon, suffix = "✅", f"({r.tests_passed + r.tests_not_strict}/{ran} passed)"
                elif r.passed is False:
                    icon, suffix = "❌", f"({r.tests_failed} failed of {ran})" if r.tests_failed else f"({r.status})"
                elif r.status == "not_implemented":
                    icon, suffix = "⊘ ", "(not implemented)"
                else:
                    icon, suffix = "⏭ ", f"({r.status.replace('_', ' ')}" + (f": {r.skip_reason})" if r.skip_reason else ")")
                lines.append(f"      {icon} {cap:22s} {suffix}")
            lines.append("")
        failed = self.failed()
        if failed:
            lines.append("    FAILED")
            for t in failed:
                lines.append(f"      ✗ {t.id}")
                lines.extend(f"          {line}" for line in (t.message or "").splitlines())
            lines.append("")
        for w in self.data.get("warnings") or []:
            lines.append(f"    warning: {w}")
        counts = {o: sum(t.outcome == o for t in self.tests) for o in ("passed", "not_strict", "failed")}
        not_run = len(self.tests) - sum(counts.values())
        lines.append(
            f"    Tests: {counts['passed']} passed, {counts['not_strict']} passed not strict (SHOULD rules), "
            f"{counts['failed']} failed, {not_run} not run"
        )
        passed, detected = self.data.get("capabilities_passed", 0), self.data.get("capabilities_detected", 0)
        lines.append(f"    Result: {self.conformance_level()} ({passed}/{detected})")
        lines.append(border)
        return "\n".join(lines)

    def print_report(self) -> None:
        """Prints the report: capabilities, failed cases with the kit's messages, level."""
        print("\n" + self.render() + "\n")

    def to_dict(self) -> dict[str, Any]:
        """The kit's JSON report (docs/report-schema.md): the official kit's keys
        (``checkpointer_name``, ``conformance_level``, ``results`` with ``detected``,
        ``passed``, ``tests_passed``, ``tests_failed``, ``tests_skipped``, ``failures``)
        with the same names and types, plus the kit's own (``tests``, ``facts``, …)."""
        return {**self.data, "checkpointer_name": self.checkpointer_name}
