"""Retracing (issue 14): each retrace explained in words, printed by set_verbosity(1) on
stderr, listed by explain_retraces(); a RetraceWarning past warn_retraces traces; an LRU cap
of max_programs programs per function."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import autostatic
import autostatic_runtime as rt
from autostatic.jit.static_function import RetraceWarning

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(autouse=True)
def _quiet():
    yield
    autostatic.set_verbosity(0)


def scale(x, n):
    return x * n


def test_each_retrace_is_explained_in_words():
    f = autostatic.to_static(scale)
    f(rt.ones([3, 4]), 2)
    f(rt.ones([5, 4]), 2)
    f(rt.ones([5, 4, 2]), 2)
    f(rt.ones([5, 4]), 3)
    f(rt.ones([5, 4], "float64"), 3)
    f(rt.ones([5, 4], "int64"), 3)
    assert f.explain_retraces() == [
        "trace 2: argument 'x' changed shape [3, 4] → [5, 4]: give InputSpec([None, 4]) to "
        "share one program",
        "trace 3: argument 'x' changed shape [5, 4] → [5, 4, 2]: a different rank needs its "
        "own program",
        "trace 4: argument 'n' changed value 2 → 3: Python values are part of the key (each "
        "value traces its own program); pass it as a tensor to share one",
        "trace 5: argument 'x' changed dtype float32 → float64: each dtype needs its own program",
        "trace 6: argument 'x' changed dtype float64 → int64: each dtype needs its own program",
    ]


def test_the_closest_earlier_trace_is_the_one_compared():
    f = autostatic.to_static(scale)
    f(rt.ones([2, 8]), 1)
    f(rt.ones([3, 3, 3]), 5)
    f(rt.ones([7, 8]), 1)  # compared with the first call (one difference), not the second
    assert f.explain_retraces()[-1].startswith(
        "trace 3: argument 'x' changed shape [2, 8] → [7, 8]: give InputSpec([None, 8])"
    )


def test_nested_arguments_layers_and_unhashable_values():
    def g(xs, cfg):
        return xs[0].sum() + xs[1].sum()

    f = autostatic.to_static(g)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the unhashable-argument warning
        f([rt.ones([2]), rt.ones([2])], {"a": 1})
        f([rt.ones([2]), rt.ones([3])], {"a": 1})
        f([rt.ones([2]), rt.ones([3])], {"a": 2})
    reasons = f.explain_retraces()
    assert "argument 'xs'[1] changed shape [2] → [3]: give InputSpec([None])" in reasons[0]
    assert (
        "argument 'cfg'['a'] changed value 1 → 2: Python values are part of the key" in (reasons[1])
    )
    f = autostatic.to_static(lambda x, tags: x * len(tags))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f(rt.ones([2]), {1})
        f(rt.ones([2]), {1})  # another set: keyed by identity
    assert (
        "argument 'tags' is a different set object; it is unhashable" in (f.explain_retraces()[0])
    )

    class Net(rt.nn.Layer):
        def forward(self, x):
            return x + 1.0

    net = autostatic.to_static(Net())
    net(rt.ones([2]))
    net.eval()
    net(rt.ones([2]))
    assert net.forward.explain_retraces() == [
        "trace 2: the layer switched from train() to eval(): each mode has its own program"
    ]


def test_set_verbosity_prints_retraces_to_stderr_without_logging(capsys):
    f = autostatic.to_static(scale)
    f(rt.ones([3, 4]), 2)
    f(rt.ones([4, 4]), 2)
    assert capsys.readouterr().err == ""
    autostatic.set_verbosity(1)
    f(rt.ones([5, 4]), 2)
    err = capsys.readouterr().err
    assert err == (
        "autostatic: retracing scale (trace 3): argument 'x' changed shape [4, 4] → [5, 4]: "
        "give InputSpec([None, 4]) to share one program\n"
    )


def test_a_retrace_warning_once_past_the_limit():
    f = autostatic.to_static(scale, warn_retraces=3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in range(1, 8):
            f(rt.ones([n]), 1)
    retrace = [w for w in caught if issubclass(w.category, RetraceWarning)]
    assert len(retrace) == 1
    message = str(retrace[0].message)
    assert "scale has been traced 4 times (more than warn_retraces=3)" in message
    assert "InputSpec([None])" in message and "explain_retraces()" in message
    assert retrace[0].filename == __file__  # points at the user's call
    quiet = autostatic.to_static(scale, warn_retraces=None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for n in range(1, 12):
            quiet(rt.ones([n]), 1)


def test_the_default_warns_after_eight_traces():
    f = autostatic.to_static(scale)
    with pytest.warns(RetraceWarning, match="traced 9 times"):
        for n in range(1, 10):
            f(rt.ones([n]), 1)


def test_max_programs_keeps_the_most_recently_used():
    traces = []

    def h(x):
        traces.append(tuple(x.shape))
        return x * 2.0

    f = autostatic.to_static(h, max_programs=3, warn_retraces=None)
    for n in (1, 2, 3):
        f(rt.ones([n]))
    for _ in range(3):
        f(rt.ones([1]))  # fast-path hits keep [1] recent
    f(rt.ones([4]))  # evicts [2], the least recently used
    assert len(f.program_cache) == 3 and f.program_cache.evictions == 1
    f(rt.ones([1]))
    f(rt.ones([3]))
    assert len(traces) == 4
    np.testing.assert_allclose(f(rt.ones([2])).numpy(), [2.0, 2.0])  # traced again
    assert len(traces) == 5
    assert f.explain_retraces()[-1].startswith(
        "trace 5: the same arguments as an earlier trace, whose program was dropped to keep "
        "max_programs=3 programs"
    )
    with pytest.raises(autostatic.jit.ToStaticError):
        autostatic.to_static(h, max_programs=0)


def test_500_shapes_stay_within_the_cap():
    f = autostatic.to_static(scale, warn_retraces=None)
    for n in range(1, 101):
        f(rt.ones([n]), 1)
    assert len(f.program_cache) == 64  # the default cap


def test_set_verbosity_does_not_load_the_converter():
    code = (
        "import sys, autostatic; autostatic.set_verbosity(1); autostatic.set_code_level(0); "
        "print('gast' in sys.modules, 'autostatic.conversion' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["False", "False"]


@autostatic.not_to_static
def _positive(v):
    return bool(v > 0)  # never converted: asks a symbolic value, so tracing fails


def test_a_full_graph_false_fallback_is_explained_too():
    def h(x, n):
        if n > 1 and _positive(x.sum()):  # cannot be static: runs eagerly for this key
            return x * 1.0
        return x * 2.0

    f = autostatic.to_static(h, full_graph=False)
    f(rt.ones([2]), 1)
    with pytest.warns(UserWarning, match="runs eagerly"):
        np.testing.assert_allclose(f(rt.ones([2]), 2).numpy(), [1.0, 1.0])
    assert f.explain_retraces() == [
        "trace 2: argument 'n' changed value 1 → 2: Python values are part of the key (each "
        "value traces its own program); pass it as a tensor to share one"
    ]
