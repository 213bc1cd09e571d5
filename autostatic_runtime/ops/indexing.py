"""Placeholder: filled in by the indexing op family."""

__all__: list[str] = []
