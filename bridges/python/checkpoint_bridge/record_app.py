"""Records a user's LangGraph application as a trace (docs/traces.md, issue 41):

    python -m checkpoint_bridge.record_app --graph my_app:build --inputs inputs.jsonl \\
        --out my-app.json [--app-id ID]

``--graph module:attr`` names a compiled graph, or a function returning one, or a function
returning a builder (``StateGraph``, compiled here with the recording checkpointer). A
function that takes one argument is given the checkpointer. The module is imported with
the current directory first on ``sys.path``.

The graph runs over :class:`~checkpoint_bridge.record.Recorder` around ``InMemorySaver``
and the trace (``checkpoint-trace/1``, with a ``recorded_with`` header) is written to
``--out``. The inputs file has one JSON object per line, one action each:

- ``{"invoke": INPUT}``: ``graph.invoke(INPUT, config)``;
- ``{"resume": VALUE}``: ``graph.invoke(Command(resume=VALUE), config)``;
- ``{"update_state": {"values": V, "as_node": "node"}}`` (``as_node`` optional);
- ``{"invoke_from": STEP_OR_ID, "input": INPUT}``: time travel, invoke from the thread's
  checkpoint of that metadata ``step`` (a number) or that ``checkpoint_id`` (a string);
  ``input`` defaults to null (run on from there);
- ``{"get_state": {"subgraphs": true}}`` (the object may be ``{}``);
- ``{"get_state_history": {"limit": N, "filter": {...}}}`` (the object may be ``{}``).

Every line may also carry ``"thread_id"`` (default ``"thread-1"``), ``"config"`` (more
``configurable`` keys, e.g. ``checkpoint_ns``) and, on invoke/resume/invoke_from,
``"durability"`` (``"exit"``, ``"async"``, ``"sync"``). A graph that raises is recorded
as it happened (the saver calls made up to the error) and the run goes on with the next
line; each is reported on stderr.

Exit codes: 0 written; 2 bad arguments or a bad inputs line (one line naming the file and
line number); 1 the graph could not be imported or built.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import os
import sys
from importlib import metadata
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver

from .record import Recorder, write_trace

USAGE = 2
THREAD = "thread-1"
ACTIONS = ("invoke", "resume", "update_state", "invoke_from", "get_state", "get_state_history")
COMMON = ("thread_id", "config", "durability", "input")
DURABILITY = ("exit", "async", "sync")


class BadInput(Exception):
    """One line naming what is wrong (exit 2)."""


def parse_inputs(path: str) -> list[tuple[int, str, dict[str, Any]]]:
    """The inputs file as ``(line number, action, line object)``, blank lines skipped.

    Raises :class:`BadInput` naming ``path:line`` for a line that is not a JSON object,
    has no action or two, an unknown key, or an argument of the wrong shape."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise BadInput(f"--inputs {path}: {e.strerror or e}") from None
    out = []
    for n, text in enumerate(lines, 1):
        if not text.strip():
            continue
        where = f"{path}:{n}"
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as e:
            raise BadInput(f"{where}: not JSON ({e.msg})") from None
        if not isinstance(obj, dict):
            raise BadInput(f"{where}: a line is a JSON object with one of {', '.join(ACTIONS)}")
        actions = [k for k in obj if k in ACTIONS]
        unknown = [k for k in obj if k not in ACTIONS and k not in COMMON]
        if unknown:
            raise BadInput(f"{where}: unknown key {unknown[0]!r} (actions: {', '.join(ACTIONS)}; also {', '.join(COMMON)})")
        if len(actions) != 1:
            raise BadInput(f"{where}: exactly one action of {', '.join(ACTIONS)} per line, found {len(actions)}")
        action = actions[0]
        arg = obj[action]
        if action in ("update_state", "get_state", "get_state_history") and not isinstance(arg, dict):
            raise BadInput(f"{where}: {action} takes an object")
        if action == "update_state" and (set(arg) - {"values", "as_node"} or "values" not in arg):
            raise BadInput(f"{where}: update_state takes {{\"values\": ..., \"as_node\": \"node\"}} (as_node optional)")
        if action == "get_state" and set(arg) - {"subgraphs"}:
            raise BadInput(f"{where}: get_state takes {{\"subgraphs\": true|false}}")
        if action == "get_state_history" and set(arg) - {"limit", "filter", "before"}:
            raise BadInput(f"{where}: get_state_history takes limit, filter and before")
        if action == "invoke_from" and (isinstance(arg, bool) or not isinstance(arg, (int, str))):
            raise BadInput(f"{where}: invoke_from takes a step number or a checkpoint_id string")
        if "input" in obj and action != "invoke_from":
            raise BadInput(f"{where}: `input` goes with invoke_from only")
        if "durability" in obj and (action not in ("invoke", "resume", "invoke_from") or obj["durability"] not in DURABILITY):
            raise BadInput(f"{where}: durability is one of {', '.join(DURABILITY)}, on invoke, resume or invoke_from")
        if not isinstance(obj.get("thread_id", THREAD), str) or not isinstance(obj.get("config", {}), dict):
            raise BadInput(f"{where}: thread_id is a string and config an object")
        out.append((n, action, obj))
    if not out:
        raise BadInput(f"{path}: no input lines, so the recording would be empty")
    return out


def load_graph(spec: str, saver: Recorder) -> Any:
    """The compiled graph ``module:attr`` names, run with ``saver`` as its checkpointer."""
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise BadInput(f"--graph {spec!r}: give module:attr (a compiled graph, or a function returning one)")
    sys.path.insert(0, os.getcwd())
    module = importlib.import_module(module_name)
    try:
        obj = getattr(module, attr)
    except AttributeError:
        raise BadInput(f"--graph {spec!r}: module {module_name} has no {attr}") from None
    if callable(obj) and not hasattr(obj, "invoke"):
        params = [p for p in inspect.signature(obj).parameters.values() if p.default is inspect.Parameter.empty]
        obj = obj(saver) if len(params) == 1 else obj()
    if hasattr(obj, "compile") and not hasattr(obj, "invoke"):
        obj = obj.compile(checkpointer=saver)
    if not hasattr(obj, "invoke") or not hasattr(obj, "checkpointer"):
        raise BadInput(f"--graph {spec!r}: not a compiled LangGraph graph, a builder, or a function returning one")
    obj.checkpointer = saver
    return obj


def _config(obj: dict[str, Any]) -> dict[str, Any]:
    return {"configurable": {**obj.get("config", {}), "thread_id": obj.get("thread_id", THREAD)}}


def _from(saver: Recorder, config: dict[str, Any], at: int | str) -> dict[str, Any]:
    """The config of the thread's checkpoint at metadata step ``at`` (a number: the latest
    of that step) or with id ``at``, looked up in the inner saver (not recorded)."""
    for t in saver.inner.list(config):
        if (isinstance(at, int) and t.metadata.get("step") == at) or t.config["configurable"]["checkpoint_id"] == at:
            return t.config
    raise LookupError(f"the thread has no checkpoint {'at step ' if isinstance(at, int) else ''}{at}")


def run(graph: Any, saver: Recorder, lines: list[tuple[int, str, dict[str, Any]]], path: str) -> int:
    """Runs every line; returns how many raised (each reported on stderr)."""
    from langgraph.types import Command

    raised = 0
    for n, action, obj in lines:
        config = _config(obj)
        kw = {"durability": obj["durability"]} if "durability" in obj else {}
        arg = obj[action]
        try:
            if action == "invoke":
                graph.invoke(arg, config, **kw)
            elif action == "resume":
                graph.invoke(Command(resume=arg), config, **kw)
            elif action == "update_state":
                graph.update_state(config, arg["values"], as_node=arg.get("as_node"))
            elif action == "invoke_from":
                graph.invoke(obj.get("input"), _from(saver, config, arg), **kw)
            elif action == "get_state":
                graph.get_state(config, subgraphs=bool(arg.get("subgraphs", False)))
            else:
                list(graph.get_state_history(config, **arg))
        except Exception as e:  # the graph's own error is part of the recording
            raised += 1
            print(f"record: {path}:{n}: {action} raised {type(e).__name__}: {e} (recorded; going on)", file=sys.stderr)
    return raised


def versions() -> dict[str, str]:
    out = {}
    for key, dist in (("langgraph", "langgraph"), ("langgraph_checkpoint", "langgraph-checkpoint")):
        try:
            out[key] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            pass
    return out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="checkpoint-conformance record", description=__doc__.split("\n\n")[0])
    parser.add_argument("--graph", required=True, help="module:attr, a compiled graph or a function returning one")
    parser.add_argument("--inputs", required=True, help="the JSON lines of what to do, one action a line")
    parser.add_argument("--out", required=True, help="the trace file to write")
    parser.add_argument("--app-id", help="an id for the application, kept in the trace header")
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return USAGE if e.code else 0
    try:
        lines = parse_inputs(args.inputs)
        saver = Recorder(InMemorySaver())
        graph = load_graph(args.graph, saver)
    except BadInput as e:
        print(f"error: {e}", file=sys.stderr)
        return USAGE
    except Exception as e:
        print(f"error: --graph {args.graph}: cannot import or build it: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    raised = run(graph, saver, lines, args.inputs)
    if not saver.steps:
        print("error: the graph made no saver call, so the trace would check nothing", file=sys.stderr)
        return 1
    trace = saver.trace(f"checkpoint-conformance record --graph {args.graph} --inputs {os.path.basename(args.inputs)}")
    trace["recorded_with"] = {**versions(), "app_id": args.app_id or args.graph}
    write_trace(args.out, trace)
    errs = f", {raised} line(s) raised" if raised else ""
    print(f"{args.out}: {len(saver.steps)} steps from {len(lines)} input lines{errs}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
