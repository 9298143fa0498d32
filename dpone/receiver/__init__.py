"""dpone.receiver."""
