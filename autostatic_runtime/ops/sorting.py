"""Placeholder: filled in by the sorting op family."""

__all__: list[str] = []
