"""``for`` loops: the user's loop for Python values, an index-driven ``while`` when symbolic.

Before::

    for i, row in enumerate(x):
        s = s + row * i
    else:
        done = True

After (a loop with an ``else``; see below for the others)::

    __loop_body_3 = lambda i, row, s: (s + row * i,)   # i, row: the item; s: loop variable
    ...
    # the iterable, evaluated once; symbolic: a tensor, or enumerate/zip/range of one
    if _jst.is_symbolic_iterable((__iter_0 := _jst.convert_enumerate(enumerate, x))):
        (s,) = _jst.convert_for_loop(__iter_0, __loop_body_3, (s,), (), ('s',), where,
                                     unpack=2)
        done = True                                   # a while op over an int64 index
    else:
        for i, row in __iter_0:                       # exactly the user's loop
            s = s + row * i
        else:
            done = True

(a body of assignments is a lambda; a tuple of names is the body's first parameters,
``unpack=<their number>``, and any other tuple target is unpacked from an ``__item``
parameter; a name target read after the
loop is a loop variable, ``target=<its position>``, and each item goes to its place). A
lowered ``break`` flag is passed as ``breaks=<its position>``: the loop stops once it is set.
When its symbolic form is one call and it has no ``else``, a loop is the user's loop over
``_jst.python_items(iterable)`` (no items for a symbolic iterable), leaving at ``if <flag> is
not False: break`` when a flag may leave it, then one assignment, ``s, = <that call on
__iter_0> if (__iter_0 := _jst.hand_over(__iter_0[, flag])) is not None else (s,)`` (see
``_handed_over``; an outer loop of a nest left by one flag leaves when its inner loop's
``hand_over`` stops its items). A target the call carries that may be unbound before the
loop starts as ``_jst.builtins.locals().get(name, _jst.UNDEFINED)``: the item where the
user's loop broke on a tensor flag, else ``UNDEFINED`` (``convert_for_loop`` starts it shaped
like an item).
Otherwise a loop left by a flag steps an iterator of its own (``for t in (__iter_0 :=
iter(__iter_0)):``) and, after each item, ``if <flag> is not False:`` calls
``convert_for_loop`` on that iterator and leaves: nothing more runs after a Python ``break``,
and after a tensor one each remaining item's body runs under ``if not <flag>`` (the target
keeps the item where it broke). Inside a branch or loop function a ``for`` is the call
alone, which steps Python iterables too.
``range``/``enumerate``/``zip`` are routed only where the name is not a local of the
function; the runtime also checks that the name still means the builtin. A loop over an
iterable that is never symbolic (a list display, a comprehension, ``range(3)``...) is left
as written. A loop target that
is read after the loop and may be unbound before it starts from ``loop_placeholder`` (a
value shaped like the items; ``convert_for_loop`` makes it from an ``UNDEFINED`` start), so
it can be a ``while`` loop variable. ``x.extend(...)`` and
other mutators on a list bound before the loop are reported (not supported) instead of
silently keeping one
traced iteration's values; on a local list, ``append``/``pop`` are left to
``WhileTransformer``, which carries the list as a tensor array.

This pass runs after ``IfElseTransformer`` (its dispatch ``if`` is on a Python bool) and
before ``WhileTransformer``. It runs the dataflow analysis again on the functions whose loops
it rewrote, and on functions with loops that have none yet (branch functions
``IfElseTransformer`` generated, copies of nested functions), so every loop
``WhileTransformer`` sees has its facts.
"""

from __future__ import annotations

import gast

from autostatic import pyct
from autostatic.pyct import anno
from autostatic.pyct.nodes import walk
from autostatic.pyct.origin import copy_location_deep
from autostatic.pyct.templates import constant, copy_location, name, replace, replace_expr
from autostatic.transformers.base import _node, blocks_of, clone, shallow
from autostatic.transformers.containers import callee, calls_in

#: Builtins whose result a ``for`` may step symbolically -> the runtime function routing them.
ROUTED = {"range": "convert_range", "enumerate": "convert_enumerate", "zip": "convert_zip"}

#: Methods that mutate a Python container in place (rejected in a symbolic ``for``).
MUTATORS = frozenset(
    {"append", "extend", "insert", "pop", "remove", "clear", "add", "update", "setdefault"}
)

#: List methods a symbolic loop expresses with tensor-array ops (the list is carried).
ARRAY_METHODS = frozenset({"append", "extend", "pop"})

_SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef)


def build_for(self, node: gast.For) -> tuple[list, list]:
    """(dual form, functional form) of ``node``; its loop functions are hoisted."""
    from autostatic.transformers.loops import loop_call

    note_body_calls(node)
    flag = _unguard(node)
    body_d, body_f = self.block(node.body)
    orelse_d, orelse_f = self.block(node.orelse)
    python_only = _python_only(_unwrap(node.iter))
    if python_only and flag is None:
        func = shallow(node)
        node.body, node.orelse = body_d, orelse_d
        func.body, func.orelse = body_f, orelse_f
        return [node], [func]
    it = self.ctx.namer.new("iter")
    iterable = _route(self, node.iter)
    body_loop = [s for s in body_f if not anno.get(s, anno.BREAK_CHECK, None)]
    call, ok = loop_call(self, node, None, body_loop, (it, flag))
    checks = _init_target(self, node, it) + _list_checks(self, node)
    symbolic = [copy_location_deep(s, node) for s in checks + call]
    tail = orelse_f if ok else []
    func_for = shallow(node)
    source = node.iter if python_only else iterable
    one_call = ok and not checks and len(call) == 1  # no inputs read before the iterable
    if one_call and not (python_only or node.orelse) and not (flag and _starts_undefined(call[0])):
        return _handed_over(self, node, body_d, call[0], (flag, it), iterable, source)
    if flag is not None:  # the rest of the items go to convert_for_loop once a break set it
        rest = _rest_of_loop(self, node, call, flag, ok)
        body_d = [rest if anno.get(s, anno.BREAK_CHECK, None) else s for s in body_d]
        body_f = [rest if anno.get(s, anno.BREAK_CHECK, None) else s for s in body_f]
        own = node.iter if python_only else name(it)  # a loop never symbolic: its own
        iterator = replace_expr("(it := iter(own))", node, it=it, own=own)
        node.iter = func_for.iter = copy_location(iterator, node.iter)
    else:
        node.iter = func_for.iter = copy_location(name(it), node.iter)
    node.body, node.orelse = body_d, orelse_d
    func_for.body, func_for.orelse = body_f, orelse_f
    if one_call:  # convert_for_loop also steps Python iterables, calling the body function
        functional = [copy_location_deep(_over(call[0], source), node)]
        if _starts_undefined(call[0]) is not None:  # after no item, unbound as in Python
            functional += self.unbind([node.target.id], node)
        functional += tail
    if python_only:
        return [node], functional if one_call else [func_for]
    is_symbolic = replace_expr(  # the iterable evaluated once, as the statement does
        "jst.is_symbolic_iterable(it := iterable)", node, jst=self.ctx.jst, it=it, iterable=iterable
    )
    dual = _node(gast.If, test=is_symbolic, body=symbolic + tail, orelse=[node])
    if not one_call:
        functional = [_node(gast.If, test=is_symbolic, body=symbolic + tail, orelse=[func_for])]
    return [copy_location(dual, node)], [copy_location(s, node) for s in functional]


def _handed_over(self, node: gast.For, body: list, call: gast.stmt, names: tuple, iterable, source):
    """(dual form, functional form) of a ``for`` left by ``flag`` whose symbolic form is one
    ``convert_for_loop`` call: the user's loop over ``python_items`` (no items when the
    iterable is symbolic), leaving once the flag is set, then the call on what ``hand_over``
    gives (the symbolic iterable, or the other items after a tensor ``break``)::

        for x in (__iter_0 := _jst.python_items(xs)):
            ...
            if __break_0 is not False:
                break
        __break_0, s = _jst.convert_for_loop(__iter_0, __loop_body_1, ...) if (__iter_0 :=
            _jst.hand_over(__iter_0, __break_0)) is not None else (__break_0, s)

    A body that ends with an inner such loop left by the same flag has no leave of its own:
    the inner ``hand_over(..., __iter_0)`` stops this loop's items (``python_items(xs,
    True)``) once the flag is set or the inner loop was handed over, so each level of a nest
    left by a ``return`` costs three lines. ``names``: the flag and the iterator's name;
    ``source``: what the functional form steps.
    """
    flag, it = names
    stops = _inner_hand_over(body, flag) if flag else None
    if stops is not None:  # the inner loop's hand_over ends this loop's items
        stops.args.append(name(it))
        body = body[:-1]
    if flag:
        leave = replace("if flag is not False:\n    break", node, flag=flag)
        body = [leave[0] if anno.get(s, anno.BREAK_CHECK, None) else s for s in body]
    node.body = body
    items = "jst.python_items(iterable, True)" if stops else "jst.python_items(iterable)"
    items = replace_expr(items, node.iter, jst=self.ctx.jst, iterable=iterable)
    node.iter = _node(gast.NamedExpr, target=name(it, store=True), value=items)
    template = "jst.hand_over(it, flag)" if flag else "jst.hand_over(it)"
    hand_over = replace_expr(template, node, jst=self.ctx.jst, it=it, flag=flag)
    test = _node(gast.Compare,
        left=_node(gast.NamedExpr, target=name(it, store=True), value=hand_over),
        ops=[_node(gast.IsNot)],
        comparators=[constant(None)],
    )
    after = assign_if(test, _statement_copy(call), node)
    anno.set(after, anno.HAND_OVER, flag)
    functional = [copy_location_deep(_over(call, source), node)]
    if _starts_undefined(call) is not None:  # after no item, unbound as in Python
        functional += self.unbind([node.target.id], node)
    return [node, copy_location_deep(after, node)], functional


def _inner_hand_over(body: list, flag: str) -> gast.Call | None:
    """The ``hand_over`` call of an inner loop left by ``flag`` that ends ``body`` (before
    the leave that follows it), or None."""
    if len(body) < 2 or anno.get(body[-1], anno.BREAK_CHECK, None) != flag:
        return None
    after = body[-2]
    if anno.get(after, anno.HAND_OVER, None) != flag:
        return None
    test = after.value.test if type(after) is gast.Assign else after.test
    return test.left.value


def assign_if(test: gast.expr, call: gast.stmt, loop: gast.stmt) -> gast.stmt:
    """``targets = <call> if test else targets`` when the call's outputs are its plain loop
    variables and bound before ``loop`` on every path (and not deleted in it: the else reads
    them as they are), else ``if test: <call>``."""
    statement = _node(gast.If, test=test, body=[call], orelse=[])
    if type(call) is not gast.Assign:  # a loop with no outputs: an expression statement
        return statement
    targets, loop_vars = call.targets[0], call.value.args[2]
    outputs = getattr(targets, "elts", None)
    if outputs is None or len(outputs) != len(loop_vars.elts):
        return statement
    bound = anno.get(loop, anno.DEFINED_IN, ())
    deleted = getattr(anno.get(loop, anno.BODY_SCOPE, None), "deleted", ())
    for out, var in zip(outputs, loop_vars.elts):
        if not (
            type(out) is gast.Name
            and type(var) is gast.Name
            and out.id == var.id
            and out.id in bound
            and out.id not in deleted
        ):
            return statement
    call.value = _node(gast.IfExp, test=test, body=call.value, orelse=clone(loop_vars))
    return call


def _over(call: gast.stmt, iterable: gast.expr) -> gast.stmt:
    """The ``convert_for_loop`` statement ``call`` stepping ``iterable`` itself: a new
    statement and call, sharing the call's other arguments and ``iterable`` (no pass changes
    them afterwards; each place a shared node sits in is located at the loop's line)."""
    stmt = _statement_copy(call)
    value = stmt.value = shallow(call.value)
    value.args = [iterable, *value.args[1:]]
    return stmt


def _statement_copy(stmt: gast.stmt) -> gast.stmt:
    """A shallow copy of ``stmt`` with annotations of its own."""
    new = shallow(stmt)
    annotations = stmt.__dict__.get("_as_anno")
    if annotations is not None:
        new._as_anno = dict(annotations)
    return new


def _target_slot(stmt: gast.stmt) -> tuple | None:
    """(the loop variables' expressions, the target's position) of a ``convert_for_loop``
    statement whose loop carries its target; None for any other statement."""
    value = getattr(stmt, "value", None)
    if type(value) is not gast.Call:
        return None
    for keyword in value.keywords:
        if keyword.arg == "target":
            return value.args[2].elts, keyword.value.value
    return None


def _starts_undefined(stmt: gast.stmt) -> bool | None:
    """For a ``convert_for_loop`` statement whose loop carries a target that may be unbound
    before it: whether the target starts as the constant ``UNDEFINED`` (True) or as
    ``locals().get(target, UNDEFINED)`` (False: where a Python loop broke, the item it
    stopped at). None when the target is bound, or not carried."""
    slot = _target_slot(stmt)
    if slot is None:
        return None
    start = slot[0][slot[1]]
    if type(start) is gast.Name:
        return None
    return type(start) is gast.Attribute


def _unguard(node: gast.For) -> str | None:
    """The flag of a lowered ``break`` (``if not flag: body`` then ``if flag is True:
    break``), with the body taken out of its guard: the loop stops, or hands its other items
    to ``convert_for_loop``, once the flag is set, so no body runs with it set."""
    if len(node.body) != 2 or not anno.get(node.body[1], anno.BREAK_CHECK, None):
        return None
    guard, check = node.body
    flag = anno.get(check, anno.BREAK_CHECK)
    if type(guard) is not gast.If or anno.get(guard, anno.JUMP_GUARD, None) != flag:
        return None
    node.body = guard.body + [check]
    return flag


def _rest_of_loop(self, node: gast.For, call: list, flag: str, ok: bool) -> gast.If:
    """``if flag is not False: if <flag is symbolic>: <convert_for_loop over the iterator's
    other items>; break``: a ``break`` on a Python value leaves at once, one on a tensor hands
    the rest of the loop to the runtime (each body under ``if not flag``). The target is passed
    as it is now. Not ``ok`` (the loop has no functional form; ``call`` raises why): raises
    after a tensor ``break``."""
    call = [clone(s) for s in call]
    deleted = set(getattr(anno.get(node, anno.BODY_SCOPE, None), "deleted", ()))
    for stmt in call:  # evaluated after an item's body, also on Python values: what the body
        _read_if_bound(self, stmt, deleted)  # may have deleted is read only where bound
    slots = [_target_slot(stmt) for stmt in call]
    # only a tensor flag hands items over: on a Python break the call would still assign its
    # outputs, binding a variable the loop left unbound to UNDEFINED (not ok: it raises why)
    call = [_node(gast.If, test=self.is_symbolic(name(flag)), body=call, orelse=[])]
    for slot in slots:
        if slot:
            target = node.target.id
            read = self.bound_value(target, self.jst("UNDEFINED")) if target in deleted else None
            slot[0][slot[1]] = read if read is not None else name(target)
    test = replace_expr("flag is not False", node, flag=flag)
    leave = copy_location(_node(gast.Break), node)
    return copy_location_deep(_node(gast.If, test=test, body=call + [leave], orelse=[]), node)


def _read_if_bound(self, stmt: gast.stmt, deleted: set) -> None:
    """In the ``convert_for_loop`` call ``stmt``, read each name of ``deleted`` passed as a
    loop variable or input as ``locals().get(name, UNDEFINED)``: a ``del`` in an item's body
    may have unbound it, and Python's loop would not read it here."""
    value = getattr(stmt, "value", None)
    if not deleted or type(value) is not gast.Call or len(value.args) < 4:
        return
    for group in value.args[2:4]:
        elts = getattr(group, "elts", None) or []
        for i, elt in enumerate(elts):
            if type(elt) is gast.Name and elt.id in deleted:
                read = self.bound_value(elt.id, self.jst("UNDEFINED"))
                if read is not None:
                    elts[i] = copy_location(read, elt)


def _unwrap(expr: gast.expr) -> gast.expr:
    """``f(args)`` for ``_jst.convert_call(f)(args)`` (the calls pass wrapped it)."""
    func = getattr(expr, "func", None)
    if (
        isinstance(expr, gast.Call)
        and isinstance(func, gast.Call)
        and isinstance(func.func, gast.Attribute)
        and func.func.attr == "convert_call"
        and len(func.args) == 1
        and isinstance(func.args[0], gast.Name)
        and func.args[0].id in ROUTED
    ):
        return copy_location(
            _node(gast.Call, func=func.args[0], args=expr.args, keywords=expr.keywords), expr
        )
    return expr


def _route(self, expr: gast.expr) -> gast.expr:
    """``range(a)`` -> ``_jst.convert_range(range, a)``; into enumerate/zip arguments."""
    expr = _unwrap(expr)
    if not (
        isinstance(expr, gast.Call)
        and isinstance(expr.func, gast.Name)
        and expr.func.id in ROUTED
        and not _bound_here(self, expr.func.id)
    ):
        return expr
    kind = expr.func.id
    args = list(expr.args)
    if kind == "zip":
        args = [_route(self, a) for a in args]
    elif kind == "enumerate" and args and not isinstance(args[0], gast.Starred):
        args[0] = _route(self, args[0])
    func = self.jst(ROUTED[kind])
    call = _node(gast.Call, func=func, args=[expr.func] + args, keywords=expr.keywords)
    return copy_location(call, expr)


def _bound_here(self, symbol: str) -> bool:
    info = self.ctx.info
    return info is not None and (
        symbol in info.locals or symbol in info.globals or symbol in info.nonlocals
    )


def _init_target(self, node: gast.For, it: str) -> list:
    """Bind target names read after the loop that may be unbound before it."""
    live = set(anno.get(node, anno.LIVE_OUT, ()))
    defined = set(anno.get(node, anno.DEFINED_IN, ()))
    maybe = set(anno.get(node, anno.MAYBE_DEFINED_IN, ()))
    names = _store_names(node.target)
    needed = [n for n in names if n in live and n not in defined]
    if not needed:
        return []
    if isinstance(node.target, gast.Name) and (
        needed[0] not in maybe or self.bound_value(needed[0], self.jst("UNDEFINED")) is not None
    ):  # passed UNDEFINED where unbound, convert_for_loop starts it from a placeholder
        return []
    temps = {n: self.ctx.namer.new(f"init_{n}") for n in needed}
    target = _RenameTargets(temps, self.ctx.namer.new("unused")).visit(
        clone(node.target)  # the visitor changes the nodes it visits
    )
    stmts = replace(
        "target = jst.loop_placeholder(it)", node, target=target, jst=self.ctx.jst, it=it
    )
    for n in needed:
        value = self.bound_value(n, name(temps[n])) if n in maybe else None
        if value is not None:  # bound on some paths: keep its value there, as Python would
            stmts += replace("n = value", node, n=n, value=value)
        elif n in maybe:
            stmts += replace(
                """
                try:
                    n
                except NameError:
                    n = temp
                """,
                node,
                n=n,
                temp=temps[n],
            )
        else:
            stmts += replace("n = temp", node, n=n, temp=temps[n])
    return stmts


def _list_checks(self, node: gast.For) -> list:
    """``check_loop_list(xs, 'xs', 'append', where)`` for ``xs.append(...)`` (or
    ``self.xs.append(...)``) in the body on a value bound before the loop and not rebound
    in it: a list the traced body appends to would hold one iteration's values."""
    body_scope = anno.get(node, anno.BODY_SCOPE, None)
    rebound = set(getattr(body_scope, "modified", ()))
    defined = set(anno.get(node, anno.DEFINED_IN, ()))
    stmts, seen = [], set()
    for call in anno.get(node, anno.BODY_CALLS):
        func = callee(call)
        if not isinstance(func, gast.Attribute) or func.attr not in MUTATORS:
            continue
        dotted = _dotted(func.value)
        if dotted is None or dotted in seen:
            continue
        root = dotted.split(".")[0]
        if root in rebound or dotted in rebound:
            continue
        if self.is_local(root) and root not in defined:
            continue
        if func.attr in ARRAY_METHODS and dotted == root and self.is_local(root):
            continue  # a local list: carried by the while op as a tensor array
        seen.add(dotted)
        stmts += replace(
            "jst.check_loop_list(value, text, method, where)",
            call,
            jst=self.ctx.jst,
            value=func.value,
            text=constant(dotted),
            method=constant(func.attr),
            where=self.location(call),
        )
    return stmts


def note_body_calls(node: gast.While | gast.For) -> None:
    """Remember the calls in a loop's body while its statements are the user's (their
    rewrite adds only the converter's own calls, and one walk then serves the array and
    list checks)."""
    anno.set(node, anno.BODY_CALLS, calls_in(node.body))


def appended_lists(calls: list) -> list[str]:
    """Names ``xs`` of ``xs.append(...)``/``xs.pop(...)`` among a loop body's ``calls``:
    lists a symbolic loop carries as tensor arrays."""
    found = []
    for call in calls:
        func = callee(call)
        if (
            isinstance(func, gast.Attribute)
            and func.attr in ARRAY_METHODS
            and isinstance(func.value, gast.Name)
            and func.value.id not in found
        ):
            found.append(func.value.id)
    return found


def appended_entries(calls: list) -> list[tuple[str, gast.Constant]]:
    """``(d, key)`` for ``d[key].append(...)``/``.pop``/``.extend`` among a loop body's
    ``calls`` (``key`` a constant): lists held in a local dict or list, which a symbolic loop
    carries as tensor arrays (``feats["key"].append(v)``)."""
    found, seen = [], set()
    for call in calls:
        func = callee(call)
        if not (isinstance(func, gast.Attribute) and func.attr in ARRAY_METHODS):
            continue
        entry = func.value
        if (
            isinstance(entry, gast.Subscript)
            and isinstance(entry.value, gast.Name)
            and isinstance(entry.slice, gast.Constant)
            and isinstance(entry.slice.value, (str, int))
            and (entry.value.id, entry.slice.value) not in seen
        ):
            seen.add((entry.value.id, entry.slice.value))
            found.append((entry.value.id, entry.slice))
    return found


def _dotted(node: gast.expr) -> str | None:
    """``a.b.c`` for a chain of attributes on a name, else None."""
    parts = []
    while isinstance(node, gast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, gast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


_DISPLAYS = (
    gast.List, gast.Tuple, gast.Set, gast.Dict, gast.ListComp, gast.SetComp, gast.DictComp,
    gast.GeneratorExp, gast.JoinedStr, gast.Constant,
)  # fmt: skip


def _python_only(iterable: gast.expr) -> bool:
    """An iterable that is never symbolic: a display, a comprehension, a constant, or
    ``range``/``enumerate``/``zip`` of those and int constants (the loop stays as written)."""
    if isinstance(iterable, _DISPLAYS):
        return True
    iterable = _unwrap(iterable)
    if (
        isinstance(iterable, gast.Call)
        and isinstance(iterable.func, gast.Name)
        and iterable.func.id in ROUTED
        and iterable.args
        and not iterable.keywords
    ):
        return all(_python_only(_unwrap(a)) or _int_constant(a) for a in iterable.args)
    return False


def _int_constant(node: gast.expr) -> bool:
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
        node = node.operand
    return isinstance(node, gast.Constant) and type(node.value) is int


class _RenameTargets(gast.NodeTransformer):
    """A target with each name in ``temps`` renamed and every other binding discarded."""

    def __init__(self, temps: dict[str, str], unused: str):
        self.temps, self.unused = temps, unused

    def visit_Name(self, node: gast.Name):
        return copy_location(name(self.temps.get(node.id, self.unused), store=True), node)

    def visit_Attribute(self, node):
        return copy_location(name(self.unused, store=True), node)

    visit_Subscript = visit_Attribute


def _store_names(target: gast.AST) -> list[str]:
    out = []
    for sub in walk(target):
        if isinstance(sub, gast.Name) and isinstance(sub.ctx, gast.Store) and sub.id not in out:
            out.append(sub.id)
    return out


def analyze_new_functions(stmts: list) -> None:
    """Run the dataflow analyses on the functions in ``stmts`` that have loops but no
    analysis (copies of nested functions: ``clone`` drops annotations)."""
    for stmt in stmts:
        for sub in walk(stmt):
            if isinstance(sub, (gast.FunctionDef, gast.AsyncFunctionDef)):
                if anno.get(sub, anno.FUNCTION_INFO, None) is None and _has_loop(sub.body):
                    pyct.analyze(sub)


def _has_loop(stmts: list) -> bool:
    """Whether ``stmts`` hold a ``for``/``while`` outside nested function and class bodies."""
    todo = list(stmts)
    while todo:
        node = todo.pop()
        if isinstance(node, (gast.For, gast.While)):
            return True
        if not isinstance(node, _SCOPES):
            todo.extend(blocks_of(node))
    return False


def _has_statement(node: gast.AST, kind: type) -> bool:
    """Whether a ``kind`` statement is anywhere in ``node``'s statement blocks (loops are
    statements, so expressions need not be walked)."""
    todo = blocks_of(node)
    while todo:
        current = todo.pop()
        if type(current) is kind:
            return True
        todo.extend(blocks_of(current))
    return False
