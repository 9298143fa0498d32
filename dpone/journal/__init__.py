"""Delivery journal adapters (DeliveryJournalPort): PostgreSQL for production, SQLite for dev.

``dpone.journal.postgres.PostgresJournal`` is the production adapter. The pure core shared by
every adapter (deterministic ids, the MAY_ATTEMPT marker document, fence rules, the guard call
wrapper) lives in ``_core`` and ``_fence``; SQL lives in ``sql/<dialect>/`` files. Importing
this package loads no database driver.
"""
