"""The sealer: plan every child of one frozen parent and publish its payload and evidence.

The artifact store comes in as an ``ImmutableArtifactPort``; this package never imports an
adapter or the journal. See :func:`seal_boundary` (freeze a boundary, then seal it) and
:func:`seal_all` (seal a frozen parent); template symbols and the ``scope.to`` rule are
described in ``_request``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpone.contracts._exports import lazy_exports

if TYPE_CHECKING:
    from dpone.executor.seal._boundary import SealedBoundary, seal_boundary
    from dpone.executor.seal._names import payload_extension, payload_filename, payload_key
    from dpone.executor.seal._record import record_seal, seal_record_key
    from dpone.executor.seal._seal import seal_all

__all__ = ["SealedBoundary", "payload_extension", "payload_filename", "payload_key",
           "record_seal", "seal_all", "seal_boundary", "seal_record_key"]

# Each name is imported from its module on first use (PEP 562): importing one piece of this
# package does not load the libraries of the others.
__getattr__ = lazy_exports(__name__, {
    "SealedBoundary": "_boundary",
    "seal_boundary": "_boundary",
    "payload_extension": "_names",
    "payload_key": "_names",
    "record_seal": "_record",
    "seal_record_key": "_record",
    "payload_filename": "_names",
    "seal_all": "_seal",
})
