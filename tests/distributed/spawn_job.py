"""A data-parallel job started by ``rt.distributed.spawn``, run by ``test_spawn.py``:

    python -m tests.distributed.spawn_job NPROCS [--fail-rank R]

Each rank joins the job and wraps its model as Paddle's fleet API does (``fleet.init``,
``distributed_model``, ``distributed_optimizer``), trains ``BranchMLP`` with Momentum,
compiled by XLA, on its part of each batch of ``train_cases.batches``
(``rt.io.DistributedBatchSampler``) and writes its losses as JSON to
``losses.RANK``; with ``--fail-rank R`` rank R raises before joining the job, and the
parent prints ``spawn``'s error and exits with 3.
"""

from __future__ import annotations

import argparse
import json
import sys

import autostatic
import autostatic_runtime as rt
from autostatic_runtime.distributed import fleet
from tests.jit.train_cases import OPTIMIZERS, BranchMLP, batches, train_step

ROWS = 8


def train(fail_rank: int) -> None:
    if rt.distributed.get_rank() == fail_rank:
        raise ValueError(f"rank {fail_rank} fails on purpose")
    fleet.init(is_collective=True)
    rank, world = fleet.worker_index(), fleet.worker_num()
    rt.seed(7)
    model = fleet.distributed_model(BranchMLP())
    opt = fleet.distributed_optimizer(OPTIMIZERS["Momentum"](0.05, model.parameters()))
    step = autostatic.to_static(train_step, backend="xla")
    data = batches(3, shape=(ROWS, 6))
    rows = rt.io.TensorDataset([rt.concat([x for x, _ in data]), rt.concat([y for _, y in data])])
    loader = rt.io.DataLoader(
        rows, batch_sampler=rt.io.DistributedBatchSampler(rows, ROWS // world)
    )
    losses = [float(step(model, x, y, opt)) for x, y in loader]
    with open(f"losses.{rank}", "w") as f:
        json.dump(losses, f)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("nprocs", type=int)
    parser.add_argument("--fail-rank", type=int, default=-1)
    args = parser.parse_args()
    try:
        rt.distributed.spawn(train, args=(args.fail_rank,), nprocs=args.nprocs)
    except rt.DistributedError as exc:
        print(f"spawn failed: {exc}", flush=True)
        sys.exit(3)
