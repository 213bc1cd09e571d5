"""Functional neural-network ops (Paddle 2.x ``paddle.nn.functional``)."""

from autostatic_runtime.nn.functional.activation import *  # noqa: F401,F403
from autostatic_runtime.nn.functional.attention import *  # noqa: F401,F403
from autostatic_runtime.nn.functional.common import *  # noqa: F401,F403
from autostatic_runtime.nn.functional.conv import *  # noqa: F401,F403
from autostatic_runtime.nn.functional.conv_nd import *  # noqa: F401,F403
from autostatic_runtime.nn.functional.conv_transpose import *  # noqa: F401,F403
from autostatic_runtime.nn.functional.crf import *  # noqa: F401,F403
from autostatic_runtime.nn.functional.detection import *  # noqa: F401,F403
from autostatic_runtime.nn.functional.loss import *  # noqa: F401,F403
from autostatic_runtime.nn.functional.norm import *  # noqa: F401,F403
from autostatic_runtime.nn.functional.pooling import *  # noqa: F401,F403
from autostatic_runtime.nn.functional.sequence import *  # noqa: F401,F403
