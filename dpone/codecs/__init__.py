"""dpone.codecs."""
