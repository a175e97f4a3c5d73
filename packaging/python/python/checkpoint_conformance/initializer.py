"""``checkpointer_test``: the registration of a saver factory, with the signature of
langgraph-checkpoint-conformance's (``name``, ``skip_capabilities``, ``lifespan``) plus the
kit's optional storage hooks (``location``, ``destroy``) that open the reopen, two-instance
and crash (durability) cases to a saver whose storage outlives an instance, and ``lacks``,
the saver's declared limits (CONTRACT §5)."""

from __future__ import annotations

import inspect
import sys
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field
from typing import Any

# Every registration made in this process, by name (as the official kit keeps them).
_REGISTRY: dict[str, RegisteredCheckpointer] = {}

# ``location="file"``: the kit gives each case a fresh file path in a fresh temporary
# directory and removes the directory after the case.
FILE = "file"

# The bridge child finds the factory (module:attribute) here (checkpoint_conformance._child).
FACTORY_ENV = "CHECKPOINT_KIT_PYTHON_FACTORY"

# The features a saver may declare it lacks (CONTRACT §5 "Declared limits"; the kit's
# `conformance_core::Feature` names, as the bridge child's `checkpoint_bridge.storage.FEATURES`).
FEATURES = (
    "task_path_on_reads",
    "string_versions",
    "namespaces",
    "wide_numbers",
    "updated_channels",
    "task_path_on_writes",
)


def lacked_features(lacks: Any, what: str = "checkpointer_test(lacks=...)") -> tuple[str, ...]:
    """The feature names of ``lacks`` (a name or an iterable of names; None: none), each
    once. Raises ValueError (one line) for a name that is no feature."""
    if lacks is None:
        return ()
    names = [lacks] if isinstance(lacks, str) else lacks
    try:
        names = list(names)
    except TypeError:
        raise ValueError(f"{what} takes feature names, not {type(lacks).__name__}: {', '.join(FEATURES)}") from None
    for name in names:
        if name not in FEATURES:
            raise ValueError(
                f"{what}: {name!r} is no feature of the kit; valid features are: {', '.join(FEATURES)} "
                "(CONTRACT §5 Declared limits)"
            )
    return tuple(dict.fromkeys(names))


async def _noop_lifespan() -> AsyncGenerator[None, None]:
    yield


@dataclass(eq=False)
class RegisteredCheckpointer:
    """A registered checkpointer factory (what ``@checkpointer_test`` returns).

    - ``factory``: an async generator function yielding one saver; it is called once per
      case (the kit's cases each get a fresh saver), and its code after ``yield`` runs when
      the case is done. With ``location`` it takes the location as its one argument and is
      called again on the same location for a reopen (a second instance, or another
      process after a kill).
    - ``lifespan``: an async generator function run once per validation run around every
      case (e.g. create and drop a database).
    - ``skip_capabilities``: capability names not to judge (reported as skipped).
    - ``location``: ``"file"`` or a callable (plain or async) returning a fresh location
      string per case (a path, a schema name); ``None``: the storage cannot be reopened
      and the durability capability is not implemented.
    - ``destroy``: a callable (plain or async) removing the storage at a location after
      its case; the default removes the directory of a ``"file"`` location.
    - ``lacks``: the features (:data:`FEATURES`) the saver declares it lacks (CONTRACT §5
      "Declared limits"): the cases that use one are not run, with the declaration as
      the reason.
    """

    name: str
    factory: Callable[..., AsyncGenerator[Any, None]]
    skip_capabilities: set[str] = field(default_factory=set)
    lifespan: Callable[[], AsyncGenerator[None, None]] = _noop_lifespan
    location: Any = None
    destroy: Callable[[str], Any] | None = None
    lacks: tuple[str, ...] = ()

    def problem(self) -> str | None:
        """Why this registration cannot be run (one line), or None."""
        return factory_problem(self.factory, "the factory")


def registration(obj: Any, name: str) -> RegisteredCheckpointer:
    """``obj`` as a registration: itself, or a plain factory registered under ``name``
    with the limits it declares in an attribute ``conformance_lacks`` (as the bridge's
    ``--saver module:factory`` factories do). Raises ValueError (one line) for a name
    there that is no feature."""
    if isinstance(obj, RegisteredCheckpointer):
        return obj
    lacks = lacked_features(getattr(obj, "conformance_lacks", None), f"{name}.conformance_lacks")
    return RegisteredCheckpointer(name=name, factory=obj, lacks=lacks)


def factory_problem(fn: Any, what: str) -> str | None:
    """Why ``fn`` is no async generator function (one line), or None."""
    if inspect.isasyncgenfunction(fn):
        return None
    name = getattr(fn, "__qualname__", None) or type(fn).__name__
    if inspect.iscoroutinefunction(fn):
        kind = "a coroutine function (async def without yield)"
    elif inspect.isgeneratorfunction(fn):
        kind = "a generator function (def with yield, not async def)"
    elif callable(fn):
        kind = f"a {type(fn).__name__}"
    else:
        kind = f"not callable ({type(fn).__name__})"
    return f"{what} {name} is {kind}, not an async generator function: write `async def {name.rsplit('.', 1)[-1]}(): yield saver`"


def checkpointer_test(
    name: str,
    *,
    skip_capabilities: set[str] | None = None,
    lifespan: Callable[[], AsyncGenerator[None, None]] | None = None,
    location: Any = None,
    destroy: Callable[[str], Any] | None = None,
    lacks: Any = None,
) -> Callable[[Any], RegisteredCheckpointer]:
    """Registers an async generator as a checkpointer factory (the official kit's
    decorator; ``location``, ``destroy`` and ``lacks`` are the kit's additions)::

        @checkpointer_test(name="InMemorySaver")
        async def memory_checkpointer():
            yield InMemorySaver()

    A file-backed saver that can be opened again gets the reopen and durability cases::

        @checkpointer_test(name="SqliteSaver", location="file")
        async def sqlite_checkpointer(path):
            async with AsyncSqliteSaver.from_conn_string(path) as saver:
                yield saver

    A saver that stores the root namespace only declares it, and the namespace cases are
    not run (with the declaration as the reason) instead of failed::

        @checkpointer_test(name="RootOnlySaver", lacks={"namespaces"})
        async def root_only_checkpointer():
            yield RootOnlySaver()

    The registration must be a module-level name of an importable module (a test module
    pytest collects, or any module on ``sys.path``): the kit's bridge child imports it.
    Raises ValueError (one line) for a ``lacks`` name that is no feature (:data:`FEATURES`).
    """
    if location is not None and location != FILE and not callable(location):
        raise TypeError(f'checkpointer_test(location=...) takes "file" or a callable, not {location!r}')
    lacked = lacked_features(lacks)

    def decorator(fn: Any) -> RegisteredCheckpointer:
        registered = RegisteredCheckpointer(
            name=name,
            factory=fn,
            skip_capabilities=set(skip_capabilities or ()),
            lifespan=lifespan or _noop_lifespan,
            location=location,
            destroy=destroy,
            lacks=lacked,
        )
        _REGISTRY[name] = registered
        return registered

    return decorator


def module_path(obj: Any) -> tuple[str, str, list[str]]:
    """(module name, attribute, extra sys.path entries) under which a fresh process imports
    ``obj``, a module-level name of its module.

    Raises ValueError (one line) for an object no module holds at its top level."""
    fn = obj.factory if isinstance(obj, RegisteredCheckpointer) else obj
    module_name = getattr(fn, "__module__", None)
    module = sys.modules.get(module_name or "")
    qual = getattr(fn, "__qualname__", "")
    if module is None or "<locals>" in qual:
        raise ValueError(
            f"{qual or obj!r} is not a module-level name of an importable module; "
            "define the factory at the top level of a module"
        )
    attr = next((k for k, v in vars(module).items() if (v is obj or v is fn) and not k.startswith("__")), None)
    if attr is None:
        raise ValueError(f"{qual} is not a module-level name of {module_name}; define it at the module's top level")
    extra: list[str] = []
    file = getattr(module, "__file__", None)
    importable = module_name != "__main__"
    if importable:
        import importlib.util
        import os

        try:
            spec = importlib.util.find_spec(module_name)  # type: ignore[arg-type]
        except (ImportError, ValueError):
            spec = None
        origin = getattr(spec, "origin", None)
        importable = bool(origin and file and os.path.realpath(origin) == os.path.realpath(file))
    if not importable:
        # A script run as __main__, or a module pytest imported under a name a fresh
        # process cannot find (--import-mode=importlib): import it by its file name.
        if not file:
            raise ValueError(f"{module_name} has no file; define the factory in a module file")
        import os

        module_name = os.path.splitext(os.path.basename(file))[0]
        extra.append(os.path.dirname(os.path.abspath(file)))
    return module_name, attr, extra
