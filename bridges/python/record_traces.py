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


class Doc(TypedDict):
    text: str
    log: Annotated[list[str], operator.add]


def _doc_graph(rec: Recorder):
    g = StateGraph(Doc)
    g.add_node("outline", lambda s: {"text": s["text"] + " outlined", "log": ["outline"]})
    g.add_node("write", lambda s: {"text": s["text"] + " written", "log": ["write"]})
    g.add_node("edit", lambda s: {"text": s["text"] + " edited", "log": ["edit"]})
    g.add_edge(START, "outline")
    g.add_edge("outline", "write")
    g.add_edge("write", "edit")
    g.add_edge("edit", END)
    return g.compile(checkpointer=rec)


def update_state(rec: Recorder) -> None:
    """State injection: a run, then `update_state` without `as_node` and with it (each
    writes a checkpoint whose metadata source is "update"), read back, and a run on top."""
    app = _doc_graph(rec)
    config = {"configurable": {"thread_id": "update-state"}}
    app.invoke({"text": "memo", "log": []}, config)
    app.update_state(config, {"text": "memo (fixed by hand)", "log": ["human"]})
    app.get_state(config)
    app.update_state(config, {"log": ["as write"]}, as_node="write")
    app.get_state(config)
    app.invoke({"text": "memo v2", "log": []}, config)
    list(app.get_state_history(config, limit=3))


def time_travel(rec: Recorder) -> None:
    """Time travel: a finished run, then a replay from an older checkpoint (step 1) and an
    `update_state` on another older checkpoint with a run from it: both fork, so new
    checkpoints get a parent that is not the latest, and the latest (greatest id) has a
    smaller metadata step than the old branch's end."""
    app = _doc_graph(rec)
    config = {"configurable": {"thread_id": "time-travel"}}
    app.invoke({"text": "plan", "log": []}, config)
    history = list(app.get_state_history(config))
    by_step = {s.metadata["step"]: s.config for s in history}
    app.invoke(None, by_step[1])  # replay from after "outline": a fork of step 1
    app.get_state(config)
    forked = app.update_state(by_step[0], {"text": "plan B"})  # a fork of step 0
    app.get_state(config)  # the latest is the update (step 1), not the old branch's step 3
    app.invoke(None, forked)
    app.get_state(config)
    list(app.get_state_history(config))


class Outer(TypedDict):
    topic: str
    answer: str


def subgraph_paused(rec: Recorder) -> None:
    """A subgraph pauses (`interrupt()` inside it); the paused state is read with
    `get_state(subgraphs=True)`, which reads the child namespace's checkpoint and writes,
    then the run is resumed and read again."""

    def ask(s: Outer) -> dict:
        return {"answer": f"{s['answer']} / human: {interrupt({'check': s['answer']})}"}

    child = StateGraph(Outer)
    child.add_node("research", lambda s: {"answer": f"notes on {s['topic']}"})
    child.add_node("ask", ask)
    child.add_edge(START, "research")
    child.add_edge("research", "ask")
    child.add_edge("ask", END)
    g = StateGraph(Outer)
    g.add_node("intake", lambda s: {"answer": ""})
    g.add_node("agent", child.compile())
    g.add_node("reply", lambda s: {"answer": s["answer"] + " (sent)"})
    g.add_edge(START, "intake")
    g.add_edge("intake", "agent")
    g.add_edge("agent", "reply")
    g.add_edge("reply", END)
    app = g.compile(checkpointer=rec)
    config = {"configurable": {"thread_id": "subgraph-paused"}}
    app.invoke({"topic": "tides", "answer": ""}, config)
    app.get_state(config, subgraphs=True)
    app.invoke(Command(resume="fine"), config)
    app.get_state(config, subgraphs=True)


def functional(rec: Recorder) -> None:
    """The functional API: an `@entrypoint` calling two `@task`s (their results are
    `put_writes` of the entrypoint's checkpoint), `previous` across turns, an
    `interrupt()` and a resume."""
    from langgraph.func import entrypoint, task

    @task
    def draft(topic: str) -> str:
        return f"draft on {topic}"

    @task
    def score(text: str) -> int:
        return len(text)

    @entrypoint(checkpointer=rec)
    def workflow(topic: str, *, previous: list | None = None) -> list:
        text = draft(topic).result()
        n = score(text).result()
        verdict = interrupt({"text": text, "score": n})
        return [*(previous or []), f"{text} ({n}, {verdict})"]

    config = {"configurable": {"thread_id": "functional"}}
    workflow.invoke("bees", config)
    workflow.get_state(config)
    workflow.invoke(Command(resume="ok"), config)
    workflow.invoke("wasps", config)
    workflow.invoke(Command(resume="meh"), config)
    workflow.get_state(config)


def _durability(mode: str):
    def record(rec: Recorder) -> None:
        app = _doc_graph(rec)
        config = {"configurable": {"thread_id": f"durability-{mode}"}}
        for turn in "abcde":
            app.invoke({"text": turn, "log": []}, config, durability=mode)
        app.get_state(config)
        list(app.get_state_history(config))

    record.__doc__ = f"""The three-node graph run five times with durability="{mode}", then read."""
    return record


TRACES = {
    "linear": linear,
    "subgraph": subgraph,
    "interrupt": interrupted,
    "fanout-retry": fan_out,
    "killed-resumed": killed,
    "update-state": update_state,
    "time-travel": time_travel,
    "subgraph-paused": subgraph_paused,
    "functional": functional,
    "durability-exit": _durability("exit"),
    "durability-async": _durability("async"),
    "durability-sync": _durability("sync"),
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
