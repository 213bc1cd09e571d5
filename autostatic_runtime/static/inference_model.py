"""``save_inference_model`` / ``load_inference_model`` (Paddle 2.x ``paddle.static``).

    static.save_inference_model("out/model", [x], [y], exe)        # after exe.run(startup)
    program, feed_names, fetch_targets = static.load_inference_model("out/model", exe)
    (out,) = exe.run(program, feed={feed_names[0]: batch}, fetch_list=fetch_targets)

The program is cloned for inference (no backward or optimizer ops, eval-mode attributes) and
pruned to the ops the fetched variables need; the values of the persistable variables it
reads come from the executor's scope (or the eager tensors the program captured). The files
are those of ``autostatic.save`` (``jit/model_file.py``: ``.pdmodel``, ``.pdiparams``,
``.pdmeta``), so ``autostatic.load(path_prefix)`` runs them too. Loading never executes code
from the files.
"""

from __future__ import annotations

import os
from typing import Any

from autostatic_runtime import backends
from autostatic_runtime.errors import AutostaticError
from autostatic_runtime.static.compiler import has_side_effect
from autostatic_runtime.static.program import Block, Program, Variable

__all__ = ["save_inference_model", "load_inference_model", "prune_program"]


def save_inference_model(
    path_prefix: str | os.PathLike,
    feed_vars: Any,
    fetch_vars: Any,
    executor: Any,
    program: Program | None = None,
    **kwargs: Any,
) -> None:
    """Write the inference program computing ``fetch_vars`` from ``feed_vars``, with the
    current values of its parameters, under ``path_prefix`` (``program``: by default the
    program of ``fetch_vars``)."""
    from autostatic_runtime.jit.model_file import encode_structure, save_model
    from autostatic_runtime.static.builder import captured_values, default_main_program
    from autostatic_runtime.static.executor import global_scope

    feeds = _vars(feed_vars, "feed_vars")
    fetches = _vars(fetch_vars, "fetch_vars")
    if program is None:  # the program the fetched variables belong to (Paddle: the default)
        program = fetches[0].block.program if fetches else default_main_program()
    for v in feeds:
        if not v.is_data:
            raise AutostaticError(
                f"save_inference_model: feed variable {v.name!r} is not a data variable; "
                "feed the inputs made by static.data"
            )
    names = [v.name for v in feeds], [v.name for v in fetches]
    pruned = prune_program(program.clone(for_test=True), *names)
    scope = kwargs.get("scope") or global_scope()
    captured = captured_values(program)
    params = {}
    for name, var in pruned.global_block().vars.items():
        if not var.persistable:
            continue
        if name in scope:
            value = scope[name]
        elif name in captured:
            value = captured[name]._data
        else:
            raise AutostaticError(
                f"save_inference_model: the persistable variable {name!r} has no value; run "
                "the startup program first (exe.run(startup_program))"
            )
        params[name] = backends.backend_of(value).to_numpy(value)
    inputs = [
        {"name": v.name, "shape": [None if d < 0 else d for d in v._shape], "dtype": str(v.dtype)}
        for v in feeds
    ]
    structure = encode_structure((list, tuple(None for _ in fetches)))
    save_model(
        os.fspath(path_prefix),
        pruned,
        inputs,
        [v.name for v in fetches],
        structure,
        ["out"] * len(fetches),
        params,
    )


def load_inference_model(path_prefix: str | os.PathLike, executor: Any, **kwargs: Any) -> list:
    """``[program, feed_target_names, fetch_targets]`` of a saved inference model; its
    parameters are put in the global scope (or ``scope=``) for ``executor.run``. The
    program is checked as ``autostatic.load`` checks it: ``memory_budget=`` (bytes per
    value, before anything is allocated) and ``max_loop_iterations=`` (per run of a
    ``while`` op; default 1,000,000, None: no limit) are taken as there. Paddle's
    directory form works too: ``load_inference_model(dir, exe, model_filename="m.pdmodel",
    params_filename="m.pdiparams")`` reads ``dir/m.*``."""
    from autostatic_runtime.jit.model_file import read_model
    from autostatic_runtime.static import verify
    from autostatic_runtime.static.executor import global_scope

    limit = verify.loop_limit(kwargs.get("max_loop_iterations", verify.DEFAULT_MAX_LOOP_ITERATIONS))
    budget = verify.memory_budget(kwargs.get("memory_budget"))
    path_prefix = _prefix(os.fspath(path_prefix), kwargs.get("model_filename"))
    program, params, meta = read_model(path_prefix)
    verify.check_sizes(program, budget, f"{path_prefix}.pdmodel")
    program.max_loop_iterations = limit
    scope = kwargs.get("scope") or global_scope()
    backend = executor._backend() if hasattr(executor, "_backend") else backends.current_backend()
    for name, value in params.items():
        scope[name] = backend.from_numpy(value)
    block = program.global_block()
    return [
        program,
        [spec["name"] for spec in meta["inputs"]],
        [block.vars[name] for name in meta["outputs"]],
    ]


def _prefix(path: str, model_filename: str | None) -> str:
    """The files' prefix: ``path``, or Paddle's (directory, ``model_filename``) form."""
    if model_filename is None:
        return path
    name = os.fspath(model_filename)
    if name.endswith(".pdmodel"):
        name = name[: -len(".pdmodel")]
    return os.path.join(path, name)


def _vars(values: Any, what: str) -> list[Variable]:
    values = list(values) if isinstance(values, (list, tuple)) else [values]
    if not all(isinstance(v, Variable) for v in values) or (what == "fetch_vars" and not values):
        raise TypeError(f"save_inference_model: {what} must be a Variable or a list of them")
    return values


def prune_program(
    program: Program, feeds: list[str], fetches: list[str], caller: str = "save_inference_model"
) -> Program:
    """Keep the global block's ops the fetches (or side effects) need, and the variables those
    ops (and their sub-blocks) use (in place). A data variable they need that is not among
    ``feeds`` is an error naming ``caller``'s argument to fix."""
    block = program.global_block()
    needed = set(fetches)
    kept = []
    for op in reversed(block.ops):
        if {v.name for v in op.outputs} & needed or has_side_effect(op):
            kept.append(op)
            needed |= _reads(op)
    block.ops = kept[::-1]
    missing = sorted(
        n for n in needed - set(feeds)
        if n in block.vars and block.vars[n].is_data
    )  # fmt: skip
    if missing:
        fix = "add them to feed_vars" if caller == "save_inference_model" else (
            "keep them in input_names_after_prune")  # fmt: skip
        raise AutostaticError(
            f"{caller}: the outputs to save also need the inputs {missing}; {fix}"
        )
    used = needed | set(feeds) | {v.name for op in block.ops for v in op.outputs}
    for sub in program.blocks[1:]:
        for op in sub.ops:
            used |= {v.name for v in op.outputs}
    block.vars = {n: v for n, v in block.vars.items() if n in used}
    program._bump()
    return program


def _reads(op: Any) -> set[str]:
    names = {x.name for x in op.inputs if isinstance(x, Variable)}
    for sub in op.sub_blocks():
        names |= _block_reads(sub)
    return names


def _block_reads(block: Block) -> set[str]:
    names: set[str] = set()
    for op in block.ops:
        names |= _reads(op)
    return names
