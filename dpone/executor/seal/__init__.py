"""The sealer: plan every child of one frozen parent and publish its payload and evidence.

The artifact store comes in as an ``ImmutableArtifactPort``; this package never imports an
adapter or the journal. See :func:`seal_boundary` (freeze a boundary, then seal it) and
:func:`seal_all` (seal a frozen parent); template symbols and the ``scope.to`` rule are
described in ``_request``.
"""

from dpone.executor.seal._boundary import SealedBoundary, seal_boundary
from dpone.executor.seal._payload import payload_extension, payload_key
from dpone.executor.seal._record import record_seal, seal_record_key
from dpone.executor.seal._request import payload_filename
from dpone.executor.seal._seal import seal_all

__all__ = ["SealedBoundary", "payload_extension", "payload_filename", "payload_key",
           "record_seal", "seal_all", "seal_boundary", "seal_record_key"]
