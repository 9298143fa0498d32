"""dpone.journal."""
