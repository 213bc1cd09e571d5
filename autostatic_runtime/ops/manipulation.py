"""Placeholder: filled in by the manipulation op family."""

__all__: list[str] = []
