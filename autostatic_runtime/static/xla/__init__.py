"""The XLA block compiler: a whole Program as one ``jax.jit`` computation (optional extra
``xla``). ``Executor(compiler="xla")``, ``to_static(fn, backend="xla")`` and
``load(path, backend="xla")`` select it; see ``compiler.py``."""

from autostatic_runtime.static.xla.compiler import XlaCompiler, XlaFallbackWarning, XlaFunction

__all__ = ["XlaCompiler", "XlaFallbackWarning", "XlaFunction"]
