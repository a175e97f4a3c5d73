"""``python -m checkpoint_conformance ARGS``: the kit's binary with ARGS, e.g.
``python -m checkpoint_conformance record --graph my_app:build --inputs inputs.jsonl
--out my-app.json`` (docs/traces.md). A ``record`` of a Python graph without ``--python``
records in this interpreter's environment (where the user's graph and LangGraph are
installed); a LangGraph JS graph (``--graph ./app.mjs:build``) is recorded under node.
A ``replay`` on a ``--backend python:*`` saver without ``--python`` runs the saver in this
interpreter too."""

from __future__ import annotations

import subprocess
import sys

from checkpoint_conformance._run import USAGE, UsageError, binary


JS_MODULE = (".mjs", ".js", ".cjs")


def js_graph(argv: list[str]) -> bool:
    """Whether ``--graph FILE:EXPORT`` names a JavaScript module (the binary records it
    under node, and refuses ``--python`` for it)."""
    for i, arg in enumerate(argv):
        value = argv[i + 1] if arg == "--graph" and i + 1 < len(argv) else arg.removeprefix("--graph=")
        if arg == "--graph" or arg.startswith("--graph="):
            return value.rpartition(":")[0].endswith(JS_MODULE)
    return False


def python_backend(argv: list[str]) -> bool:
    """Whether ``--backend`` names a saver through the Python bridge (``python:*``)."""
    for i, arg in enumerate(argv):
        if arg == "--backend" and i + 1 < len(argv):
            return argv[i + 1].startswith("python:")
        if arg.startswith("--backend="):
            return arg.removeprefix("--backend=").startswith("python:")
    return False


def main(argv: list[str]) -> int:
    """Runs the binary with ``argv``; its exit code (2 with one line when it is missing)."""
    try:
        exe = binary()
    except UsageError as e:
        print(f"error: {e}", file=sys.stderr)
        return USAGE
    here = "--python" not in argv and not any(a.startswith("--python=") for a in argv)
    if here and ((argv[:1] == ["record"] and not js_graph(argv)) or (argv[:1] == ["replay"] and python_backend(argv))):
        argv = [*argv, "--python", sys.executable]
    return subprocess.run([exe, *argv]).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
