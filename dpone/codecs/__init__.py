"""Deterministic, streaming payload encoders and the multipart envelope.

Table encoders take Arrow input (a ``pyarrow.Table``, a ``RecordBatch`` or an iterable of
record batches whose columns are the mapping's columns in mapping order) and yield ``bytes``
chunks whose concatenation depends only on the rows, the mapping and the profile's codec,
never on batching or chunking. A sealer composes them::

    decoded_stream, decoded = measure(encode_rows(batches, mapping, fmt, codec))
    sealed_stream, sealed = measure(compress(decoded_stream, fmt, codec))
    ...write sealed_stream to the artifact store; then decoded.size, sealed.digest...
    envelope = MultipartEnvelope(payload_name=..., filename=..., content_type=...,
                                 scalar_parts=[...], payload_size=sealed.size,
                                 payload_digest=sealed.digest, payload=reopen_artifact)
    envelope.content_length  # wire bytes, exact
    envelope.iter_body(reopen_artifact())  # the request body, payload verified as it streams
    codec_libraries()        # record with the payload: what else the bytes depend on

A sealer that slices many row intervals out of one table encodes row texts once instead
(:func:`row_texts`, :func:`row_frame`): the frame around any interval's texts is the same
bytes as :func:`encode_rows` of that interval.
"""

from dpone.codecs._columns import SLICE_ROWS
from dpone.codecs._csv import encode_csv
from dpone.codecs._errors import PayloadEncodingError, PayloadIntegrityError
from dpone.codecs._gzip import BLOCK_BYTES, gzip_header, gzip_stream
from dpone.codecs._json import encode_json_array, encode_ndjson
from dpone.codecs._measure import Measurement, measure
from dpone.codecs._multipart import BOUNDARY_PREFIX, MultipartEnvelope
from dpone.codecs._payload import CODEC_VERSION, codec_libraries, compress, encode_rows, raw_stream
from dpone.codecs._rows import RowFrame, row_frame, row_texts

__all__ = [
    "BLOCK_BYTES",
    "BOUNDARY_PREFIX",
    "CODEC_VERSION",
    "SLICE_ROWS",
    "Measurement",
    "MultipartEnvelope",
    "PayloadEncodingError",
    "PayloadIntegrityError",
    "RowFrame",
    "codec_libraries",
    "compress",
    "encode_csv",
    "encode_json_array",
    "encode_ndjson",
    "encode_rows",
    "gzip_header",
    "gzip_stream",
    "measure",
    "raw_stream",
    "row_frame",
    "row_texts",
]
