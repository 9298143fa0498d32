"""Helpers shared by the test suites, imported as
``from support.<module> import ...`` (pyproject puts tests/ on sys.path)."""
