"""B7: PostgresSaver's get_delta_channel_history walks only ids up to the target's.

Kit case: delta_channel_history::follows_parent_links_not_id_order (python:postgres,
python:postgres-async). BaseCheckpointSaver.get_delta_channel_history "walks the parent chain
(not list(before=...))" and says "the return contract is fixed here"; PostgresSaver overrides
it for speed and reads only the rows with `checkpoint_id <= target` ("a checkpoint's
ancestors have smaller ids (uuid6 is time-ordered)"). When an ancestor's id is greater than
the target's, the override misses it and returns another history than the base class's walk
on the same saver and data. Reachable only with ids that run against the parent chain (ids
chosen by the caller, or clocks that differ between writers); LangGraph's runtime on one
clock makes every child's id greater than its parent's.

Chain: "3" (holds a value of "ch") <- "1" (a write on "ch") <- "2". From "2": writes ["at-1"],
seed "seed".
"""

from langgraph.checkpoint.base import BaseCheckpointSaver

from savers import config, cp, run


async def check(s):
    v = s.saver.get_next_version(None, None)
    c3 = await s.call("put", config(), cp("3", {"ch": "seed"}, {"ch": v}), {}, {"ch": v})
    c1 = await s.call("put", c3, cp("1"), {}, {})
    await s.call("put_writes", c1, [("ch", "at-1")], "task-1")
    c2 = await s.call("put", c1, cp("2"), {}, {})
    await s.call("put_writes", c2, [("ch", "at-2")], "task-2")
    own = (await s.call("get_delta_channel_history", config=c2, channels=["ch"]))["ch"]
    if s.is_async:
        base = await BaseCheckpointSaver.aget_delta_channel_history(s.saver, config=c2, channels=["ch"])
    else:
        base = BaseCheckpointSaver.get_delta_channel_history(s.saver, config=c2, channels=["ch"])
    base = base["ch"]
    show = lambda h: f"writes {h['writes']}, seed {h.get('seed', '(none)')!r}"
    print(f"{s.name}: delta history of '2' (chain '3' <- '1' <- '2'): {type(s.saver).__name__}'s: {show(own)}")
    print(f"{s.name}: BaseCheckpointSaver's parent walk on the same saver: {show(base)}")
    return (own["writes"], own.get("seed")) != (base["writes"], base.get("seed"))


run(check, ["postgres", "postgres-async"])
