"""B5: a retried special write is not replaced when its call also has regular writes.

Kit cases: put_writes::mixed_call_decides_per_write, put_writes::task_path_is_not_part_of_the_write_key,
concurrency::mixed_put_writes_of_one_task_follow_a_serial_order (python:sqlite, sqlite-async,
postgres, postgres-async). SqliteSaver and PostgresSaver choose INSERT OR REPLACE / ON CONFLICT
DO UPDATE only when *every* write of the call is special (`all(w[0] in WRITES_IDX_MAP ...)`),
else INSERT OR IGNORE / DO NOTHING for all of them: the special write of a second mixed call
is dropped. InMemorySaver decides per write (SAVERS=memory shows the bug absent); upstream
langgraph issue #8833.

The three kit cases reduce to the first check below: the second (task paths p1 then p2) is
the one of task_path_is_not_part_of_the_write_key; the concurrency case's two calls, run one
after the other, already give its "x = a, __error__ = a", which no serial order allows.
"""

from savers import config, cp, run


async def check(s):
    bug = False
    for label, paths in (("same task path", ("", "")), ("task paths p1 then p2", ("p1", "p2"))):
        thread = "t-" + (paths[0] or "none")
        at = await s.call("put", config(thread), cp("1"), {}, {})
        await s.call("put_writes", at, [("__error__", "old"), ("x", 1)], "A", paths[0])
        await s.call("put_writes", at, [("__error__", "new"), ("x", 2)], "A", paths[1])
        writes = (await s.call("get_tuple", at)).pending_writes
        error = [v for (_, ch, v) in writes if ch == "__error__"]
        print(f"{s.name}: {label}: put_writes([__error__ 'old', x 1]) then ([__error__ 'new', x 2]) of task A -> {writes}")
        bug |= error != ["new"]
    # Control: a call of special writes only is replaced.
    at = await s.call("put", config("t-control"), cp("1"), {}, {})
    await s.call("put_writes", at, [("__error__", "old")], "A")
    await s.call("put_writes", at, [("__error__", "new")], "A")
    print(f"{s.name}: control, special writes only: {(await s.call('get_tuple', at)).pending_writes}")
    return bug


run(check, ["sqlite", "sqlite-async", "postgres", "postgres-async"])
