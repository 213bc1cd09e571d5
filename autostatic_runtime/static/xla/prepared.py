"""The prepared call: an ``Executor.run`` of one compiled XLA function with the checks done once.

Once an ``XlaFunction`` has traced and its calls can no longer trace, fall back, grow a loop
or raise an effect's error (it is *lean*), the Executor's runner asks it for a prepared call:
a small Python function generated for its feeds, which checks each fed array against the
type and dtype the runner accepts without conversion, the scope values against the call
plan (by identity), and calls the jitted function with them. The shape is JAX's own check:
a new one starts a trace, which raises ``Replan`` when it does not fit the declared shape
(``XlaFunction._feed_shapes``), so no call pays for it in Python. Anything else — a fed list
or Tensor, another dtype, a shape that does not fit, a scope value set by the user, a name
missing from the scope, a function that stopped being lean — goes to the runner's generic
path (``slow``), which converts, raises the default executor's errors, or plans again; other
feed names return None (another runner's feeds: the Executor looks it up). The fetched
results are the caller's own writable NumPy arrays, as on the generic path.

For W1 of ``benchmarks/bench_xla.py``, the generated source reads::

    def prepared_call(scope, feed):
        if len(feed) != 1:
            return None
        try:
            feed_0 = feed['x']
        except KeyError:
            return None
        if not fn._lean:
            return slow(scope, feed)
        if type(feed_0) is not ndarray or feed_0.dtype is not dtype_0:
            return slow(scope, feed)
        try:
            outs = fn._jitted(feed_0)
        except Replan:
            return slow(scope, feed)
        return [array(outs[0])]

The *lean call* (``lean_call``) is the function's own call for ``run_program``, and the
*tensor call* (``tensor_call``) a to_static call on eager Tensors, tried by the
StaticFunction before its lock and signature memo; for a ``Linear(4, 3)`` in eval mode::

    def tensor_call(args):
        if len(args) != 1:
            return MISS
        x_0, = args
        if type(x_0) is not Tensor:
            return MISS
        a_0 = x_0._data
        if type(a_0) is not ndarray or a_0.dtype is not dtype_0 or a_0.shape != shape_0:
            return MISS
        if guarded.training != wanted:
            return MISS
        if recording() and (
            not x_0.stop_gradient
            or not p_0.stop_gradient
            or not p_1.stop_gradient
        ):
            return MISS
        if not fn._lean:
            return MISS
        plan = fn._plan
        hosts = plan[0]
        if p_0._data is not hosts[0] or p_1._data is not hosts[1]:
            return MISS
        try:
            outs = fn._jitted(*plan[1], a_0)
        except Replan:
            return MISS
        return rebuild(array(outs[0]), None, 0)

(A function with a 64-bit argument has ``token = x64_on()`` before the jitted call and
``x64_off(token)`` in a ``finally`` after it; see ``compiler.py``.)
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np


class Replan(Exception):
    """A lean function traced again (a new input shape) and found what the lean call does
    not handle (a counted loop, an effect): the generic call runs instead."""


def prepared_call(
    fn: Any,
    feeds: list[tuple[str, Any, tuple]],
    needed: list[str],
    slow: Callable,
    entry: Any = None,
) -> Callable:
    """The prepared call of ``fn`` (a lean ``XlaFunction`` on the NumPy backend).

    Args:
        fn: the compiled function; its ``params`` are the feeds, in order.
        feeds: per parameter, (feed name, NumPy dtype, declared shape with -1 for any).
        needed: scope names that must be present (captured values the runner would fill).
        slow: ``slow(scope, feed) -> list`` of results: the generic path.
        entry: None, or the Executor's own checks to generate in front: ``entry.checks``,
            expressions over ``run``'s arguments and the names in ``entry.ns`` that must all
            hold; ``entry.generic``, the Executor's own ``run`` (bound); ``entry.rebuild``
            makes a Tensor of a result (``return_numpy=False``). The call is then
            ``Executor.run`` itself, for one call form.

    Returns:
        ``call(scope, feed) -> list`` of the fetched values as writable NumPy arrays, or
        None when ``feed`` does not have exactly the feed names. With ``entry``: a function
        with ``Executor.run``'s signature and results that calls ``entry.generic`` (the
        Executor's own ``run``) for anything it does not take.
    """
    ns = _namespace(fn, slow)
    if entry is None:
        lines = [
            "def prepared_call(scope, feed):",
            f"    if len(feed) != {len(feeds)}:",
            "        return None",
        ]
        other, fallback = "None", "slow(scope, feed)"
    else:
        ns.update(entry.ns, generic=entry.generic, rebuild=entry.rebuild)
        other = fallback = (
            "generic(program, feed, fetch_list, scope, return_numpy, use_program_cache)"
        )
        lines = [
            "def run(program=None, feed=None, fetch_list=None, scope=None, return_numpy=True,",
            "        use_program_cache=True):",
            *_miss_if("", [f"not ({t})" for t in entry.checks], other),
            f"    if feed is None or len(feed) != {len(feeds)}:",
            f"        return {other}",
        ]
        if fn.reads or needed:
            lines += ["    if scope is None:", "        scope = global_scope[0]"]
    args = []
    if feeds:
        lines.append("    try:")
        for i, (name, _, _) in enumerate(feeds):
            lines.append(f"        feed_{i} = feed[{name!r}]")
        lines += ["    except KeyError:", f"        return {other}"]
    lines += ["    if not fn._lean:", f"        return {fallback}"]
    for i, (_, dtype, _) in enumerate(feeds):
        ns[f"dtype_{i}"] = np.dtype(dtype)
        # (the shape: JAX's own signature check, and the trace for a new one; see
        # XlaFunction._feed_shapes)
        tests = [f"type(feed_{i}) is not ndarray", f"feed_{i}.dtype is not dtype_{i}"]
        lines.append(f"    if {' or '.join(tests)}:")
        lines.append(f"        return {fallback}")
        args.append(f"feed_{i}")
    for name in [n for n in needed if n not in fn.reads]:  # (those read fail in get)
        lines += [f"    if {name!r} not in scope:", f"        return {fallback}"]
    n = len(fn.results)
    lines += _call_lines(fn, args, fallback)
    results = f"[{', '.join(f'array(outs[{i}])' for i in range(n))}]"
    if entry is None:
        lines.append(f"    return {results}")
    else:
        lines.append(f"    results = {results}")
        lines += [
            "    if return_numpy:",
            "        return results",
            "    return [rebuild(r, None, 0) for r in results]",
        ]
    return _define(lines, ns)


def lean_call(fn: Any) -> Callable:
    """``fn``'s own call (``fn(scope, *args) -> tuple``) for its lean state, generated: the
    scope values checked against the call plan, the jitted call, the writes stored, the
    results for the caller copied (those from ``device_results_from`` on stay device
    arrays). Anything else (not lean any more, a new scope value) is ``fn``'s generic call.
    ``run_program`` calls it for to_static programs."""
    lines = ["def lean_call(scope, *args):"]
    lines += ["    if not fn._lean:", "        return fn(scope, *args)"]
    lines += _call_lines(fn, ["*args"], "fn(scope, *args)")
    n, keep = len(fn.results), fn.device_results_from
    keep = n if keep is None else keep
    results = [f"array(outs[{i}])" for i in range(keep)] + [f"outs[{i}]" for i in range(keep, n)]
    lines.append(f"    return ({', '.join(results)}{',' if len(results) == 1 else ''})")
    return _define(lines, _namespace(fn, None))


def state_call(fn: Any, reads: list, writes: list) -> Callable:
    """The call of a compiled training step (``fn`` lean, in state mode) on the tensors that
    hold its state: ``call(args) -> results`` (the caller's own NumPy copies) or None when
    it does not apply (the generic call then runs). ``reads``/``writes``: the tensors of
    ``fn.reads``/``fn.writes``. Each read's array is passed as it is (a device array a step
    wrote, or a host array), the written ones are donated unless a device array among them is
    held elsewhere too (a reference count above this function's own: the slot, the local,
    ``getrefcount``'s argument), and the new state goes into the tensors after the call. For
    one parameter updated by SGD::

        def state_call(args):
            if not fn._lean:
                return None
            r_0 = t_0._data
            jitted = fn._donating
            if type(r_0) is not ndarray and getrefcount(r_0) > 3:
                jitted = fn._jitted
            try:
                outs = jitted(r_0, *args)
            except Replan:
                return None
            w_0._data = outs[1]
            return (array(outs[0]),)
    """
    import sys

    ns = _namespace(fn, None)
    ns["getrefcount"] = sys.getrefcount
    lines = ["def state_call(args):", "    if not fn._lean:", "        return None"]
    args = []
    for k, t in enumerate(reads):
        ns[f"t_{k}"] = t
        lines.append(f"    r_{k} = t_{k}._data")
        args.append(f"r_{k}")
    lines.append("    jitted = fn._donating")
    shared = [f"type(r_{k}) is not ndarray and getrefcount(r_{k}) > 3" for k in fn._donated]
    for test in shared:  # one test a line: a step of many parameters has many
        lines += [f"    if {test}:", "        jitted = fn._jitted"]
    if fn._random:
        args.insert(0, "call_key()")
    args.append("*args")
    lines += _jitted_call(fn, args, "None", "jitted")
    n = len(fn.results)
    for j, t in enumerate(writes):
        ns[f"w_{j}"] = t
        lines.append(f"    w_{j}._data = outs[{n + j}]")
    results = [f"array(outs[{i}])" for i in range(n)]
    lines.append(f"    return ({', '.join(results)}{',' if len(results) == 1 else ''})")
    return _define(lines, ns)


def tensor_call(
    fn: Any,
    inputs: list[tuple[Any, tuple]],
    params: list[tuple[str, Any]],
    guard: tuple | None,
    finish: Callable | None,
    miss: Any,
) -> Callable | None:
    """A to_static call of ``fn`` on eager Tensors, generated (``ProgramRunner.tensor_call``):
    the inputs checked against the exact (dtype, shape) the program was traced for, no
    gradient wanted, the parameters checked against the call plan (identity of their
    arrays), the jitted call, the results as Tensors over the caller's own copies.

    Args:
        fn: the compiled inference function (lean, on the NumPy backend, no writes).
        inputs: per argument, the NumPy dtype and shape it must have.
        params: the runner's (persistable name, Tensor), every one it captured.
        guard: ``(obj, attr, value)``: also require ``obj.attr == value`` (a layer's
            ``training`` flag), or None.
        finish: called with the list of result Tensors (the output structure), or None to
            return the one result Tensor itself.
        miss: what the call returns when it does not apply (the caller goes the generic way).

    Returns:
        ``call(args) -> result or miss``, or False when ``fn`` reads a persistable the
        runner does not hold (it never applies).
    """
    from autostatic_runtime.autograd import is_grad_enabled
    from autostatic_runtime.tensor import Tensor

    names = [name for name, _ in params]
    if any(name not in names for name in fn.reads):
        return False
    ns = _namespace(fn, None)
    ns.update(MISS=miss, Tensor=Tensor, recording=is_grad_enabled, rebuild=Tensor._rebuild)
    ns["finish"] = finish
    lines = ["def tensor_call(args):"] + _tensor_checks(inputs, params, guard, ns)
    lines += ["    if not fn._lean:", "        return MISS"]
    args = [f"a_{i}" for i in range(len(inputs))]
    if fn.reads:  # unrolled: faster than map(is_, ...) even for hundreds of parameters
        slots = [names.index(name) for name in fn.reads]
        checks = [f"p_{j}._data is not hosts[{k}]" for k, j in enumerate(slots)]
        lines += ["    plan = fn._plan", "    hosts = plan[0]"]
        lines += _miss_if("", checks)
        args.insert(0, "*plan[1]")
    if fn._random:
        args.insert(0, "call_key()")
    lines += _jitted_call(fn, args, "MISS")
    results = [f"rebuild(array(outs[{i}]), None, 0)" for i in range(len(fn.results))]
    if finish is None:
        (result,) = results
        lines.append(f"    return {result}")
    else:
        lines.append(f"    return finish([{', '.join(results)}])")
    return _define(lines, ns)


def _tensor_checks(inputs: list, params: list, guard: tuple | None, ns: dict) -> list[str]:
    """The tensor call's checks: the arguments (``x_i``, their arrays ``a_i``) against
    ``inputs``, the guard, and that no gradient is wanted (recording off, or no argument and
    no parameter ``p_j`` needing one); each failing one returns MISS."""
    n = len(inputs)
    lines = [f"    if len(args) != {n}:", "        return MISS"]
    xs = [f"x_{i}" for i in range(n)]
    if n:
        lines.append(f"    {', '.join(xs)}, = args")
    for i, (dtype, shape) in enumerate(inputs):
        ns[f"dtype_{i}"], ns[f"shape_{i}"] = np.dtype(dtype), tuple(shape)
        lines += [f"    if type(x_{i}) is not Tensor:", "        return MISS"]
        lines.append(f"    a_{i} = x_{i}._data")
        test = f"type(a_{i}) is not ndarray or a_{i}.dtype is not dtype_{i}"
        lines += [f"    if {test} or a_{i}.shape != shape_{i}:", "        return MISS"]
    if guard is not None:
        ns["guarded"], ns["wanted"] = guard[0], guard[2]
        lines += [f"    if guarded.{guard[1]} != wanted:", "        return MISS"]
    for j, (_, tensor) in enumerate(params):
        ns[f"p_{j}"] = tensor
    wants = [f"not {x}.stop_gradient" for x in xs]
    wants += [f"not p_{j}.stop_gradient" for j in range(len(params))]
    if wants:  # a gradient wanted: the training forward (the runner's generic call)
        lines += _miss_if("recording() and ", wants)
    return lines


def _miss_if(head: str, terms: list[str], miss: str = "MISS") -> list[str]:
    """``if <head>(term or term ...): return <miss>``, one term a line when it is long."""
    one = f"    if {head}({' or '.join(terms)}):" if head else f"    if {' or '.join(terms)}:"
    if len(one) <= 96:
        return [one, f"        return {miss}"]
    body = [f"        {terms[0]}"] + [f"        or {t}" for t in terms[1:]]
    return [f"    if {head}(", *body, "    ):", f"        return {miss}"]


def _namespace(fn: Any, slow: Callable | None) -> dict:
    return {
        "fn": fn,
        "slow": slow,
        "ndarray": np.ndarray,
        "array": np.array,
        "x64_on": fn._x64_on,
        "x64_off": fn._x64_off,
        "Replan": Replan,
        "is_": operator.is_,
        "get": fn._get,
        "store": fn._store,
        "call_key": fn._call_key,
    }


def _call_lines(fn: Any, args: list[str], slow: str) -> list[str]:
    """Check the scope against the call plan, call the jitted function into ``outs``
    (64-bit mode on around it) and store the written persistables; ``slow`` otherwise."""
    lines = []
    call_args = list(args)
    if fn.reads:
        lines += [
            "    try:",
            "        hosts = get(scope)",
            "    except KeyError:",
            f"        return {slow}",
            "    plan = fn._plan",
            "    if not all(map(is_, hosts, plan[0])):",
            f"        return {slow}",
        ]
        call_args.insert(0, "*plan[1]")
    if fn._random:
        call_args.insert(0, "call_key()")
    lines += _jitted_call(fn, call_args, slow)
    if fn.writes:
        n = len(fn.results)
        lines.append(f"    store(scope, outs[{n}:], {'plan' if fn.reads else 'fn._plan'})")
    return lines


def _jitted_call(fn: Any, args: list[str], miss: str, jitted: str = "fn._jitted") -> list[str]:
    """The generated lines that call the jitted function (``miss`` returned when it asks to
    plan again), with 64-bit mode on around it unless its trace turns it on itself
    (``fn._inside``: no argument can be 64-bit)."""
    if fn._inside:
        return [
            "    try:",
            f"        outs = {jitted}({', '.join(args)})",
            "    except Replan:",
            f"        return {miss}",
        ]
    return [
        "    token = x64_on()",
        "    try:",
        f"        outs = {jitted}({', '.join(args)})",
        "    except Replan:",
        f"        return {miss}",
        "    finally:",
        "        x64_off(token)",
    ]


def _define(lines: list[str], ns: dict) -> Callable:
    source = "\n".join(lines)
    exec(compile(source, "<autostatic prepared call>", "exec"), ns)  # noqa: S102
    call = ns[lines[0][4 : lines[0].index("(")]]
    call.__source__ = source
    return call
