#!/usr/bin/env python3
"""Records the shipped traces (traces/README.md): runs small LangGraph graphs with the
recorder (checkpoint_bridge.record) around InMemorySaver and writes each trace to
traces/NAME.json. No model and no API key: every node is a stub.

    python3 bridges/python/record_traces.py            # every trace
    python3 bridges/python/record_traces.py interrupt  # one trace
    python3 bridges/python/record_traces.py --out DIR  # into DIR instead of traces/

Needs `langgraph` (the version in traces/README.md); without it, the script makes a
virtualenv under target/record-venv with the pinned packages and runs itself there.
"""

from __future__ import annotations

import operator
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Annotated, TypedDict

ROOT = Path(__file__).resolve().parents[2]
PINS = ["langgraph==1.2.22", "langgraph-checkpoint==4.3.2"]
VENV = ROOT / "target" / "record-venv"


def _ensure_langgraph() -> None:
    try:
        import langgraph.graph  # noqa: F401
    except ImportError:
        python = VENV / "bin" / "python"
        if os.environ.get("CHECKPOINT_RECORD_VENV") or not sys.executable:
            sys.exit("record_traces: langgraph is not installed and the virtualenv did not provide it")
        if not python.exists():
            subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", "-c",
                        str(ROOT / "bridges/python/constraints.txt"), *PINS], check=True)
        env = dict(os.environ, CHECKPOINT_RECORD_VENV="1")
        sys.exit(subprocess.run([str(python), __file__, *sys.argv[1:]], env=env).returncode)


_ensure_langgraph()
sys.path.insert(0, str(ROOT / "bridges" / "python"))

from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from langgraph.graph import END, START, StateGraph  # noqa: E402
from langgraph.types import Command, Send, interrupt  # noqa: E402

from checkpoint_bridge.record import Dead, Recorder, write_trace  # noqa: E402

OUT = ROOT / "traces"


class Log(TypedDict):
    count: int
    log: Annotated[list[str], operator.add]


def linear(rec: Recorder) -> None:
    """Three nodes in a row, four turns on one thread, then the state and its history."""
    g = StateGraph(Log)
    g.add_node("plan", lambda s: {"count": s["count"] + 1, "log": [f"plan {s['count']}"]})
    g.add_node("act", lambda s: {"log": [f"act {s['count']}"]})
    g.add_node("answer", lambda s: {"log": ["answer"]})
    g.add_edge(START, "plan")
    g.add_edge("plan", "act")
    g.add_edge("act", "answer")
    g.add_edge("answer", END)
    app = g.compile(checkpointer=rec)
    config = {"configurable": {"thread_id": "linear"}}
    for turn in range(4):
        app.invoke({"count": turn * 10, "log": [f"user {turn}"]}, config)
    app.get_state(config)
    list(app.get_state_history(config))


class Inner(TypedDict):
    text: str
    steps: Annotated[list[str], operator.add]


def subgraph(rec: Recorder) -> None:
    """A parent whose middle node is a compiled subgraph: child namespaces, `parents`."""
    child = StateGraph(Inner)
    child.add_node("draft", lambda s: {"text": s["text"] + " drafted", "steps": ["draft"]})
    child.add_node("polish", lambda s: {"text": s["text"] + " polished", "steps": ["polish"]})
    child.add_edge(START, "draft")
    child.add_edge("draft", "polish")
    child.add_edge("polish", END)
    g = StateGraph(Inner)
    g.add_node("intake", lambda s: {"steps": ["intake"]})
    g.add_node("writer", child.compile())
    g.add_node("publish", lambda s: {"steps": ["publish"]})
    g.add_edge(START, "intake")
    g.add_edge("intake", "writer")
    g.add_edge("writer", "publish")
    g.add_edge("publish", END)
    app = g.compile(checkpointer=rec)
    config = {"configurable": {"thread_id": "subgraph"}}
    for turn in range(2):
        app.invoke({"text": f"note {turn}", "steps": []}, config)
    app.get_state(config, subgraphs=True)


class Review(TypedDict):
    draft: str
    verdict: str


def interrupted(rec: Recorder) -> None:
    """A node asks a human (interrupt) and the run is resumed with an answer (Command)."""

    def ask(s: Review) -> dict:
        answer = interrupt({"question": "approve?", "draft": s["draft"]})
        return {"verdict": str(answer)}

    g = StateGraph(Review)
    g.add_node("write", lambda s: {"draft": s["draft"] + "!"})
    g.add_node("ask", ask)
    g.add_node("finish", lambda s: {"verdict": s["verdict"] + " (filed)"})
    g.add_edge(START, "write")
    g.add_edge("write", "ask")
    g.add_edge("ask", "finish")
    g.add_edge("finish", END)
    app = g.compile(checkpointer=rec)
    config = {"configurable": {"thread_id": "interrupt"}}
    app.invoke({"draft": "release notes", "verdict": ""}, config)
    app.get_state(config)
    app.invoke(Command(resume="approved"), config)
    app.get_state(config)


class Fan(TypedDict):
    items: list[int]
    results: Annotated[list[str], operator.add]


class Item(TypedDict):
    item: int


def fan_out(rec: Recorder) -> None:
    """Send fan-out over four items; the task of item 2 fails the first time, the run
    stops with the error, and running again retries only that task."""
    failed: set[int] = set()
    done = threading.Semaphore(0)

    def work(s: Item) -> dict:
        if s["item"] == 2 and 2 not in failed:
            failed.add(2)
            # Fail only once the three other tasks have returned, so that their writes are
            # saved before the error stops the step (the tasks run on threads; without the
            # wait the recording depends on timing).
            for _ in range(3):
                done.acquire(timeout=10)
            time.sleep(0.2)
            raise RuntimeError("tool timed out (stub)")
        if s["item"] != 2:
            done.release()
        return {"results": [f"done {s['item']}"]}

    g = StateGraph(Fan)
    g.add_node("split", lambda s: {})
    g.add_node("work", work)
    g.add_node("merge", lambda s: {"results": ["merged"]})
    g.add_edge(START, "split")
    g.add_conditional_edges("split", lambda s: [Send("work", {"item": i}) for i in s["items"]], ["work"])
    g.add_edge("work", "merge")
    g.add_edge("merge", END)
    app = g.compile(checkpointer=rec)
    config = {"configurable": {"thread_id": "fanout"}}
    try:
        app.invoke({"items": [1, 2, 3, 4], "results": []}, config)
    except RuntimeError:
        pass
    app.get_state(config)
    app.invoke(None, config)
    app.get_state(config)


class Job(TypedDict):
    done: Annotated[list[str], operator.add]


def killed(rec: Recorder) -> None:
    """Two branches run in parallel; one finishes (its writes are acknowledged), then the
    process dies in the other: from then on the saver is gone (nothing more reaches it).
    A new process opens the same storage (the `reopen` step) and resumes the run from
    what the saver kept."""
    kill = {"armed": True}

    def slow(s: Job) -> dict:
        if kill["armed"]:
            kill["armed"] = False
            deadline = time.monotonic() + 10
            while not any(st["call"] == "put_writes" and st["writes"][0][0] == "done" and
                          st["writes"][0][1] == rec._value(["fast"]) for st in rec.steps):
                if time.monotonic() > deadline:
                    raise RuntimeError("the fast branch's writes never came")
                time.sleep(0.01)
            rec.dead = True
            raise Dead("killed")
        return {"done": ["slow"]}

    def build(saver: Recorder):
        g = StateGraph(Job)
        g.add_node("start", lambda s: {"done": ["start"]})
        g.add_node("fast", lambda s: {"done": ["fast"]})
        g.add_node("slow", slow)
        g.add_node("report", lambda s: {"done": ["report"]})
        g.add_edge(START, "start")
        g.add_edge("start", "fast")
        g.add_edge("start", "slow")
        g.add_edge(["fast", "slow"], "report")
        g.add_edge("report", END)
        return g.compile(checkpointer=saver)

    config = {"configurable": {"thread_id": "killed"}}
    try:
        build(rec).invoke({"done": []}, config, durability="sync")
    except Dead:
        pass
    rec.dead = False
    # The new process: a new saver over the storage the dead one left behind.
    old = rec.inner
    fresh = InMemorySaver()
    fresh.storage, fresh.writes, fresh.blobs = old.storage, old.writes, old.blobs
    rec.inner = fresh
    rec.mark_reopen()
    app = build(rec)
    app.get_state(config)
    app.invoke(None, config, durability="sync")
    app.get_state(config)


TRACES = {
    "linear": linear,
    "subgraph": subgraph,
    "interrupt": interrupted,
    "fanout-retry": fan_out,
    "killed-resumed": killed,
}


def main(argv: list[str]) -> int:
    import langgraph.version as v

    out, names = OUT, list(argv)
    if names[:1] == ["--out"]:
        if len(names) < 2:
            print("record_traces: --out needs a directory", file=sys.stderr)
            return 2
        out, names = Path(names[1]), names[2:]
    unknown = [n for n in names if n not in TRACES]
    if unknown:
        print(f"record_traces: unknown trace {unknown[0]!r} (known: {', '.join(TRACES)})", file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    for name in names or list(TRACES):
        rec = Recorder(InMemorySaver())
        TRACES[name](rec)
        source = f"python3 bridges/python/record_traces.py {name} (langgraph {v.__version__}, InMemorySaver)"
        write_trace(str(out / f"{name}.json"), rec.trace(source))
        print(f"{out / name}.json: {len(rec.steps)} steps")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
