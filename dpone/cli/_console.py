"""The console scripts' entries: the process is set up before the app is imported.

Arrow's allocator reads its options only when pyarrow loads, and ``dpone-executor``'s app
module loads pyarrow as it is imported, so each entry starts the allocator with the product's
options (:func:`~dpone._allocator.start_arrow_allocator`) before importing its app. A command
run in a process the script does not own (a test's ``CliRunner``, an Airflow worker) keeps the
host's options.
"""

from __future__ import annotations

from dpone._allocator import start_arrow_allocator


def dpone() -> None:
    """``dpone``: :func:`dpone.cli.main.main` in a process set up first."""
    start_arrow_allocator()
    from dpone.cli.main import main  # noqa: PLC0415 - imported after the setup

    main()


def executor() -> None:
    """``dpone-executor``: :func:`dpone.cli.executor_app.main` in a process set up first."""
    start_arrow_allocator()
    from dpone.cli.executor_app import main  # noqa: PLC0415 - imported after the setup

    main()
