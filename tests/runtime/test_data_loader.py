"""``rt.io``'s data pipeline as Paddle's models use it: map-style and iterable datasets
batched by ``DataLoader``, and the reader-fed ``DataLoader.from_generator`` loaders."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import autostatic_runtime as rt


class Squares(rt.io.Dataset):
    def __init__(self, n=10):
        self.n = n

    def __getitem__(self, i):
        return np.full([3], i, "float32"), np.array([i * i]), {"id": i}

    def __len__(self):
        return self.n


def test_dataloader_stacks_the_fields_of_a_map_style_dataset():
    loader = rt.io.DataLoader(Squares(), batch_size=4, places=[rt.CPUPlace()])
    batches = list(loader())
    assert len(loader) == 3 and len(batches) == 3
    x, y, extra = batches[0]
    assert x.shape == [4, 3] and x.dtype == rt.float32 and y.shape == [4, 1]
    assert y.dtype == rt.int64 and y.numpy().ravel().tolist() == [0, 1, 4, 9]
    assert extra["id"].numpy().tolist() == [0, 1, 2, 3]
    assert batches[-1][0].shape == [2, 3]  # the last, shorter batch
    dropped = rt.io.DataLoader(Squares(), batch_size=4, drop_last=True)
    assert len(dropped) == 2 and [b[0].shape[0] for b in dropped] == [4, 4]


def test_dataloader_shuffles_with_numpy_seed_and_takes_samplers_and_collate_fns():
    def order(**kw):
        np.random.seed(7)
        loader = rt.io.DataLoader(Squares(), batch_size=5, shuffle=True, **kw)
        return [int(v) for b in loader for v in b[0].numpy()[:, 0]]

    assert order() == order() and sorted(order()) == list(range(10)) and order() != list(range(10))
    pairs = rt.io.DataLoader(Squares(), batch_sampler=[[9, 0], [4]], collate_fn=lambda s: len(s))
    assert list(pairs) == [2, 1] and len(pairs) == 2
    one_by_one = list(rt.io.DataLoader(Squares(3), batch_size=None))
    assert [s[1].shape for s in one_by_one] == [[1], [1], [1]]


def test_iterable_and_tensor_datasets():
    class Stream(rt.io.IterableDataset):
        def __iter__(self):
            return iter([np.ones(2, "float32") * i for i in range(5)])

    assert [b.shape for b in rt.io.DataLoader(Stream(), batch_size=2)] == [[2, 2]] * 2 + [[1, 2]]

    def batches():  # a reader function given as the dataset, its items already batches
        yield [np.zeros([2, 3], "float32"), np.arange(2)]
        yield [np.ones([2, 3], "float32"), np.arange(2, 4)]

    assert [b[1].numpy().tolist() for b in rt.io.DataLoader(batches, batch_size=None)()] == [
        [0, 1], [2, 3]]  # fmt: skip
    with pytest.raises(ValueError, match="cannot be shuffled"):
        rt.io.DataLoader(Stream(), shuffle=True)
    data = rt.io.TensorDataset([rt.arange(6).reshape([3, 2]), rt.to_tensor([0, 1, 0])])
    (xs, ys), = list(rt.io.DataLoader(data, batch_size=3))  # fmt: skip
    assert xs.numpy().tolist() == [[0, 1], [2, 3], [4, 5]] and ys.numpy().tolist() == [0, 1, 0]
    with pytest.raises(ValueError, match="different first dims"):
        rt.io.TensorDataset([rt.ones([2]), rt.ones([3])])


def test_loaders_fed_by_readers():
    def sample_lists():  # Paddle's sentiment reader: ([ids], [label], length) per sample
        yield [([1, 2, 3], [0], 3), ([4, 5, 0], [1], 2)]
        yield [([6, 0, 0], [1], 1), ([7, 8, 9], [0], 3)]

    loader = rt.io.DataLoader.from_generator(capacity=16, iterable=True)
    with pytest.raises(RuntimeError, match="no reader"):
        next(iter(loader))
    loader.set_sample_list_generator(sample_lists, places=rt.CPUPlace())
    words, labels, lengths = next(iter(loader()))
    assert words.shape == [2, 3] and labels.shape == [2, 1] and lengths.numpy().tolist() == [3, 2]
    assert len(list(loader())) == 2  # each call reads the reader again

    def samples():
        return iter([(np.ones([2], "float32") * i, i) for i in range(5)])

    loader.set_sample_generator(samples, batch_size=2)  # drop_last=True by default
    assert [[t.shape for t in b] for b in loader()] == [[[2, 2], [2]]] * 2

    def batches():
        yield np.zeros([3, 4], "float32"), np.arange(3)

    loader.set_batch_generator(batches)
    (x, y), = list(loader())  # fmt: skip
    assert x.shape == [3, 4] and y.numpy().tolist() == [0, 1, 2]


@given(
    n=st.integers(1, 40),
    batch=st.integers(1, 6),
    ranks=st.integers(1, 4),
    shuffle=st.booleans(),
    drop_last=st.booleans(),
    epoch=st.integers(0, 3),
)
def test_distributed_batch_sampler_splits_each_global_batch_between_the_ranks(
    n, batch, ranks, shuffle, drop_last, epoch
):
    """The ranks' i-th batches, in rank order, are the i-th global batch: consecutive
    indices of one order (the same on every rank), padded by its first ones to a multiple
    of the ranks; a short last global batch is shared evenly."""
    data = list(range(n))
    per_rank = []
    for r in range(ranks):
        sampler = rt.io.DistributedBatchSampler(
            data, batch, num_replicas=ranks, rank=r, shuffle=shuffle, drop_last=drop_last
        )
        sampler.set_epoch(epoch)
        per_rank.append(list(sampler))
        assert len(per_rank[-1]) == len(sampler)
    order = list(range(n))
    if shuffle:
        np.random.RandomState(epoch).shuffle(order)
    total = -(-n // ranks) * ranks
    order = (order * ranks)[:total]
    steps = max(len(b) for b in per_rank)
    assert all(len(b) == steps for b in per_rank)
    seen = []
    for i in range(steps):
        seen += [j for b in per_rank for j in b[i]]
    if drop_last:
        assert all(len(b) == batch for batches in per_rank for b in batches)
        assert seen == order[: len(seen)]
    else:
        rest = total % (batch * ranks)
        whole = total - rest
        assert seen[:whole] == order[:whole]
        assert sorted(seen[whole:]) == sorted(order[whole:])
        assert sorted(seen) == sorted(order)


def test_samplers_with_the_dataloader():
    ds = Squares(7)
    loader = rt.io.DataLoader(ds, batch_sampler=rt.io.BatchSampler(ds, batch_size=3))
    assert [y.numpy().ravel().tolist() for _, y, _ in loader] == [[0, 1, 4], [9, 16, 25], [36]]
    sampler = rt.io.BatchSampler(sampler=rt.io.SequenceSampler(ds), batch_size=3, drop_last=True)
    assert list(sampler) == [[0, 1, 2], [3, 4, 5]] and len(sampler) == 2
    np.random.seed(1)
    shuffled = [i for b in rt.io.BatchSampler(ds, shuffle=True, batch_size=2) for i in b]
    assert sorted(shuffled) == list(range(7)) and shuffled != list(range(7))
    drawn = list(rt.io.RandomSampler(ds, replacement=True, num_samples=20))
    assert len(drawn) == 20 and set(drawn) <= set(range(7))
    first = rt.io.DistributedBatchSampler(ds, 2, num_replicas=2, rank=0, shuffle=True)
    assert list(first) != list(first)  # a new epoch at each pass, as Paddle's
    with pytest.raises(ValueError, match="rank 2 is not one of the job's ranks 0..1"):
        rt.io.DistributedBatchSampler(ds, 2, num_replicas=2, rank=2)
    with pytest.raises(ValueError, match="batch_size must be a positive int"):
        rt.io.BatchSampler(ds, batch_size=0)
    with pytest.raises(ValueError, match="either dataset or sampler"):
        rt.io.BatchSampler()


def test_a_distributed_batch_sampler_reads_the_job_from_the_environment(monkeypatch):
    monkeypatch.setenv("PADDLE_TRAINERS_NUM", "2")
    monkeypatch.setenv("PADDLE_TRAINER_ID", "1")
    sampler = rt.io.DistributedBatchSampler(list(range(8)), 2)
    assert (sampler.nranks, sampler.local_rank) == (2, 1)
    assert list(sampler) == [[2, 3], [6, 7]]
