"""``if`` statements: the user's statement for Python values, a ``cond`` op when symbolic.

Before::

    if x.mean() > 0:
        y = relu(x)
    else:
        y = x - 1

After (``__true_fn_1``/``__false_fn_2`` are defined once, at the top of the converted body)::

    def __true_fn_1(x):              # inputs are parameters, outputs are returned
        y = relu(x)                  # (the branch's own statements in functional form)
        return (y,)
    def __false_fn_2(x):
        y = x - 1
        return (y,)
    ...
    if (__pred_0 := x.mean() > 0).__class__ is _jst_Variable:   # symbolic: one type test
        (y,) = _jst.convert_ifelse(__pred_0, __true_fn_1, __false_fn_2, (x,), ('y',), where)
    elif __pred_0:                   # exactly the user's statement
        y = relu(x)
    else:
        y = x - 1

Inside another statement's branch function only the ``convert_ifelse`` call is kept (it runs
the right branch function for a Python condition). Outputs are the variables either branch
assigns that are live after the statement; inputs are the variables the branches read (plus
the outputs, so an unassigned branch passes them through) that may be bound before it. A
possibly-unbound input is passed as ``_jst.UNDEFINED``; a branch that leaves an output unbound
returns ``_jst.UNDEFINED``, which ``convert_ifelse`` reports with the variable's name.
Variables a user closure reads are shared with the branch functions through ``nonlocal``, so
the closure sees the value the branch gives them; such a variable the branches only read is
not passed at all (they read the cell).
"""

from __future__ import annotations

import gast

from autostatic.pyct import anno
from autostatic.pyct.nodes import walk
from autostatic.pyct.origin import copy_location_all, copy_location_deep
from autostatic.pyct.templates import LOAD, PARAM, STORE, constant, copy_location, name, replace
from autostatic.transformers.base import (
    Transformer,
    _node,
    bare,
    clone,
    names_in,
    shallow,
    stored_names,
)
from autostatic.transformers.containers import may_mutate, mutated_containers


def function_def(
    fn_name: str,
    params: list[str],
    body: list,
    origin: gast.AST,
    shared: tuple = (),
    declared: tuple | None = None,
    bound: tuple | None = None,
    cells: tuple = (),
) -> gast.FunctionDef:
    """``def fn_name(params): body`` located at ``origin``. Parameters in ``shared`` are the
    user function's cells, renamed ``a__in``: the function declares them ``nonlocal`` and
    binds them to the parameter's value (``a = a__in``). ``declared`` and ``bound`` narrow
    both to those named (a branch of an ``if`` reads the cell itself: see ``build_if``).
    ``cells``: other cells of the user's function the body sets or deletes (``nonlocal``)."""
    prologue = []
    renamed = {p: f"{p}__in" for p in shared}
    params = [renamed.get(p, p) for p in params]
    bound = [p for p in shared if renamed[p] in params and (bound is None or p in bound)]
    declared = [p for p in shared if declared is None or p in declared or p in bound]
    declared += [c for c in cells if c not in declared]
    if declared:
        prologue.append(_node(gast.Nonlocal, names=declared))
    if shared:
        if len(bound) == 1:
            prologue.append(_assign(name(bound[0], store=True), name(renamed[bound[0]])))
        elif bound:  # one line: ``a, c = a__in, c__in``
            targets = _node(gast.Tuple, elts=[name(p, store=True) for p in bound], ctx=STORE)
            values = _node(gast.Tuple, elts=[name(renamed[p]) for p in bound], ctx=LOAD)
            prologue.append(_assign(targets, values))
    node = _node(
        gast.FunctionDef,
        name=fn_name,
        args=_arguments(params, origin),
        body=prologue + (body or [_node(gast.Pass)]),
        decorator_list=[],
        returns=None,
        type_comment=None,
        type_params=[],
    )
    anno.set(node, anno.GENERATED, True)
    if isinstance(node.body[-1], gast.Return):
        anno.set(node.body[-1], anno.GENERATED, True)
    for stmt in prologue:
        copy_location_deep(stmt, origin)
    return copy_location(node, origin)


def returned(body: list, ret: gast.Return, cells: frozenset) -> list:
    """``body`` then ``ret``; a last ``a, b = value`` whose names are ``ret``'s tuple, in
    order, is ``return value`` (the call gives that tuple), unless one of them is a cell
    (the function sets it for the closures)."""
    last = body[-1] if body else None
    if type(last) is gast.Assign and len(last.targets) == 1:
        target, elts = last.targets[0], ret.value.elts
        if (
            type(target) is gast.Tuple
            and len(target.elts) == len(elts)
            and all(
                type(t) is gast.Name and type(e) is gast.Name and t.id == e.id
                and t.id not in cells
                for t, e in zip(target.elts, elts)
            )
        ):
            return body[:-1] + [copy_location(_node(gast.Return, value=last.value), last)]
    return body + [ret]


def _assign(target: gast.expr, value: gast.expr) -> gast.Assign:
    return _node(gast.Assign, targets=[target], value=value, type_comment=None)


def _arguments(params: list[str], origin: gast.AST) -> gast.arguments:
    """The positional parameters ``params``, located at ``origin``."""
    return _node(
        gast.arguments,
        args=[name(p, ctx=PARAM, at=origin) for p in params],
        posonlyargs=[],
        vararg=None,
        kwonlyargs=[],
        kw_defaults=[],
        kwarg=None,
        defaults=[],
    )


def lambda_def(fn_name: str, params: list[str], value: gast.expr, origin: gast.AST) -> gast.Assign:
    """``fn_name = lambda params: value`` located at ``origin`` (a loop's test function)."""
    lam = _node(gast.Lambda, args=_arguments(params, origin), body=value)
    anno.set(lam, anno.GENERATED, True)  # not a user closure: its names are not captured
    assign = _node(gast.Assign, targets=[name(fn_name, store=True)], value=lam, type_comment=None)
    return copy_location_deep(assign, origin)


def guarded_inputs(
    self: Transformer, names: list[str], defined: set[str], origin: gast.AST, dead=frozenset()
):
    """(statements, expressions): read each name, or ``UNDEFINED`` where it may be unbound.
    ``dead``: names whose value is never read (only bound for an inner statement to pass on;
    a symbolic statement before may not have kept them): ``UNDEFINED`` without a read."""
    stmts, exprs = [], []
    for n in names:
        if n in dead or n in defined:
            exprs.append(self.jst("UNDEFINED") if n in dead else name(n))
            continue
        value = self.bound_value(n, self.jst("UNDEFINED"))
        if value is not None:
            exprs.append(value)
            continue
        tmp = self.ctx.namer.new(f"in_{n}")  # a global: try to read it
        stmts += replace(
            """
            try:
                tmp = value
            except NameError:
                tmp = jst.UNDEFINED
        """,
            origin,
            tmp=tmp,
            value=n,
            jst=self.ctx.jst,
        )
        exprs.append(name(tmp))
    return stmts, exprs


def shared_cells(self: Transformer, params: list[str]) -> tuple:
    """The parameters that are cells of the user's function (a closure reads them)."""
    cells = cells_of(self)
    return tuple(p for p in params if p in cells)


def cells_of(self: Transformer) -> frozenset:
    """The cells of the user's function: its locals a closure of it reads or sets."""
    info = self.ctx.info
    return getattr(info, "cell_vars", frozenset()) if info is not None else frozenset()


def build_if(self, node: gast.If) -> tuple[list, list]:
    """(dual form, functional form) of ``node``; its branch functions are hoisted."""
    if may_mutate(self.ctx.census):  # (remembered while the branches are the user's)
        mutated_containers(node.body + node.orelse)
    body_d, body_f = self.block(node.body)
    orelse_d, orelse_f = self.block(node.orelse)
    pred = self.ctx.namer.new("pred")
    symbolic, ok = _symbolic_path(self, node, pred, body_f, orelse_f)
    node.body, node.orelse = body_d, orelse_d
    select = ok and _select(self, node, pred, symbolic, body_d, orelse_d)
    dual = [select or _dual(self, pred, node.test, symbolic, body_d, orelse_d, node)]
    if not ok:  # an error: the functional form keeps the Python path
        return dual, [_dual(self, pred, node.test, symbolic, body_f, orelse_f, node)]
    return dual, [copy_location_deep(s, node) for s in _test_inline(symbolic, pred, node.test)]


def _dual(self, pred: str, test, symbolic: list, body: list, orelse: list, node) -> gast.If:
    """``if (pred := test).__class__ is Variable: symbolic`` ``elif pred: body`` ``else:
    orelse`` (the test evaluated once, by the statement's own line)."""
    bind = _node(gast.NamedExpr, target=name(pred, store=True), value=test)
    python_if = _node(gast.If, test=name(pred), body=body, orelse=orelse)
    check = _node(gast.If, test=self.is_symbolic(bind), body=symbolic, orelse=[python_if])
    return copy_location_deep(check, node)


def _select(self, node: gast.If, pred: str, symbolic: list, body: list, orelse: list):
    """``outs = <convert_ifelse> if (pred := test).__class__ is Variable else ((a, ...) if
    pred else (b, ...))``: one statement for an ``if`` whose branches only set variables live
    after it to constants and bound variables (``__retval_0 = i; __do_return_1 = True``);
    None for any other."""
    if len(symbolic) != 1 or type(symbolic[0]) is not gast.Assign:
        return None  # no outputs, or inputs that may be unbound
    outputs = [t.id if type(t) is gast.Name else None for t in symbolic[0].targets[0].elts]
    defined = anno.get(node, anno.DEFINED_IN)
    branches = []
    for branch in (body, orelse):
        # inside try/with only values that cannot raise, unless the branch sets one variable:
        # an exception must not find the branch's first variables unset
        values = None if None in outputs else assignments(
            self, branch, outputs, self.protected and len(branch) > 1, augmented=True
        )
        if values is None or not all(o in values or o in defined for o in outputs):
            return None  # an output left unbound on this path
        elts = [values[o] if o in values else name(o) for o in outputs]
        branches.append(_node(gast.Tuple, elts=elts, ctx=LOAD))
    python = _node(gast.IfExp, test=name(pred), body=branches[0], orelse=branches[1])
    bind = _node(gast.NamedExpr, target=name(pred, store=True), value=node.test)
    value = _node(gast.IfExp, test=self.is_symbolic(bind), body=symbolic[0].value, orelse=python)
    assign = _node(gast.Assign, targets=symbolic[0].targets, value=value, type_comment=None)
    for target in assign.targets:  # (shared with the call's statement, located at its line)
        copy_location_all(target, node)
    return copy_location_deep(assign, node)


def _test_inline(symbolic: list, pred: str, test: gast.expr) -> list:
    """The functional form without ``pred = test``: the call evaluates the test as its first
    argument (before the inputs, as the statement would)."""
    out = []
    for stmt in symbolic:
        call = getattr(stmt, "value", None)
        if (
            isinstance(call, gast.Call)
            and call.args
            and isinstance(call.args[0], gast.Name)
            and call.args[0].id == pred
        ):
            stmt = shallow(stmt)
            stmt.value = shallow(call)
            stmt.value.args = [test] + call.args[1:]
        out.append(stmt)
    return out


def _symbolic_path(self, node, pred: str, body_f: list, orelse_f: list) -> tuple[list, bool]:
    """The ``convert_ifelse`` statements of ``node`` and True, or a clear error and False."""
    body_scope = anno.get(node, anno.BODY_SCOPE)
    orelse_scope = anno.get(node, anno.ORELSE_SCOPE)
    test_scope = anno.get(node, anno.TEST_SCOPE, None)
    temps = self.ctx.temporaries
    modified = (names_in(body_scope, "modified") | names_in(orelse_scope, "modified")) - temps
    # a name a branch deletes is one of its outputs too: returning it raises the branch's
    # UnboundLocalError, which the program raises when it takes the branch, as Python does
    deleted = names_in(body_scope, "deleted") | names_in(orelse_scope, "deleted")
    if deleted:
        modified = modified | (deleted - temps)
    rebound = self.rebound_by_calls(node.body + node.orelse)
    if rebound:
        modified |= rebound
    containers = mutated_containers(node.body + node.orelse) if may_mutate(self.ctx.census) else []
    defined_in = anno.get(node, anno.DEFINED_IN)  # (the analyses' frozensets: not copied)
    attrs = sorted(
        m
        for m in set(modified) | {c for c in containers if "." in c}  # (self.cache["k"] = v)
        if "." in m and (not self.is_local(m.split(".")[0]) or m.split(".")[0] in defined_in)
    )
    containers = [c for c in containers if "." not in c]
    error = self.blocked(
        node,
        node.body + node.orelse,
        {m for m in modified if "." not in m},
        "an 'if'",
        (
            "; compute a value in both branches instead",
            "assign a local variable in both branches and set it after the 'if'",
        ),
    )
    if error is not None:
        return error, False
    live_out = anno.get(node, anno.LIVE_OUT)
    tested = names_in(test_scope, "modified")
    maybe = anno.get(node, anno.MAYBE_DEFINED_IN)
    defined = defined_in
    if tested:
        maybe, defined = maybe | tested, defined | tested
    names = bare(modified)
    outputs = sorted(m for m in names if m in live_out)
    outputs += [
        c
        for c in containers
        if c in live_out and c not in outputs and c in maybe and self.is_local(c)
    ]
    reads = bare(names_in(body_scope, "read") | names_in(orelse_scope, "read"))
    live = _live_into(node, live_out)
    if live is not None:  # read before any assignment in a branch
        reads &= live
    reads = reads - temps
    reads |= {c for c in containers if self.is_local(c)}
    # and what the branches change that is bound here: an if or loop inside them may pass
    # it on (a branch function has only its parameters bound)
    passed_on = {m for m in names if m in defined} - reads
    reads |= passed_on
    inputs = sorted(
        n
        for n in reads | set(outputs)
        if (self.is_local(n) and n in maybe) or (n in outputs and self.is_declared(n))
    )  # (a global an output: the branch that does not set it gives it back as it was)
    shared = shared_cells(self, inputs)
    read_only = {c for c in shared if c not in outputs and c not in containers}
    if read_only:  # the branch functions read these cells themselves
        inputs = [n for n in inputs if n not in read_only]
        shared = tuple(c for c in shared if c not in read_only)
    # a cell holds the input's value (or is unbound, as the input is): a branch reads it,
    # and declares it only to set it (convert_ifelse restores the cells before each branch
    # it traces); a branch binds only the copy of a container it is given
    bound = tuple(c for c in shared if c in containers)
    cell_vars = cells_of(self)
    fns = []
    guard = anno.get(node, anno.JUMP_GUARD, False)  # its else: the code already jumped
    for branch, branch_f, scope, label in (
        (node.body, body_f, body_scope, "true_fn"),
        (node.orelse, orelse_f, orelse_scope, "false_fn"),
    ):
        jumped = self.jumps(branch) or (guard and branch is node.orelse)
        unset = "PLACEHOLDER" if jumped else "UNDEFINED"
        simple = _simple_assignments(branch_f, inputs)
        if simple is not None:  # nothing runs: pass the inputs on, with these constants
            fns.append(_passthrough(self, outputs, inputs, unset, *simple))
            if attrs:  # and the attributes as they are
                value = _node(gast.Tuple, elts=[_owner(a) for a in attrs], ctx=LOAD)
                fns[-1].keywords.append(gast.keyword(arg="attributes", value=value))
            continue
        values = None
        if not (attrs or bound or self.rebound_by_calls(branch)):
            values = assignments(self, branch_f, outputs, augmented=True)
        if values is not None:  # only assignments: a lambda of one line gives the outputs
            elts = [
                values[o] if o in values else name(o) if o in inputs else self.jst(unset)
                for o in outputs
            ]
            value = _node(gast.Tuple, elts=elts, ctx=LOAD)
            fns.append(self.hoist(lambda_def(self.ctx.namer.new(label), inputs, value, node)))
            continue
        assigned = names_in(scope, "modified") | self.rebound_by_calls(branch)
        results = [name(o) if o in assigned or o in inputs else self.jst(unset) for o in outputs]
        results += [_attribute(a) for a in attrs]
        passed = frozenset(o for o in inputs if o not in assigned)
        value = None if bound else single_result(branch_f, results, passed)
        if value is not None:  # one statement computes the outputs: a lambda of one line
            fns.append(self.hoist(lambda_def(self.ctx.namer.new(label), inputs, value, node)))
            continue
        ret = _node(gast.Return, value=_node(gast.Tuple, elts=results, ctx=LOAD))
        body = list(branch_f)
        if not (body and type(body[-1]) is gast.Raise):  # else never reached
            body = returned(body, copy_location(ret, node), cell_vars)
        declared, cells = None, ()
        if cell_vars:  # (shared ones are cells too)
            declared = stored_names(branch_f) & cell_vars  # (inner functional forms too)
            cells = sorted(c for c in declared if c not in inputs)
        fn = function_def(
            self.ctx.namer.new(label), inputs, body, node, shared, declared, bound, cells
        )
        fns.append(self.hoist(fn))
    dead = unread(node, passed_on - set(outputs) - tested)
    reads_before, args = guarded_inputs(self, inputs, defined, node, dead)
    inputs_ = _node(gast.Tuple, elts=args, ctx=LOAD)
    names = constant(tuple(outputs + attrs))
    call = self.jst_call(
        "convert_ifelse", [pred, fns[0], fns[1], inputs_, names, self.location(node)], node
    )
    pairs = [
        (inputs.index(c), outputs.index(c) if c in outputs else -1)
        for c in containers
        if c in inputs
    ]
    if pairs:
        call.value.keywords.append(gast.keyword(arg="containers", value=constant(tuple(pairs))))
    if attrs:
        value = _node(gast.Tuple, elts=[_owner(a) for a in attrs], ctx=LOAD)
        call.value.keywords.append(gast.keyword(arg="attributes", value=value))
    results = assign_results(self, call, outputs, attrs, node)
    release = release_copies(args, inputs, defined, node)
    return reads_before + results + release, True


def _passthrough(
    self, outputs: list, inputs: list, unset: str, values: dict, copies: dict
) -> gast.expr:
    """``_jst.passthrough((i, ...))``: the branch function of a branch that computes nothing,
    giving each output an input (position ``i``: its own, or the one ``copies`` names), or -1
    for ``UNDEFINED``, -2 for ``PLACEHOLDER``; ``values=((j, constant), ...)`` for the
    outputs it sets to constants."""
    missing = -2 if unset == "PLACEHOLDER" else -1
    positions = tuple(
        inputs.index(copies.get(o, o)) if copies.get(o, o) in inputs else missing for o in outputs
    )
    call = _node(gast.Call, func=self.jst("passthrough"), args=[constant(positions)], keywords=[])
    pairs = [
        _node(gast.Tuple, elts=[constant(j), values[o]], ctx=LOAD)
        for j, o in enumerate(outputs)
        if o in values
    ]
    if pairs:
        value = _node(gast.Tuple, elts=pairs, ctx=LOAD)
        call.keywords.append(gast.keyword(arg="values", value=value))
    return call


def _simple_assignments(branch: list, inputs: list) -> tuple[dict, dict] | None:
    """``({name: constant}, {name: input name})`` for a branch of ``name = <constant>`` and
    ``name = <input>`` statements only (nothing that can raise: ``__break_0 = True``,
    ``__retval_1 = i``, and ``pass``), an input not assigned before it is read; else None."""
    values, copies = {}, {}
    for stmt in branch:
        if type(stmt) is gast.Pass:
            continue
        if not (
            type(stmt) is gast.Assign
            and len(stmt.targets) == 1
            and type(stmt.targets[0]) is gast.Name
        ):
            return None
        target, value = stmt.targets[0].id, stmt.value
        if _is_constant(value):
            values[target] = value
            copies.pop(target, None)
        elif (
            type(value) is gast.Name
            and value.id in inputs
            and value.id not in values
            and value.id not in copies
        ):
            copies[target] = value.id
            values.pop(target, None)
        else:
            return None
    return values, copies


def assignments(
    self, branch: list, outputs: list, simple: bool = False, augmented: bool = False
) -> dict | None:
    """``{name: value}`` for a branch of ``name = value`` statements only, each setting a
    different variable of ``outputs`` to a value that reads none set before it and binds
    nothing (so one tuple of the values is the branch); ``simple``: constants and variables
    only; ``augmented``: ``name += value`` too, as ``_jst.operator.iadd(name, value)``. Else
    None. A variable other code can see (a closure's cell, a ``global``) must be set by the
    last statement: a later value may call code that reads it."""
    values: dict = {}
    temps = self.ctx.temporaries
    info = self.ctx.info
    seen = (info.cell_vars | info.globals | info.nonlocals) if info is not None else frozenset()
    augmenting = []  # (target, statement): ``target += value`` as a call, made at the end
    for stmt in branch:
        if values and not seen.isdisjoint(values):
            return None
        kind = type(stmt)
        if augmented and kind is gast.AugAssign and type(stmt.target) is gast.Name:
            target = stmt.target.id
            value = None
        elif kind is gast.Assign and len(stmt.targets) == 1 and type(stmt.targets[0]) is gast.Name:
            target, value = stmt.targets[0].id, stmt.value
        else:
            return None
        if target not in outputs or target in values:
            return None
        if simple and not (_is_constant(value) or type(value) is gast.Name):
            return None
        reads, binds, yields = _reads(stmt.value)  # (an augmented one reads its target too)
        if yields or not binds <= temps or (values and not reads.isdisjoint(values)):
            return None
        values[target] = value
        if value is None:
            augmenting.append((target, stmt))
    for target, stmt in augmenting:  # located at the statement: an error names its line
        at = {"lineno": stmt.lineno, "col_offset": stmt.col_offset}
        at["end_lineno"], at["end_col_offset"] = at["lineno"], at["col_offset"]
        jst = name(self.ctx.jst, at=stmt)
        module = _node(gast.Attribute, value=jst, attr="operator", ctx=LOAD, **at)
        op = _node(gast.Attribute, value=module, attr=_IN_PLACE[type(stmt.op)], ctx=LOAD, **at)
        args = [name(target, at=stmt), stmt.value]
        values[target] = _node(gast.Call, func=op, args=args, keywords=[], **at)
    return values


def _reads(value: gast.expr) -> tuple:
    """(the names ``value`` reads, the names its ``:=`` bind, whether it yields or awaits),
    remembered on it (a value is looked at for each form of its branch)."""
    known = anno.get(value, _READS, None)
    if known is None:
        reads, binds, yields = set(), set(), False
        for sub in walk(value):
            kind = type(sub)
            if kind is gast.Name:
                reads.add(sub.id)
            elif kind is gast.NamedExpr:
                binds.add(sub.target.id)
            elif kind in (gast.Yield, gast.YieldFrom, gast.Await):
                yields = True
        known = (frozenset(reads), frozenset(binds), yields)
        anno.set(value, _READS, known)
    return known


_READS = "ifelse_reads"  # annotation: ``_reads`` of a value


#: ``x op= y`` as a call: ``operator.iadd(x, y)`` is exactly what ``x += y`` computes
_IN_PLACE = {
    gast.Add: "iadd", gast.Sub: "isub", gast.Mult: "imul", gast.MatMult: "imatmul",
    gast.Div: "itruediv", gast.FloorDiv: "ifloordiv", gast.Mod: "imod", gast.Pow: "ipow",
    gast.LShift: "ilshift", gast.RShift: "irshift", gast.BitOr: "ior", gast.BitXor: "ixor",
    gast.BitAnd: "iand",
}  # fmt: skip


def single_result(body: list, results: list, passed=frozenset()) -> gast.expr | None:
    """``value`` when ``body`` is one ``results = value`` (the targets in ``results``' order,
    as an inner statement's functional form assigns them), or ``value[k:]`` when ``results``
    are its last targets (a loop's flags come first); ``flag = <constant>`` before a loop
    call is folded into the call's loop variables. Leading ``results`` named in ``passed``
    (inputs the body leaves alone) go before: ``(a, *value[k:])``. Else None."""
    if len(body) == 2:
        body = _constant_start(body)
    if len(body) != 1 or type(body[0]) is not gast.Assign or len(body[0].targets) != 1:
        return None
    target = body[0].targets[0]
    if type(target) is not gast.Tuple:
        return None
    if passed:  # (not those the statement sets)
        passed = passed - {t.id for t in target.elts if type(t) is gast.Name}
    front = 0
    while front < len(results) and type(results[front]) is gast.Name and (
        results[front].id in passed
    ):
        front += 1
    results, ahead = results[front:], results[:front]
    if len(target.elts) < len(results) or not results:
        return None
    skip = len(target.elts) - len(results)
    if not all(map(_same_target, target.elts[skip:], results)):
        return None
    value = body[0].value
    if skip:
        if not all(type(t) is gast.Name for t in target.elts[:skip]):
            return None
        rest = _node(gast.Slice, lower=constant(skip), upper=None, step=None)
        value = _node(gast.Subscript, value=value, slice=rest, ctx=LOAD)
    if ahead:
        starred = _node(gast.Starred, value=value, ctx=LOAD)
        value = _node(gast.Tuple, elts=ahead + [starred], ctx=LOAD)
    return value


_LOOP_CALLS = frozenset({"convert_while_loop", "convert_for_loop"})


def _constant_start(body: list) -> list:
    """``[outs = <loop call>(..., (c, ...), ...)]`` for ``[flag = c; outs = <loop
    call>(..., (flag, ...), ...)]`` whose call reads ``flag`` only as that loop variable."""
    first, second = body
    call = getattr(second, "value", None)
    if not (
        type(first) is gast.Assign
        and len(first.targets) == 1
        and type(first.targets[0]) is gast.Name
        and _is_constant(first.value)
        and type(second) is gast.Assign
        and type(call) is gast.Call
        and getattr(call.func, "attr", None) in _LOOP_CALLS
        and len(call.args) > 2
        and type(call.args[2]) is gast.Tuple
    ):
        return body
    flag = first.targets[0].id
    reads = [n for n in walk(call) if type(n) is gast.Name and n.id == flag]
    at = [i for i, e in enumerate(call.args[2].elts) if type(e) is gast.Name and e.id == flag]
    if len(reads) != 1 or len(at) != 1:
        return body
    call = shallow(call)
    call.args = list(call.args)
    loop_vars = _node(gast.Tuple, elts=list(call.args[2].elts), ctx=LOAD)
    loop_vars.elts[at[0]] = clone(first.value)
    call.args[2] = loop_vars
    folded = shallow(second)
    folded.value = call
    return [folded]


def _same_target(a: gast.expr, b: gast.expr) -> bool:
    """Whether two names or attribute chains are the same (``x``, ``self.h.c``)."""
    while type(a) is gast.Attribute and type(b) is gast.Attribute and a.attr == b.attr:
        a, b = a.value, b.value
    return type(a) is gast.Name and type(b) is gast.Name and a.id == b.id


def _is_constant(node: gast.expr) -> bool:
    """A constant, or a signed number (``-1``: nothing to evaluate that could raise)."""
    if type(node) is gast.UnaryOp and type(node.op) in (gast.USub, gast.UAdd):
        node = node.operand
        return type(node) is gast.Constant and type(node.value) in (int, float, complex)
    return type(node) is gast.Constant


def _live_into(node: gast.If, live_out: set) -> set | None:
    """The variables live at the start of either branch (read there before any assignment):
    the branch functions' inputs, besides their outputs. None when a branch's first statement
    has no liveness facts (a statement a pass made)."""
    live = set()
    for branch in (node.body, node.orelse):
        if not branch:
            live |= live_out
            continue
        facts = anno.get(branch[0], anno.LIVE_IN, None)
        if facts is None:
            return None
        live |= facts
    return live


def _attribute(dotted: str, store: bool = False) -> gast.expr:
    """``a.b.c`` as an expression (a store target when ``store``)."""
    parts = dotted.split(".")
    node: gast.expr = name(parts[0])
    for i, part in enumerate(parts[1:], start=1):
        last = i == len(parts) - 1
        ctx = _node(gast.Store) if store and last else _node(gast.Load)
        node = _node(gast.Attribute, value=node, attr=part, ctx=ctx)
    return node


def _owner(dotted: str) -> gast.Tuple:
    """``(a.b, 'c')`` for ``a.b.c``: the object and the attribute a branch sets."""
    head, _, attr = dotted.rpartition(".")
    return _node(gast.Tuple, elts=[_attribute(head), constant(attr)], ctx=LOAD)


def assign_results(
    self: Transformer, call: gast.Expr, names: list, attrs: list, origin: gast.AST
) -> list[gast.stmt]:
    """``(a, b, __attr_1) = <call>`` then ``_jst.set_attribute(obj, 'c', __attr_1)`` for
    each attribute ``obj.c`` (a namedtuple's field changes in place: ``set_attribute``), or
    the call alone when it has no results."""
    temps = [self.ctx.namer.new("attr") for _ in attrs]
    targets = [name(n, store=True) for n in names + temps]
    if not targets:
        return [call]
    target = _node(gast.Tuple, elts=targets, ctx=STORE)
    assign = _node(gast.Assign, targets=[target], value=call.value, type_comment=None)
    return [copy_location(assign, origin)] + [
        set_attribute(self, a, t, origin) for a, t in zip(attrs, temps)
    ]


def set_attribute(self: Transformer, dotted: str, value: str, origin: gast.AST) -> gast.stmt:
    """``_jst.set_attribute(a.b, 'c', value)``: ``a.b.c = value`` for an attribute a tensor
    ``if`` or loop carries, also when the object cannot rebind it (a namedtuple's field)."""
    head, _, attr = dotted.rpartition(".")
    return self.jst_call("set_attribute", [_attribute(head), constant(attr), value], origin)


def unread(node: gast.stmt, names: set) -> set:
    """Those of ``names`` not live before ``node``: their values are never read from here on.
    (Empty when ``node`` has no liveness facts: a statement a pass made.)"""
    live = anno.get(node, anno.LIVE_IN, None)
    return set() if live is None else {n for n in names if n not in live}


def release_copies(args: list, names: list, defined: set, origin: gast.AST) -> list:
    """``del`` the guarded copies of maybe-unbound inputs: they must not keep the old values
    alive (a generator may suspend next)."""
    copies = [a.id for a, n in zip(args, names) if n not in defined and type(a) is gast.Name]
    return [_delete(copies, origin)] if copies else []


def _delete(names: list[str], origin: gast.AST) -> gast.Delete:
    targets = [
        _node(gast.Name, id=n, ctx=_node(gast.Del), annotation=None, type_comment=None)
        for n in names
    ]
    return copy_location(_node(gast.Delete, targets=targets), origin)
