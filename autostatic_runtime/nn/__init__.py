"""Neural-network layers and functions (Paddle 2.x ``paddle.nn``).

    import autostatic_runtime as rt
    model = rt.nn.Sequential(rt.nn.Linear(4, 8), rt.nn.ReLU(), rt.nn.Linear(8, 1))
    loss = rt.nn.MSELoss()(model(x), y)

``rt.nn.functional`` holds the functional forms, ``rt.nn.initializer`` the initializers.
"""

from autostatic_runtime.nn import (
    functional,  # noqa: F401
    initializer,  # noqa: F401
)
from autostatic_runtime.nn.clip import ClipGradByGlobalNorm, ClipGradByNorm, ClipGradByValue
from autostatic_runtime.nn.decode import BeamSearchDecoder, dynamic_decode
from autostatic_runtime.nn.layer import *  # noqa: F401,F403
from autostatic_runtime.nn.layer import activation as _activation
from autostatic_runtime.nn.layer import common as _common
from autostatic_runtime.nn.layer import container as _container
from autostatic_runtime.nn.layer import conv as _conv
from autostatic_runtime.nn.layer import loss as _loss
from autostatic_runtime.nn.layer import norm as _norm
from autostatic_runtime.nn.layer import pooling as _pooling
from autostatic_runtime.nn.layer import rnn as _rnn
from autostatic_runtime.nn.layer import rnn_layers as _rnn_layers
from autostatic_runtime.nn.layer import transformer as _transformer
from autostatic_runtime.nn.layer.layers import Layer
from autostatic_runtime.nn.parameter import ParamAttr, Parameter, create_parameter

__all__ = (
    [
        "Layer",
        "Parameter",
        "ParamAttr",
        "create_parameter",
        "ClipGradByGlobalNorm",
        "ClipGradByNorm",
        "ClipGradByValue",
        "functional",
        "initializer",
        "BeamSearchDecoder",
        "dynamic_decode",
    ]
    + _activation.__all__
    + _common.__all__
    + _container.__all__
    + _conv.__all__
    + _loss.__all__
    + _norm.__all__
    + _pooling.__all__
    + _rnn.__all__
    + _rnn_layers.__all__
    + _transformer.__all__
)
