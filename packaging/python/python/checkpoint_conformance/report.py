"""The report of a run, with the official kit's methods (``passed_all_base``,
``passed_all``, ``conformance_level``, ``print_report``, ``to_dict``) over the kit's JSON
report (docs/report-schema.md), and the official kit's ``ProgressCallbacks``."""

from __future__ import annotations

import re
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
    """One capability (the official kit's fields first, then the kit's own).

    ``passed`` is the official kit's: ``True`` when the capability ran and passed, ``False``
    when it failed or is incomplete, ``None`` when it did not run. It is judged on the MUST
    rules; in a strict run (``validate(strict=True)``) on the SHOULD rules too, so a
    capability with a case *passed, not strict* is ``False`` there (``status`` "failed",
    its not-strict cases in ``failures``). ``passed_strict`` is the verdict counting the
    SHOULD rules, whatever the run."""

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
    passed_strict: bool | None = None


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


# The levels of CONTRACT §5, lowest first.
LEVELS = ("NONE", "BASE", "BASE+PARTIAL", "FULL")

# The kit's reason for a registration that cannot reopen its storage: its head says what is
# missing, its parenthesis what a Rust registration and a bridged saver do, which for a
# `checkpointer_test` registration is its `location=`. Only the head is matched, so a
# rewording of the Rust advice does not lose the Python one.
_NO_REOPEN = "durability is not implemented:"
_REOPEN_HINT = (
    'give checkpointer_test(..., location="file"), or location=a callable returning a fresh location per case '
    '(docs/python-package.md, "Reopen and durability")'
)


def _python_message(message: str | None) -> str | None:
    """A case's message as a Python user acts on it: the Rust and bridge APIs the kit's
    reason for a missing reopen names become ``checkpointer_test(location=...)``."""
    if not message or not message.startswith(_NO_REOPEN):
        return message
    head = message.split(" (", 1)[0]
    return f"{head} ({_REOPEN_HINT})"


def _level(passed: dict[str, bool | None], detected: dict[str, bool]) -> str:
    """The level rules of CONTRACT §5 over each capability's verdict."""
    base = sum(passed.get(c) is True for c in BASE_CAPABILITIES)
    extended_ok = all(passed[c] is not False for c in passed if c not in BASE_CAPABILITIES and detected.get(c))
    if base == len(BASE_CAPABILITIES):
        return "FULL" if extended_ok else "BASE+PARTIAL"
    return "BASE" if base else "NONE"


@dataclass
class CapabilityReport:
    """The kit's report. ``data`` is the binary's JSON report as written, ``terminal`` the
    binary's own text report, ``strict`` whether the run judged the SHOULD rules too
    (``validate(strict=True)``), ``selection`` whether it ran only some capabilities or
    cases (``validate(capabilities=...)``, ``cases=...``, ``pytest -k``).

    Every verdict is derived from the capabilities' ``passed`` (on the MUST rules) and
    ``passed_strict`` (on the SHOULD rules too) in the same way: in a strict run a
    capability with a case *passed, not strict* is not passed, whatever binary wrote the
    report."""

    checkpointer_name: str
    results: dict[str, CapabilityResult] = field(default_factory=dict)
    tests: list[CaseResult] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)
    terminal: str = ""
    strict: bool = False
    selection: bool = False

    @classmethod
    def from_json(
        cls, data: dict[str, Any], name: str | None = None, terminal: str = "", selection: bool | None = None
    ) -> CapabilityReport:
        strict = bool(data.get("strict"))
        tests = [
            CaseResult(**{k: t[k] for k in CaseResult.__dataclass_fields__ if k in t}) for t in data.get("tests") or []
        ]
        for t in tests:
            t.message = _python_message(t.message)
        results = {}
        for cap, r in (data.get("results") or {}).items():
            result = CapabilityResult(**{k: r[k] for k in CapabilityResult.__dataclass_fields__ if k in r})
            if result.passed_strict is None and result.passed is not None and "passed_strict" not in r:
                # A report older than passed_strict: the SHOULD cases not strict say it.
                result.passed_strict = result.passed and result.tests_not_strict == 0
            if strict and result.passed is True and result.passed_strict is not True:
                # Strict: a case passed, not strict, is a failed case of its capability
                # (as the binary's own report says since it counts the SHOULD cases).
                result.passed, result.status = False, "failed"
                listed = {f.split(":", 1)[0] for f in result.failures}
                result.failures = result.failures + [
                    f"{t.name}: {t.message or ''}"
                    for t in tests
                    if t.capability == cap and t.outcome == "not_strict" and t.name not in listed
                ]
            results[cap] = result
        if selection is None:
            selection = any(r.status == "not_selected" for r in results.values())
        return cls(
            checkpointer_name=name or data.get("checkpointer_name", ""),
            results=results,
            tests=tests,
            data=data,
            terminal=terminal,
            strict=strict,
            selection=selection,
        )

    def _judged(self) -> list[CapabilityResult]:
        """The capabilities that ran (``passed`` is not None)."""
        return [r for r in self.results.values() if r.passed is not None]

    @property
    def capabilities_passed(self) -> int:
        """Capabilities passed (the first number of ``Result: LEVEL (passed/detected)``)."""
        return sum(r.passed is True for r in self.results.values())

    @property
    def capabilities_detected(self) -> int:
        """Capabilities judged (the second number)."""
        return len(self._judged())

    def conformance_level(self) -> str:
        """``FULL``, ``BASE+PARTIAL``, ``BASE`` or ``NONE``: the kit's level (CONTRACT §5,
        docs/report-schema.md "Levels"), on the MUST rules; in a strict run on the SHOULD
        rules too. The binary's level, or the one the capabilities give if that is lower."""
        given = str(self.data.get("strict_level") if self.strict and self.data.get("strict_level") else "")
        given = given or str(self.data.get("conformance_level") or "NONE")
        passed = {c: r.passed for c, r in self.results.items()}
        mine = _level(passed, {c: r.detected for c, r in self.results.items()})
        if given not in LEVELS:
            return mine
        return min(given, mine, key=LEVELS.index)

    def passed_all_base(self) -> bool:
        """The official kit's meaning: every base capability (put, put_writes, get_tuple,
        list, delete_thread) ran and passed, so the level is BASE+PARTIAL or FULL. Judged on
        the MUST rules (a case passed, not strict, passes); with ``strict=True`` on the
        SHOULD rules too."""
        every = all((r := self.results.get(c)) is not None and r.passed is True for c in BASE_CAPABILITIES)
        return every and self.conformance_level() in ("BASE+PARTIAL", "FULL")

    def passed_all(self) -> bool:
        """The official kit's meaning: every capability that ran passed. Here also: the run
        started, at least one capability passed, and, for a run of the whole catalog, the
        level is FULL (a base capability that is not implemented, skipped or incomplete is
        not passed, CONTRACT §5). For a selection (``capabilities=``, ``cases=``) the
        selected capabilities decide, as for the binary's exit code. Judged on the MUST
        rules; with ``strict=True`` on the SHOULD rules too. True exactly when the binary
        exits 0 for the run."""
        judged = self._judged()
        ok = (
            not self.data.get("setup_error")
            and all(r.passed is True for r in judged)
            and any(r.passed is True for r in judged)
        )
        return bool(ok) and (self.selection or self.conformance_level() == "FULL")

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

    def not_strict(self) -> list[CaseResult]:
        """The cases passed, not strict (their SHOULD rule failed), with their messages."""
        return [t for t in self.tests if t.outcome == "not_strict"]

    def render(self) -> str:
        """The report as ``print_report`` prints it: the binary's own terminal report of the
        run (capabilities with their counts, failures and cases passed not strict with the
        kit's messages, warnings, the level and the strict level), under the registration's
        name, then the verdicts of this report's methods."""
        given = self.data.get("checkpointer_name")
        text = self.terminal.strip("\n")
        if given and self.checkpointer_name and given != self.checkpointer_name:
            text = text.replace(f"Checkpointer Validation: {given}", f"Checkpointer Validation: {self.checkpointer_name}", 1)
        if not text:
            text = f"  Checkpointer Validation: {self.checkpointer_name} (the binary's text report was not kept)"
        lines = [text]
        # A binary that judged --strict before its capabilities counted the SHOULD cases
        # shows them passed; say which are not.
        shown = {c: r.get("passed") for c, r in (self.data.get("results") or {}).items()}
        demoted = [c for c, r in self.results.items() if shown.get(c) is True and r.passed is not True]
        if demoted:
            lines.append(
                f"  strict: not passed, for cases passed not strict (SHOULD rules): {', '.join(demoted)}"
            )
        rules = "MUST and SHOULD rules (strict=True)" if self.strict else "MUST rules"
        lines.append(
            f"  {self.conformance_level()} ({self.capabilities_passed}/{self.capabilities_detected}) on {rules}: "
            f"passed_all_base() {self.passed_all_base()}, passed_all() {self.passed_all()}"
        )
        return "\n".join(lines)

    def print_report(self) -> None:
        """Prints the binary's terminal report of the run and this report's verdicts."""
        print("\n" + self.render() + "\n")

    def to_dict(self) -> dict[str, Any]:
        """The kit's JSON report (docs/report-schema.md): the official kit's keys
        (``checkpointer_name``, ``conformance_level``, ``results`` with ``detected``,
        ``passed``, ``tests_passed``, ``tests_failed``, ``tests_skipped``, ``failures``)
        with the same names and types, plus the kit's own (``tests``, ``facts``, …), with
        the verdicts as this report's methods give them."""
        out = dict(self.data)
        results = {}
        for cap, r in (self.data.get("results") or {}).items():
            mine = self.results.get(cap)
            results[cap] = dict(r) if mine is None else {
                **r,
                "passed": mine.passed,
                "passed_strict": mine.passed_strict,
                "status": mine.status,
                "failures": list(mine.failures),
            }
        by_id = {t.id: t for t in self.tests}
        out["tests"] = [
            {**t, "message": by_id[t["id"]].message} if t.get("id") in by_id else t for t in self.data.get("tests") or []
        ]
        out.update(
            checkpointer_name=self.checkpointer_name,
            conformance_level=self.conformance_level(),
            results=results,
            capabilities_passed=self.capabilities_passed,
            capabilities_detected=self.capabilities_detected,
        )
        return out
