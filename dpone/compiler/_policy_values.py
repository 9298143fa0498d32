"""Policy values the runtime does not implement are refused, never accepted and ignored.

Two profile switches have exactly one supported value, and the runtime always behaves as that
value says:

- ``acknowledgement.duplicate.requires_receipt_for_same_delivery_key``: a duplicate answer
  (``duplicate.statuses``) is taken as "already applied under this key" only with the same-key
  receipt it carries (``dpone.executor.supervisor._submit:classify``); without it the effect is
  unknown. ``false`` would trust a bare 409, which could name another delivery's job.
- ``result_policy.all_rows_accounted``: verification proves a full effect only when the
  receiver's counters account for every sealed row (``_observe:verify``). ``false`` would
  promote a checkpoint over rows nobody accounted for.

Either switch set to ``false`` is ``profile.unsupported_policy`` at its YAML line.
"""

from __future__ import annotations

from dpone.compiler._located import located_error
from dpone.compiler._yaml import LoadedDocument
from dpone.contracts.profile import OperationProfile


def check_policy_values(profile: OperationProfile, doc: LoadedDocument) -> None:
    """Refuse a policy switch set to a value no code implements."""
    duplicate = profile.acknowledgement.duplicate
    if duplicate is not None and not duplicate.requires_receipt_for_same_delivery_key:
        raise located_error(
            "profile.unsupported_policy", "requires_receipt_for_same_delivery_key: false is not "
            "supported: a duplicate answer counts as applied only with the receipt of the same "
            "delivery key; a bare duplicate status could name another delivery's job", doc,
            ("acknowledgement", "duplicate", "requires_receipt_for_same_delivery_key"),
            hint="remove the field or set it to true, and extract the same-key receipt under "
                 "duplicate.same_key_receipt")
    if not profile.result_policy.all_rows_accounted:
        raise located_error(
            "profile.unsupported_policy", "all_rows_accounted: false is not supported: a child "
            "is verified only when the receiver's counters account for every sealed row", doc,
            ("result_policy", "all_rows_accounted"),
            hint="remove the field or set it to true; a receiver that drops rows is "
                 "PARTIALLY_APPLIED, never verified")
