"""The kit's contract types in their wire form <-> LangGraph's Python shapes
(docs/bridge-protocol.md, "Mapping to LangGraph's API")."""

from __future__ import annotations

from typing import Any

from .values import decode_value, encode_value


class WireError(ValueError):
    """A request or an answer that does not fit the protocol's shapes."""


def _str(value: Any, what: str) -> str:
    if type(value) is not str:
        raise WireError(f"{what} must be a string, got {type(value).__name__}")
    return value


def runnable_config(wire: Any) -> dict[str, Any]:
    """A kit config ``{thread_id, checkpoint_ns, checkpoint_id?}`` as LangGraph's
    RunnableConfig: everything under ``configurable``, each field only when the request has
    it (a config the kit sends without ``thread_id`` or ``checkpoint_ns`` reaches the saver
    without it, as LangGraph's API can hand it one: the saver decides what that means)."""
    if type(wire) is not dict:
        raise WireError("config must be an object")
    configurable: dict[str, Any] = {}
    for key in ("thread_id", "checkpoint_ns", "checkpoint_id"):
        if wire.get(key) is not None:
            configurable[key] = _str(wire[key], f"config.{key}")
    return {"configurable": configurable}


def wire_config(config: Any, what: str) -> dict[str, Any]:
    """A RunnableConfig a saver returned, as a kit config."""
    try:
        c = config["configurable"]
    except (TypeError, KeyError):
        raise WireError(f"{what} has no 'configurable' mapping: {config!r}") from None
    out = {"thread_id": c.get("thread_id"), "checkpoint_ns": c.get("checkpoint_ns", "") or ""}
    if c.get("checkpoint_id") is not None:
        out["checkpoint_id"] = c["checkpoint_id"]
    for key in ("thread_id", "checkpoint_ns", "checkpoint_id"):
        if key in out and type(out[key]) is not str:
            raise WireError(f"{what}: configurable.{key} is {type(out[key]).__name__} {out[key]!r}, not a string")
    return out


def checkpoint(wire: Any) -> dict[str, Any]:
    """A kit checkpoint as LangGraph's Checkpoint dict; channel values as the objects the
    runtime would hand over."""
    if type(wire) is not dict:
        raise WireError("checkpoint must be an object")
    return {
        "v": wire["v"],
        "id": _str(wire["id"], "checkpoint.id"),
        "ts": wire["ts"],
        "channel_values": {k: decode_value(v) for k, v in wire["channel_values"].items()},
        "channel_versions": dict(wire["channel_versions"]),
        "versions_seen": {k: dict(v) for k, v in wire["versions_seen"].items()},
        "updated_channels": wire.get("updated_channels"),
    }


def wire_checkpoint(cp: Any, serde: Any) -> dict[str, Any]:
    """A Checkpoint a saver returned, in the kit's form. Keys the kit's type does not have
    (``pending_sends`` of old formats) are left out; a missing ``updated_channels`` is null."""
    return {
        "v": cp["v"],
        "id": cp["id"],
        "ts": cp.get("ts", ""),
        "channel_values": {k: encode_value(v, serde) for k, v in cp.get("channel_values", {}).items()},
        "channel_versions": dict(cp.get("channel_versions", {})),
        "versions_seen": {k: dict(v) for k, v in cp.get("versions_seen", {}).items()},
        "updated_channels": cp.get("updated_channels"),
    }


def wire_write(write: Any, serde: Any) -> dict[str, Any]:
    """LangGraph's PendingWrite ``(task_id, channel, value)`` in the kit's form. LangGraph's
    read API does not return a write's task_path, so it is always ``""``."""
    task_id, channel, value = write
    return {"task_id": task_id, "task_path": "", "channel": channel, "value": encode_value(value, serde)}


def wire_tuple(t: Any, serde: Any) -> dict[str, Any] | None:
    """A CheckpointTuple in the kit's form (None stays None)."""
    if t is None:
        return None
    parent = t.parent_config
    return {
        "config": wire_config(t.config, "tuple.config"),
        "checkpoint": wire_checkpoint(t.checkpoint, serde),
        "metadata": dict(t.metadata) if t.metadata is not None else {},
        "parent_config": wire_config(parent, "tuple.parent_config") if parent else None,
        "pending_writes": [wire_write(w, serde) for w in (t.pending_writes or [])],
    }


def list_arguments(thread_id: Any, options: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The kit's ``list(thread_id, options)`` as LangGraph's ``list(config, filter=,
    before=, limit=)``: the namespace and checkpoint id scope go into ``configurable``
    (no ``checkpoint_ns`` key means every namespace), ``before`` is a config naming the
    checkpoint id, an empty filter is ``None``."""
    if type(options) is not dict:
        raise WireError("list options must be an object")
    configurable: dict[str, Any] = {"thread_id": _str(thread_id, "thread_id")}
    if options.get("checkpoint_ns") is not None:
        configurable["checkpoint_ns"] = _str(options["checkpoint_ns"], "options.checkpoint_ns")
    if options.get("checkpoint_id") is not None:
        configurable["checkpoint_id"] = _str(options["checkpoint_id"], "options.checkpoint_id")
    kwargs: dict[str, Any] = {
        "filter": dict(options["filter"]) if options.get("filter") else None,
        "before": {"configurable": {"checkpoint_id": options["before"]}} if options.get("before") is not None else None,
        "limit": options.get("limit"),
    }
    return {"configurable": configurable}, kwargs


def wire_history(history: Any, serde: Any) -> dict[str, Any]:
    """``get_delta_channel_history``'s mapping in the kit's form: per channel ``writes``
    and, only when the saver gave one, ``seed`` (a seed whose value is None is kept)."""
    out: dict[str, Any] = {}
    for ch, entry in dict(history).items():
        item: dict[str, Any] = {"writes": [wire_write(w, serde) for w in entry.get("writes", [])]}
        if "seed" in entry:
            item["seed"] = encode_value(entry["seed"], serde)
        out[ch] = item
    return out
