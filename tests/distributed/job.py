"""A data-parallel training job, run by ``test_launch.py`` under ``autostatic launch``:

    python -m autostatic launch --nproc_per_node 2 -m tests.distributed.job --save CKPT
    python -m tests.distributed.job --resume CKPT          # a job of one process

Each rank trains ``BranchMLP`` with Adam (its optimizer state split over the processes) on
its part of each batch of ``train_cases.batches`` (``rt.io.DistributedBatchSampler`` over
their rows) and prints one JSON line per step; with
``--save`` every rank calls ``rt.save`` (rank 0 writes), then rank 0 alone calls it again,
which must fail within a second (the split state needs every rank) and prints why;
``--resume`` loads such a file and trains on the next batch; ``--die-after N`` makes rank 1
kill itself after step N. After training each rank prints what ``all_reduce``,
``all_gather`` and ``broadcast`` (from the last rank) gave it.
"""

from __future__ import annotations

import argparse
import json
import os
import signal

import autostatic
import autostatic_runtime as rt
from autostatic_runtime.distributed import checkpoint
from tests.jit.train_cases import OPTIMIZERS, BranchMLP, batches, train_step

STEPS = 3
ROWS = 8  # the whole batch: each of the ranks takes ROWS // world size rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--save")
    parser.add_argument("--resume")
    parser.add_argument("--die-after", type=int, default=-1)
    args = parser.parse_args()
    rt.distributed.init_parallel_env()
    rank, world = rt.distributed.get_rank(), rt.distributed.get_world_size()
    rt.seed(7 + rank)  # another start in each rank: DataParallel gives them rank 0's
    model = rt.DataParallel(BranchMLP(), shard_optimizer_state=True)
    opt = OPTIMIZERS["Adam"](0.05, model.parameters())
    step = autostatic.to_static(train_step, backend="xla")
    data = batches(STEPS + 1, shape=(ROWS, 6))
    if args.resume:
        state = rt.load(args.resume)
        model.set_state_dict(state["model"])
        opt.set_state_dict(state["opt"])
        data = data[STEPS:]
    else:
        data = data[:STEPS]
    rows = rt.io.TensorDataset([rt.concat([x for x, _ in data]), rt.concat([y for _, y in data])])
    sampler = rt.io.DistributedBatchSampler(rows, batch_size=ROWS // world)
    for i, (x, y) in enumerate(rt.io.DataLoader(rows, batch_sampler=sampler)):
        loss = step(model, x, y, opt)
        print(json.dumps({"rank": rank, "step": i, "loss": float(loss)}), flush=True)
        if i == args.die_after and rank == 1:
            os.kill(os.getpid(), signal.SIGKILL)
    hits = rt.to_tensor([float(rank + 1)])  # eager collectives, outside the step
    rt.distributed.all_reduce(hits)
    ranks: list = []
    rt.distributed.all_gather(ranks, rt.to_tensor([rank], "int64"))
    last = rt.to_tensor([10.0 * rank])
    rt.distributed.broadcast(last, src=world - 1)
    found = {"sum": float(hits), "gathered": [int(t) for t in ranks], "broadcast": float(last)}
    print(json.dumps({"rank": rank, **found}), flush=True)
    if args.save:
        rt.save({"model": model.state_dict(), "opt": opt.state_dict()}, args.save)
        if rank == 0 and world > 1:
            checkpoint.GATHER_TIMEOUT = 1
            try:
                rt.save(opt.state_dict(), args.save + ".alone")
            except rt.DistributedError as exc:
                print(json.dumps({"rank": rank, "alone": str(exc)}), flush=True)
        rt.distributed.barrier()


if __name__ == "__main__":
    main()
