"""Runs the kit's binary (installed beside this package by the wheel) on a registration:
``checkpoint-conformance --backend python --saver checkpoint_conformance._child:registered
--python sys.executable``, so the saver is judged in the caller's own environment, with
the caller's ``sys.path`` handed to the bridge child (no PYTHONPATH by hand)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from checkpoint_conformance.initializer import FACTORY_ENV, RegisteredCheckpointer, module_path

BINARY = "checkpoint-conformance"
# Another binary (a development build): `CHECKPOINT_KIT_BINARY=target/debug/checkpoint-conformance`.
BINARY_ENV = "CHECKPOINT_KIT_BINARY"
CHILD_SPEC = "checkpoint_conformance._child:registered"
# Exit code of a usage error, the binary's and ours.
USAGE = 2


class UsageError(Exception):
    """Bad input, one line (exit 2)."""


def binary() -> str:
    """The kit's binary: $CHECKPOINT_KIT_BINARY, else the one the wheel installed into
    this interpreter's scripts directory, else the one on PATH."""
    given = os.environ.get(BINARY_ENV)
    if given:
        return given
    exe = BINARY + (".exe" if os.name == "nt" else "")
    dirs = [Path(sys.executable).parent, Path(sysconfig.get_path("scripts"))]
    try:
        dirs.append(Path(sysconfig.get_path("scripts", f"{os.name}_user")))
    except KeyError:
        pass
    for d in dirs:
        if (d / exe).is_file():
            return str(d / exe)
    found = shutil.which(BINARY)
    if found:
        return found
    raise UsageError(f"the {BINARY} binary is not installed beside {sys.executable}; pip install checkpoint-conformance")


def child_path(extra: list[str]) -> str:
    """PYTHONPATH for the bridge child: ``extra`` then this process's sys.path, absolute."""
    seen: list[str] = []
    for p in [*extra, *sys.path]:
        p = os.path.abspath(p or os.getcwd())
        if p not in seen and os.path.exists(p):
            seen.append(p)
    return os.pathsep.join(seen)


@dataclass
class Run:
    """What one run of the binary gave: its exit code, the JSON report (None when none was
    written), its stdout (the terminal report) and stderr."""

    code: int
    data: dict[str, Any] | None
    stdout: str
    stderr: str

    def usage_line(self) -> str:
        lines = [line for line in self.stderr.splitlines() if line.strip()]
        errors = [line for line in lines if line.startswith("error:")]
        return (errors or lines or [f"{BINARY} exited {self.code}"])[-1]


def command(
    registered: RegisteredCheckpointer,
    spec: str,
    *,
    json_path: str,
    capabilities: set[str] | None = None,
    cases: list[str] | None = None,
    fail_fast: bool = False,
    strict: bool = False,
    timeout: float | None = None,
    extra_args: list[str] | None = None,
) -> list[str]:
    args = [binary(), "--backend", "python", "--saver", CHILD_SPEC, "--python", sys.executable]
    args += ["--json", json_path, "--progress", "quiet"]
    if capabilities is not None:
        args += ["--capabilities", ",".join(sorted(capabilities))]
    for cap in sorted(registered.skip_capabilities):
        args += ["--skip", f"{cap}=skip_capabilities of checkpointer_test({registered.name!r})"]
    if cases is not None:
        args += ["--cases", ",".join(cases)]
    if fail_fast:
        args.append("--fail-fast")
    if strict:
        args.append("--strict")
    if timeout is not None:
        args += ["--timeout", str(timeout)]
    return args + list(extra_args or [])


def target(registered: RegisteredCheckpointer) -> tuple[str, list[str]]:
    """``module:attribute`` naming the registration for the child, and the sys.path
    entries it needs. Raises UsageError (one line)."""
    problem = registered.problem()
    if problem:
        raise UsageError(problem)
    try:
        module, attr, extra = module_path(registered)
    except ValueError as e:
        raise UsageError(str(e)) from None
    return f"{module}:{attr}", extra


def run(registered: RegisteredCheckpointer, **options: Any) -> Run:
    """Runs the catalog (or the ``cases`` given) on ``registered``; ``options`` as
    :func:`command` takes them."""
    spec, extra = target(registered)
    with tempfile.TemporaryDirectory(prefix="checkpoint-conformance-") as tmp:
        json_path = os.path.join(tmp, "report.json")
        env = dict(os.environ)
        env[FACTORY_ENV] = spec
        env["PYTHONPATH"] = child_path(extra)
        env.setdefault("NO_COLOR", "1")
        done = subprocess.run(
            command(registered, spec, json_path=json_path, **options),
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
        )
        data = None
        if os.path.exists(json_path):
            with open(json_path, encoding="utf-8") as f:
                data = json.load(f)
    return Run(done.returncode, data, done.stdout, done.stderr)


def list_cases() -> list[tuple[str, str]]:
    """The catalog: (id, strength) per case, in run order."""
    done = subprocess.run([binary(), "--list-cases"], capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise UsageError(f"{BINARY} --list-cases exited {done.returncode}: {done.stderr.strip()[-300:]}")
    return [tuple(line.split(" ", 1)) for line in done.stdout.splitlines() if line.strip()]  # type: ignore[misc]
