"""Imported first by the benchmarks that freeze and seal in their own process: Arrow's allocator
starts with the options a ``dpone`` process starts it with
(:func:`dpone._allocator.start_arrow_allocator`, read only when pyarrow loads), so the
stages timed in process run as they do in the CLI."""

from dpone._allocator import start_arrow_allocator

start_arrow_allocator()
