"""LangGraph's official conformance kit (langgraph-checkpoint-conformance) on one of
LangGraph's own savers, run as its own self-test runs it: one `checkpointer_test`
registration, one `validate`, the report's verdict as the exit code.

Run by `cargo xtask bench --python`, which times the whole process (interpreter start to
exit) against a whole run of ours, alternating, and reads the versions this script prints.

    python official_kit.py memory|sqlite        (exit 0: every base capability passed)
    python official_kit.py --versions           (one JSON line: the packages' versions)
"""

import asyncio
import json
import os
import sys
import tempfile


def versions():
    from importlib import metadata as md

    names = ["langgraph-checkpoint-conformance", "langgraph-checkpoint", "langgraph-checkpoint-sqlite"]
    return {n: md.version(n) for n in names}


async def main(target):
    from langgraph.checkpoint.conformance import checkpointer_test, validate

    if target == "memory":
        from langgraph.checkpoint.memory import InMemorySaver

        @checkpointer_test(name="InMemorySaver")
        async def saver():
            yield InMemorySaver()

    else:
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        # A fresh database file per factory call, in a temporary directory, as ours.
        @checkpointer_test(name="AsyncSqliteSaver")
        async def saver():
            with tempfile.TemporaryDirectory() as d:
                async with AsyncSqliteSaver.from_conn_string(os.path.join(d, "db.sqlite")) as s:
                    yield s

    report = await validate(saver)
    return 0 if report.passed_all_base() else 1


if __name__ == "__main__":
    if sys.argv[1:] == ["--versions"]:
        print(json.dumps(versions()))
        sys.exit(0)
    if sys.argv[1:] not in (["memory"], ["sqlite"]):
        print("usage: official_kit.py memory|sqlite|--versions", file=sys.stderr)
        sys.exit(2)
    sys.exit(asyncio.run(main(sys.argv[1])))
