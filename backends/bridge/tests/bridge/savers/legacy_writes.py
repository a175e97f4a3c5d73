"""A saver written for langgraph-checkpoint 2.x: its ``put_writes`` and ``aput_writes``
take (config, writes, task_id), no ``task_path``. LangGraph's runtime looks at the
signature and calls it without the path (langgraph/pregel/_loop.py); the bridge must too
(the test ``a_saver_without_task_path_in_put_writes_has_its_writes_judged``).
"""

from langgraph.checkpoint.memory import InMemorySaver


class LegacyWritesSaver(InMemorySaver):
    """InMemorySaver with the 2.x ``put_writes`` signature. Both methods store through
    InMemorySaver's own ``put_writes`` (its ``aput_writes`` would call ours with the path)."""

    def put_writes(self, config, writes, task_id):  # type: ignore[override]
        InMemorySaver.put_writes(self, config, writes, task_id)

    async def aput_writes(self, config, writes, task_id):  # type: ignore[override]
        InMemorySaver.put_writes(self, config, writes, task_id)
