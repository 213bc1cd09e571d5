"""Functions that cannot become programs (issue 14): generator and async functions are a
StaticBuildError at to_static time naming the user's file and def line."""

from __future__ import annotations

import pytest

import autostatic
import autostatic_runtime as rt
from autostatic_runtime.errors import StaticBuildError


def numbers(x):
    for i in range(3):
        yield x * i


async def fetch(x):
    return x


async def stream(x):
    yield x


class Gen(rt.nn.Layer):
    def forward(self, x):
        yield x


def _line(fn) -> int:
    return fn.__code__.co_firstlineno


@pytest.mark.parametrize(
    "fn, kind",
    [
        (numbers, "a generator function, and generator functions cannot become programs"),
        (fetch, "an async function, and async functions cannot become programs"),
        (stream, "an async generator function, and async generator functions cannot become"),
    ],
)
def test_generator_and_async_functions_are_rejected_at_to_static(fn, kind):
    with pytest.raises(StaticBuildError) as info:
        autostatic.to_static(fn)
    message = str(info.value)
    assert kind in message
    assert message.endswith(f" at {__file__}:{_line(fn)}")
    with pytest.raises(StaticBuildError):
        autostatic.to_static(input_spec=[autostatic.InputSpec([2])])(fn)


def test_a_generator_forward_is_rejected():
    with pytest.raises(StaticBuildError, match="Gen.forward is a generator function") as info:
        autostatic.to_static(Gen())
    assert f"{__file__}:{_line(Gen.forward)}" in str(info.value)


def test_a_generator_method_is_rejected_when_decorated():
    with pytest.raises(StaticBuildError, match="generator functions cannot become programs"):

        class Net(rt.nn.Layer):
            @autostatic.to_static
            def forward(self, x):
                yield x
