"""B4: SqliteSaver and AsyncSqliteSaver read a dotted filter key as a JSON path.

Kit case: list::filter_key_is_top_level_literal (python:sqlite, python:sqlite-async).
`list(filter={"a.b": 1})` builds `json_extract(metadata, '$.a.b')`: it finds the checkpoint
whose metadata is {"a": {"b": 1}} and misses the one whose metadata has the key "a.b".
InMemorySaver compares the top-level key (SAVERS=memory shows the bug absent).
"""

from savers import config, cp, run


async def check(s):
    await s.call("put", config(), cp("1"), {"a.b": 1}, {})  # the key "a.b"
    await s.call("put", config(), cp("2"), {"a": {"b": 1}}, {})  # nested
    got = [t.config["configurable"]["checkpoint_id"] for t in await s.list(config(), filter={"a.b": 1})]
    print(f"{s.name}: list(filter={{'a.b': 1}}) -> {got} (checkpoint 1 has the key 'a.b', 2 has {{'a': {{'b': 1}}}})")
    return got != ["1"]


run(check, ["sqlite", "sqlite-async"])
