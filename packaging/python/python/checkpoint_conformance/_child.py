"""Loaded inside the kit's bridge child only (``--saver checkpoint_conformance._child:registered``):
the user's factory, named by ``$CHECKPOINT_KIT_PYTHON_FACTORY`` (``module:attribute``),
as a ``checkpoint_bridge.Storage`` (docs/bridge-protocol.md, "A saver of your own").

The attribute is a ``@checkpointer_test`` registration or a plain async generator
function; each case's saver is the one its generator yields, and the generator is finished
(its code after ``yield`` runs) when the case closes it."""

from __future__ import annotations

import importlib
import inspect
import os
import shutil
import sys
import tempfile
from typing import Any

from checkpoint_bridge.storage import Storage  # the bridge child's own package

from checkpoint_conformance.initializer import FACTORY_ENV, FILE, RegisteredCheckpointer, registration


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


class _Yielded:
    """An async context manager around one run of an async generator factory: enter
    gives the yielded saver, exit finishes the generator."""

    def __init__(self, gen: Any, what: str) -> None:
        self.gen, self.what = gen, what

    async def __aenter__(self) -> Any:
        try:
            return await self.gen.__anext__()
        except StopAsyncIteration:
            raise RuntimeError(f"{self.what} finished without yielding a saver") from None

    async def __aexit__(self, *exc: Any) -> None:
        try:
            await self.gen.__anext__()
        except StopAsyncIteration:
            return
        await self.gen.aclose()
        raise RuntimeError(f"{self.what} yielded more than once; yield one saver")


class RegisteredStorage(Storage):
    """A registration as the bridge's Storage: ``lifespan`` is setup/teardown, the factory
    opens each instance, ``location``/``destroy`` make the storage reopenable, ``lacks``
    is its declared limits."""

    def __init__(self, reg: RegisteredCheckpointer) -> None:
        self.reg = reg
        self.reopenable = reg.location is not None
        # checkpointer_test(lacks=...): the bridge sends it in the handshake's `lacks`.
        self.conformance_lacks = reg.lacks
        self._lifespan: Any = None

    async def setup(self) -> None:
        gen = self.reg.lifespan()
        await _Yielded(gen, "the lifespan").__aenter__()
        self._lifespan = gen

    async def teardown(self) -> None:
        gen, self._lifespan = self._lifespan, None
        if gen is not None:
            await _Yielded(gen, "the lifespan").__aexit__(None, None, None)

    async def create(self) -> str | None:
        if self.reg.location is None:
            return None
        if self.reg.location == FILE:
            return os.path.join(tempfile.mkdtemp(prefix="checkpoint-conformance-"), "checkpoints.db")
        location = await _maybe_await(self.reg.location())
        if not isinstance(location, str):
            raise TypeError(f"location() returned {type(location).__name__}, not a string")
        return location

    def open(self, location: str | None) -> Any:
        what = f"the factory {self.reg.factory.__qualname__}"
        gen = self.reg.factory() if self.reg.location is None else self.reg.factory(location)
        if not inspect.isasyncgen(gen):
            raise TypeError(f"{what} returned {type(gen).__name__}, not an async generator")
        return _Yielded(gen, what)

    async def destroy(self, location: str | None) -> None:
        if location is None:
            return
        if self.reg.destroy is not None:
            await _maybe_await(self.reg.destroy(location))
        elif self.reg.location == FILE:
            shutil.rmtree(os.path.dirname(location), ignore_errors=True)


def load(spec: str) -> RegisteredCheckpointer:
    """The registration ``module:attribute`` names (a plain async generator function is
    registered under its own name). Raises ValueError with one line."""
    module_name, _, attr = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except Exception as e:
        raise ValueError(f"cannot import {module_name}: {type(e).__name__}: {e}") from None
    obj: Any = getattr(module, attr, None)
    if obj is None:
        raise ValueError(f"{module_name} has no attribute {attr}")
    obj = registration(obj, attr)
    problem = obj.problem()
    if problem:
        raise ValueError(problem)
    return obj


def __getattr__(name: str) -> Any:
    if name != "registered":
        raise AttributeError(name)
    spec = os.environ.get(FACTORY_ENV, "")
    if ":" not in spec:
        print(f"checkpoint_conformance: ${FACTORY_ENV} names no module:attribute", file=sys.stderr)
        raise AttributeError(name)
    return RegisteredStorage(load(spec))
