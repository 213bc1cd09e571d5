"""Which samples make each batch (Paddle's ``paddle.io`` samplers), for ``DataLoader``'s
``batch_sampler=``; ``DistributedBatchSampler`` gives each rank of a job its part of every
batch, as a data-parallel step expects:

    sampler = rt.io.DistributedBatchSampler(dataset, batch_size=32, shuffle=True)
    loader = rt.io.DataLoader(dataset, batch_sampler=sampler)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)          # the same new order on every rank
        for x, y in loader:               # this rank's 32 samples of each global batch
            ...

Orders are drawn from NumPy (``np.random``'s global generator for ``RandomSampler`` and a
shuffling ``BatchSampler``; a generator seeded with the epoch for
``DistributedBatchSampler``, so every rank draws the same one).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sized
from typing import Any

import numpy as np

__all__ = [
    "Sampler",
    "SequenceSampler",
    "RandomSampler",
    "BatchSampler",
    "DistributedBatchSampler",
]


def _positive_int(owner: str, name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
        raise ValueError(f"{owner}: {name} must be a positive int, got {value!r}")
    return int(value)


def _flag(owner: str, name: str, value: Any) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{owner}: {name} must be True or False, got {value!r}")
    return bool(value)


def batched(items: Iterable[Any], size: int, drop_last: bool) -> Iterator[list]:
    """``items`` in lists of ``size`` (the last one shorter, or dropped with ``drop_last``)."""
    batch: list = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch and not drop_last:
        yield batch


class Sampler:
    """Indices of a dataset's samples, one at a time (``paddle.io.Sampler``)."""

    def __init__(self, data_source: Sized | None = None):
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        raise NotImplementedError

    def __len__(self) -> int:
        return len(self.data_source)


class SequenceSampler(Sampler):
    """0, 1, ..., len(data_source) - 1 (``paddle.io.SequenceSampler``)."""

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))


class RandomSampler(Sampler):
    """The indices in a new random order at each pass (``paddle.io.RandomSampler``); with
    ``replacement``, ``num_samples`` draws that may repeat. ``generator``: an iterable of
    indices to take instead of drawing."""

    def __init__(
        self,
        data_source: Sized,
        replacement: bool = False,
        num_samples: int | None = None,
        generator: Any = None,
    ):
        super().__init__(data_source)
        self.replacement = _flag("RandomSampler", "replacement", replacement)
        if num_samples is not None and not self.replacement:
            raise ValueError(
                "RandomSampler: num_samples is for sampling with replacement "
                "(replacement=True); without it every sample is drawn once"
            )
        self._num_samples = (
            None
            if num_samples is None
            else _positive_int("RandomSampler", "num_samples", num_samples)
        )
        self.generator = generator

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        if self.generator is not None:
            for _, i in zip(range(self.num_samples), self.generator):
                yield int(i)
            return
        if self.replacement:
            yield from np.random.randint(0, n, self.num_samples).tolist()
        else:
            yield from np.random.permutation(n).tolist()

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler:
    """Lists of indices, one per batch (``paddle.io.BatchSampler``): from ``sampler``, or
    over ``dataset`` in order (``shuffle``: a new random order each pass)."""

    def __init__(
        self,
        dataset: Sized | None = None,
        sampler: Sampler | None = None,
        shuffle: bool = False,
        batch_size: int = 1,
        drop_last: bool = False,
    ):
        if (dataset is None) == (sampler is None):
            raise ValueError("BatchSampler: give either dataset or sampler, not both or neither")
        self.batch_size = _positive_int("BatchSampler", "batch_size", batch_size)
        self.shuffle = _flag("BatchSampler", "shuffle", shuffle)
        self.drop_last = _flag("BatchSampler", "drop_last", drop_last)
        if sampler is not None and self.shuffle:
            raise ValueError("BatchSampler: shuffle is for a dataset; a sampler sets the order")
        if sampler is None:
            sampler = RandomSampler(dataset) if self.shuffle else SequenceSampler(dataset)
        self.sampler = sampler

    def __iter__(self) -> Iterator[list]:
        return batched(iter(self.sampler), self.batch_size, self.drop_last)

    def __len__(self) -> int:
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


class DistributedBatchSampler(BatchSampler):
    """This rank's part of every batch of a job (``paddle.io.DistributedBatchSampler``).

    The dataset's indices (in a new order each epoch with ``shuffle``, the same on every
    rank: drawn from a generator seeded with the epoch, see ``set_epoch``) are padded by
    repeating the first ones to a multiple of ``num_replicas``, then taken in global batches
    of ``batch_size * num_replicas`` consecutive indices: rank ``r`` gets the ``r``-th
    ``batch_size`` of each, so the ranks' batches, concatenated in rank order, are the
    global batch a ``DataParallel`` step sees. A last global batch of fewer samples is split
    evenly between the ranks (dropped with ``drop_last``).

    Args:
        dataset: what to sample (its length is read).
        batch_size: samples per batch on each rank.
        num_replicas, rank: the job's size and this process's rank (default:
            ``rt.distributed.get_world_size()`` and ``get_rank()``).
        shuffle, drop_last: as ``BatchSampler``'s.
    """

    def __init__(
        self,
        dataset: Sized,
        batch_size: int,
        num_replicas: int | None = None,
        rank: int | None = None,
        shuffle: bool = False,
        drop_last: bool = False,
    ):
        from autostatic_runtime import distributed

        owner = "DistributedBatchSampler"
        self.dataset = dataset
        self.batch_size = _positive_int(owner, "batch_size", batch_size)
        self.shuffle = _flag(owner, "shuffle", shuffle)
        self.drop_last = _flag(owner, "drop_last", drop_last)
        self.nranks = (
            distributed.get_world_size()
            if num_replicas is None
            else _positive_int(owner, "num_replicas", num_replicas)
        )
        self.local_rank = distributed.get_rank() if rank is None else int(rank)
        if not 0 <= self.local_rank < self.nranks:
            raise ValueError(
                f"{owner}: rank {rank!r} is not one of the job's ranks 0..{self.nranks - 1}"
            )
        self.epoch = 0
        self.num_samples = int(math.ceil(len(dataset) / self.nranks))
        self.total_size = self.num_samples * self.nranks

    def set_epoch(self, epoch: int) -> None:
        """Draw the order of ``epoch`` at the next pass (call it with the same epoch on
        every rank, before each epoch)."""
        self.epoch = int(epoch)

    def _indices(self) -> list[int]:
        n = len(self.dataset)
        order = list(range(n))
        if self.shuffle:
            np.random.RandomState(self.epoch).shuffle(order)
            self.epoch += 1
        while len(order) < self.total_size:  # pad with the first ones (the same on each rank)
            order += order[: self.total_size - len(order)]
        if self.nranks == 1:
            return order
        per_rank, ranks, r = self.batch_size, self.nranks, self.local_rank
        whole = len(order) - len(order) % (per_rank * ranks)
        mine = []
        for start in range(0, whole, per_rank * ranks):
            mine += order[start + r * per_rank : start + (r + 1) * per_rank]
        rest = order[whole:]  # a last global batch of fewer samples: an equal share each
        share = len(rest) // ranks
        return mine + rest[r * share : (r + 1) * share]

    def __iter__(self) -> Iterator[list]:
        return batched(iter(self._indices()), self.batch_size, self.drop_last)

    def __len__(self) -> int:
        if self.drop_last:
            return self.num_samples // self.batch_size
        return -(-self.num_samples // self.batch_size)
