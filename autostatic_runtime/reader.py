"""Reader decorators (Paddle's ``paddle.batch``): a *reader* is a function without arguments
that returns an iterable of samples; a decorator turns one reader into another.

    train = rt.batch(sample_reader, batch_size=32)     # a reader of lists of 32 samples
    for samples in train(): ...
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

__all__ = ["batch"]


def batch(
    reader: Callable[[], Iterable[Any]], batch_size: int, drop_last: bool = False
) -> Callable[[], Iterator[list]]:
    """A reader of lists of ``batch_size`` consecutive samples of ``reader`` (the last list
    shorter, or dropped with ``drop_last=True``).

    Args:
        reader: a function without arguments returning an iterable of samples.
        batch_size: samples per batch, a positive int.
        drop_last: drop a last batch of fewer than ``batch_size`` samples.
    """
    size = int(batch_size)
    if size <= 0 or size != batch_size:
        raise ValueError(f"batch_size should be a positive integer value, but got {batch_size!r}")

    def batch_reader() -> Iterator[list]:
        samples: list = []
        for sample in reader():
            samples.append(sample)
            if len(samples) == size:
                yield samples
                samples = []
        if samples and not drop_last:
            yield samples

    return batch_reader
