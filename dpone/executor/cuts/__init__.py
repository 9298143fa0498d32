"""Process cuts for the fault matrix: a test switch that SIGKILLs the executor at a named point.

Off unless ``DPONE_TEST_CUT`` names a cut (``<before|after>:<point>[@<occurrence>]``); then the
composition root wraps the journal and artifact ports (:class:`CuttingJournal`,
:class:`CuttingArtifacts`) and gives the transport the same :class:`CutHook`. Unset, nothing is
wrapped and nothing is checked. :func:`cut_points` lists every point the code has: before and
after each journal write and artifact write, and the send boundary.
"""

from dpone.executor.cuts._hook import (
    CUT_ENV,
    PASSAGE_PREFIX,
    TRACE,
    Cut,
    CutHook,
    When,
    hook_from,
    parse_cut,
    sigkill,
)
from dpone.executor.cuts._ports import (
    ARTIFACT_POINTS,
    JOURNAL_WRITE_POINTS,
    TRANSPORT_POINTS,
    CuttingArtifacts,
    CuttingJournal,
    cut_points,
    journal_points,
    transition_point,
)

__all__ = [
    "ARTIFACT_POINTS",
    "CUT_ENV",
    "JOURNAL_WRITE_POINTS",
    "PASSAGE_PREFIX",
    "TRACE",
    "TRANSPORT_POINTS",
    "Cut",
    "CutHook",
    "CuttingArtifacts",
    "CuttingJournal",
    "When",
    "cut_points",
    "hook_from",
    "journal_points",
    "parse_cut",
    "sigkill",
    "transition_point",
]
