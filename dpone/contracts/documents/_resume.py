"""``dpone delivery resume`` without ``--apply``: each unfinished child's next action and what
``--apply`` would do; nothing is sent or written (``dpone.delivery_resume_preview.v1``)."""

from __future__ import annotations

from typing import Final, Literal

from pydantic import Field

from dpone.contracts._base import Digest
from dpone.contracts.documents._children import ChildRow
from dpone.contracts.documents._report import Interval, Report

RESUME_PREVIEW_SCHEMA_ID: Final = "dpone.delivery_resume_preview.v1"


class PreviewChild(ChildRow):
    """An unfinished child: its allowed actions and what ``--apply`` does with it."""

    allowed_actions: tuple[str, ...]
    next_action: str
    on_apply: str
    on_apply_text: str


class ResumePreview(Report):
    schema_id: Literal["dpone.delivery_resume_preview.v1"] = Field(
        default=RESUME_PREVIEW_SCHEMA_ID, alias="schema")
    parent_id: str
    logical_route_id: str
    plan_digest: Digest
    profile: str
    authority: str
    boundary: Interval
    checkpoint_frontier: int
    children_total: int
    rows_total: int
    sealed_documents_verified: int
    complete: bool
    wait: bool
    applied: bool
    all_children: tuple[ChildRow, ...]
    children: tuple[PreviewChild, ...]
    """The unfinished children, in ordinal order."""
