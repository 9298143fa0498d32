"""Telemetry of a dpone process: Prometheus metrics with bounded labels, OpenTelemetry spans and
structured logs.

The names, types, help texts and label sets of the metrics live in one catalogue,
:mod:`dpone.contracts.metrics`. Spans use the OpenTelemetry API only (no-op until an SDK is
configured from the standard ``OTEL_*`` variables by :func:`tracing.configure`), and logs are
stdlib :mod:`logging` events under the ``dpone`` logger. Nothing here ever carries a secret, a
request body or a header value.
"""
