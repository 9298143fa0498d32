"""Delivery journal adapters (DeliveryJournalPort): PostgreSQL for production, SQLite for dev.

``dpone.journal.postgres.PostgresJournal`` is the production adapter. Everything that does not
depend on the driver is shared: the pure core (deterministic ids, the MAY_ATTEMPT marker
document, fence rules, the guard call wrapper) in ``_core`` and ``_fence``; the journal steps
(``_admission_rules``, ``_submit_rules``, ``_transition_rules``, ``_steps``), row decoding
(``_rows_common``) and the port methods (``_journal_base``), all written against the
``_unit.UnitOfWork`` protocol. A dialect package keeps only its connection and transaction
handling, locking primitive, parameter binding, row codec and driver-error translation; SQL
lives in ``sql/<dialect>/`` files. Importing this package loads no database driver.
"""
