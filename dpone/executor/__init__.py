"""dpone.executor."""
