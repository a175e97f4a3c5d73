"""One saver instance as the bridge serves it: the kit's operations as LangGraph's methods
(``OPERATIONS``), which side (async or sync methods) answers each of them, the calls
themselves (docs/bridge-protocol.md, "Sides"), what the saver lacks ("Handshake") and
where its class comes from."""

from __future__ import annotations

import asyncio
import inspect
import os
import sys
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable

from langgraph.checkpoint.base import BaseCheckpointSaver

from .mapping import checkpoint, list_arguments, runnable_config, wire_config, wire_history, wire_tuple
from .storage import declared_lacks
from .values import decode_value


@dataclass(frozen=True)
class Operation:
    """One of the kit's saver operations as LangGraph's API serves it: the sync and the
    async method, the method's arguments (positional, keyword) from the request's
    ``args``, and the answer from the method's result and the saver's serde
    (docs/bridge-protocol.md, "Operations" and "Mapping to LangGraph's API"). ``large``
    marks a read whose answer can be large, announced before it is encoded; ``stream`` a
    method that returns an iterator (sync) or an async iterator, collected into a list."""

    sync: str
    asynchronous: str
    arguments: Callable[[dict[str, Any]], tuple[list[Any], dict[str, Any]]]
    answer: Callable[[Any, Any], Any] = lambda result, serde: None
    large: bool = False
    stream: bool = False


def _put_arguments(a: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    config, stored = runnable_config(a["config"]), checkpoint(a["checkpoint"])
    return [config, stored, dict(a["metadata"]), dict(a["new_versions"])], {}


def _writes_arguments(a: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    writes = [(str(ch), decode_value(v)) for ch, v in a["writes"]]
    return [runnable_config(a["config"]), writes, a["task_id"], a["task_path"]], {}


def _list_arguments(a: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    config, kwargs = list_arguments(a["thread_id"], a["options"])
    return [config], kwargs


# The kit's operations but ``get_next_version`` (the one sync method, ServedSaver.next_version):
# adding an operation adds its entry here and nothing else in this package.
OPERATIONS: dict[str, Operation] = {
    "put": Operation(
        "put", "aput", _put_arguments, lambda result, serde: wire_config(result, "the config put returned")
    ),
    "put_writes": Operation("put_writes", "aput_writes", _writes_arguments),
    "get_tuple": Operation(
        "get_tuple", "aget_tuple", lambda a: ([runnable_config(a["config"])], {}), wire_tuple, large=True
    ),
    "list": Operation(
        "list",
        "alist",
        _list_arguments,
        lambda result, serde: [wire_tuple(t, serde) for t in result],
        large=True,
        stream=True,
    ),
    "delete_thread": Operation("delete_thread", "adelete_thread", lambda a: ([a["thread_id"]], {})),
    "delete_for_runs": Operation("delete_for_runs", "adelete_for_runs", lambda a: ([list(a["run_ids"])], {})),
    "copy_thread": Operation("copy_thread", "acopy_thread", lambda a: ([a["source"], a["target"]], {})),
    "prune": Operation("prune", "aprune", lambda a: ([list(a["thread_ids"])], {"strategy": a["strategy"]})),
    "delta_channel_history": Operation(
        "get_delta_channel_history",
        "aget_delta_channel_history",
        lambda a: ([], {"config": runnable_config(a["config"]), "channels": list(a["channels"])}),
        wire_history,
        large=True,
    ),
}

# The kit's operation -> (LangGraph's sync method, its async method).
METHODS: dict[str, tuple[str, str]] = {op: (o.sync, o.asynchronous) for op, o in OPERATIONS.items()}

# The base operations: a saver that overrides none of their async methods is sync-only.
BASE_OPS = ("put", "put_writes", "get_tuple", "list", "delete_thread")


class Unsupported(Exception):
    """The saver has no method for the operation (the kit's ``Unsupported``)."""


def overrides(cls: type, name: str) -> bool:
    """True when ``cls`` defines ``name`` other than BaseCheckpointSaver does."""
    mine = getattr(cls, name, None)
    return mine is not None and mine is not getattr(BaseCheckpointSaver, name, None)


_SIDES: dict[type, str] = {}
_LACKS: dict[type, list[str]] = {}

# A version as LangGraph's savers make them ("{n:032}.{fraction}"), for the probe of
# ``get_next_version``.
PADDED_VERSION = "00000000000000000000000000000002.0.5"


def takes_task_path(method: Any) -> bool:
    """Whether ``put_writes`` / ``aput_writes`` is called with the task path: exactly
    LangGraph's runtime test (langgraph/pregel/_loop.py: ``signature(checkpointer.put_writes)
    .parameters.get("task_path") is not None``), so a saver written for
    langgraph-checkpoint 2.x, whose method takes (config, writes, task_id), is called with
    those three as the runtime calls it. A method without a readable signature gets it."""
    try:
        return inspect.signature(method).parameters.get("task_path") is not None
    except (TypeError, ValueError):
        return True


def provider(module_name: str) -> tuple[str, str] | None:
    """The installed distribution (name, version) that provides the module ``module_name``:
    among those ``packages_distributions()`` gives for its top-level package, the one whose
    files hold the module's file (a namespace package such as ``langgraph`` has several);
    the only one when none lists the file (an editable install). None for a module of no
    installed distribution."""
    from importlib import metadata

    top = module_name.partition(".")[0]
    try:
        names = list(dict.fromkeys(metadata.packages_distributions().get(top, [])))
    except Exception:  # Python < 3.10 has no packages_distributions; broken metadata
        return None
    path = getattr(sys.modules.get(module_name), "__file__", None)
    real = os.path.realpath(path) if path else None
    found = []
    for name in names:
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        found.append(dist)
        if real and any(os.path.realpath(dist.locate_file(f)) == real for f in dist.files or ()):
            return dist.metadata["Name"] or name, dist.version
    if len(found) == 1:
        return found[0].metadata["Name"] or names[0], found[0].version
    return None


_ORIGINS: dict[type, dict[str, str]] = {}


def origin(cls: type) -> dict[str, str]:
    """Where ``cls`` comes from: ``module``, and ``distribution`` and ``version`` when an
    installed distribution provides it ("Handshake", ``open``'s ``saver``)."""
    if cls not in _ORIGINS:
        out = {"module": cls.__module__}
        found = provider(cls.__module__)
        if found is not None:
            out["distribution"], out["version"] = found
        _ORIGINS[cls] = out
    return _ORIGINS[cls]


async def decide_side(saver: BaseCheckpointSaver) -> str:
    """``"async"`` when the saver's class overrides an async base method and that method
    works (``aget_tuple`` of an unused thread, latest or by id, does not raise
    NotImplementedError, as SqliteSaver's stubs do), else ``"sync"``. The by-id form
    counts too: a saver that reads by id only refuses the latest form on either side.
    Decided once per class."""
    cls = type(saver)
    if cls in _SIDES:
        return _SIDES[cls]
    side = "sync"
    if any(overrides(cls, METHODS[op][1]) for op in BASE_OPS):
        thread = f"checkpoint-bridge-probe-{uuid.uuid4().hex}"
        latest = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
        by_id = {"configurable": {**latest["configurable"], "checkpoint_id": "00000000-0000-7000-8000-000000000001"}}
        for probe in (latest, by_id):
            try:
                await saver.aget_tuple(probe)
                side = "async"
                break
            except NotImplementedError:
                side = "sync"
            except Exception:
                side = "async"
                break
    _SIDES[cls] = side
    return side


class ServedSaver:
    """A saver and, per operation, the method that serves it.

    On the async side an operation uses the async method, unless the class overrides only
    the sync one; on the sync side the other way round. Sync methods run on the executor's
    worker threads, so calls overlap as they do in a threaded application."""

    def __init__(self, saver: BaseCheckpointSaver, side: str, executor: ThreadPoolExecutor) -> None:
        self.saver = saver
        self.side = side
        self.executor = executor
        self.serde = saver.serde
        cls = type(saver)
        self.plan: dict[str, str] = {}
        self.shown: dict[str, str] = {}
        for op, (sync_name, async_name) in METHODS.items():
            has_sync, has_async = overrides(cls, sync_name), overrides(cls, async_name)
            if side == "async":
                chosen = "sync" if has_sync and not has_async else "async"
            else:
                chosen = "async" if has_async and not has_sync else "sync"
            name = sync_name if chosen == "sync" else async_name
            self.plan[op] = chosen if getattr(saver, name, None) is not None else "none"
            # What the report shows: the side, or "base" when LangGraph's base class answers
            # (NotImplementedError, or its default get_delta_channel_history walk).
            self.shown[op] = self.plan[op] if has_sync or has_async else ("base" if self.plan[op] != "none" else "none")
        writes = METHODS["put_writes"][0 if self.plan["put_writes"] == "sync" else 1]
        self.writes_task_path = takes_task_path(getattr(saver, writes, None))
        # Features this instance lacks, found by probe_lacks() (open's "lacks").
        self.lacks: list[str] = []

    def describe(self) -> dict[str, Any]:
        cls = type(self.saver)
        return {
            "class": f"{cls.__module__}.{cls.__qualname__}",
            "side": self.side,
            "methods": dict(self.shown),
            **origin(cls),
            **({} if self.writes_task_path else {"writes_task_path": False}),
        }

    async def run_sync(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.executor, lambda: fn(*args, **kwargs))

    async def call(self, op: str, *args: Any, **kwargs: Any) -> Any:
        """Calls the method serving ``op``; a streamed answer (``Operation.stream``: ``list``)
        is collected into a Python list."""
        chosen = self.plan[op]
        if chosen == "none":
            raise Unsupported(f"{type(self.saver).__name__} has no {METHODS[op][0]} method")
        sync_name, async_name = METHODS[op]
        stream = OPERATIONS[op].stream
        if op == "put_writes" and not self.writes_task_path:
            args = args[:3]
        if chosen == "async":
            method = getattr(self.saver, async_name)
            if stream:
                return [t async for t in method(*args, **kwargs)]
            return await method(*args, **kwargs)
        method = getattr(self.saver, sync_name)
        if stream:
            return await self.run_sync(lambda: list(method(*args, **kwargs)))
        return await self.run_sync(method, *args, **kwargs)

    async def next_version(self, current: Any) -> Any:
        if self.side == "sync":
            return await self.run_sync(self.saver.get_next_version, current, None)
        return self.saver.get_next_version(current, None)

    async def probe_lacks(self) -> list[str]:
        """The features this saver lacks, by probing it (decided once per class), and those
        it declares (``conformance_lacks``, CONTRACT §5 "Declared limits"):
        ``string_versions`` when its ``get_next_version`` takes an integer but raises on
        LangGraph's padded string version (BaseCheckpointSaver's own does: a saver that
        produces integers only); a ``get_next_version`` that refuses integers too is left
        to the cases to judge."""
        cls = type(self.saver)
        if cls not in _LACKS:
            lacks = []
            try:
                await self.next_version(1)
            except Exception:
                pass
            else:
                try:
                    await self.next_version(PADDED_VERSION)
                except Exception:
                    lacks.append("string_versions")
            _LACKS[cls] = lacks
        self.lacks = list(_LACKS[cls])
        # A put_writes without a task_path parameter (langgraph-checkpoint 2.x) is never
        # given a path by LangGraph's runtime, so the saver cannot order writes by one.
        if not self.writes_task_path:
            self.lacks.append("task_path_on_writes")
        # What the saver declares itself (`conformance_lacks` on its class or instance).
        for name in declared_lacks(self.saver, f"the saver {cls.__module__}.{cls.__qualname__}"):
            if name not in self.lacks:
                self.lacks.append(name)
        return self.lacks
