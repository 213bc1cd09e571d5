"""Annotations on AST nodes: a small dict stored on the node under ``_as_anno``.

The analyses write their results here and the transformers read them, so nothing has to be
recomputed or threaded through function arguments::

    anno.set(node, anno.LIVE_OUT, frozenset({"x"}))
    anno.get(node, anno.LIVE_OUT)            # raises KeyError if missing
    anno.get(node, anno.LIVE_OUT, None)      # or returns the default

Keys are the string constants below; their meaning is documented next to each one.
"""

from __future__ import annotations

from typing import Any

_ATTR = "_as_anno"
_RAISE = object()

# --- activity (autostatic.pyct.activity); every value is a scope.Scope -----------------------
SCOPE = "scope"  # every statement (and ExceptHandler, match_case): the whole statement
TEST_SCOPE = "test_scope"  # If/While: the test, walrus bindings in it included
BODY_SCOPE = "body_scope"  # compound stmts, ExceptHandler, match_case, defs: the body
ORELSE_SCOPE = "orelse_scope"  # If/While/For/Try: the else block (empty Scope if none)
ITER_SCOPE = "iter_scope"  # For: the iterable expression (evaluated once)
TARGET_SCOPE = "target_scope"  # For: the loop target (bound on every iteration)
ITEMS_SCOPE = "items_scope"  # With: all context expressions and their ``as`` targets
HANDLERS_SCOPE = "handlers_scope"  # Try: all except clauses together
FINALLY_SCOPE = "finally_scope"  # Try: the finally block (empty Scope if none)
SUBJECT_SCOPE = "subject_scope"  # Match: the subject expression
PATTERN_SCOPE = "pattern_scope"  # match_case: pattern + guard; ExceptHandler: `except E as e`

# --- liveness (autostatic.pyct.liveness); values are frozensets of symbols ------------------
LIVE_IN = "live_in"  # symbols live right before the statement
LIVE_OUT = "live_out"  # live right after it completes normally (jumps: at their target)
LOOP_LIVE_IN_BODY = "loop_live_in_body"  # While/For: live at the start of the body
LOOP_LIVE_IN_HEADER = "loop_live_in_header"  # While/For: live before each test / next()

# --- reaching definitions (autostatic.pyct.reaching_defs); frozensets of symbols ------------
DEFINED_IN = "defined_in"  # bound on every path reaching the statement
MAYBE_DEFINED_IN = "maybe_defined_in"  # bound on some path reaching the statement
DEFINED_OUT = "defined_out"  # bound on every path leaving it normally (simple: after it)
MAYBE_DEFINED_OUT = "maybe_defined_out"  # bound on some path leaving it normally
LOOP_DEFINED_IN_HEADER = "loop_defined_in_header"  # While/For: before each test / next()
LOOP_MAYBE_DEFINED_IN_HEADER = "loop_maybe_defined_in_header"

# --- parser and function-level results --------------------------------------------------------
DECORATORS = "decorators"  # FunctionDef parsed by parser: tuple of its decorator nodes
IS_DECORATOR = "is_decorator"  # True on each such decorator expression
FUNCTION_INFO = "function_info"  # function node: the analyze() FunctionInfo
GENERATED = "generated"  # FunctionDef the converter made (branch/loop functions)
BREAK_CHECK = "break_check"  # the `if <flag> is True: break` ending a lowered for body: flag
CAPTURED = "captured"  # user function: names its closures use (see transformers.base)
JUMPS = "jumps"  # statement: (first jump leaving it, first return/yield/await in it), a cache
BODY_CALLS = "body_calls"  # While/For: the calls in its body as the user wrote it (a cache)
MUTATED = "mutated"  # statement: the names it changes in place (xs.append, d[k] = v), a cache
CALLS = "calls"  # statement: the calls in it (nested function bodies aside), a cache
PYTHON_IF = "python_if"  # If whose test is always a Python bool (the converter's, `x in s`)
JUMP_GUARD = "jump_guard"  # If made by a lowering pass: its (empty) else is "jumped already"
#   (a for body's own guard: the break flag)
HAND_OVER = "hand_over"  # the hand_over statement after a for left by a flag: the flag
RETURN_BREAK = "return_break"  # Break the return lowering made (a return in a loop): its flag
LAZY = "lazy"  # nested FunctionDef kept as written, with an entry check (nested_functions)


def set(node: Any, key: str, value: Any) -> None:
    """Annotate ``node`` with ``key = value``."""
    d = node.__dict__.get(_ATTR)
    if d is None:
        node.__dict__[_ATTR] = {key: value}
    else:
        d[key] = value


def get(node: Any, key: str, default: Any = _RAISE) -> Any:
    """The annotation ``key`` of ``node``; ``default`` (or KeyError) when it is missing."""
    d = node.__dict__.get(_ATTR)
    if d is not None and key in d:
        return d[key]
    if default is _RAISE:
        raise KeyError(f"{type(node).__name__} node has no annotation {key!r}")
    return default


def has(node: Any, key: str) -> bool:
    """Whether ``node`` carries the annotation ``key``."""
    d = node.__dict__.get(_ATTR)
    return d is not None and key in d


def delete(node: Any, key: str) -> None:
    """Remove the annotation ``key`` from ``node`` if present."""
    d = node.__dict__.get(_ATTR)
    if d is not None:
        d.pop(key, None)


def keys(node: Any) -> frozenset[str]:
    """All annotation keys present on ``node``."""
    return frozenset(node.__dict__.get(_ATTR, ()))


def copy(src: Any, dst: Any, *keys_: str) -> None:
    """Copy the given annotations (all when none are named) from ``src`` to ``dst``."""
    d = src.__dict__.get(_ATTR)
    if not d:
        return
    for k in keys_ or tuple(d):
        if k in d:
            set(dst, k, d[k])


def clear(node: Any) -> None:
    """Remove every annotation from ``node``."""
    node.__dict__.pop(_ATTR, None)
