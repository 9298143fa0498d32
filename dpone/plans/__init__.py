"""dpone.plans."""
