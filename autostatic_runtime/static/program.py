"""The static IR: Program -> Blocks -> Operators and Variables (Paddle's ProgramDesc model).

Block 0 is the global block; ``cond`` and ``while`` ops own sub-blocks whose ``parent_idx``
points at the block they were built in. A Variable belongs to the block that defines it and
is visible in that block's descendants. Every Operator records the user's source location.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Any

from autostatic_runtime import dtypes
from autostatic_runtime.errors import (
    DygraphOnlyError,
    StaticBuildError,
    SymbolicValueError,
    symbolic_value_error,
    user_location,
)
from autostatic_runtime.tensor import TensorLike

__all__ = ["Program", "Block", "Operator", "Variable", "Parameter", "Literal"]


class Shape(list):
    """A Variable's dims: a list (as eager shapes are) equal to the tuple of the same dims too
    (``program.inputs[0].shape == (-1, 4)``, as Paddle's static shapes are tuples)."""

    __slots__ = ()
    __hash__ = None  # type: ignore[assignment]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, tuple):
            return tuple(self) == other
        return list.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal


class Variable(TensorLike):
    """A symbolic tensor of a static Program: name, shape (-1 where unknown), dtype.

    Supports the same operators and methods as an eager Tensor; each use appends an op.
    """

    __slots__ = (
        "block",
        "name",
        "_shape",
        "_dtype",
        "persistable",
        "stop_gradient",
        "is_data",
        "op",
        "trainable",
        "initializer",
        "_weak",
        "_numpy",
        "__weakref__",
    )

    def __init__(
        self,
        block: Block,
        name: str,
        shape: Iterable[int],
        dtype: Any,
        persistable: bool = False,
        stop_gradient: bool = False,
        is_data: bool = False,
    ):
        self.block = block
        self.name = name
        self._shape = tuple(-1 if d is None else int(d) for d in shape)
        self._dtype = dtypes.convert_dtype(dtype)
        self.persistable = persistable
        self.stop_gradient = stop_gradient
        self.is_data = is_data
        self.op: Operator | None = None
        self.trainable = False
        self.initializer = None
        self._weak = False  # stands for a Python number: promotes like one (see dtypes.weak_result)
        self._numpy = False  # stands for a NumPy array argument: print shows it as NumPy does

    @property
    def shape(self) -> list[int]:
        """The dims (-1: unknown): a list that also equals the tuple of its dims, as Paddle's
        static ``Variable.shape`` (a tuple) does."""
        return Shape(self._shape)

    @property
    def dtype(self) -> dtypes.DType:
        return self._dtype

    @property
    def ndim(self) -> int:
        return len(self._shape)

    def dim(self) -> int:
        return len(self._shape)

    @property
    def size(self) -> int:
        n = 1
        for d in self._shape:
            if d < 0:
                return -1
            n *= d
        return n

    @property
    def T(self):
        return self.transpose(list(range(self.ndim))[::-1])

    def _set_spec(self, shape: Iterable[int], dtype: Any) -> None:
        self._shape = tuple(int(d) for d in shape)
        self._dtype = dtypes.convert_dtype(dtype)

    def __repr__(self) -> str:
        kind = "Parameter" if isinstance(self, Parameter) else "Variable"
        return (
            f"{kind}(name={self.name}, shape={self.shape}, dtype={self.dtype}, "
            f"persistable={self.persistable}, stop_gradient={self.stop_gradient})"
        )

    __str__ = __repr__

    def __bool__(self) -> bool:
        raise symbolic_value_error(self.name, "the truth value")

    def __int__(self) -> int:
        raise symbolic_value_error(self.name, "int()", True)

    def __float__(self) -> float:
        raise symbolic_value_error(self.name, "float()", True)

    def __complex__(self) -> complex:
        raise symbolic_value_error(self.name, "complex()", True)

    def __array_function__(self, func, types, args, kwargs):
        """A NumPy function given a variable (``np.sum(x.numpy())`` in traced code: converted
        code keeps ``.numpy()`` symbolic): a clear error at the user's line."""
        what = f"numpy.{getattr(func, '__name__', 'function')}"
        raise SymbolicValueError(
            f"{what} cannot take the symbolic variable {self.name!r} while the program is "
            "being built: NumPy computes on concrete arrays, and a traced value has none "
            "until the program runs; use the rt op (rt.sum, rt.mean...) so the program "
            "computes it, or call NumPy on the tensor the traced function returns",
            user_location(),
        )

    def __array__(self, dtype=None, copy=None):
        raise SymbolicValueError(
            f"numpy cannot convert the symbolic variable {self.name!r} to an array while the "
            "program is being built (np.asarray, np.array): it has no value until the program "
            "runs; compute with rt ops, or convert the tensor the traced function returns",
            user_location(),
        )

    def __format__(self, spec: str) -> str:
        if spec:
            raise symbolic_value_error(self.name, f"format(..., {spec!r})", True)
        return repr(self)

    def __len__(self) -> int:
        if not self._shape or self._shape[0] < 0:
            raise TypeError(
                f"len() of variable {self.name!r} with shape {self.shape} is not "
                "known while building the program; use rt.shape(x)[0]"
            )
        return self._shape[0]

    def __index__(self) -> int:
        raise symbolic_value_error(self.name, "the Python index value")

    def __contains__(self, value) -> bool:
        raise symbolic_value_error(
            self.name, "'value in tensor' (a Python bool; rt.any(x == value) is a tensor)"
        )

    def __iter__(self):
        """Iterate over a known first dimension (a Python loop, unrolled into the program).
        Without ``__iter__``, Python would index ``x[0], x[1], ...`` until an IndexError
        that a symbolic variable of unknown length never raises: a loop without end."""
        if not self._shape:
            raise TypeError(f"iteration over the 0-D variable {self.name!r}")
        if self._shape[0] < 0:
            raise symbolic_value_error(self.name, "the length (to iterate over it)")
        return (self[i] for i in range(self._shape[0]))

    def numpy(self) -> Variable:
        """The variable itself: dygraph code that reads values with ``.numpy()`` (``if
        x.numpy()[0] > 5:``) stays symbolic while tracing, so it converts unchanged."""
        return self

    def item(self, *index: int) -> Variable:
        """The element as a 0-D variable (symbolic, like ``numpy()``): one int is a position
        in the flattened variable, one int per dim an element, none the only element."""
        from autostatic_runtime.ops.manipulation import reshape
        from autostatic_runtime.tensor import item_position

        if all(n >= 0 for n in self._shape):  # (an unknown dim: checked when it runs)
            item_position(tuple(self._shape), index)
        if len(index) == 1:
            return reshape(self, [-1])[index[0]]
        return self[index] if index else reshape(self, [])

    def backward(self, grad_tensor: Any = None, retain_graph: bool = False) -> None:
        """Inside a training step being traced (``to_static``): append this tensor's gradient
        ops and add them to the ``.grad`` of every trainable tensor it depends on (see
        ``static.step``)."""
        from autostatic_runtime.static.step import current

        steps = current()
        if steps is None:
            raise StaticBuildError(
                f"backward() of the static variable {self.name!r} outside a traced training "
                "step: in a static program use rt.static.append_backward(loss) or "
                "opt.minimize(loss); or put the step (forward, loss.backward(), opt.step()) in "
                "a function and compile it with autostatic.to_static",
                user_location(),
            )
        steps.backward(self, grad_tensor)

    def clear_gradient(self, set_to_zero: bool = True) -> None:
        """An eager tensor's method: while tracing, a clear error (an ``AssertionError``, as
        Paddle's)."""
        raise _dygraph_only(self, "clear_gradient()")

    clear_grad = clear_gradient

    def gradient(self) -> None:
        """An eager tensor's method: while tracing, a clear error (an ``AssertionError``)."""
        raise _dygraph_only(self, "gradient()")

    def detach(self) -> Variable:
        from autostatic_runtime.ops.elementwise import assign

        out = assign(self)
        out.stop_gradient = True
        return out

    # -- in-place updates (x[i] = v, set_value): the Python object moves to the new value --
    def _snapshot(self) -> Variable:
        """Hand this object's current value to a new Variable object, which every op built
        so far now refers to; ``self`` is then free to become the updated value."""
        old = self._alias()
        self.block.program._swap_references(self, old)
        return old

    def _alias(self) -> Variable:
        """A new Python object for the same program variable (``x[i] = v`` on it moves it,
        never this one)."""
        new = Variable(
            self.block,
            self.name,
            self._shape,
            self._dtype,
            self.persistable,
            self.stop_gradient,
            self.is_data,
        )
        new.op, new.trainable, new.initializer = self.op, self.trainable, self.initializer
        new._weak = self._weak
        return new

    def _replace(self, new: Variable) -> Variable:
        """Make this object stand for ``new`` (after ``_snapshot``)."""
        if self.persistable:
            return self.set_value(new)
        self.block.program._swap_references(new, self)
        self.block = new.block
        self.name = new.name
        self._shape, self._dtype = new._shape, new._dtype
        self.stop_gradient, self.op, self.is_data = new.stop_gradient, new.op, False
        self._weak = new._weak
        return self

    def _inplace_assign(self, y: Any) -> Variable:
        """Paddle's ``x._inplace_assign(y)``: this variable stands for a copy of ``y`` from
        here on (gradients flow to ``y``); a persistable one is written in place."""
        return self.set_value(y)

    def set_value(self, value: Any) -> Variable:
        """Overwrite this variable's value from here on in the program (an ``assign`` op).

        A persistable variable (a parameter, a running statistic) is written in place, so
        the new value is kept in the scope across runs.
        """
        from autostatic_runtime.ops.elementwise import assign

        if not self.persistable:
            self._snapshot()
            return self._replace(assign(value))
        from autostatic_runtime.static.backward import current_role

        source = value if isinstance(value, Variable) else assign(value)
        block = self.block.program.current_block()
        role = current_role()  # an optimizer's write is dropped by clone(for_test=True)
        block.append_op("assign", [source], [self], {} if role == "forward" else {"op_role": role})
        return self


class Parameter(Variable):
    """A trainable persistable Variable (created in both the main and startup programs)."""

    __slots__ = ("optimize_attr", "regularizer")

    def __init__(
        self, block: Block, name: str, shape: Iterable[int], dtype: Any, trainable: bool = True
    ):
        super().__init__(block, name, shape, dtype, persistable=True, stop_gradient=not trainable)
        self.trainable = trainable
        self.optimize_attr = {"learning_rate": 1.0}
        self.regularizer = None


class Literal:
    """A constant operand written into an op (a Python scalar such as the 1 in ``x + 1``)."""

    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Literal)
            and type(other.value) is type(self.value)
            and other.value == self.value
        )

    def __hash__(self) -> int:
        return hash((type(self.value), self.value))

    def __repr__(self) -> str:
        return repr(self.value)


class Operator:
    """One op application: ``type``, positional ``inputs`` (Variables or Literals),
    ``outputs`` (Variables), ``attrs`` (plain data; sub-blocks as Block objects) and
    ``location`` = (file, line, function) of the user's code that created it.
    """

    __slots__ = ("block", "type", "inputs", "outputs", "attrs", "location")

    def __init__(
        self,
        block: Block,
        type: str,
        inputs: list,
        outputs: list,
        attrs: dict,
        location: tuple | None,
    ):
        self.block = block
        self.type = type
        self.inputs = inputs
        self.outputs = outputs
        self.attrs = attrs
        self.location = location

    def input_names(self) -> list[str | None]:
        return [v.name if isinstance(v, Variable) else None for v in self.inputs]

    def output_names(self) -> list[str]:
        return [v.name for v in self.outputs]

    def sub_blocks(self) -> list[Block]:
        return sorted((v for v in self.attrs.values() if isinstance(v, Block)), key=lambda b: b.idx)

    def __repr__(self) -> str:
        from autostatic_runtime.static.printer import format_op

        return format_op(self)


class Block:
    """An ordered list of Operators plus the Variables they define."""

    def __init__(self, program: Program, idx: int, parent_idx: int):
        self.program = program
        self.idx = idx
        self.parent_idx = parent_idx
        self.vars: dict[str, Variable] = {}
        self.ops: list[Operator] = []

    @property
    def parent(self) -> Block | None:
        return None if self.parent_idx < 0 else self.program.blocks[self.parent_idx]

    def var(self, name: str) -> Variable:
        """The variable ``name`` defined in this block or an ancestor."""
        block: Block | None = self
        while block is not None:
            found = block.vars.get(name)
            if found is not None:
                return found
            block = block.parent
        raise KeyError(f"no variable {name!r} in block {self.idx} or its parents")

    def has_var(self, name: str) -> bool:
        try:
            self.var(name)
            return True
        except KeyError:
            return False

    def create_var(
        self,
        name: str | None = None,
        shape=(),
        dtype: Any = "float32",
        persistable: bool = False,
        stop_gradient: bool = False,
        is_data: bool = False,
    ) -> Variable:
        name = name or self.program.unique_name("tmp")
        v = Variable(self, name, shape, dtype, persistable, stop_gradient, is_data)
        self.vars[name] = v
        return v

    def create_parameter(self, name: str, shape, dtype: Any, trainable: bool = True) -> Parameter:
        p = Parameter(self, name, shape, dtype, trainable)
        self.vars[name] = p
        return p

    def append_op(
        self,
        type: str,
        inputs: list,
        outputs: list,
        attrs: dict | None = None,
        location: tuple | None = None,
    ) -> Operator:
        op = Operator(
            self,
            type,
            list(inputs),
            list(outputs),
            dict(attrs or {}),
            location if location is not None else user_location(),
        )
        # a cond carries a two-typed value through (an op in a branch that reads it is
        # checked when appended)
        two_typed = type != "cond" and self.program._two_typed
        for v in op.inputs:
            if v.__class__ is not Literal and v.block is not self and not self._sees(v):
                raise _out_of_scope(v, op)
            if two_typed and v.__class__ is not Literal and v.name in two_typed:
                raise StaticBuildError(
                    f"'{op.type}' reads {two_typed[v.name]}; such a value can be returned "
                    "(or kept in a list or dict that is returned), but an op needs one rank "
                    "and dtype: give it the same rank and dtype in both branches",
                    op.location,
                )
        for v in op.outputs:
            v.op = op
        self.ops.append(op)
        self.program._bump()
        return op

    def _sees(self, var: Variable) -> bool:
        """Whether ``var`` is in scope here: made in an ancestor block, or its name found
        in this block or an ancestor (as the executors look it up)."""
        block = self.parent
        while block is not None:
            if block is var.block or block.vars.get(var.name) is not None:
                return True
            block = block.parent
        return self.vars.get(var.name) is not None

    def all_parameters(self) -> list[Parameter]:
        return [v for v in self.vars.values() if isinstance(v, Parameter)]

    def __repr__(self) -> str:
        return f"<Block {self.idx} (parent {self.parent_idx}): {len(self.ops)} ops>"


_program_ids = itertools.count()


class Program:
    """A static program: blocks of ops; built under ``program_guard``, run by an Executor."""

    def __init__(self) -> None:
        self.blocks: list[Block] = [Block(self, 0, -1)]
        self.current_block_idx = 0
        self._counter = itertools.count()
        self._version = 0
        self.id = next(_program_ids)
        self.random_seed = 0
        self._is_test = False
        #: a run-time guard, not saved: a ``while`` op running more iterations raises
        #: (``to_static(..., max_loop_iterations=n)`` states it; ``autostatic.load`` sets it
        #: on loaded programs: 1,000,000 unless told otherwise)
        self.max_loop_iterations: int | None = None
        #: while building: the ``cond`` outputs whose two branches give different ranks or
        #: dtype kinds (name -> what they give): they can be returned, not computed with
        self._two_typed: dict[str, str] = {}

    # -- structure ---------------------------------------------------------------------------
    def global_block(self) -> Block:
        return self.blocks[0]

    def current_block(self) -> Block:
        return self.blocks[self.current_block_idx]

    def block(self, idx: int) -> Block:
        return self.blocks[idx]

    @property
    def num_blocks(self) -> int:
        return len(self.blocks)

    def _create_block(self, parent_idx: int | None = None) -> Block:
        parent = self.current_block_idx if parent_idx is None else parent_idx
        block = Block(self, len(self.blocks), parent)
        self.blocks.append(block)
        self.current_block_idx = block.idx
        self._bump()
        return block

    def _rollback(self) -> None:
        self.current_block_idx = self.current_block().parent_idx

    def unique_name(self, prefix: str) -> str:
        return f"{prefix}_{next(self._counter)}"

    def _bump(self) -> None:
        self._version += 1

    @property
    def version(self) -> int:
        """Changes whenever an op or block is added (executors cache compiled code per version)."""
        return self._version

    def all_parameters(self) -> list[Parameter]:
        return [p for b in self.blocks for p in b.all_parameters()]

    def _swap_references(self, old: Variable, new: Variable) -> None:
        """Make every op and block entry that refers to the object ``old`` refer to ``new``."""
        for block in self.blocks:
            if block.vars.get(old.name) is old:
                block.vars[old.name] = new
            for op in block.ops:
                op.inputs = [new if x is old else x for x in op.inputs]
                op.outputs = [new if x is old else x for x in op.outputs]
        self._bump()

    def list_vars(self):
        for b in self.blocks:
            yield from b.vars.values()

    # -- copies and text -------------------------------------------------------------------
    def clone(self, for_test: bool = False) -> Program:
        """A deep copy (same var names). ``for_test=True`` marks ops as inference and drops
        ops that only training needs (backward and optimizer ops)."""
        from autostatic_runtime.static.serialize import program_from_desc, program_to_desc

        copy = program_from_desc(program_to_desc(self))
        copy.random_seed = self.random_seed
        copy.max_loop_iterations = self.max_loop_iterations
        if for_test:
            copy._is_test = True
            for block in copy.blocks:
                block.ops = [
                    op for op in block.ops if op.attrs.get("op_role", "forward") == "forward"
                ]
                for op in block.ops:
                    if "training" in op.attrs:
                        op.attrs["training"] = False
                    if "is_test" in op.attrs:
                        op.attrs["is_test"] = True
        return copy

    def serialize(self) -> bytes:
        """The program as ProgramDesc protobuf bytes."""
        from autostatic_runtime.static.serialize import program_to_desc

        return program_to_desc(self).SerializeToString(deterministic=True)

    serialize_to_string = serialize

    @staticmethod
    def parse(data: bytes) -> Program:
        """A Program from ``serialize()`` bytes (clear error when the bytes are not one)."""
        from autostatic_runtime.static.serialize import parse_program

        return parse_program(data)

    parse_from_string = parse

    def to_string(self, with_locations: bool = True) -> str:
        from autostatic_runtime.static.printer import format_program

        return format_program(self, with_locations)

    def __str__(self) -> str:
        return self.to_string()

    def __repr__(self) -> str:
        return f"<Program {self.id}: {len(self.blocks)} blocks, {len(self.global_block().ops)} ops>"


def _out_of_scope(var: Variable, op: Operator) -> StaticBuildError:
    """The error for ``op`` reading a tensor another branch or loop body made: a value kept
    where the converter cannot see it (a global list, an object's attribute, a closure)."""
    made = var.op.location if var.op is not None else None
    where = f" (made at {made[0]}:{made[1]})" if made else ""
    return StaticBuildError(
        f"'{op.type}' reads the tensor {var.name!r}{where}, which was computed inside a "
        "tensor-dependent 'if' branch or loop body and kept outside it (in a global list, "
        "an object's attribute or another container the converter does not see); return "
        "it from the branch or loop as a local variable instead",
        op.location,
    )


def _dygraph_only(var: Variable, method: str) -> DygraphOnlyError:
    return DygraphOnlyError(
        f"{method} of {var.name!r}: it is a symbolic variable of a program being built, and "
        f"{method} works on eager tensors only (gradients of a traced step are read after it "
        "runs); remove the call from the converted function, or call "
        "autostatic.enable_to_static(False) to run it eagerly",
        user_location(),
    )
