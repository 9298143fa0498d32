"""dpone.compiler."""
