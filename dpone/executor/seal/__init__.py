"""The sealer: plan every child of one frozen parent and publish its payload and evidence.

The artifact store comes in as an ``ImmutableArtifactPort``; this package never imports an
adapter or the journal. See :func:`seal_all`; template symbols and the ``scope.to`` rule are
described in ``_request``.
"""

from dpone.executor.seal._payload import payload_extension, payload_key
from dpone.executor.seal._record import record_seal, seal_record_key
from dpone.executor.seal._request import payload_filename
from dpone.executor.seal._seal import seal_all

__all__ = ["payload_extension", "payload_filename", "payload_key", "record_seal", "seal_all",
           "seal_record_key"]
