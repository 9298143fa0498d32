"""dpone.artifacts."""
