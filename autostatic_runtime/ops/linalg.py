"""Placeholder: filled in by the linalg op family."""

__all__: list[str] = []
