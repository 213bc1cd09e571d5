"""save / load: three files written atomically, a TranslatedLayer that checks its inputs,
loading in a fresh process without gast or the model's source, and hostile files."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import autostatic
import autostatic_runtime as rt
from autostatic import InputSpec
from autostatic_runtime import nn
from autostatic_runtime.errors import ProgramFormatError, StaticBuildError
from autostatic_runtime.jit import InputMismatchError, TranslatedLayer, model_file, params_file

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(10, 3)
        self.bn = nn.BatchNorm1D(3)
        self.mask = rt.to_tensor([0.0, 1.0, 1.0])
        self.drop = nn.Dropout(0.5)

    def forward(self, x, y):
        out = self.drop(self.bn(self.fc(x))) + y
        if rt.mean(out) > 0:
            out = out * 2.0
        return out * self.mask


def _specs():
    return [InputSpec([None, 10], "float32", "x"), InputSpec([3], "float32", "y")]


@pytest.fixture
def saved(tmp_path):
    net = Net()
    for _ in range(2):  # move the running statistics away from their initial values
        net(rt.randn([8, 10]), rt.randn([3]))
    path = str(tmp_path / "sub" / "net")
    autostatic.save(net, path, input_spec=_specs())
    return net, path


def test_save_writes_three_files_and_load_runs_them(saved):
    net, path = saved
    assert sorted(os.listdir(os.path.dirname(path))) == [
        "net.pdiparams",
        "net.pdmeta",
        "net.pdmodel",
    ]
    assert net.training  # save traces in eval mode and restores the mode
    loaded = autostatic.load(path)
    assert isinstance(loaded, TranslatedLayer)
    net.eval()
    for batch in (1, 5):
        x, y = rt.randn([batch, 10]), rt.randn([3])
        np.testing.assert_allclose(loaded(x, y).numpy(), net(x, y).numpy(), rtol=1e-5, atol=1e-6)
    x = np.ones((2, 10), "float32")  # NumPy inputs are accepted
    assert loaded(x, np.ones(3, "float32")).shape == [2, 3]
    assert [s.name for s in loaded.input_spec] == ["x", "y"]
    assert loaded.input_spec[0].shape == (None, 10)
    meta = json.load(open(path + ".pdmeta"))
    assert meta["inputs"][0] == {"name": "x", "shape": [None, 10], "dtype": "float32"}


def test_loaded_inputs_are_checked(saved):
    _, path = saved
    loaded = autostatic.load(path)
    y = rt.zeros([3])
    with pytest.raises(InputMismatchError, match="takes 2 inputs"):
        loaded(rt.zeros([2, 10]))
    with pytest.raises(InputMismatchError, match=r"'x' must be 2-D"):
        loaded(rt.zeros([10]), y)
    with pytest.raises(InputMismatchError, match=r"'x' must have dtype float32, got float64"):
        loaded(rt.zeros([2, 10], dtype="float64"), y)
    with pytest.raises(InputMismatchError, match=r"'y' must have size 3 in dimension 0"):
        loaded(rt.zeros([2, 10]), rt.zeros([4]))
    with pytest.raises(InputMismatchError, match="tensor or a NumPy array"):
        loaded([1.0] * 10, y)


def test_a_loaded_model_can_be_fine_tuned(saved):
    _, path = saved
    loaded = autostatic.load(path)
    params = loaded.parameters()
    assert {p.name for p in params} >= {"linear_0.w_0", "linear_0.b_0"} or params
    opt = rt.optimizer.SGD(learning_rate=0.1, parameters=params)
    x, y = rt.randn([4, 10]), rt.randn([3])
    before = float((loaded(x, y) ** 2).mean().numpy())
    for _ in range(5):
        loss = (loaded(x, y) ** 2).mean()
        loss.backward()
        opt.step()
        opt.clear_grad()
    assert float((loaded(x, y) ** 2).mean().numpy()) < before


def test_save_a_function_with_structured_outputs(tmp_path):
    w = rt.to_tensor([[1.0, 2.0], [3.0, 4.0]])

    @autostatic.to_static(input_spec=[InputSpec([None, 2], name="a")])
    def f(a):
        return {"y": rt.matmul(a, w), "n": 2, "both": (a + 1, a - 1)}

    autostatic.save(f, tmp_path / "f")
    loaded = autostatic.load(str(tmp_path / "f"))
    a = rt.to_tensor([[1.0, 1.0]])
    out, want = loaded(a), f(a)
    assert out["n"] == 2
    np.testing.assert_allclose(out["y"].numpy(), want["y"].numpy())
    np.testing.assert_allclose(out["both"][1].numpy(), want["both"][1].numpy())


def test_a_saved_layer_runs_its_forward_hooks(tmp_path):
    """Paddle's test_layer_hook: the layer's own pre- and post-hooks (and its sublayers')
    are in the saved program (the loaded model gave forward's result without the layer's
    own hooks before: a silent difference)."""

    def double_output(layer, inputs, output):
        return output + output

    def double_input(layer, inputs):
        return (inputs[0] * 2,)

    class Hooked(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc1, self.fc2 = nn.Linear(4, 4), nn.Linear(4, 4)
            self.fc1.register_forward_post_hook(double_output)
            self.fc2.register_forward_pre_hook(double_input)
            self.register_forward_pre_hook(double_input)
            self.register_forward_post_hook(double_output)

        def forward(self, x):
            h = self.fc2(self.fc1(x))
            if rt.mean(h) > 0:  # converted: a cond in the saved program
                h = h * 3
            return rt.mean(h, axis=1)

    rt.seed(5)
    layer = Hooked()
    x = rt.randn([3, 4])
    want = layer(x).numpy()
    converted = autostatic.to_static(layer)
    np.testing.assert_allclose(converted(x).numpy(), want, rtol=1e-6)
    autostatic.save(converted, str(tmp_path / "hooked"))
    loaded = autostatic.load(str(tmp_path / "hooked"))
    np.testing.assert_allclose(loaded(x).numpy(), want, rtol=1e-6)
    np.testing.assert_allclose(loaded(-x).numpy(), layer(-x).numpy(), rtol=1e-6)


def test_save_without_shapes_is_a_clear_error(tmp_path):
    with pytest.raises(autostatic.jit.ToStaticError, match="input_spec"):
        autostatic.save(lambda x: x, tmp_path / "g")


def test_save_uses_the_last_call_shapes(tmp_path):
    sf = autostatic.to_static(lambda x: x * 3)
    sf(rt.ones([2, 2]))
    autostatic.save(sf, tmp_path / "h")
    loaded = autostatic.load(str(tmp_path / "h"))
    np.testing.assert_allclose(loaded(rt.ones([2, 2])).numpy(), np.full((2, 2), 3.0))


class Counting(nn.Layer):
    """Writes a tensor attribute and a registered buffer in forward (one under a tensor if)."""

    def __init__(self):
        super().__init__()
        self.total = rt.zeros([2])
        self.register_buffer("calls", rt.to_tensor([0], dtype="int64"))

    def forward(self, x=None):
        self.calls = self.calls + 1
        if x is None:
            return self.calls
        if rt.mean(x) > 0:
            self.total = self.total + x
        else:
            self.total = self.total - 1.0
        return self.total * 2.0, self.calls


def _runs(layer, xs):
    outs = [layer() if x is None else layer(rt.to_tensor(x)) for x in xs]
    return [[t.numpy().tolist() for t in (o if isinstance(o, tuple) else (o,))] for o in outs]


@pytest.mark.filterwarnings("ignore:the XLA compiler cannot take this program")
@pytest.mark.parametrize("with_inputs", [False, True])
def test_a_layer_that_writes_its_buffers_keeps_them_across_calls_saved_and_loaded(
    tmp_path, with_inputs
):
    xs = [[1.0, 2.0], [-3.0, -1.0], [0.5, 0.5]] if with_inputs else [None] * 3
    eager = _runs(Counting(), xs)
    traced = Counting()
    static = autostatic.to_static(traced)
    assert _runs(static, xs) == eager  # the program writes the buffers: every call sees them
    assert isinstance(traced.calls, rt.Tensor) and traced.calls.numpy().tolist() == [3]
    spec = [InputSpec([2], "float32", "x")] if with_inputs else None
    autostatic.save(Counting(), tmp_path / "counting", input_spec=spec)  # failed to load before
    for backend in ("python", "xla"):
        loaded = autostatic.load(str(tmp_path / "counting"), backend=backend)
        assert _runs(loaded, xs) == eager


def test_a_buffer_assigned_a_value_of_another_shape_while_tracing_is_a_clear_error():
    class Resets(nn.Layer):
        def __init__(self):
            super().__init__()
            self.state = rt.zeros([2])

        def forward(self, x):
            self.state = x
            return x

    with pytest.raises(StaticBuildError, match=r"Resets.state is a buffer of shape \[2\]"):
        autostatic.to_static(Resets())(rt.ones([3]))


LAC_SPECS = [
    InputSpec([None, 3], "float32"), InputSpec([None, 1], "int64"), InputSpec([None], "int64")
]  # fmt: skip


class Tagger(nn.Layer):
    """Paddle's LAC idiom: a training forward returning the cost and the decoded tags."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 4)

    @autostatic.to_static(input_spec=LAC_SPECS)
    def forward(self, word, target, length=None):
        emission = self.fc(word)
        cost = rt.mean(nn.functional.cross_entropy(emission, target))
        return cost, rt.argmax(emission, axis=-1) + length


def test_save_configs_keep_the_outputs_and_inputs_asked_for(tmp_path):
    model = Tagger()
    word, target, length = rt.randn([2, 3]), rt.to_tensor([[1], [2]]), rt.to_tensor([1, 2])
    cost, decoded = model(word, target, length)
    assert [s.name for s in LAC_SPECS] == ["word", "target", "length"]  # named as Paddle does
    autostatic.save(model, tmp_path / "lac", input_spec=LAC_SPECS, output_spec=[decoded],
                    input_names_after_prune=[LAC_SPECS[0].name, LAC_SPECS[-1].name])  # fmt: skip
    loaded = autostatic.load(str(tmp_path / "lac"))  # a TypeError before: no such configs
    np.testing.assert_array_equal(loaded(word, length).numpy(), decoded.numpy())
    exe = rt.static.Executor(rt.CPUPlace())
    program, feeds, fetches = rt.static.io.load_inference_model(
        str(tmp_path), exe, model_filename="lac.pdmodel", params_filename="lac.pdiparams"
    )
    assert feeds == ["word", "length"] and len(fetches) == 1
    # MNIST's idiom: example tensors as input_spec, the input to keep named by its tensor
    classifier = autostatic.to_static(Net())
    x, y = rt.randn([2, 10]), rt.randn([3])
    classifier.eval()
    out = classifier(x, y)
    autostatic.save(classifier, tmp_path / "mnist", input_spec=[x, y], output_spec=[out],
                    input_names_after_prune=[x.name, y.name], combine_params=True)  # fmt: skip
    np.testing.assert_allclose(autostatic.load(str(tmp_path / "mnist"))(x, y).numpy(),
                               out.numpy(), rtol=1e-6)  # fmt: skip
    with pytest.raises(autostatic.jit.ToStaticError, match="unknown config 'bogus'"):
        autostatic.save(model, tmp_path / "x", input_spec=LAC_SPECS, bogus=1)
    with pytest.raises(rt.AutostaticError, match=r"also need the inputs \['target'\]"):
        autostatic.save(model, tmp_path / "x", input_spec=LAC_SPECS, output_spec=[cost],
                        input_names_after_prune=["word"])  # fmt: skip
    with pytest.raises(autostatic.jit.ToStaticError, match="matches no"):
        autostatic.save(model, tmp_path / "x", input_spec=LAC_SPECS, output_spec=[rt.ones([7])])


MODEL_SRC = textwrap.dedent(
    """
    import sys
    import autostatic, autostatic_runtime as rt
    from autostatic_runtime import nn

    class LoopNet(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)
            self.register_buffer("offset", rt.to_tensor([0.5, 0.0, 0.0, 0.0]))

        def forward(self, x, n):
            i = rt.zeros([], dtype="int64")
            while i < n:
                x = rt.tanh(self.fc(x)) + self.offset
                if rt.mean(x) > 0.2:
                    x = x * 0.5
                i = i + 1
            return x

    rt.seed(3)
    net = LoopNet()
    specs = [autostatic.InputSpec([None, 4], name="x"), autostatic.InputSpec([], "int64", "n")]
    autostatic.save(net, sys.argv[1], input_spec=specs)
    x = rt.to_tensor([[0.1, 0.2, 0.3, 0.4], [1.0, -1.0, 0.5, 0.0]])
    out = net(x, rt.to_tensor(3, dtype="int64"))
    import numpy as np
    np.save(sys.argv[1] + ".expected.npy", out.numpy())
    """
)

LOAD_SRC = textwrap.dedent(
    """
    import sys
    import numpy as np
    import autostatic
    import autostatic_runtime as rt
    layer = autostatic.load(sys.argv[1])
    x = rt.to_tensor([[0.1, 0.2, 0.3, 0.4], [1.0, -1.0, 0.5, 0.0]])
    out = layer(x, rt.to_tensor(3, dtype="int64"))
    np.testing.assert_allclose(out.numpy(), np.load(sys.argv[1] + ".expected.npy"), rtol=1e-6)
    bad = sorted(m for m in sys.modules if m == "gast" or m.startswith(("autostatic.pyct",
                 "autostatic.transformers", "autostatic.conversion", "autostatic.api")))
    print("compiler modules:", bad)
    sys.exit(1 if bad else 0)
    """
)


def test_save_in_one_process_load_in_another_without_gast_or_source(tmp_path):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    model_dir = tmp_path / "model_src"
    model_dir.mkdir()
    (model_dir / "make_model.py").write_text(MODEL_SRC)
    path = str(tmp_path / "out" / "loopnet")
    made = subprocess.run(
        [sys.executable, str(model_dir / "make_model.py"), path],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert made.returncode == 0, made.stdout + made.stderr
    (model_dir / "make_model.py").unlink()  # the model's source is gone
    run_dir = tmp_path / "elsewhere"
    run_dir.mkdir()
    (run_dir / "run.py").write_text(LOAD_SRC)
    ran = subprocess.run(
        [sys.executable, str(run_dir / "run.py"), path],
        capture_output=True, text=True, env=env, cwd=run_dir, timeout=120,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "compiler modules: []" in ran.stdout


# ---- hostile and damaged files ------------------------------------------------------------


def _rewrite_meta(path, **changes):
    meta = json.load(open(path + ".pdmeta"))
    meta.update(changes)
    with open(path + ".pdmeta", "w") as f:
        json.dump(meta, f)


def _rehash(path):
    import hashlib

    meta = json.load(open(path + ".pdmeta"))
    for suffix in ("pdmodel", "pdiparams"):
        meta[f"{suffix}_sha256"] = hashlib.sha256(open(f"{path}.{suffix}", "rb").read()).hexdigest()
    with open(path + ".pdmeta", "w") as f:
        json.dump(meta, f)


def test_truncated_or_corrupt_files_give_clear_errors(saved):
    _, path = saved
    data = open(path + ".pdiparams", "rb").read()
    with open(path + ".pdiparams", "wb") as f:
        f.write(data[: len(data) // 2])
    with pytest.raises(ProgramFormatError, match="checksum differs"):
        autostatic.load(path)
    _rehash(path)
    with pytest.raises(ProgramFormatError, match="truncated"):
        autostatic.load(path)
    with open(path + ".pdmodel", "wb") as f:
        f.write(b"\x0a\xff\xff\xff\xff garbage")
    _rehash(path)
    with pytest.raises(ProgramFormatError, match="not a valid program file"):
        autostatic.load(path)
    with open(path + ".pdmeta", "w") as f:
        f.write('{"format": "autostatic.mo')
    with pytest.raises(ProgramFormatError, match="not valid JSON"):
        autostatic.load(path)
    os.unlink(path + ".pdmeta")
    with pytest.raises(FileNotFoundError, match="pdmeta does not exist"):
        autostatic.load(path)


def test_newer_or_bad_versions_are_rejected(saved):
    _, path = saved
    _rewrite_meta(path, version=99)
    with pytest.raises(ProgramFormatError, match="version 99, newer"):
        autostatic.load(path)
    _rewrite_meta(path, version="1; rm -rf /")
    with pytest.raises(ProgramFormatError, match="bad format version"):
        autostatic.load(path)


@pytest.mark.parametrize(
    "header, message",
    [
        ({"__metadata__": {"format": "other"}}, "not an autostatic weights file"),
        ({"__metadata__": {"format": params_file.FORMAT, "version": "7"}}, "version 7, newer"),
        (
            {"__metadata__": {"format": params_file.FORMAT, "version": "1"},
             "w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 800]}},
            "outside the file",
        ),
        (
            {"__metadata__": {"format": params_file.FORMAT, "version": "1"},
             "w": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}},
            "12 bytes",
        ),
        (
            {"__metadata__": {"format": params_file.FORMAT, "version": "1"},
             "w": {"dtype": "object", "shape": [1], "data_offsets": [0, 8]}},
            "unknown dtype",
        ),
        (
            {"__metadata__": {"format": params_file.FORMAT, "version": "1"},
             "w": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 8]}},
            "bad shape",
        ),
        (
            {"__metadata__": {"format": params_file.FORMAT, "version": "1"},
             "a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
             "b": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}},
            "overlap",
        ),
    ],
)  # fmt: skip
def test_hostile_weight_headers(header, message):
    raw = json.dumps(header).encode()
    data = struct.pack("<Q", len(raw)) + raw + b"\0" * 8
    with pytest.raises(ProgramFormatError, match=message):
        params_file.loads(data)


def test_weights_never_unpickle(tmp_path):
    import pickle

    class Boom:
        def __reduce__(self):
            return (os.system, ("touch " + str(tmp_path / "pwned"),))

    payload = pickle.dumps(Boom())
    for data in (payload, struct.pack("<Q", 2**62) + payload, b""):
        with pytest.raises(ProgramFormatError):
            params_file.loads(data)
    assert not (tmp_path / "pwned").exists()


def test_weights_round_trip_every_dtype():
    arrays = {
        "f64": np.arange(6, dtype="float64").reshape(2, 3),
        "f32": np.ones((0, 4), "float32"),
        "f16": np.array([1.5], "float16"),
        "i64": np.array(-3, "int64"),
        "i32": np.arange(3, dtype="int32"),
        "i8": np.array([-1], "int8"),
        "u8": np.array([255], "uint8"),
        "b": np.array([True, False]),
    }
    back = params_file.loads(params_file.dumps(arrays))
    for k, v in arrays.items():
        assert back[k].dtype == v.dtype and back[k].shape == v.shape
        np.testing.assert_array_equal(back[k], v)


def test_an_interrupted_save_is_detected_and_leaves_no_temp_files(saved, monkeypatch):
    net, path = saved
    real = model_file._write_atomic

    def crash_on_model(target, data):
        if target.endswith(".pdmodel"):
            raise KeyboardInterrupt("power cut")
        real(target, data)

    net.fc.weight.set_value(rt.zeros([10, 3]))
    monkeypatch.setattr(model_file, "_write_atomic", crash_on_model)
    with pytest.raises(KeyboardInterrupt):
        autostatic.save(net, path, input_spec=_specs())
    monkeypatch.undo()
    assert sorted(os.listdir(os.path.dirname(path))) == [
        "net.pdiparams",
        "net.pdmeta",
        "net.pdmodel",
    ]
    with pytest.raises(ProgramFormatError, match="from another save"):
        autostatic.load(path)


def test_import_autostatic_then_load_does_not_import_the_converter():
    code = "import sys, autostatic; print(sorted(m for m in sys.modules if m == 'gast'))"
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert proc.returncode == 0 and proc.stdout.strip() == "[]", proc.stdout + proc.stderr


def test_variable_names_from_a_file_are_never_executed(tmp_path):
    from autostatic_runtime import static
    from autostatic_runtime.jit.model_file import save_model
    from autostatic_runtime.static.builder import static_guard

    evil = "w'); __import__('os').system('touch " + str(tmp_path / "pwned") + "'); ('"
    main = static.Program()
    with static_guard(), static.program_guard(main):
        x = static.data("x", [2], "float32")
        w = main.global_block().create_var(evil, [2], "float32", persistable=True)
        y = x + w
    save_model(
        str(tmp_path / "m"), main, [{"name": "x", "shape": [2], "dtype": "float32"}],
        [y.name], None, ["out"], {evil: np.array([1.0, 2.0], "float32")},
    )  # fmt: skip
    loaded = autostatic.load(str(tmp_path / "m"))
    np.testing.assert_allclose(loaded(rt.ones([2])).numpy(), [2.0, 3.0])
    assert not (tmp_path / "pwned").exists()


def test_random_damage_gives_format_errors_never_other_exceptions(saved):
    """Flip bytes in the program or the weights (checksums updated so parsing is reached):
    loading, running and differentiating either work or raise an autostatic error."""
    import hashlib
    import random

    _, path = saved
    orig = {s: open(path + s, "rb").read() for s in (".pdmodel", ".pdiparams")}
    meta0 = json.load(open(path + ".pdmeta"))
    rng = random.Random(0)
    for _ in range(120):
        files = dict(orig)
        which = rng.choice(sorted(files))
        data = bytearray(files[which])
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        if rng.random() < 0.2:
            data = data[: rng.randrange(len(data))]
        files[which] = bytes(data)
        meta = dict(meta0)
        for suffix, b in files.items():
            with open(path + suffix, "wb") as f:
                f.write(b)
            meta[f"{suffix[1:]}_sha256"] = hashlib.sha256(b).hexdigest()
        with open(path + ".pdmeta", "w") as f:
            json.dump(meta, f)
        try:
            out = autostatic.load(path)(rt.ones([2, 10]), rt.ones([3]))
            if not out.stop_gradient:
                out.sum().backward()
        except rt.AutostaticError:
            pass


def test_metadata_that_disagrees_with_the_program_is_rejected(saved):
    _, path = saved
    meta = json.load(open(path + ".pdmeta"))
    meta["inputs"][0]["dtype"] = "int64"
    with open(path + ".pdmeta", "w") as f:
        json.dump(meta, f)
    with pytest.raises(ProgramFormatError, match="input 'x' is int64"):
        autostatic.load(path)
    meta["inputs"][0]["dtype"] = "float32"
    meta["leaves"] = ["out", "out"]
    with open(path + ".pdmeta", "w") as f:
        json.dump(meta, f)
    with pytest.raises(ProgramFormatError, match="leaves do not match"):
        autostatic.load(path)


def test_deeply_nested_json_is_a_format_error(saved):
    _, path = saved
    raw = b"[" * 200000
    with pytest.raises(ProgramFormatError, match="not valid JSON"):
        params_file.loads(struct.pack("<Q", len(raw)) + raw)
    with open(path + ".pdmeta", "wb") as f:
        f.write(raw)
    with pytest.raises(ProgramFormatError, match="not valid JSON"):
        autostatic.load(path)
