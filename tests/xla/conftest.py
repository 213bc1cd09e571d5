"""XLA tests compile hundreds of small programs: XLA's optimisation passes are skipped (they
cost most of the compile time and change no result the tests compare)."""

import pytest


@pytest.fixture(autouse=True, scope="session")
def _fast_xla_compiles():
    try:
        import jax
    except ImportError:
        yield
        return
    saved = jax.config.values["jax_disable_most_optimizations"]
    jax.config.update("jax_disable_most_optimizations", True)
    yield
    jax.config.update("jax_disable_most_optimizations", saved)
