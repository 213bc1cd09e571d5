"""Layer classes (Paddle 2.x ``paddle.nn`` layers)."""

from autostatic_runtime.nn.layer.activation import *  # noqa: F401,F403
from autostatic_runtime.nn.layer.common import *  # noqa: F401,F403
from autostatic_runtime.nn.layer.container import *  # noqa: F401,F403
from autostatic_runtime.nn.layer.conv import *  # noqa: F401,F403
from autostatic_runtime.nn.layer.layers import Layer  # noqa: F401
from autostatic_runtime.nn.layer.loss import *  # noqa: F401,F403
from autostatic_runtime.nn.layer.norm import *  # noqa: F401,F403
from autostatic_runtime.nn.layer.pooling import *  # noqa: F401,F403
from autostatic_runtime.nn.layer.rnn import *  # noqa: F401,F403
from autostatic_runtime.nn.layer.rnn_layers import *  # noqa: F401,F403
from autostatic_runtime.nn.layer.transformer import *  # noqa: F401,F403
