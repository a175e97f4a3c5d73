"""The Python side of the checkpoint conformance kit's bridge: serves any LangGraph
``BaseCheckpointSaver`` over the bridge protocol (docs/bridge-protocol.md in the kit's
repository) so the kit's catalog can judge it.

Run as ``python -m checkpoint_bridge``; the kit starts it and sends the saver to serve
(``memory``, ``sqlite``, ``sqlite-async``, ``postgres``, ``postgres-async`` or
``module:factory``) in the handshake.
"""

__version__ = "0.1.0"

from .storage import Storage  # noqa: E402
from .values import Typed  # noqa: E402

__all__ = ["Storage", "Typed", "__version__"]
