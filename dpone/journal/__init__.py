"""Delivery journal adapters (DeliveryJournalPort): PostgreSQL for production, SQLite for dev.

``dpone.journal.postgres.PostgresJournal`` is the production adapter. Everything that does not
depend on the driver is shared and written against the ``_unit.UnitOfWork`` protocol:

- ``_port``: the port's methods, each one transaction;
- ``_tx/``: the transactions, one module each (``admit``, ``submit``, ``transition``,
  ``promote``, ``repair``); they never import one another;
- the helpers they share: ``_rows`` (stored rows as typed, frozen values, decoded once),
  ``_models`` (rows to the port's models), ``_lookup`` (typed reads and the overlap fence's
  inputs), ``_cas`` (the guard and the revision CAS with its audit row), ``_leases``,
  ``_environment`` (clock, epoch, gate), ``_capacity`` (remote-job slots), ``_marker`` (the
  MAY_ATTEMPT marker), ``_ids`` (deterministic ids), ``_fence`` (pure overlap rules) and
  ``_sql`` (named queries and migrations).

A dialect package keeps only its connection and transaction handling, locking primitive,
parameter binding, row codec and driver-error translation; SQL lives in ``sql/<dialect>/``
files. Importing this package loads no database driver and nothing of the compiler: the state
contract comes compiled from ``dpone.contracts.design``.
"""

from dpone.journal._ids import child_operation_id, parent_operation_id

__all__ = ["child_operation_id", "parent_operation_id"]
