"""``while`` loops: the user's loop for Python values, a ``while`` op once symbolic.

Before::

    while i < n:
        s = s + i
        i = i + 1
    else:
        done = True

After (``__cond_2``/``__body_3`` are defined once, at the top of the converted body)::

    def __cond_2(i, s, n):
        return i < n
    def __body_3(i, s, n):
        s = s + i                          # the body's statements in functional form
        i = i + 1
        return (i, s)
    ...
    while (__pred_1 := i < n).__class__ is not _jst_Variable and __pred_1:
        s = s + i                          # the user's body: break/continue keep their
        i = i + 1                          # meaning; the test is evaluated once per iteration
    else:                                  # the test failed: a Python false, or a Variable
        if __pred_1.__class__ is _jst_Variable:   # from here on: a while op
            (i, s) = _jst.convert_while_loop(__cond_2, __body_3, (i, s), (n,),
                                             ('i', 's'), where)
        done = True

Inside another statement's branch function only the ``convert_while_loop`` call (then the
``else``) is kept: it runs the loop in Python while the condition is a Python value. The loop
variables are the variables the body (or a walrus in the test) assigns that are read by the
test or body before being assigned, or live after the loop; attributes the body assigns
(``self.steps = ...``) on objects bound before the loop; and the local lists it ``append``s
to or ``pop``s from (passed as ``arrays=(...)``: they become tensor arrays; lists held in a
local dict or list, ``d["k"].append(v)``, are passed as ``entries=((d, "k", text),)``, and
become tensor arrays in their container). Other locals the
loop reads are passed as constants. A loop variable first bound inside the body starts
unbound; ``convert_while_loop`` gives it a placeholder shaped like the body's value.
"""

from __future__ import annotations

import gast

from autostatic.pyct import anno
from autostatic.pyct.origin import copy_location_deep
from autostatic.pyct.templates import LOAD, constant, copy_location, name
from autostatic.transformers.base import _node, bare, clone, names_in, stored_names
from autostatic.transformers.for_loops import (
    _statement_copy,
    _store_names,
    appended_entries,
    appended_lists,
    assign_if,
    note_body_calls,
)
from autostatic.transformers.ifelse import (
    _attribute,
    assign_results,
    assignments,
    cells_of,
    function_def,
    guarded_inputs,
    lambda_def,
    release_copies,
    returned,
    set_attribute,
    shared_cells,
    single_result,
    unread,
)


def build_while(self, node: gast.While) -> tuple[list, list]:
    """(dual form, functional form) of ``node``; its loop functions are hoisted."""
    note_body_calls(node)
    body_d, body_f = self.block(node.body)
    orelse_d, orelse_f = self.block(node.orelse)
    symbolic, ok = loop_call(self, node, node.test, body_f)
    pred = self.ctx.namer.new("pred")
    dual = _python_loop(self, node, pred, symbolic, body_d, orelse_d)
    if not ok:  # an error on the symbolic path: the functional form keeps the Python loop
        return dual, _python_loop(self, node, pred, symbolic, body_f, orelse_f)
    return dual, copy_location_deep_all(symbolic, node) + orelse_f


def _python_loop(self, node: gast.While, pred: str, symbolic: list, body: list, orelse: list):
    """``while (pred := test).__class__ is not Variable and pred: body``, then ``if
    pred.__class__ is Variable: symbolic`` (in the loop's ``else`` when it has one: both run
    when the test fails)."""
    bind = _node(gast.NamedExpr, target=name(pred, store=True), value=node.test)
    values = [self.is_symbolic(bind, negate=True), name(pred)]
    test = _node(gast.BoolOp, op=_node(gast.And), values=values)
    if len(symbolic) == 1:  # one assignment when it can be: `outs = <call> if ... else outs`
        switch = assign_if(self.is_symbolic(name(pred)), _statement_copy(symbolic[0]), node)
    else:
        switch = _node(gast.If, test=self.is_symbolic(name(pred)), body=symbolic, orelse=[])
    loop = _node(gast.While, test=test, body=body, orelse=[])
    if orelse:
        loop.orelse = [switch] + orelse
        return [copy_location_deep(loop, node)]
    return [copy_location_deep(loop, node), copy_location_deep(switch, node)]


def _unbound_before(node: gast.For, target: str) -> bool:
    """Whether the loop's target is unbound before the loop on every path."""
    return target not in set(anno.get(node, anno.MAYBE_DEFINED_IN, ()))


def _item_params(self, node: gast.For, params: list, body: list) -> tuple[list[str], int]:
    """The parameters the item of a ``for`` loop's body function binds: the target when it
    is a name not among ``params``; the target's names when it is a tuple of such names
    (``convert_for_loop(..., unpack=n)`` unpacks the item); else a new name unpacked into the
    target (inserted into ``body``); and how many values the item unpacks into (0: none)."""
    target = node.target
    if type(target) is gast.Name and target.id not in params:
        return [target.id], 0
    if type(target) in (gast.Tuple, gast.List) and target.elts:
        names = [e.id for e in target.elts if type(e) is gast.Name]
        if len(names) == len(target.elts) == len(set(names)) and not set(names) & set(params):
            return names, len(names)
    item = self.ctx.namer.new("item")
    unpack = _node(gast.Assign, targets=[clone(target)], value=name(item), type_comment=None)
    body.insert(0, copy_location_deep(unpack, node))
    return [item], 0


def copy_location_deep_all(stmts: list, origin: gast.AST) -> list:
    return [copy_location_deep(s, origin) for s in stmts]


def loop_call(self, node: gast.AST, test, body_f: list, for_loop=None) -> tuple[list, bool]:
    """The ``convert_while_loop`` statements for a loop with ``test`` and (functional) body
    ``body_f`` whose dataflow facts are on ``node``, and True; or a clear error and False.
    ``for_loop``: (iterable's name, break flag or None) for a ``for`` loop, stepped by
    ``convert_for_loop``: its body function takes the item first (and no test function)."""
    body_scope = anno.get(node, anno.BODY_SCOPE)
    test_scope = anno.get(node, anno.TEST_SCOPE, None)
    temps = self.ctx.temporaries
    modified = (names_in(body_scope, "modified") | names_in(test_scope, "modified")) - temps
    it, flag = for_loop or (None, None)
    bound = _store_names(node.target) if for_loop else []
    extra_vars = [flag] if flag else []
    modified |= set(bound) | self.rebound_by_calls(node.body)
    defined = anno.get(node, anno.DEFINED_IN, frozenset())  # (a frozenset: not copied)
    if bound:
        defined = defined | set(bound)
    attrs = sorted(
        m
        for m in modified
        if "." in m and (not self.is_local(m.split(".")[0]) or m.split(".")[0] in defined)
    )
    error = self.blocked(
        node,
        body_f,
        {m for m in modified if "." not in m} - set(extra_vars),
        "a 'while' loop" if isinstance(node, gast.While) else "a 'for' loop",
        ("", "carry a local variable instead"),
    )
    if error is not None:
        return error, False
    live = anno.get(node, anno.LIVE_OUT) | anno.get(node, anno.LOOP_LIVE_IN_HEADER)
    loop_vars = sorted(m for m in bare(modified) if m in live or m in extra_vars)
    # lists bound before the loop that the body appends to or pops from are carried (as
    # tensor arrays when symbolic); a list the body binds afresh is local to an iteration
    arrays = [
        n
        for n in appended_lists(anno.get(node, anno.BODY_CALLS))
        if self.is_local(n) and n not in temps and (n not in modified or n in live)
    ]
    entries = [
        (n, key)
        for n, key in appended_entries(anno.get(node, anno.BODY_CALLS))
        if self.is_local(n) and n in defined and n not in temps
    ]
    loop_vars = sorted(set(loop_vars) | set(arrays))
    reads = bare(names_in(body_scope, "read") | names_in(test_scope, "read")) - temps
    consts = sorted(
        n for n in reads - set(loop_vars) - set(arrays) if self.is_local(n) and n not in modified
    )
    # what the body changes that is bound before the loop and not carried: an if or loop in
    # the body may pass it on (the body function has only its parameters bound)
    passed_on = sorted(
        m
        for m in bare(modified) - set(loop_vars) - set(arrays) - set(bound) - set(extra_vars)
        if m in defined and m not in temps and self.is_local(m)
    )
    consts += passed_on
    tested = names_in(test_scope, "modified")
    dead = unread(node, set(passed_on) - tested)  # a statement before may not have kept them
    cells = set(shared_cells(self, consts))  # the loop functions read these cells themselves
    consts = [c for c in consts if c not in cells]
    attr_params = [self.ctx.namer.new("attr") for _ in attrs]
    params = loop_vars + attr_params + consts
    set_attrs = [set_attribute(self, a, p, node) for a, p in zip(attrs, attr_params)]
    results = [name(v) for v in loop_vars] + [_attribute(a) for a in attrs]
    ret = _node(gast.Return, value=_node(gast.Tuple, elts=results, ctx=LOAD))
    body = set_attrs + list(body_f) + [copy_location(ret, node)]
    carried = for_loop and isinstance(node.target, gast.Name) and node.target.id in loop_vars
    body_params, unpack = params, 0  # a carried target: each item goes to its place
    if for_loop and not carried:  # the item comes first: as the target, or unpacked into it
        item_params, unpack = _item_params(self, node, params, body)
        body_params = item_params + params
    # cells of the user's function among the parameters: convert_while_loop/convert_for_loop
    # give each the loop variable's value before calling a loop function (it reads the cell
    # and declares it only to set it); an item that is a cell binds it itself
    shared = shared_cells(self, body_params)
    items = tuple(c for c in shared if c not in loop_vars)
    walrus = set(bare(tested)) & set(shared)
    if for_loop:
        head = name(it)
    elif set_attrs or walrus:
        test_body = set_attrs + [copy_location(_node(gast.Return, value=test), node)]
        head = name(self.hoist(function_def(self.ctx.namer.new("loop_cond"), params, test_body,
                                            node, shared, walrus, ())))  # fmt: skip
    else:  # only the test: a lambda, one line
        head = name(self.hoist(lambda_def(self.ctx.namer.new("loop_cond"), params, test, node)))
    value = None
    if not (shared or set_attrs or self.rebound_by_calls(body_f)):
        values = assignments(self, body[:-1], loop_vars, augmented=True)
        if values is not None:  # assignments only: a tuple of the new values
            value = _node(gast.Tuple, elts=[values.get(v, name(v)) for v in loop_vars], ctx=LOAD)
        else:
            value = single_result(body[:-1], results)
    if value is not None:  # one statement computes the loop variables: a lambda of one line
        body_name = self.hoist(lambda_def(self.ctx.namer.new("loop_body"), body_params, value,
                                          node))  # fmt: skip
    else:
        cell_vars = cells_of(self)
        gone = stored_names(body) & cell_vars if cell_vars else frozenset()  # (inner forms too)
        cells = sorted(c for c in gone if c not in body_params)
        body = returned(body[:-1], body[-1], cell_vars)
        body_fn = function_def(self.ctx.namer.new("loop_body"), body_params, body, node, shared,
                               gone, items, cells)  # fmt: skip
        body_name = self.hoist(body_fn)
    reads_before, args = guarded_inputs(self, loop_vars, defined, node)
    if carried and node.target.id not in anno.get(node, anno.DEFINED_IN, frozenset()):
        # UNDEFINED where unbound (it starts shaped like an item); the item where a Python
        # loop broke when the call takes the other items after a tensor break (hand_over)
        value = self.bound_value(node.target.id, self.jst("UNDEFINED"))
        if value is None or (_unbound_before(node, node.target.id) and not for_loop[1]):
            value = self.jst("UNDEFINED")
        args[loop_vars.index(node.target.id)] = value
    args += [_attribute_or_undefined(self, a) for a in attrs]
    inits = _node(gast.Tuple, elts=args, ctx=LOAD)
    fixed = [self.jst("UNDEFINED") if c in dead else name(c) for c in consts]
    fixed = _node(gast.Tuple, elts=fixed, ctx=LOAD)
    names = constant(tuple(loop_vars + attrs))
    call = self.jst_call(
        "convert_for_loop" if for_loop else "convert_while_loop",
        [head, body_name, inits, fixed, names, self.location(node)],
        node,
    )
    if arrays:
        value = constant(tuple(sorted(arrays)))
        call.value.keywords.append(gast.keyword(arg="arrays", value=value))
    if entries:  # (the dict or list, the key, its text): held lists become tensor arrays
        value = _node(gast.Tuple,
            elts=[
                _node(gast.Tuple,
                    elts=[name(n), clone(key), constant(f"{n}[{key.value!r}]")], ctx=LOAD
                )
                for n, key in entries
            ],
            ctx=LOAD,
        )
        call.value.keywords.append(gast.keyword(arg="entries", value=value))
    if flag:
        value = constant(loop_vars.index(flag))
        call.value.keywords.append(gast.keyword(arg="breaks", value=value))
    if carried:
        value = constant(loop_vars.index(node.target.id))
        call.value.keywords.append(gast.keyword(arg="target", value=value))
    if unpack:
        call.value.keywords.append(gast.keyword(arg="unpack", value=constant(unpack)))
    results = assign_results(self, call, loop_vars, attrs, node)
    release = release_copies(args, loop_vars, defined, node)
    return reads_before + results + release, True


def _attribute_or_undefined(self, dotted: str) -> gast.Call:
    """``_jst.builtins.getattr(a.b, 'c', _jst.UNDEFINED)`` for an attribute the loop carries:
    one the body creates (``obj.c = ...`` on an object without it) starts unbound."""
    head, _, attr = dotted.rpartition(".")
    getter = _node(gast.Attribute, value=self.jst("builtins"), attr="getattr", ctx=LOAD)
    args = [_attribute(head), constant(attr), self.jst("UNDEFINED")]
    return _node(gast.Call, func=getter, args=args, keywords=[])
