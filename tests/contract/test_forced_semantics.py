"""Python semantics exact with the converted (tracing) bodies forced.

Each function of ``cases.py`` runs as written and through ``autostatic.convert`` with the
tracing body forced (``convert_ops.tracing``, what ``AUTOSTATIC_FORCE_CONVERTED=1`` sets at
import); results, exception types and messages, and the last traceback line must agree."""

from __future__ import annotations

import copy
import traceback

import pytest

import autostatic
import autostatic_runtime.convert_ops as convert_ops
from tests.contract import cases


@pytest.fixture
def forced(monkeypatch):
    monkeypatch.setattr(convert_ops, "tracing", True)


def outcome(fn, args, kwargs=None, copy_args=True):
    if copy_args:
        args = copy.deepcopy(args)
    try:
        result = fn(*args, **(kwargs or {}))
        if hasattr(result, "__next__"):
            result = list(result)
        return ("ok", repr(result), repr(cases.G))
    except Exception as exc:
        tb = traceback.extract_tb(exc.__traceback__)[-1]
        return ("raised", type(exc).__name__, str(exc), tb.filename, tb.lineno)


IDS = [fn.__name__ for fn, _ in cases.CASES]


@pytest.mark.parametrize("fn,argsets", cases.CASES, ids=IDS)
def test_converted_body_matches_python(fn, argsets, forced):
    converted = autostatic.convert(fn)
    for args in argsets:
        want = outcome(fn, args)
        got = outcome(converted, args)
        assert got == want, (fn.__name__, args)


def test_kwargs_and_generators(forced):
    c = autostatic.convert(cases.augmented_and_star)
    for args, kw in [((1,), {}), ((1, 2), {"a1": 3, "b": 4}), ((0,), {"k": 5})]:
        assert outcome(c, args, kw) == outcome(cases.augmented_and_star, args, kw)
    g = autostatic.convert(cases.yield_function)
    assert list(g(7)) == list(cases.yield_function(7))


def test_default_argument_is_shared(forced):
    # the converted function shares the original's defaults, mutated in place
    c = autostatic.convert(cases.default_mutable)
    before = cases.default_mutable(7)
    after = c(8)
    assert after == before + [8]


def test_converted_bodies_are_actually_used(forced):
    """Guard against a vacuous pass: under the forced mode the tracing code runs."""
    src = autostatic.to_code(cases.many_early_returns)
    assert "_jst" in src


class _CM:
    def __init__(self):
        self.log = []

    def __enter__(self):
        self.log.append("in")

    def __exit__(self, *a):
        self.log.append("out")


GENERATED_INPUTS = {
    "sequential_returns_12": [(k, x) for k in (-1, 0, 5, 11, 12) for x in (0, 3)],
    "elif_chain_40": [(k, 2) for k in (-1, 0, 1, 20, 39, 40)],
    "nested_ifs_18": [(x,) for x in (-1, 0, 1, 5, 8, 30, 200)],
    "nested_loops_3": [([1, -1, 2], t) for t in (0, 1, 2, 3)] + [([50, 60], 3), ([], 2)],
    "nested_loops_6": [([1, -1, 2], t) for t in (0, 2, 3)] + [([50, 60], 3)],
    "mixed_blocks_12": [(x, xs, None) for x in (0, 1, 5, 7, 11, 20) for xs in ([], [1, 7, 2])],
    "many_breaks_continues_20": [([0, 1, 2, 3, 5, 9], t) for t in (-3, 0, 1, 2, 30)],
    "loops_left_by_return_20": [([0, 4, 9, 30], t) for t in (-50, 0, 3, 9, 25)],
    "comprehensions_lambdas_10": [([1, 2, 3, 4, -5], k) for k in (-1, 0, 2, 9)] + [([], 0)],
    "nested_functions_6": [(x,) for x in (-2, 0, 1, 3, 7)],
    "realistic_50": [(x, n, k) for x in (-1, 0, 3) for n in (0, 5, 12) for k in (0, 4)],
    "try_heavy_8": [([0, 1, 2],), ([-3, -1, 5, 9],), ([],), ([9, 9, 7],)],
    "while_else_nest_8": [(n,) for n in (0, 1, 3, 9)],
    "nested_defs_3": [(x,) for x in (0, 1, 2, 3, 9)],
    "defs_after_return_1": [(x,) for x in (0, 1, -5, -2)],
    "decorators_10": [(x,) for x in (0, 3, 9, 10)],
    "classes_5": [(x,) for x in (-5, 0, 2, 4, 9)],
}


@pytest.mark.parametrize("family", sorted(GENERATED_INPUTS))
def test_generated_functions_forced(family, tmp_path, forced):
    from tests.contract import gen
    from tests.contract.sizes import load

    mod = load(tmp_path, f"contract_sem_{family}", gen.FAMILIES[family]())
    converted = autostatic.convert(mod.f)
    for args in GENERATED_INPUTS[family]:
        if family == "mixed_blocks_12":
            cm1, cm2 = _CM(), _CM()
            a = outcome(mod.f, args[:2] + (cm1,), copy_args=False)
            b = outcome(converted, args[:2] + (cm2,), copy_args=False)
            assert (b, cm2.log) == (a, cm1.log), args
            continue
        assert outcome(converted, args) == outcome(mod.f, args), (family, args)


from tests.contract import cases2  # noqa: E402


@pytest.mark.parametrize("fn,argsets", cases2.CASES, ids=[f.__name__ for f, _ in cases2.CASES])
def test_converted_body_matches_python_2(fn, argsets, forced):
    converted = autostatic.convert(fn)
    for args in argsets:
        want = outcome(fn, args)
        got = outcome(converted, args)
        assert got == want, (fn.__name__, args)


@pytest.mark.parametrize("fn,args", [(cases2.continue_in_finally, (5,)),
                                     (cases2.break_in_finally, (4,))],
                         ids=["continue", "break"])
def test_jump_in_finally_discards_the_exception(fn, args, forced):
    assert outcome(autostatic.convert(fn), args) == outcome(fn, args)


def test_locals_lists_only_the_users_names(forced):
    """``locals()`` in a converted body leaves out the converter's names (``__pred_0``)."""
    fn = cases2.locals_view
    for args in ((0,), (1,)):
        assert outcome(autostatic.convert(fn), args) == outcome(fn, args)


SAME_SOURCE = '''\
def f(k):
    if k > 1:
        del k
    return k
'''


def test_same_source_in_two_files_keeps_its_own_file(tmp_path, forced):
    """Code objects compare equal across files (co_filename is not compared): converting the
    same function text from two modules must not reuse the first module's code, whose
    tracebacks name the first file."""
    from tests.contract.sizes import load

    one = load(tmp_path, "contract_same_a", SAME_SOURCE).f
    two = load(tmp_path, "contract_same_b", SAME_SOURCE).f
    assert one.__code__ == two.__code__  # the premise
    for fn in (one, two):
        got = outcome(autostatic.convert(fn), (2,))
        assert got == outcome(fn, (2,))
        assert got[3] == fn.__code__.co_filename
