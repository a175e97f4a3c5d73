"""B8: AsyncSqliteSaver.adelete_thread on a fresh database fails: "no such table".

Kit result: the fuzz trial's `delete_thread::fuzz_model_sequences` on python:sqlite-async
(`cargo xtask fuzz --backend python:sqlite-async --seed 4162649083824253336` shrinks to the
one call). `adelete_thread` runs its DELETEs without `await self.setup()`, which every other
async method of the saver calls first, so before any put its tables do not exist. The sync
SqliteSaver's `delete_thread` goes through `self.cursor()`, which sets up (SAVERS=sqlite
shows the bug absent). LangGraph calls it when a thread is deleted, which may come first
on a fresh store.
"""

from savers import run


async def check(s):
    try:
        await s.call("delete_thread", "never-stored")
    except Exception as e:  # the bug: the saver's own error, not a no-op
        print(f"{s.name}: delete_thread('never-stored') on a fresh database -> {type(e).__name__}: {e}")
        return True
    print(f"{s.name}: delete_thread('never-stored') on a fresh database -> None (a no-op)")
    return False


run(check, ["sqlite-async"])
