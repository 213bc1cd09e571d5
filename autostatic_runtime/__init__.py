"""autostatic_runtime: eager tensors, ops, autograd, layers and optimizers (Paddle 2.x names).

    import autostatic_runtime as rt
    x = rt.to_tensor([[1.0, 2.0]], stop_gradient=False)
    y = (x * x).sum()
    y.backward()            # x.grad == 2 * x

Everything converted code and saved models need at run time lives here; it never imports
the compiler package ``autostatic``.

PYTEST_DONT_REWRITE: pytest leaves this package's own asserts alone (its plugin is in it).
"""

from __future__ import annotations

__version__ = "0.1.0"

from autostatic_runtime import dtypes  # noqa: E402
from autostatic_runtime.dtypes import (  # noqa: E402
    DType,
    bool_,
    float16,
    float32,
    float64,
    get_default_dtype,
    int8,
    int16,
    int32,
    int64,
    set_default_dtype,
    uint8,
)

bool = bool_  # noqa: A001  (Paddle spells it paddle.bool)

from autostatic_runtime import dispatch  # noqa: E402,F401  (installs eager dispatch)
from autostatic_runtime.autograd import (  # noqa: E402
    enable_grad,
    grad,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
)
from autostatic_runtime.backends import get_device, list_backends, set_device  # noqa: E402
from autostatic_runtime.creation import *  # noqa: E402,F401,F403
from autostatic_runtime.errors import (  # noqa: E402
    AutostaticError,
    DeviceError,
    DistributedError,
    DTypeError,
    OpError,
    ShapeError,
)
from autostatic_runtime.io import load, save  # noqa: E402
from autostatic_runtime.mode import in_dynamic_mode  # noqa: E402
from autostatic_runtime.ops import methods as _methods  # noqa: E402
from autostatic_runtime.ops.broadcast import *  # noqa: E402,F401,F403
from autostatic_runtime.ops.combine import *  # noqa: E402,F401,F403
from autostatic_runtime.ops.composite import *  # noqa: E402,F401,F403
from autostatic_runtime.ops.elementwise import *  # noqa: E402,F401,F403
from autostatic_runtime.ops.indexing import *  # noqa: E402,F401,F403
from autostatic_runtime.ops.linalg import *  # noqa: E402,F401,F403
from autostatic_runtime.ops.manipulation import *  # noqa: E402,F401,F403
from autostatic_runtime.ops.reduce import *  # noqa: E402,F401,F403
from autostatic_runtime.ops.registry import OPS as _OPS  # noqa: E402
from autostatic_runtime.ops.shape_tensor import *  # noqa: E402,F401,F403
from autostatic_runtime.ops.sorting import *  # noqa: E402,F401,F403
from autostatic_runtime.ops.tensor_array import *  # noqa: E402,F401,F403
from autostatic_runtime.place import CPUPlace, CUDAPlace, is_compiled_with_cuda  # noqa: E402
from autostatic_runtime.reader import batch  # noqa: E402
from autostatic_runtime.tensor import Tensor, is_tensor  # noqa: E402

_methods.attach(__import__(__name__))

from autostatic_runtime import tensor as _tensor_module  # noqa: E402
from autostatic_runtime.ops import tensor_array as _tensor_array  # noqa: E402
from autostatic_runtime.ops import tensor_math as _tensor_math  # noqa: E402

for _name in _tensor_array.__all__:  # Paddle's paddle.tensor.create_array & co.
    setattr(_tensor_module, _name, getattr(_tensor_array, _name))
_tensor_module.fill_constant = _tensor_math.fill_constant  # paddle.tensor.fill_constant
_tensor_module.math = _tensor_math  # paddle.tensor.math (its _multiply_with_axis & co.)

from autostatic_runtime import (  # noqa: E402,F401
    amp,  # noqa: E402,F401  (paddle.amp)
    base,  # noqa: E402,F401  (paddle.base)
    distributed,  # noqa: E402,F401  (paddle.distributed)
    framework,
    io,
    jit,  # noqa: E402,F401  (run_program, load)
    metric,
    nn,
    optimizer,
    regularizer,
    static,  # noqa: E402,F401
    utils,
    vision,
)
from autostatic_runtime import legacy_ops as _legacy_C_ops  # noqa: E402,F401  (Paddle's)

fluid = base  # (paddle.fluid, the name before Paddle 2.6)
from autostatic_runtime.distributed import DataParallel  # noqa: E402,F401
from autostatic_runtime.nn.parameter import ParamAttr, create_parameter  # noqa: E402,F401
from autostatic_runtime.static.builder import disable_static, enable_static  # noqa: E402,F401
