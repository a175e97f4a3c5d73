"""LangGraph's own savers on the workloads of conformance-bench (bench/src/workload.rs).

Run by `cargo xtask bench --python` with the bridge's managed environment (pinned
langgraph-checkpoint, -sqlite, -postgres). Prints one JSON object: the same figure keys as
the Rust bench, every figure with its median, min, max and repetitions, and the Python and
package versions. Inputs are built before the clock starts, as in the Rust bench; a Python
saver's put serialises the values itself (its API takes objects), ours receives them
serialised (the contract's API takes typed bytes).

    python bench.py --target memory|sqlite|postgres --reps 5 --min-ms 300 [--dir D]
    (postgres reads CHECKPOINT_POSTGRES_URL)
"""

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import threading
import time
from importlib import metadata as md

from langgraph.checkpoint.base.id import uuid6

BATCH = 2000
CHANNELS = 10


def figure(unit, reps):
    return {"median": statistics.median(reps), "min": min(reps), "max": max(reps), "unit": unit, "reps": reps}


def step(cid, n):
    """Step n: 10 channels of new JSON strings at version n + 1 (as workload::step)."""
    values = {f"channel_{c}": f"value {c} at step {n}" for c in range(CHANNELS)}
    versions = {k: n + 1 for k in values}
    cp = {
        "v": 1,
        "id": cid,
        "ts": "2026-11-29T21:03:59.727899+00:00",
        "channel_values": values,
        "channel_versions": versions,
        "versions_seen": {},
        "updated_channels": None,
    }
    return cp, {"source": "loop", "step": n, "parents": {}}, dict(versions)


def steps(first, n):
    return [step(str(uuid6()), first + i) for i in range(n)]


def cfg(thread, cid=None):
    c = {"thread_id": thread, "checkpoint_ns": ""}
    if cid is not None:
        c["checkpoint_id"] = cid
    return {"configurable": c}


def put_chain(saver, config, batch):
    start = time.perf_counter()
    for cp, meta, nv in batch:
        config = saver.put(config, cp, meta, nv)
    return config, time.perf_counter() - start


def chain(saver, thread, n):
    config, done = cfg(thread), 0
    while done < n:
        k = min(BATCH, n - done)
        config = put_chain(saver, config, steps(done, k))[0]
        done += k
    return config


def put_rate(saver, thread, min_s):
    config, spent, n = cfg(thread), 0.0, 0
    while spent < min_s:
        config, d = put_chain(saver, config, steps(n, BATCH))
        spent, n = spent + d, n + BATCH
    return n / spent


def put_writes_rate(saver, config, tag, min_s):
    spent, n = 0.0, 0
    while spent < min_s:
        batch = [([(f"ch{k}", {"task": i, "k": k}) for k in range(5)], f"task-{tag}-{i}") for i in range(n, n + BATCH)]
        start = time.perf_counter()
        for ws, task in batch:
            saver.put_writes(config, ws, task, "")
        spent, n = spent + time.perf_counter() - start, n + BATCH
    return n / spent


def get_rate(saver, config, min_s):
    start, n = time.perf_counter(), 0
    while n % 16 or time.perf_counter() - start < min_s:
        assert saver.get_tuple(config) is not None
        n += 1
    return n / (time.perf_counter() - start)


def list_ms(saver, thread, min_s):
    start, n = time.perf_counter(), 0
    while n == 0 or time.perf_counter() - start < min_s:
        assert len(list(saver.list(cfg(thread)))) == 1000
        n += 1
    return (time.perf_counter() - start) * 1e3 / n


def concurrent_put_rate(savers, tag, per_task):
    """8 threads, each chaining puts on its own thread id (a saver each, or one shared)."""
    inputs = [steps(0, per_task) for _ in range(8)]
    threads = [
        threading.Thread(target=put_chain, args=(savers[i % len(savers)], cfg(f"conc-{tag}-{i}"), inputs[i]))
        for i in range(8)
    ]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return 8 * per_task / (time.perf_counter() - start)


def open_savers(target, directory, stack):
    """The saver under test and the savers the 8 threads use."""
    if target == "memory":
        from langgraph.checkpoint.memory import InMemorySaver

        s = InMemorySaver()
        return s, [s]
    if target == "sqlite":
        import sqlite3

        from langgraph.checkpoint.sqlite import SqliteSaver

        conn = sqlite3.connect(os.path.join(directory, "python.db"), check_same_thread=False)
        s = SqliteSaver(conn)
        s.setup()
        return s, [s]
    from langgraph.checkpoint.postgres import PostgresSaver

    url = postgres_schema(stack)
    first = stack.enter_context(PostgresSaver.from_conn_string(url))
    first.setup()
    return first, [first] + [stack.enter_context(PostgresSaver.from_conn_string(url)) for _ in range(7)]


def postgres_schema(stack):
    """A schema of the bench's own on the server of CHECKPOINT_POSTGRES_URL (dropped on
    exit); returns a conninfo whose search_path is that schema."""
    import psycopg
    from psycopg.conninfo import make_conninfo

    url = os.environ["CHECKPOINT_POSTGRES_URL"]
    schema = f"bench_python_{os.getpid()}"

    def drop():
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    stack.callback(drop)
    return make_conninfo(url, options=f"-c search_path={schema}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--target", required=True, choices=["memory", "sqlite", "postgres"])
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--min-ms", type=int, default=300)
    p.add_argument("--dir")
    a = p.parse_args()
    min_s = a.min_ms / 1e3
    from contextlib import ExitStack

    out = {
        "python": platform.python_version(),
        "packages": {
            k: md.version(k)
            for k in ("langgraph-checkpoint", "langgraph-checkpoint-sqlite", "langgraph-checkpoint-postgres", "psycopg")
        },
    }
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        saver, savers = open_savers(a.target, a.dir or tmp, stack)
        one = cfg(chain(saver, "one", 1)["configurable"]["thread_id"])
        big = cfg(chain(saver, "big", 10_000)["configurable"]["thread_id"])
        chain(saver, "thousand", 1000)
        fig = {k: [] for k in ("put", "get1", "get10k", "list", "writes", "conc", "ratio")}
        for rep in range(a.reps):
            wcfg = chain(saver, f"writes-{rep}", 1)
            single = put_rate(saver, f"put-{rep}", min_s)
            fig["put"].append(single)
            fig["get1"].append(get_rate(saver, one, min_s))
            fig["get10k"].append(get_rate(saver, big, min_s))
            fig["list"].append(list_ms(saver, "thousand", min_s))
            fig["writes"].append(put_writes_rate(saver, wcfg, str(rep), min_s))
            per_task = max(16, min(20_000, int(single * min_s / 8)))
            c = concurrent_put_rate(savers, str(rep), per_task)
            fig["conc"].append(c)
            fig["ratio"].append(c / single)
            # In memory, what the repetition stored goes before the next (as in the Rust
            # bench): every repetition measures a heap of the same size, whatever its speed.
            if a.target == "memory":
                for thread in [f"put-{rep}", f"writes-{rep}"] + [f"conc-{rep}-{i}" for i in range(8)]:
                    saver.delete_thread(thread)
    out["put_10_channels_per_s"] = figure("ops/s", fig["put"])
    out["get_tuple_latest_1_per_s"] = figure("ops/s", fig["get1"])
    out["get_tuple_latest_10k_per_s"] = figure("ops/s", fig["get10k"])
    out["list_1000_ms"] = figure("ms", fig["list"])
    out["put_writes_5_per_s"] = figure("calls/s", fig["writes"])
    out["put_8_tasks_per_s"] = figure("ops/s", fig["conc"])
    out["put_8_tasks_over_single"] = figure("ratio", fig["ratio"])
    json.dump(out, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
