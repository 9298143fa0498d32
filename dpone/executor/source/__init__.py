"""The source freeze: read one source boundary, apply the closed mapping, publish one parent.

The artifact store comes in as an ``ImmutableArtifactPort``; this package never imports an
adapter. A PostgreSQL source's DSN comes from the process environment by the plan's
connection ref (:func:`source_dsn`), resolved by the caller and passed in.
"""

from dpone.executor.source._arrow import bounded_memory_pool
from dpone.executor.source._connection import source_dsn
from dpone.executor.source._freeze import freeze_source, parent_document_key, parent_key
from dpone.executor.source._parent_file import MappedParent, open_parent
from dpone.executor.source._parent_writer import PARENT_BATCH_ROWS

__all__ = [
    "PARENT_BATCH_ROWS",
    "MappedParent",
    "bounded_memory_pool",
    "freeze_source",
    "open_parent",
    "parent_document_key",
    "parent_key",
    "source_dsn",
]
