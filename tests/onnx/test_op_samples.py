"""Every op sample with an ONNX lowering gives, in ONNX Runtime, the executor's result; the
ops without one are exactly ``UNSUPPORTED`` (so a new op without a lowering is noticed)."""

from __future__ import annotations

import os
import re

import pytest

import autostatic_runtime as rt
from autostatic.onnx import LOWERINGS, UNSUPPORTED
from autostatic.onnx.exporter import MIN_OPSET
from autostatic.onnx.lowerings import reason
from autostatic_runtime import static
from autostatic_runtime.ops.registry import OPS
from tests.onnx.ort import assert_close, export_program, run_model
from tests.runtime.harness import example_values, make_inputs, outputs_of
from tests.static.test_ops_static import STATIC_SAMPLES, build, uses_unknown_dims

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OPSETS = (17, 18, 19)  # the default first; some lowerings need a newer one


def _exportable(program, opset: int) -> bool:
    return all(reason(op, opset) is None for b in program.blocks for op in b.ops)


SAMPLES = [s for s in STATIC_SAMPLES if s.op in LOWERINGS]


def test_every_op_has_a_lowering_or_a_documented_reason():
    assert set(LOWERINGS) | set(UNSUPPORTED) >= set(OPS)
    assert not set(LOWERINGS) & set(UNSUPPORTED)
    assert sorted(set(OPS) - set(LOWERINGS)) == sorted(UNSUPPORTED)


#: ONNX operators ONNX Runtime's CPU provider runs on float32 only (docs/deployment.md)
FLOAT32_ONLY = {
    "Acos", "Asin", "Atan", "AveragePool", "Conv", "ConvTranspose", "Cosh", "Erf", "Sinh", "Tan"
}  # fmt: skip


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("sample", SAMPLES, ids=[s.id for s in SAMPLES])
def test_onnx_runtime_matches_the_executor(sample, dtype):
    values = example_values(sample, 3, dtype)
    main, feeds, outs, _ = build(sample, values)
    opset = next((v for v in OPSETS if _exportable(main, v)), None)
    if opset is None:
        pytest.skip("the sample also builds an op without a lowering")
    model = export_program(main, feeds, outs, opset=opset)
    if dtype == "float64" and {n.op_type for n in model.graph.node} & FLOAT32_ONLY:
        pytest.skip("ONNX Runtime has no float64 kernel for an operator of the sample")
    expected = static.Executor().run(main, feed=feeds, fetch_list=outs)
    got = run_model(model, feeds)
    assert len(got) == len(expected)
    for i, (g, e) in enumerate(zip(got, expected)):
        assert_close(g, e, f"{sample.id} output {i}")


@pytest.mark.parametrize("opset", [MIN_OPSET, 21])
def test_samples_at_the_oldest_and_a_newer_opset(opset):
    """The opset-dependent spellings (Reduce* axes, Split, ...) at opset 13 and 21."""
    failures = []
    for sample in SAMPLES:
        main, feeds, outs, _ = build(sample, example_values(sample, 3))
        if not _exportable(main, opset):
            continue
        expected = static.Executor().run(main, feed=feeds, fetch_list=outs)
        try:
            got = run_model(export_program(main, feeds, outs, opset=opset), feeds)
            for i, (g, e) in enumerate(zip(got, expected)):
                assert_close(g, e, f"output {i}")
        except Exception as exc:  # collect them all: one report
            failures.append(f"{sample.id}: {type(exc).__name__}: {str(exc)[:200]}")
    assert not failures, "\n".join(failures)


SHAPED = [s for s in SAMPLES if uses_unknown_dims(s) and not getattr(s, "fixed_batch", False)]


@pytest.mark.parametrize("sample", SHAPED, ids=[s.id for s in SHAPED])
def test_unknown_leading_dims_export_as_symbolic_dims(sample):
    """Built with every input's first dim unknown, exported with it symbolic: the eager
    result (or a clear refusal when a lowering needs the dim)."""
    values = example_values(sample, 5)
    expected = [o.numpy() for o in outputs_of(sample.fn(*make_inputs(sample, values)))]
    try:
        main, feeds, outs, _ = build(sample, values, batch_free=True)
    except rt.OpError:
        pytest.skip("the op needs a known leading dim while building")
    opset = next((v for v in OPSETS if _exportable(main, v)), None)
    if opset is None:
        pytest.skip("a lowering needs the dim (refused with the reason)")
    model = export_program(main, feeds, outs, opset=opset, dynamic={0})
    for i, (g, e) in enumerate(zip(run_model(model, feeds), expected)):
        assert_close(g, e, f"{sample.id} output {i}")


def _backticked(text: str) -> set[str]:
    return set(re.findall(r"`([a-z0-9_]+)`", text))


def test_deployment_docs_list_the_supported_and_unsupported_ops():
    with open(os.path.join(ROOT, "docs", "deployment.md")) as f:
        text = f.read()
    supported = text.split("## Supported ops")[1].split("Layers built from")[0]
    unsupported = text.split("### Ops without a lowering")[1].split("## Limits")[0]
    unsupported = "\n".join(line.split("|")[1] for line in unsupported.splitlines() if "|" in line)
    assert _backticked(supported) == set(LOWERINGS)
    assert _backticked(unsupported) == set(UNSUPPORTED)
