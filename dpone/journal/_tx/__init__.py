"""The journal's transactions, one module per kind: each runs inside one ``UnitOfWork``.

``admit`` (a parent and its whole topology), ``submit`` (attempt planning and the critical
SUBMITTING transaction), ``transition`` (a guarded transition requested by the supervisor),
``promote`` (the contiguous checkpoint frontier), ``repair`` (an orphan capacity reservation),
``reconcile`` (an operator reconciliation) and ``orphan`` (an orphan MAY_ATTEMPT marker of
another journal epoch met before an attempt).
They share only the helper modules of ``dpone.journal`` and never import one another (an
import-linter independence contract keeps it so).
"""
