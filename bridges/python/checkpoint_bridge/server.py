"""The child side of the bridge protocol (docs/bridge-protocol.md): newline-delimited JSON
requests on stdin, answers on stdout, in any order, many in flight.

stdout carries nothing but answers: the real stdout is kept for the protocol and file
descriptor 1 is pointed at stderr, so a saver that prints cannot break the stream.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import linecache
import os
import platform
import queue
import select
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from langgraph.checkpoint.base import BaseCheckpointSaver

from . import __version__
from .mapping import WireError
from .served import OPERATIONS, ServedSaver, Unsupported, decide_side
from .storage import SaverNotFound, Storage, declared_lacks, resolve

PROTOCOL_VERSION = 1
# How long the child may take to close its savers after stdin closed.
SHUTDOWN_GRACE_SECONDS = 10.0
# How long after a ping arrived the event loop may go without running before the child
# says on stderr where it is stuck (the host stops a child that answers no ping within 5 s
# and quotes that line: issue 40 row 3).
STALL_REPORT_SECONDS = 3.0
STALL_PREFIX = "checkpoint-bridge: event loop blocked"
# A read whose result holds this many bytes or more is announced to the host before it is
# encoded (a "progress" line), so a timeout meanwhile names its size (issue 40 row 13).
LARGE_ANSWER = 1 << 20
# An answer shorter than this may be written by the event loop itself (see
# `Server.write_now`); a longer one is written by the writer thread. With its newline it is
# at most PIPE_BUF bytes, which a pipe with room takes whole, without blocking.
DIRECT_ANSWER = 4095


def approx_size(obj: Any, depth: int = 0) -> int:
    """The bytes of the strings and bytes in a saver's result (nested dicts, lists, tuples)."""
    if isinstance(obj, (bytes, bytearray, str)):
        return len(obj)
    if depth > 12:
        return 0
    if isinstance(obj, dict):
        return sum(approx_size(k, depth + 1) + approx_size(v, depth + 1) for k, v in obj.items())
    if isinstance(obj, (list, tuple)):
        return sum(approx_size(v, depth + 1) for v in obj)
    return 0
PACKAGES = ("langgraph-checkpoint", "langgraph-checkpoint-sqlite", "langgraph-checkpoint-postgres", "psycopg")


class ProtocolError(Exception):
    """A request the child cannot understand (the ``Protocol`` error kind)."""


class BadSaver(Exception):
    """The saver ``hello`` names is nothing the child can serve: answered with the kind
    ``InvalidConfig``, which the host reports as a usage error (docs/bridge-protocol.md)."""


@dataclass
class Instance:
    """An open saver instance: what serves it, how to leave its context, its storage."""

    served: ServedSaver
    exit: Any
    location: str | None
    # The handle returned by `open` for the case this instance belongs to (None for an
    # instance opened with open_at, whose storage the child does not own).
    case: int | None
    reopened: list[int] = field(default_factory=list)
    # Set by `release`: the saver is closed, the handle (and the case's storage) kept.
    released: bool = False


def error_kind(exc: BaseException) -> str:
    """The kit's error kind for an exception a saver raised."""
    if isinstance(exc, (NotImplementedError, Unsupported)):
        return "Unsupported"
    if isinstance(exc, (ValueError, TypeError, KeyError)):
        return "InvalidInput"
    return "Storage"


def describe(exc: BaseException) -> str:
    t = type(exc)
    name = t.__qualname__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"
    try:
        text = str(exc)
    except Exception as e:  # a saver's exception whose __str__ raises still gets an answer
        text = f"<its message could not be read: {type(e).__qualname__}>"
    return f"{name}: {text}" if text else name


def package_versions() -> dict[str, str]:
    from importlib import metadata

    out = {}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return out


async def call_maybe_async(loop: asyncio.AbstractEventLoop, executor: ThreadPoolExecutor, fn: Any, *args: Any) -> Any:
    """Awaits an async function, runs a plain one on a worker thread (and awaits what it
    returns if that is awaitable)."""
    if inspect.iscoroutinefunction(fn):
        return await fn(*args)
    result = await loop.run_in_executor(executor, lambda: fn(*args))
    if inspect.isawaitable(result):
        result = await result
    return result


class Server:
    def __init__(self, out: BinaryIO) -> None:
        self.out_queue: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self.out_lock = threading.Lock()
        self.out = out
        self.executor = ThreadPoolExecutor(max_workers=64, thread_name_prefix="saver")
        self.storage: Storage | None = None
        self.instances: dict[int, Instance] = {}
        self.next_handle = 1
        self.tasks: set[asyncio.Task[None]] = set()
        self.loop = asyncio.get_running_loop()
        self.loop_thread = threading.get_ident()
        # When the event loop last ran a request line (monotonic seconds).
        self.loop_ran = time.monotonic()
        self.eof = asyncio.Event()

    # ---- transport ---------------------------------------------------------------

    def _write_locked(self, data: bytes) -> None:
        """Writes one answer line, whole; the caller holds ``out_lock``, so lines from the
        event loop and the writer thread never interleave. A host that is gone ends the
        child."""
        try:
            self.out.write(data)
            self.out.write(b"\n")
            self.out.flush()
        except (BrokenPipeError, OSError):
            os._exit(0)

    def write_now(self, data: bytes) -> bool:
        """Writes a small answer from the event loop when that cannot block it: the writer
        thread is not writing and the pipe has room (a host that stops reading never stops
        the loop, which must still see stdin close). False: left to the writer thread."""
        if not self.out_lock.acquire(blocking=False):
            return False
        try:
            try:
                if not select.select([], [self.out], [], 0)[1]:
                    return False
            except (OSError, ValueError):  # no select on this pipe (Windows)
                return False
            self._write_locked(data)
            return True
        finally:
            self.out_lock.release()

    def writer(self) -> None:
        while True:
            data = self.out_queue.get()
            if data is None:
                return
            with self.out_lock:
                self._write_locked(data)

    def reader(self, stdin: BinaryIO) -> None:
        for line in stdin:
            if line.strip():
                # The host writes "op" right after "id" (its `Request`, backends/bridge/src/
                # protocol.rs): a ping is found in the line's head, without scanning a 16 MiB
                # value for it.
                if b'"op":"ping"' in line[:64]:
                    timer = threading.Timer(STALL_REPORT_SECONDS, self.report_stall, (time.monotonic(),))
                    timer.daemon = True
                    timer.start()
                self.loop.call_soon_threadsafe(self.on_line, line)
        self.loop.call_soon_threadsafe(self.eof.set)

    def report_stall(self, since: float) -> None:
        """On a timer thread: if the event loop has not run since a ping arrived, one line
        on stderr naming where its thread is (the innermost frames, with their source)."""
        if self.loop_ran >= since:
            return
        frame = sys._current_frames().get(self.loop_thread)
        where = []
        while frame is not None and len(where) < 4:
            code = frame.f_code
            text = linecache.getline(code.co_filename, frame.f_lineno).strip()
            place = f"{os.path.basename(code.co_filename)}:{frame.f_lineno} in {code.co_name}"
            where.append(f"{place}: {text}" if text else place)
            frame = frame.f_back
        stack = " <- ".join(where) or "an unknown place"
        waited = time.monotonic() - since
        print(f"{STALL_PREFIX} for {waited:.1f} s at {stack}", file=sys.stderr, flush=True)

    def send(self, message: dict[str, Any]) -> None:
        try:
            data = json.dumps(message, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")
        except (ValueError, TypeError) as e:
            data = self.encode_error(message["id"], "Storage", f"the saver's answer cannot be written as JSON: {describe(e)}")
        # A small answer is written at once: handed to the writer thread, it waited for
        # that thread to get the interpreter lock (a bridged python:memory run: 1.62 ->
        # 1.48 s; 8 calls in flight: 23,800 -> 27,600 calls/s). Any other goes to the writer
        # thread, so the event loop goes on while the host reads it (the line is ended
        # there, without copying it).
        if len(data) >= DIRECT_ANSWER or not self.write_now(data):
            self.out_queue.put(data)

    def encode_error(self, rid: Any, kind: str, message: str) -> bytes:
        payload = {"id": rid, "error": {"kind": kind, "message": message}}
        return json.dumps(payload, ensure_ascii=True, separators=(",", ":")).encode("ascii")

    def on_line(self, line: bytes) -> None:
        self.loop_ran = time.monotonic()
        request: Any = None
        try:
            request = json.loads(line)
            rid, op = request["id"], request["op"]
            if type(rid) is not int or type(op) is not str:
                raise ValueError("id must be an integer and op a string")
        except (ValueError, KeyError, TypeError) as e:
            rid = request.get("id") if isinstance(request, dict) and type(request.get("id")) is int else None
            self.out_queue.put(self.encode_error(rid, "Protocol", f"not a request: {describe(e)}"))
            return
        task = self.loop.create_task(self.handle(rid, op, request.get("handle"), request.get("args") or {}))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def handle(self, rid: int, op: str, handle: Any, args: dict[str, Any]) -> None:
        try:
            result = await self.dispatch(op, handle, args, rid)
        except ProtocolError as e:
            self.send({"id": rid, "error": {"kind": "Protocol", "message": str(e)}})
        except BadSaver as e:
            self.send({"id": rid, "error": {"kind": "InvalidConfig", "message": str(e)}})
        except WireError as e:
            self.send({"id": rid, "error": {"kind": "Storage", "message": f"the saver's answer does not fit: {e}"}})
        except (Exception, SystemExit, KeyboardInterrupt) as e:
            # A saver raising SystemExit or KeyboardInterrupt in a call fails that call; it
            # does not end the child.
            self.send({"id": rid, "error": {"kind": error_kind(e), "message": describe(e)}})
        else:
            self.send({"id": rid, "ok": result})

    # ---- operations --------------------------------------------------------------

    async def dispatch(self, op: str, handle: Any, args: dict[str, Any], rid: int = -1) -> Any:
        if op == "hello":
            return self.hello(args)
        if op == "ping":
            return None
        if self.storage is None:
            raise ProtocolError(f"{op} before hello")
        storage = self.storage
        if op == "setup":
            return await call_maybe_async(self.loop, self.executor, storage.setup)
        if op == "teardown":
            return await call_maybe_async(self.loop, self.executor, storage.teardown)
        if op == "open":
            location = await call_maybe_async(self.loop, self.executor, storage.create)
            try:
                h, inst = await self.open_instance(location, None)
            except BaseException:
                await call_maybe_async(self.loop, self.executor, storage.destroy, location)
                raise
            inst.case = h
            return {
                "handle": h,
                "location": location,
                "reopen": bool(storage.reopenable),
                "saver": inst.served.describe(),
                "lacks": inst.served.lacks,
            }
        if op == "open_at":
            if not storage.reopenable:
                raise ProtocolError("this saver's storage cannot be opened by location")
            location = args.get("location")
            if type(location) is not str:
                raise ProtocolError("open_at needs a string location")
            h, inst = await self.open_instance(location, None)
            return {"handle": h, "saver": inst.served.describe()}
        inst = self.instances.get(handle) if type(handle) is int else None
        if inst is None:
            raise ProtocolError(f"{op}: no open handle {handle!r}")
        if op == "reopen":
            if not storage.reopenable:
                raise ProtocolError("this saver's storage cannot be reopened")
            h, new = await self.open_instance(inst.location, inst.case)
            if inst.case is not None and inst.case in self.instances:
                self.instances[inst.case].reopened.append(h)
            return {"handle": h, "saver": new.served.describe()}
        if op == "close":
            return await self.close(handle)
        if op == "release":
            return await self.release(handle)
        if inst.released:
            raise ProtocolError(f"{op}: handle {handle} was released")
        return await self.saver_call(inst.served, op, args, rid)

    def hello(self, args: dict[str, Any]) -> dict[str, Any]:
        versions = args.get("protocol")
        if not isinstance(versions, list) or PROTOCOL_VERSION not in versions:
            raise ProtocolError(f"this child speaks protocol {PROTOCOL_VERSION}, the host offers {versions!r}")
        spec = args.get("saver")
        if type(spec) is not str:
            raise ProtocolError("hello needs the saver to serve (a short name or module:factory)")
        workdir = args.get("workdir")
        try:
            self.storage = resolve(spec, workdir if type(workdir) is str else None)
        except SaverNotFound as e:
            raise BadSaver(str(e)) from None
        except ValueError as e:
            raise ProtocolError(str(e)) from None
        return {
            "protocol": PROTOCOL_VERSION,
            "server": f"checkpoint-bridge-python {__version__}",
            "runtime": f"{platform.python_implementation()} {platform.python_version()}",
            "packages": package_versions(),
            "saver": spec,
            "reopen": bool(self.storage.reopenable),
            # LangGraph's PendingWrite is (task_id, channel, value): no read returns a path;
            # then what the factory or Storage declares (`conformance_lacks`).
            "lacks": list(dict.fromkeys(["task_path_on_reads", *declared_lacks(self.storage, f"saver {spec!r}")])),
        }

    async def open_instance(self, location: str | None, case: int | None) -> tuple[int, Instance]:
        assert self.storage is not None
        made = self.storage.open(location)
        if inspect.isawaitable(made):
            made = await made
        saver, exit_fn = await self.enter(made)
        allow = getattr(saver, "with_allowlist", None)
        if allow is not None:
            saver = allow([("checkpoint_bridge.values", "Typed")])
        try:
            served = ServedSaver(saver, await decide_side(saver), self.executor)
            await served.probe_lacks()
        except BaseException:
            if exit_fn is not None:  # the saver is not served: leave its context
                await exit_fn()
            raise
        h = self.next_handle
        self.next_handle += 1
        inst = Instance(served=served, exit=exit_fn, location=location, case=case)
        self.instances[h] = inst
        return h, inst

    async def enter(self, made: Any) -> tuple[BaseCheckpointSaver, Any]:
        """The saver a factory's result gives, and how to leave its context."""
        if isinstance(made, BaseCheckpointSaver):
            return made, None
        if hasattr(made, "__aenter__"):
            saver = await made.__aenter__()

            async def leave() -> None:
                await made.__aexit__(None, None, None)

        elif hasattr(made, "__enter__"):
            saver = await self.loop.run_in_executor(self.executor, made.__enter__)

            async def leave() -> None:
                await self.loop.run_in_executor(self.executor, made.__exit__, None, None, None)

        else:
            raise TypeError(f"the factory returned {type(made).__name__}, not a saver or a context manager")
        if not isinstance(saver, BaseCheckpointSaver):
            await leave()
            raise TypeError(f"the context manager gave {type(saver).__name__}, not a BaseCheckpointSaver")
        return saver, leave

    async def leave(self, handle: int) -> None:
        inst = self.instances.pop(handle, None)
        if inst is not None and inst.exit is not None:
            await inst.exit()

    async def release(self, handle: int) -> None:
        """Closes an instance's saver and keeps its handle and storage: `reopen` from it
        and `close` of it (which still removes a case's storage) work, its calls do not."""
        inst = self.instances[handle]
        exit_fn, inst.exit, inst.released = inst.exit, None, True
        if exit_fn is not None:
            await exit_fn()

    async def close(self, handle: int) -> None:
        """Closes an instance; closing the case's own handle also closes the instances
        reopened from it and removes the case's storage."""
        inst = self.instances[handle]
        errors: list[str] = []
        for h in ([*inst.reopened, handle] if inst.case == handle else [handle]):
            try:
                await self.leave(h)
            except Exception as e:
                errors.append(describe(e))
        if inst.case == handle and self.storage is not None:
            try:
                await call_maybe_async(self.loop, self.executor, self.storage.destroy, inst.location)
            except Exception as e:
                errors.append(describe(e))
        if errors:
            raise RuntimeError("; ".join(errors))

    async def saver_call(self, served: ServedSaver, op: str, args: dict[str, Any], rid: int = -1) -> Any:
        if op == "get_next_version":
            return await served.next_version(args.get("current"))
        operation = OPERATIONS.get(op)
        if operation is None:
            raise ProtocolError(f"unknown operation {op!r}")
        try:
            positional, keywords = operation.arguments(args)
        except (KeyError, TypeError, ValueError) as e:
            raise ProtocolError(f"{op}: bad arguments: {describe(e)}") from None
        result = await served.call(op, *positional, **keywords)
        if operation.large:
            size = approx_size(result)
            if size >= LARGE_ANSWER:
                # Before the seconds its encoding takes (docs/bridge-protocol.md "progress").
                self.send({"id": rid, "progress": {"bytes": size}})
        return operation.answer(result, served.serde)

    async def shutdown(self) -> None:
        """After stdin closed: close every instance (cases first) within the grace time."""
        cases = [h for h, i in self.instances.items() if i.case == h]
        others = [h for h in self.instances if h not in cases]
        for h in others + cases:
            if h in self.instances:
                try:
                    await self.close(h)
                except Exception as e:
                    print(f"checkpoint-bridge: closing handle {h} at exit: {describe(e)}", file=sys.stderr)


def die_with_parent() -> None:
    """Exits at once if the parent that started the bridge is gone (the host passes its
    pid; on Linux it also set PR_SET_PDEATHSIG before exec, which this does not replace)."""
    expected = os.environ.get("CHECKPOINT_BRIDGE_PARENT_PID")
    if expected and expected.isdigit() and os.getppid() != int(expected):
        os._exit(1)


async def amain() -> None:
    # The protocol stream: a private copy of stdout; fd 1 becomes stderr.
    proto = os.fdopen(os.dup(1), "wb", buffering=1 << 16)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    server = Server(proto)
    writer = threading.Thread(target=server.writer, name="bridge-writer", daemon=True)
    writer.start()
    # Requests are read 1 MiB at a time: a 16 MiB value's line in 8 KiB reads (stdin's
    # buffer) cost 46 ms, with 1 MiB 35 ms.
    requests = open(sys.stdin.fileno(), "rb", buffering=1 << 20, closefd=False)
    threading.Thread(target=server.reader, args=(requests,), name="bridge-reader", daemon=True).start()
    await server.eof.wait()
    # stdin closed: the host is done (or gone). Close what is open, bounded in time.
    try:
        await asyncio.wait_for(server.shutdown(), SHUTDOWN_GRACE_SECONDS)
    except asyncio.TimeoutError:
        print("checkpoint-bridge: savers did not close in time; exiting", file=sys.stderr)
    server.out_queue.put(None)
    writer.join(SHUTDOWN_GRACE_SECONDS)


def main() -> None:
    die_with_parent()
    if os.environ.get("CHECKPOINT_BRIDGE_PARENT_PID"):
        # The host owns this process: an interrupt reaches it and it ends the child.
        import signal

        signal.signal(signal.SIGINT, signal.SIG_IGN)
    asyncio.run(amain())
    sys.stderr.flush()
    # Threads of savers (pools, executors) must not keep a child alive after stdin closed.
    os._exit(0)
