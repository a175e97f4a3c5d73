"""checkpoint-conformance for Python: a drop-in for langgraph-checkpoint-conformance's API
(``checkpointer_test``, ``validate``) that runs this kit's catalog through its binary, and a
pytest plugin (``pytest --checkpointer module:factory``; a ``@checkpointer_test`` in a test
module is collected as one test per case). See docs/python-package.md."""

from checkpoint_conformance._run import UsageError
from checkpoint_conformance.initializer import checkpointer_test
from checkpoint_conformance.report import CapabilityReport, ProgressCallbacks
from checkpoint_conformance.validate import validate

__all__ = ["checkpointer_test", "validate", "CapabilityReport", "ProgressCallbacks", "UsageError"]
