"""``python -m checkpoint_conformance ARGS``: the kit's binary with ARGS, e.g.
``python -m checkpoint_conformance record --graph my_app:build --inputs inputs.jsonl
--out my-app.json`` (docs/traces.md). A ``record`` without ``--python`` records in this
interpreter's environment (where the user's graph and LangGraph are installed)."""

from __future__ import annotations

import subprocess
import sys

from checkpoint_conformance._run import USAGE, UsageError, binary


def main(argv: list[str]) -> int:
    """Runs the binary with ``argv``; its exit code (2 with one line when it is missing)."""
    try:
        exe = binary()
    except UsageError as e:
        print(f"error: {e}", file=sys.stderr)
        return USAGE
    if argv[:1] == ["record"] and "--python" not in argv:
        argv = [*argv, "--python", sys.executable]
    return subprocess.run([exe, *argv]).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
