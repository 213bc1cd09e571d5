"""Distinct causes of the idiom suite's expected failures, one constant each, used as the
``reason`` of strict xfail marks: "<category>: [internal: ]<cause>".

Categories follow the suite's kinds (docs/converter.md, "The idiom suite"):
to_tensor (1), early-return (2), containers (3), logical (4), loop-vars (5), loop-jumps (6),
walrus (7), shapes (8), ternary (9), loop-dtype (10), api (11), closures (12), generic.
"internal:" marks an exception that is not a clear user-facing error (KeyError, TypeError,
AttributeError, ValueError from inside autostatic, or a malformed program it built itself).

When a feature lands, delete the constant and the XFAIL entries that use it; strict marks
make a test that starts to pass fail until then.
"""

# 1 -- to_tensor / assign / Python values turned into tensors
TO_TENSOR_OF_VARIABLE = (
    "to_tensor: internal: rt.to_tensor/rt.assign of a symbolic Variable, or of a list/tuple "
    "holding Variables, raises TypeError \"unsupported dtype dtype('O')\" "
    "(autostatic_runtime/dtypes.py convert_dtype)"
)

# 2 -- early return from tensor ifs
RETURN_PLACEHOLDER_STRUCTURE = (
    "early-return: a 'return' of a tuple/list/dict under a tensor if: the path that has not "
    "returned carries __retval as ONE UNDEFINED placeholder, so cond sees different structures "
    "and raises StaticBuildError \"returns a tuple of 2 but the false branch returns a tuple "
    "of 2\" (_describe hides the inner difference)"
)

# 3 -- containers and attributes changed in tensor branches / loops
LIST_MUTATION_IN_COND = (
    "containers: internal: list.append/extend/xs[i]=v inside a tensor if (also under a tensor "
    "'break' flag in an unrolled Python loop) is not a cond output: the list keeps a "
    "sub-block Variable and the program fails with ProgramFormatError \"op 'concat' in block 0 "
    "uses variable 'exp_2', which the program does not define\""
)
LIST_POP_BOTH_BRANCHES = (
    "containers: SILENT WRONG RESULT: xs.pop() in the true and xs.pop(0) in the false branch of "
    "a tensor if both run on the same Python list while tracing, so the list loses two items"
)
DICT_ITEM_ONE_BRANCH = (
    "containers: internal: d[k] = v inside a tensor if where the branches do not assign the "
    "same keys (one branch only; different keys per branch in a tensor for; a Python loop "
    "over d.items() in one branch) raises KeyError \"no variable 'elementwise_add_2' in "
    "block 2 or its parents\" (static/program.py)"
)
TENSOR_SETITEM_IN_COND = (
    "containers: internal: x[i] = v on a tensor inside a tensor if / for-range body raises "
    "KeyError \"no variable 'set_value_5' in block 1 or its parents\" (static/program.py)"
)
TENSOR_SETITEM_IN_WHILE = (
    "containers: internal: x[i] = v on a tensor inside a tensor while: ExecutionError "
    "\"compile failed: KeyError: variable 'loop_var_16' is used before any op computes it\""
)
ATTR_ASSIGN_IN_COND = (
    "containers: obj.attr = ... (self.x in a Layer, SimpleNamespace, plain object) inside a "
    "tensor if/while/for: StaticBuildError \"assigning 'self.last' inside an 'if' whose "
    "condition is a tensor is not supported yet\""
)

# 4 -- and / or / not with Python operands
OR_WITH_NONE = (
    "logical: internal: `tensor_cond or None` (Python operand falsy None) converts None with "
    "to_tensor and raises TypeError \"unsupported dtype dtype('O')\" instead of Python "
    "truthiness"
)

# 5 -- variables first bound inside a tensor loop
FIRST_BOUND_IN_LOOP = (
    "loop-vars: a variable first assigned inside a tensor while/for and read after it: "
    "StaticBuildError \"loop must iterate at least once to initialize 'last' ...; set it "
    "before the loop\""
)

# 6 -- return / break / continue in tensor loops
RETURN_IN_TENSOR_LOOP = (
    "loop-jumps: 'return' inside a tensor-dependent while/for: StaticBuildError \"'return' "
    "inside a loop whose condition is a tensor is not supported yet\""
)
JUMP_FLAG_NOT_INITIALIZED = (
    "loop-jumps: the converter's own break/continue flag is first set inside the outer loop: "
    "StaticBuildError \"loop must iterate at least once to initialize '__continue_1'\" "
    "(continue-then-break in a for over range; a break or return in an inner tensor loop "
    "nested in a tensor for -- the flag is bound in the outer body, not before the outer loop)"
)
RETURN_IN_WHILE_TRUE = (
    "loop-jumps: returns inside `while True:` with tensor conditions: StaticBuildError "
    "\"returns a tuple of 3 but the false branch returns a tuple of 3\" (same placeholder "
    "structure bug as early-return)"
)
TRACED_INT_DTYPES = (
    "loop-jumps: Python-int-valued traced numbers disagree in dtype: a range() item is int64 "
    "but len(x) is int32, so `found = i` / `found = len(x)` in for...else branches raises "
    "StaticBuildError \"output 0 is int32 in the true branch but int64 in the false branch\""
)

# 7 -- walrus
WALRUS_IN_WHILE_TEST = (
    "walrus: a name bound by := inside a tensor loop -- in the while test (`while (s := "
    "f(x)) > c:`) or in an `and` in the body (`if flag and (m := rt.max(row)) > c:`) -- is "
    "taken for a loop variable first bound in the loop: StaticBuildError \"loop must "
    "iterate at least once to initialize 's'\""
)
WALRUS_COUNTER_HANGS = (
    "walrus: HANG: `while (i := i + 1) < n:` -- the walrus lands in the generated __cond_ "
    "function, which binds i locally and cannot return it, so the while op never advances "
    "i and the static loop never ends (eager ends)"
)

# 8 -- shapes as traced values
CREATION_WITH_TRACED_DIMS = (
    "shapes: rt.full/zeros/ones with a traced dim (x.shape[0] of a None dim, rt.shape(x)[i], "
    "or the whole rt.shape(x)): OpError \"zeros: shape must be a list of ints, got "
    "[Variable(...), 1]\""
)
EXPAND_WITH_TRACED_DIMS = (
    "shapes: internal: rt.expand(t, [rt.shape(x)[0], 3]) raises TypeError \"symbolic variable "
    "'getitem_1' cannot be used as a Python index\" (static/program.py __index__)"
)
TILE_WITH_TRACED_DIMS = (
    "shapes: rt.tile(t, [x.shape[0], 1]) with a traced dim: OpError \"shape: getitem_2 is only "
    "computed when the program runs, but shapes ... must be known while building it\""
)
ARANGE_WITH_TRACED_END = (
    "shapes: internal: rt.arange(x.shape[0]) / rt.arange(rt.shape(x)[0]) raises TypeError "
    "\"operand 'Variable' does not support ufuncs\" (creation.py arange infer)"
)

SLICE_WITH_SYMBOLIC_BOUND = (
    "shapes: internal: slicing with a symbolic bound -- x[: x.shape[0] // 2] with a None dim, "
    "or x[i : i + 1] with a Python counter the while op promoted to a tensor -- raises "
    "TypeError \"symbolic variable 'elementwise_floordiv_2' cannot be used as a Python "
    "index\" (static/program.py __index__)"
)

# 9 -- ternaries whose untaken arm is nan/inf
TERNARY_NAN_GRAD = (
    "ternary: `f(x) if t else g(x)` becomes where(t, f(x), g(x)); the untaken arm's nan/inf "
    "gradient (sqrt/pow/reciprocal/division/log of a negative or zero) leaks into x.grad "
    "(0 * nan), where eager gives finite gradients"
)

# 10 -- loop variables changing dtype/shape; Python numbers starting loop variables
PY_INT_START_PROMOTED_INT64 = (
    "loop-dtype: a Python 0 starting a loop variable becomes an int64 tensor, so "
    "`s = s * 10 + x[i]` with int32 x gives int64 (eager: int32, Python scalars do not "
    "promote)"
)
PY_INT_START_THEN_FLOAT = (
    "loop-dtype: `total = 0` (or `p = 1`) then adding float tensors in a tensor loop: "
    "StaticBuildError \"'total' has dtype int64 before the loop, but float32 after one "
    "iteration\" (eager/Paddle: the Python number takes the tensor's dtype)"
)
NONE_START_LOOP_VAR = (
    "loop-dtype: a loop variable starting as None (`best = None; ... best = row`): "
    "StaticBuildError \"'best' has shape [] before the loop, but [3] after one iteration\""
)
BUILTIN_MAX_OF_PROMOTED = (
    "loop-dtype: internal: builtin max(count, 1) after a tensor loop promoted `count` raises "
    "TypeError \"the truth value of the symbolic variable ... is not known\" "
    "(static/program.py __bool__)"
)

# 11 -- Paddle APIs, not_to_static, recursion
API_ADD_N = "api: rt.add_n is missing (AttributeError; eager fails too)"
API_SEQUENCE_MASK = (
    "api: rt.nn.functional.sequence_mask is missing (AttributeError; eager fails too)"
)
API_GATHER_TREE = "api: rt.nn.functional.gather_tree is missing (AttributeError; eager fails too)"
API_METRIC_ACCURACY = "api: rt.metric.accuracy is missing (no rt.metric; eager fails too)"
NOT_TO_STATIC_BOUND_METHOD = (
    "api: internal: autostatic.not_to_static(obj.method) on a bound method raises "
    "AttributeError \"'method' object has no attribute '__autostatic_not_to_static__'\" "
    "(eager fails too)"
)
RECURSIVE_HELPER_NOT_CONVERTED = (
    "api: internal: a recursive helper with a tensor `if` (`_apply_n(x, depth)` calling "
    "itself on depth - 1): the recursive calls run the unconverted body, so the `if` calls "
    "bool() on a Variable: TypeError \"the truth value of the symbolic variable "
    "'greater_than_1' is not known\""
)

# 12 -- closures and Python objects carried by loops
CLOSURE_SEES_STALE_VALUE = (
    "closures: SILENT WRONG RESULT: a nested def reading a variable that a tensor for loop "
    "carries sees the value from before the loop (generated body takes it as a parameter; the "
    "closure reads the outer binding)"
)
CLOSURE_IN_WHILE_TEST_HANGS = (
    "closures: HANG: a closure called in the while test reads a variable the body updates "
    "(`while energy() > c: h = h * 0.5`), sees the stale value, so the static loop never ends"
)
NONLOCAL_IN_TENSOR_LOOP = (
    "closures: internal: a nested def doing `nonlocal count; count = count + v`, called under "
    "a tensor if inside a tensor for: KeyError \"no variable 'elementwise_add_13' in block 0\""
)
DATACLASS_LOOP_VAR = (
    "closures: internal: a dataclass / plain object holding tensors carried by a tensor loop "
    "is flattened to a Variable: AttributeError \"'Variable' object has no attribute "
    "'total'\" (convert_ops.py convert_while_loop body lambda)"
)
DATACLASS_COND_EQ = (
    "closures: internal: cond compares non-tensor leaves with ==; for a dataclass of tensors "
    "returned by both branches, __eq__ compares tensors and bool() of the result raises "
    "TypeError \"the truth value of the symbolic variable 'equal_11' is not known\""
)
FUNCTION_CHOSEN_BY_TENSOR_MESSAGE = (
    "closures: the (right) StaticBuildError for a nested def chosen by a tensor if shows "
    "generated names, truncated: \"output 0 is <function __autostatic_factory__.<locals in "
    "one branch\" -- it should name the user's function 'act'"
)

# generic
FLOAT_KEEPS_GRADIENT = (
    "generic: float(t) of a symbolic tensor is a cast that keeps the gradient path; eager "
    "float() is a Python number (no gradient), so x.grad differs"
)
