"""Devices as Paddle 2.x spells them: ``rt.CPUPlace()``, ``rt.CUDAPlace(0)``.

A place is accepted wherever a device is (``to_tensor(..., place=)``, ``static.Executor``,
``rt.set_device``): its ``str()`` is the device string (``"cpu"``, ``"gpu:0"``).
"""

from __future__ import annotations

__all__ = ["CPUPlace", "CUDAPlace", "DevicePlace", "is_compiled_with_cuda", "expected_place"]


class _Place:
    __slots__ = ()
    device = "cpu"

    def __str__(self) -> str:
        return self.device

    def __repr__(self) -> str:
        return f"Place({self.device})"

    def __eq__(self, other: object) -> bool:
        return str(self) == str(other) if isinstance(other, (_Place, str)) else NotImplemented

    def _equals(self, other: object) -> bool:
        return str(self) == str(other)

    def __hash__(self) -> int:
        return hash(self.device)

    def is_cpu_place(self) -> bool:
        return self.device == "cpu"

    def is_gpu_place(self) -> bool:
        return self.device.startswith("gpu")


class CPUPlace(_Place):
    """The host CPU (NumPy arrays)."""

    __slots__ = ()


class CUDAPlace(_Place):
    """GPU number ``id`` (CuPy arrays)."""

    __slots__ = ("id",)

    def __init__(self, id: int = 0) -> None:  # noqa: A002  (Paddle's parameter name)
        self.id = int(id)

    @property
    def device(self) -> str:  # type: ignore[override]
        return f"gpu:{self.id}"

    def get_device_id(self) -> int:
        return self.id


class DevicePlace(str):
    """A tensor's ``place``: its device string (``'cpu'``, ``'gpu:0'``, a backend's name) with
    Paddle's place methods."""

    __slots__ = ()

    def _equals(self, other: object) -> bool:
        return str(self) == str(other)

    def is_cpu_place(self) -> bool:
        return self == "cpu"

    def is_gpu_place(self) -> bool:
        return self.startswith("gpu")

    def get_device_id(self) -> int:
        return int(self.partition(":")[2] or 0)


def expected_place() -> _Place:
    """The place new tensors go to (Paddle's ``framework._current_expected_place()``)."""
    from autostatic_runtime.backends import get_device

    device = get_device()
    return CUDAPlace(int(device.partition(":")[2] or 0)) if device.startswith("gpu") else (
        CPUPlace())  # fmt: skip


def is_compiled_with_cuda() -> bool:
    """True when the CuPy backend is usable (CuPy is installed and sees a GPU)."""
    from autostatic_runtime.backends.cupy_backend import CupyBackend

    return CupyBackend.available()
