"""A saver whose ``get_next_version`` knows only the integer versions it produces, as many
community savers do: LangGraph's padded string versions raise NotImplementedError. The
bridge declares ``string_versions`` lacking for it (the test
``an_integer_only_saver_declares_string_versions_lacking``).
"""

from langgraph.checkpoint.memory import InMemorySaver


class IntVersionsSaver(InMemorySaver):
    """InMemorySaver whose versions are plain integers."""

    def get_next_version(self, current, channel):  # type: ignore[override]
        if current is None:
            return 1
        if isinstance(current, int):
            return current + 1
        raise NotImplementedError(f"integer versions only, got {current!r}")
