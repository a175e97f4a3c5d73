"""A recorder around any LangGraph ``BaseCheckpointSaver``: every call LangGraph's runtime
makes (sync or async side, whichever it calls) and its result, written as a trace in the
kit's format ``checkpoint-trace/1`` (docs/trace-format.md), which ``cargo xtask replay``
replays against any saver.

Values are kept exactly: every channel value and write value is recorded as the saver's
own ``serde.dumps_typed(value)`` pair ``(tag, bytes)`` (an ``{"$type", "$base64"}``
envelope), the same on the way in (arguments) and on the way out (results).

The recorded results are the inner saver's, put in the contract's form where LangGraph's
Python API cannot say what the contract does (traces/README.md lists each choice):

- ``put``'s metadata is the metadata the saver stores, ``get_checkpoint_metadata(config,
  metadata)`` (every LangGraph saver folds the config's scalar keys into it; the kit's
  ``put`` takes a config of thread, namespace and id only);
- a pending write's ``task_path`` comes from the ``put_writes`` that made it (LangGraph's
  read API drops it) and pending writes are ordered by (task_path, task_id, index)
  (CONTRACT §2 get_tuple);
- ``get_next_version`` is passed through and not recorded (the trace format has no such
  call; the contract leaves its values to the saver, CONTRACT §2 get_next_version).
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import threading
from typing import Any, AsyncIterator, Iterator, Sequence

from langgraph.checkpoint.base import WRITES_IDX_MAP, BaseCheckpointSaver, get_checkpoint_metadata

from .mapping import wire_config
from .values import is_json_data

FORMAT = "checkpoint-trace/1"


class Dead(BaseException):
    """Raised by every call of a :class:`Recorder` whose process is dead."""


class Recorder(BaseCheckpointSaver):
    """Wraps ``inner`` and records each call into :attr:`steps` (see the module docs)."""

    def __init__(self, inner: BaseCheckpointSaver) -> None:
        super().__init__(serde=inner.serde)
        self.inner = inner
        self.steps: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._alock = asyncio.Lock()
        #: Set to stand for the process dying: every later call raises :class:`Dead`
        #: without reaching the inner saver or the trace.
        self.dead = False
        # (thread, ns, checkpoint id) -> {(task_id, idx): task_path}, by the contract's rules.
        self._paths: dict[tuple[str, str, str], dict[tuple[str, int], str]] = {}

    def _alive(self) -> None:
        if self.dead:
            raise Dead("the process is dead")

    # -- values and shapes -------------------------------------------------------------

    def _value(self, obj: Any) -> dict[str, str]:
        tag, data = self.serde.dumps_typed(obj)
        return {"$type": str(tag), "$base64": base64.b64encode(bytes(data)).decode("ascii")}

    def _checkpoint(self, cp: Any) -> dict[str, Any]:
        return {
            "v": cp["v"],
            "id": cp["id"],
            "ts": cp.get("ts", ""),
            "channel_values": {k: self._value(v) for k, v in cp.get("channel_values", {}).items()},
            "channel_versions": dict(cp.get("channel_versions", {})),
            "versions_seen": {k: dict(v) for k, v in cp.get("versions_seen", {}).items()},
            "updated_channels": cp.get("updated_channels"),
        }

    @staticmethod
    def _metadata(md: Any) -> dict[str, Any]:
        md = dict(md or {})
        if not is_json_data(md):
            raise TypeError(f"metadata is not JSON data: {md!r}")
        return md

    def _tuple(self, t: Any) -> dict[str, Any] | None:
        if t is None:
            return None
        config = wire_config(t.config, "tuple.config")
        key = (config["thread_id"], config["checkpoint_ns"], config.get("checkpoint_id"))
        paths = self._paths.get(key, {})
        writes = []
        seen: dict[tuple[str, str], int] = {}
        for task_id, channel, value in t.pending_writes or []:
            # The index of this write: the special channel's, else the next position of
            # this (task, channel) among the recorded writes.
            idx = WRITES_IDX_MAP.get(channel)
            if idx is None:
                n = seen.get((task_id, channel), 0)
                seen[(task_id, channel)] = n + 1
                cands = sorted(i for (tid, i), (_, ch) in paths.items() if tid == task_id and ch == channel and i >= 0)
                idx = cands[n] if n < len(cands) else 0
            path = paths.get((task_id, idx), ("", channel))[0]
            writes.append(((path, task_id, idx), {"task_id": task_id, "task_path": path, "channel": channel, "value": self._value(value)}))
        writes.sort(key=lambda w: (w[0][0].encode(), w[0][1].encode(), w[0][2]))
        parent = t.parent_config
        return {
            "config": config,
            "checkpoint": self._checkpoint(t.checkpoint),
            "metadata": self._metadata(t.metadata),
            "parent_config": wire_config(parent, "tuple.parent_config") if parent else None,
            "pending_writes": [w for _, w in writes],
        }

    @staticmethod
    def _list_options(config: Any, filter: Any, before: Any, limit: Any) -> tuple[str, dict[str, Any]]:
        c = (config or {}).get("configurable", {})
        return c["thread_id"], {
            "checkpoint_ns": c.get("checkpoint_ns"),
            "checkpoint_id": c.get("checkpoint_id"),
            "filter": dict(filter or {}),
            "before": (before or {}).get("configurable", {}).get("checkpoint_id") if before else None,
            "limit": limit,
        }

    # -- recording ---------------------------------------------------------------------

    def _note_writes(self, config: Any, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str) -> None:
        c = wire_config(config, "config")
        key = (c["thread_id"], c["checkpoint_ns"], c.get("checkpoint_id"))
        paths = self._paths.setdefault(key, {})
        for i, (channel, _) in enumerate(writes):
            idx = WRITES_IDX_MAP.get(channel, i)
            if idx >= 0 and (task_id, idx) in paths:
                continue  # a regular write's first occurrence wins (CONTRACT §2 put_writes)
            paths[(task_id, idx)] = (task_path, channel)

    def _put_step(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> dict[str, Any]:
        return {
            "call": "put",
            "config": wire_config(config, "config"),
            "checkpoint": self._checkpoint(checkpoint),
            "metadata": self._metadata(get_checkpoint_metadata(config, metadata)),
            "new_versions": dict(new_versions),
        }

    def _writes_step(self, config: Any, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str) -> dict[str, Any]:
        return {
            "call": "put_writes",
            "config": wire_config(config, "config"),
            "writes": [[ch, self._value(v)] for ch, v in writes],
            "task_id": task_id,
            "task_path": task_path,
        }

    def mark_reopen(self) -> None:
        """Records a ``reopen`` marker: later calls go to a new instance on the same storage."""
        self.steps.append({"call": "reopen"})

    def trace(self, source: str) -> dict[str, Any]:
        """The trace so far."""
        return {"format": FORMAT, "source": source, "steps": list(self.steps)}

    # -- the sync side -----------------------------------------------------------------

    def get_next_version(self, current: Any, channel: Any) -> Any:
        return self.inner.get_next_version(current, channel)

    def put(self, config, checkpoint, metadata, new_versions):
        with self._lock:
            self._alive()
            step = self._put_step(config, checkpoint, metadata, new_versions)
            result = self.inner.put(config, checkpoint, metadata, new_versions)
            self.steps.append({**step, "expect": {"config": wire_config(result, "put result")}})
            return result

    def put_writes(self, config, writes, task_id, task_path=""):
        with self._lock:
            self._alive()
            step = self._writes_step(config, writes, task_id, task_path)
            self.inner.put_writes(config, writes, task_id, task_path)
            self._note_writes(config, writes, task_id, task_path)
            self.steps.append({**step, "expect": "done"})

    def get_tuple(self, config):
        with self._lock:
            self._alive()
            result = self.inner.get_tuple(config)
            self.steps.append({"call": "get_tuple", "config": wire_config(config, "config"), "expect": {"tuple": self._tuple(result)}})
            return result

    def list(self, config, *, filter=None, before=None, limit=None) -> Iterator[Any]:
        with self._lock:
            self._alive()
            result = list(self.inner.list(config, filter=filter, before=before, limit=limit))
            thread_id, options = self._list_options(config, filter, before, limit)
            self.steps.append({"call": "list", "thread_id": thread_id, "options": options, "expect": {"tuples": [self._tuple(t) for t in result]}})
        yield from result

    def delete_thread(self, thread_id):
        with self._lock:
            self._alive()
            self.inner.delete_thread(thread_id)
            self.steps.append({"call": "delete_thread", "thread_id": thread_id, "expect": "done"})

    # -- the async side ----------------------------------------------------------------

    async def aput(self, config, checkpoint, metadata, new_versions):
        async with self._alock:
            self._alive()
            step = self._put_step(config, checkpoint, metadata, new_versions)
            result = await self.inner.aput(config, checkpoint, metadata, new_versions)
            self.steps.append({**step, "expect": {"config": wire_config(result, "put result")}})
            return result

    async def aput_writes(self, config, writes, task_id, task_path=""):
        async with self._alock:
            self._alive()
            step = self._writes_step(config, writes, task_id, task_path)
            await self.inner.aput_writes(config, writes, task_id, task_path)
            self._note_writes(config, writes, task_id, task_path)
            self.steps.append({**step, "expect": "done"})

    async def aget_tuple(self, config):
        async with self._alock:
            self._alive()
            result = await self.inner.aget_tuple(config)
            self.steps.append({"call": "get_tuple", "config": wire_config(config, "config"), "expect": {"tuple": self._tuple(result)}})
            return result

    async def alist(self, config, *, filter=None, before=None, limit=None) -> AsyncIterator[Any]:
        async with self._alock:
            self._alive()
            result = [t async for t in self.inner.alist(config, filter=filter, before=before, limit=limit)]
            thread_id, options = self._list_options(config, filter, before, limit)
            self.steps.append({"call": "list", "thread_id": thread_id, "options": options, "expect": {"tuples": [self._tuple(t) for t in result]}})
        for t in result:
            yield t

    async def adelete_thread(self, thread_id):
        async with self._alock:
            self._alive()
            await self.inner.adelete_thread(thread_id)
            self.steps.append({"call": "delete_thread", "thread_id": thread_id, "expect": "done"})


def write_trace(path: str, trace: dict[str, Any]) -> None:
    """Writes a trace as pretty JSON with sorted keys (stable diffs when re-recorded).

    Whole or not at all: the text goes to a temporary file beside `path`, renamed over it
    when complete, so an interrupted write never leaves half a trace (nor costs the old one).
    """
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(trace, f, indent=1, sort_keys=True)
            f.write("\n")
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
