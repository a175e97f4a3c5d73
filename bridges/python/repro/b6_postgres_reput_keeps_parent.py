"""B6: PostgresSaver and AsyncPostgresSaver keep the old parent when a checkpoint id is put again.

Kit cases: put::reput_replaces_checkpoint_metadata_and_parent and, through it,
delta_channel_history::follows_replaced_parent (python:postgres, python:postgres-async).
Its upsert (`ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET checkpoint =
EXCLUDED.checkpoint, metadata = EXCLUDED.metadata`) leaves parent_checkpoint_id as it was: the
row then holds the new checkpoint and metadata under the old parent. InMemorySaver and
SqliteSaver replace all three (SAVERS=memory,sqlite shows the bug absent).
"""

from savers import config, cp, run


async def check(s):
    one = await s.call("put", config(), cp("1"), {"n": 1}, {})
    two = await s.call("put", config(), cp("2"), {"n": 2}, {})
    await s.call("put", one, cp("3"), {"n": 1}, {})  # "3" as a child of "1"
    await s.call("put", two, cp("3"), {"n": 2}, {})  # "3" again, as a child of "2"
    t = await s.call("get_tuple", config(id="3"))
    parent = t.parent_config["configurable"]["checkpoint_id"] if t.parent_config else None
    print(f"{s.name}: after putting '3' as a child of '1', then again as a child of '2': metadata n = {t.metadata.get('n')}, parent = {parent!r}")

    # follows_replaced_parent: c0 (holds a value of "ch") <- c1 <- c2 <- c3, a write on "ch"
    # at c1 and at c2; then c2 is put again with parent c0. The walk from c3 should see c2's
    # write, then c0's value; c1 is no longer on the path.
    root = config("u")
    v = s.saver.get_next_version(None, None)
    c0 = await s.call("put", root, cp("10", {"ch": "seed"}, {"ch": v}), {}, {"ch": v})
    c1 = await s.call("put", c0, cp("11"), {}, {})
    await s.call("put_writes", c1, [("ch", "w1")], "task-1")
    c2 = await s.call("put", c1, cp("12"), {}, {})
    await s.call("put_writes", c2, [("ch", "w2")], "task-2")
    c3 = await s.call("put", c2, cp("13"), {}, {})
    await s.call("put", c0, cp("12"), {}, {})  # c2 again, as a child of c0
    h = (await s.call("get_delta_channel_history", config=c3, channels=["ch"]))["ch"]
    print(f"{s.name}: delta history of '13' after '12' was put again as a child of '10': writes {h['writes']}, seed {h.get('seed')!r} (expected task-2's write only)")
    return parent != "2"


run(check, ["postgres", "postgres-async"])
