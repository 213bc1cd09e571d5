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
    __else_0 = False
    while True:                            # the test evaluated once per iteration:
        if (__pred_1 := i < n).__class__ is _jst_Variable:   # from here on: a while op
            (i, s) = _jst.convert_while_loop(__cond_2, __body_3, (i, s), (n,),
                                             ('i', 's'), where)
            __else_0 = True
            break
        if not __pred_1:
            __else_0 = True
            break
        s = s + i                          # the user's body: break/continue keep their
        i = i + 1                          # meaning (they leave this while True)
    if __else_0:
        done = True

Inside another statement's branch function only the ``convert_while_loop`` call (then the
``else``) is kept: it runs the loop in Python while the condition is a Python value. The loop
variables are the variables the body (or a walrus in the test) assigns that are read by the
test or body before being assigned, or live after the loop; attributes the body assigns
(``self.steps = ...``) on objects bound before the loop; and the local lists it ``append``s
to or ``pop``s from (passed as ``arrays=(...)``: they become tensor arrays). Other locals the
loop reads are passed as constants. A loop variable first bound inside the body starts
unbound; ``convert_while_loop`` gives it a placeholder shaped like the body's value.
"""

from __future__ import annotations

import gast

from autostatic.pyct import anno
from autostatic.pyct.origin import copy_location_deep
from autostatic.pyct.templates import constant, name, replace
from autostatic.transformers.base import bare, names_in
from autostatic.transformers.for_loops import appended_lists
from autostatic.transformers.ifelse import (
    _attribute,
    assign_results,
    function_def,
    guarded_inputs,
    release_copies,
    shared_cells,
)


def build_while(self, node: gast.While) -> tuple[list, list]:
    """(dual form, functional form) of ``node``; its loop functions are hoisted."""
    body_d, body_f = self.block(node.body)
    orelse_d, orelse_f = self.block(node.orelse)
    symbolic, ok = loop_call(self, node, node.test, body_f)
    if ok:
        func = copy_location_deep_all(symbolic, node) + orelse_f
    namer = self.ctx.namer
    pred = namer.new("pred")
    flag = namer.new("else") if node.orelse else None
    if flag:
        symbolic = symbolic + replace("flag = True", node, flag=flag)
    exit_ = replace("flag = True", node, flag=flag) if flag else []
    template = """
        while True:
            if check:
                symbolic
                break
            if not pred:
                exit_
                break
            body
    """

    def loop_over(body: list) -> list:
        bind = gast.NamedExpr(target=name(pred, store=True), value=node.test)
        return replace(
            template, node, pred=pred, check=self.is_symbolic(bind), symbolic=symbolic,
            exit_=exit_, body=body,
        )  # fmt: skip

    loop = loop_over(body_d)
    if not ok:  # an error on the symbolic path: the functional form keeps the Python loop
        func = loop_over(body_f)
    if flag:
        head = replace("flag = False", node, flag=flag)
        dual = head + loop + replace("if flag:\n    orelse", node, flag=flag, orelse=orelse_d)
        if not ok:
            func = head + func
            func += replace("if flag:\n    orelse", node, flag=flag, orelse=orelse_f)
        return dual, func
    return loop, func


def copy_location_deep_all(stmts: list, origin: gast.AST) -> list:
    return [copy_location_deep(s, origin) for s in stmts]


def loop_call(self, node: gast.AST, test: gast.expr, body_f: list, extra=None) -> tuple[list, bool]:
    """The ``convert_while_loop`` statements for a loop with ``test`` and (functional) body
    ``body_f`` whose dataflow facts are on ``node``, and True; or a clear error and False.
    ``extra``: (leading statements of each iteration, names they bind, constants, location
    facts) for a ``for`` loop's index and item."""
    body_scope = anno.get(node, anno.BODY_SCOPE)
    test_scope = anno.get(node, anno.TEST_SCOPE, None)
    temps = self.ctx.temporaries
    modified = (names_in(body_scope, "modified") | names_in(test_scope, "modified")) - temps
    extra_vars, bound, extra_consts, step = extra or ((), (), (), [])
    modified |= set(bound) | self.rebound_by_calls(node.body)
    defined = set(anno.get(node, anno.DEFINED_IN, ())) | set(bound)
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
    live = set(anno.get(node, anno.LIVE_OUT)) | set(anno.get(node, anno.LOOP_LIVE_IN_HEADER))
    loop_vars = sorted(m for m in bare(modified) if m in live or m in extra_vars)
    # lists bound before the loop that the body appends to or pops from are carried (as
    # tensor arrays when symbolic); a list the body binds afresh is local to an iteration
    arrays = [
        n
        for n in appended_lists(node.body)
        if self.is_local(n) and n not in temps and (n not in modified or n in live)
    ]
    loop_vars = sorted(set(loop_vars) | set(arrays))
    reads = bare(names_in(body_scope, "read") | names_in(test_scope, "read")) - temps
    consts = sorted(
        n for n in reads - set(loop_vars) - set(arrays) if self.is_local(n) and n not in modified
    )
    consts = sorted(set(consts) | set(extra_consts))
    attr_params = [self.ctx.namer.new("attr") for _ in attrs]
    params = loop_vars + attr_params + consts
    shared = shared_cells(self, loop_vars + consts)
    set_attrs = [
        gast.Assign(targets=[_attribute(a, store=True)], value=name(p), type_comment=None)
        for a, p in zip(attrs, attr_params)
    ]
    set_attrs = copy_location_deep_all(set_attrs, node)
    cond_fn = function_def(
        self.ctx.namer.new("loop_cond"),
        params,
        set_attrs + [gast.copy_location(gast.Return(value=test), node)],
        node,
        shared,
    )
    results = [name(v) for v in loop_vars] + [_attribute(a) for a in attrs]
    ret = gast.Return(value=gast.Tuple(elts=results, ctx=gast.Load()))
    body_fn = function_def(
        self.ctx.namer.new("loop_body"),
        params,
        set_attrs + step + list(body_f) + [gast.copy_location(ret, node)],
        node,
        shared,
    )
    cond_name, body_name = self.hoist(cond_fn), self.hoist(body_fn)
    reads_before, args = guarded_inputs(self, loop_vars, defined, node)
    args += [_attribute(a) for a in attrs]
    call = replace(
        "jst.convert_while_loop(cond, body, args, consts, names, where)",
        node,
        jst=self.ctx.jst,
        cond=cond_name,
        body=body_name,
        args=gast.Tuple(elts=args, ctx=gast.Load()),
        consts=gast.Tuple(elts=[name(c) for c in consts], ctx=gast.Load()),
        names=gast.Tuple(elts=[constant(v) for v in loop_vars + attrs], ctx=gast.Load()),
        where=self.location(node),
    )[0]
    if arrays:
        elts = [constant(v) for v in sorted(arrays)]
        value = gast.Tuple(elts=elts, ctx=gast.Load())
        call.value.keywords.append(gast.keyword(arg="arrays", value=value))
    call = assign_results(call, loop_vars, attrs, node)
    release = release_copies(args, loop_vars, defined, node)
    return reads_before + [call] + release, True
