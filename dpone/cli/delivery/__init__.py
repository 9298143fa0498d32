"""The delivery commands: `dpone deliver` and `dpone delivery inspect|list|resume`, with the
helpers only they use (a run's ports and progress lines, its result document and summary, the
per-child report rows, the likely cause and verification basis `inspect` shows)."""
