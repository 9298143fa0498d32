"""dpone.grammar."""
