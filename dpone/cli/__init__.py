"""dpone.cli."""
