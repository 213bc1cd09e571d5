"""The data pipeline of Paddle's ``paddle.io``: datasets, batching and the loaders that turn
samples into batches of tensors.

    class Pairs(rt.io.Dataset):
        def __getitem__(self, i): return np.full([3], i, "float32"), np.array([i % 2])
        def __len__(self): return 10

    for x, label in rt.io.DataLoader(Pairs(), batch_size=4, shuffle=True):  # [4, 3], [4, 1]
        ...

    loader = rt.io.DataLoader.from_generator(capacity=16)   # the older, reader-based form
    loader.set_sample_list_generator(batches_of_samples)
    for x, label in loader(): ...

Batches are made in the calling thread (``num_workers`` is accepted and ignored): NumPy
arrays, numbers and tensors of one field are stacked along a new first axis, lists and
tuples of fields batched field by field, dicts key by key, strings kept as lists.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from autostatic_runtime.samplers import batched
from autostatic_runtime.tensor import Tensor

__all__ = [
    "Dataset",
    "IterableDataset",
    "TensorDataset",
    "DataLoader",
    "default_collate_fn",
]


class Dataset:
    """A map-style dataset: ``__getitem__(i)`` gives sample ``i``, ``__len__`` how many."""

    def __getitem__(self, idx: int) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__")

    def __len__(self) -> int:
        raise NotImplementedError(f"{type(self).__name__} must define __len__")


class IterableDataset(Dataset):
    """A dataset read as a stream: ``__iter__`` yields its samples."""

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")

    def __getitem__(self, idx: int) -> Any:
        raise TypeError(f"{type(self).__name__} is iterable only; it has no __getitem__")

    def __len__(self) -> int:
        raise TypeError(f"{type(self).__name__} is iterable only; it has no __len__")


class TensorDataset(Dataset):
    """Samples made of the rows of tensors of one length: sample ``i`` is ``[t[i] for t in
    tensors]``."""

    def __init__(self, tensors: Sequence[Any]):
        lengths = {t.shape[0] for t in tensors}
        if len(lengths) != 1:
            raise ValueError(
                f"TensorDataset: the tensors have different first dims {sorted(lengths)}"
            )
        self.tensors = list(tensors)

    def __getitem__(self, idx: int) -> list:
        return [t[idx] for t in self.tensors]

    def __len__(self) -> int:
        return self.tensors[0].shape[0]


def default_collate_fn(batch: Sequence[Any]) -> Any:
    """One batch from a list of samples: each field stacked along a new first axis (NumPy
    arrays, numbers and tensors), structures batched field by field, strings kept."""
    sample = batch[0]
    if isinstance(sample, Tensor):
        from autostatic_runtime.ops.manipulation import stack

        return stack(list(batch))
    if isinstance(sample, np.ndarray):
        return np.stack(batch)
    if isinstance(sample, (numbers.Number, np.number, np.bool_)):
        return np.array(batch)
    if isinstance(sample, (str, bytes)):
        return list(batch)
    if isinstance(sample, Mapping):
        return {key: default_collate_fn([s[key] for s in batch]) for key in sample}
    if isinstance(sample, Sequence):
        lengths = {len(s) for s in batch}
        if len(lengths) != 1:
            raise ValueError(
                f"default_collate_fn: the samples of a batch have {sorted(lengths)} fields; "
                "every sample must have as many"
            )
        return [default_collate_fn(list(fields)) for fields in zip(*batch)]
    raise TypeError(
        f"default_collate_fn: cannot batch samples of type {type(sample).__name__}; give "
        "the DataLoader a collate_fn"
    )


def _to_tensors(batch: Any) -> Any:
    """The arrays of a collated batch as tensors (strings and tensors kept)."""
    from autostatic_runtime.creation import to_tensor

    if isinstance(batch, np.ndarray):
        return to_tensor(batch)
    if isinstance(batch, Mapping):
        return {k: _to_tensors(v) for k, v in batch.items()}
    if isinstance(batch, (list, tuple)) and not (batch and isinstance(batch[0], (str, bytes))):
        return [_to_tensors(v) for v in batch]
    return batch


def _slots(samples: Sequence[Any]) -> list:
    """A reader's batch: field ``i`` of every sample as one array (``np.array`` of the
    values, so a field holding a list of ids becomes one row of a matrix), as Paddle's
    generator loaders feed them."""
    out = []
    for field in zip(*samples):
        if isinstance(field[0], Tensor):
            from autostatic_runtime.ops.manipulation import stack

            out.append(stack(list(field)))
        else:
            out.append(np.array(field))
    return out


class DataLoader:
    """Batches of a dataset as tensors (Paddle's ``paddle.io.DataLoader``).

    Args:
        dataset: a ``Dataset`` (samples by index) or ``IterableDataset``; a reader
            function (no arguments, returning an iterable) or an iterable is read as a
            stream too (Paddle's transformer test passes its batch generator).
        batch_size: samples per batch (``None``: samples one by one, not batched).
        shuffle: visit a map-style dataset in a new random order each epoch (NumPy's
            global generator, so ``np.random.seed`` makes it repeatable).
        drop_last: drop a last batch of fewer than ``batch_size`` samples.
        collate_fn: makes one batch from a list of samples (default: ``default_collate_fn``).
        batch_sampler: yields lists of indices, one per batch (instead of the three above).
        return_list, places, feed_list, num_workers, use_buffer_reader, use_shared_memory,
        prefetch_factor, timeout, worker_init_fn, persistent_workers: accepted for Paddle's
            signature; batches are made in the calling thread.
    """

    def __init__(
        self,
        dataset: Any,
        feed_list: Any = None,
        places: Any = None,
        return_list: bool = True,
        batch_sampler: Any = None,
        batch_size: int | None = 1,
        shuffle: bool = False,
        drop_last: bool = False,
        collate_fn: Callable | None = None,
        num_workers: int = 0,
        use_buffer_reader: bool = True,
        prefetch_factor: int = 2,
        use_shared_memory: bool = True,
        timeout: int = 0,
        worker_init_fn: Callable | None = None,
        persistent_workers: bool = False,
    ):
        if batch_size is not None and (int(batch_size) != batch_size or batch_size <= 0):
            raise ValueError(f"DataLoader: batch_size must be a positive int, got {batch_size!r}")
        if isinstance(dataset, IterableDataset) and (shuffle or batch_sampler is not None):
            raise ValueError("DataLoader: an IterableDataset cannot be shuffled or sampled")
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle, self.drop_last = bool(shuffle), bool(drop_last)
        self.batch_sampler = batch_sampler
        self.collate_fn = collate_fn
        self.return_list = return_list

    def _index_batches(self) -> Iterable[list]:
        if self.batch_sampler is not None:
            return self.batch_sampler
        n = len(self.dataset)
        order = np.random.permutation(n).tolist() if self.shuffle else range(n)
        return batched(order, self.batch_size, self.drop_last)

    def _stream(self) -> Iterable[Any] | None:
        """The samples of a stream: an IterableDataset, or a reader function (no arguments,
        returning an iterable) or iterable given in place of a dataset; None for a
        map-style dataset."""
        data = self.dataset
        if isinstance(data, IterableDataset):
            return data
        if isinstance(data, Dataset) or hasattr(data, "__getitem__"):
            return None
        return data() if callable(data) else data

    def __iter__(self) -> Iterator[Any]:
        collate = self.collate_fn or default_collate_fn
        stream = self._stream()
        if self.batch_size is None and self.batch_sampler is None:  # samples as they are
            samples = stream if stream is not None else (
                self.dataset[i] for i in range(len(self.dataset)))  # fmt: skip
            for sample in samples:
                yield _to_tensors(sample)
            return
        if stream is not None:
            chunks: Iterable[list] = batched(stream, self.batch_size, self.drop_last)
        else:
            chunks = ([self.dataset[i] for i in idx] for idx in self._index_batches())
        for chunk in chunks:
            yield _to_tensors(collate(chunk))

    def __call__(self) -> Iterator[Any]:
        return iter(self)

    def __len__(self) -> int:
        if isinstance(self.dataset, IterableDataset):
            raise TypeError("DataLoader: the length of an IterableDataset is unknown")
        if self.batch_sampler is not None:
            return len(self.batch_sampler)
        n = len(self.dataset)
        if self.batch_size is None:
            return n
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    @staticmethod
    def from_generator(
        feed_list: Any = None,
        capacity: int | None = None,
        use_double_buffer: bool = True,
        iterable: bool = True,
        return_list: bool = True,
        use_multiprocess: bool = False,
        drop_last: bool = True,
    ) -> GeneratorLoader:
        """A loader fed by a Python reader (Paddle 1.x style): give it one with
        ``set_sample_generator``, ``set_sample_list_generator`` or ``set_batch_generator``."""
        return GeneratorLoader(drop_last)


class GeneratorLoader:
    """``DataLoader.from_generator``'s loader: batches from a reader function (a function
    without arguments returning an iterable), as a list of tensors per batch."""

    def __init__(self, drop_last: bool = True):
        self._drop_last = drop_last
        self._batches: Callable[[], Iterable[Any]] | None = None

    def set_sample_generator(
        self, reader: Callable, batch_size: int, drop_last: bool = True, places: Any = None
    ) -> GeneratorLoader:
        """``reader()`` yields samples (each a list or tuple of fields); ``batch_size`` of
        them make one batch."""
        self._batches = lambda: (_slots(chunk) for chunk in batched(reader(), batch_size,
                                                                     drop_last))  # fmt: skip
        return self

    def set_sample_list_generator(self, reader: Callable, places: Any = None) -> GeneratorLoader:
        """``reader()`` yields lists of samples, one list per batch."""
        self._batches = lambda: (_slots(list(samples)) for samples in reader())
        return self

    def set_batch_generator(self, reader: Callable, places: Any = None) -> GeneratorLoader:
        """``reader()`` yields batches already made: a list or tuple of arrays each."""
        self._batches = lambda: (
            [np.asarray(f) if not isinstance(f, Tensor) else f for f in batch]
            for batch in reader()
        )
        return self

    def __iter__(self) -> Iterator[list]:
        if self._batches is None:
            raise RuntimeError(
                "this DataLoader has no reader: call set_sample_generator, "
                "set_sample_list_generator or set_batch_generator first"
            )
        for batch in self._batches():
            yield _to_tensors(list(batch))

    def __call__(self) -> Iterator[list]:
        return iter(self)
