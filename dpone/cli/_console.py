"""Console-script entries that set the process up before importing their app.

``dpone-executor``'s app module imports the supervisor and, with it, pyarrow, whose allocator
reads its options only then: this entry starts the allocator with the product's options
(:func:`~dpone._allocator.start_arrow_allocator`) before that import. ``dpone`` needs
no such entry: :mod:`dpone.cli.main` imports no command until it runs.
"""

from __future__ import annotations

from dpone._allocator import start_arrow_allocator


def executor() -> None:
    """``dpone-executor``: :func:`dpone.cli.executor_app.main` in a process set up first."""
    start_arrow_allocator()
    from dpone.cli.executor_app import main  # noqa: PLC0415 - imported after the setup

    main()
