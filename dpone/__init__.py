"""dpone REST bulk delivery."""

__version__ = "0.75.0.dev0"
