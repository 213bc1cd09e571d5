"""``while`` loops: the user's loop for Python values, a ``while`` op once symbolic.

Before::

    while i < n:
        s = s + i
        i = i + 1
    else:
        done = True

After::

    __else_0 = False
    while True:
        __pred_1 = i < n                   # evaluated once per iteration, as Python does
        if __pred_1.__class__ is _jst_Variable:   # from this iteration on: a while op
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

``__cond_2(i, s, n)`` returns the test and ``__body_3(i, s, n)`` runs the body and returns
the loop variables: the variables the body (or a walrus in the test) assigns that are read
by the test or body before being assigned, or live after the loop, and the local lists it
``append``s to or ``pop``s from (passed as ``arrays=(...)``: they become tensor arrays).
Other locals the loop reads are passed as constants. The else flag is generated only for
loops with ``else``.
"""

from __future__ import annotations

import gast

from autostatic.pyct import anno
from autostatic.pyct.templates import constant, name, replace, tuple_of
from autostatic.transformers.base import Transformer, bare, clone, names_in
from autostatic.transformers.for_loops import appended_lists
from autostatic.transformers.ifelse import function_def, guarded_inputs


class WhileTransformer(Transformer):
    """Dual-path ``while`` (see the module docstring)."""

    statements_only = True  # it rewrites statements only

    def visit_While(self, node: gast.While):
        self.generic_visit(node)
        namer = self.ctx.namer
        symbolic, shared = self._symbolic_path(node)
        if shared:  # one functional form serves both paths (the loop runs in Python until
            return symbolic + node.orelse  # its condition is symbolic); no break: else runs
        pred = namer.new("pred")
        flag = namer.new("else") if node.orelse else None
        if flag:
            symbolic = symbolic + replace("flag = True", node, flag=flag)
        exit_ = replace("flag = True", node, flag=flag) if flag else []
        loop = replace(
            """
            while True:
                pred = test
                if check:
                    symbolic
                    break
                if not pred:
                    exit_
                    break
                body
        """,
            node,
            pred=pred,
            test=node.test,
            check=self.is_symbolic(name(pred)),
            symbolic=symbolic,
            exit_=exit_,
            body=node.body,
        )
        if not flag:
            return loop
        return (
            replace("flag = False", node, flag=flag)
            + loop
            + replace("if flag:\n    orelse", node, flag=flag, orelse=node.orelse)
        )

    def _symbolic_path(self, node: gast.While) -> tuple[list, bool]:
        """The symbolic path's statements, and whether they may serve the Python path too."""
        body_scope = anno.get(node, anno.BODY_SCOPE)
        test_scope = anno.get(node, anno.TEST_SCOPE, None)
        temps = self.ctx.temporaries
        modified = (names_in(body_scope, "modified") | names_in(test_scope, "modified")) - temps
        error = self.blocked(
            node, node.body, modified, "a 'while' loop", ("", "carry a local variable instead")
        )
        if error is not None:
            return error, False
        live = set(anno.get(node, anno.LIVE_OUT)) | set(anno.get(node, anno.LOOP_LIVE_IN_HEADER))
        loop_vars = sorted(m for m in modified if m in live)
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
            n for n in reads - modified - set(arrays) if self.is_local(n)
        )  # body temporaries
        # (assigned before they are read in every iteration) stay local to the body
        params = loop_vars + consts
        cond_fn = function_def(
            self.ctx.namer.new("cond"),
            params,
            [gast.copy_location(gast.Return(value=clone([node.test])[0]), node)],
            node,
        )
        ret = gast.Return(value=tuple_of(loop_vars))
        body_fn = function_def(
            self.ctx.namer.new("body"),
            params,
            clone(node.body) + [gast.copy_location(ret, node)],
            node,
        )
        defined = set(anno.get(node, anno.LOOP_DEFINED_IN_HEADER))  # at any iteration's test
        reads_before, args = guarded_inputs(self, loop_vars, defined, node)
        call = replace(
            "jst.convert_while_loop(cond, body, args, consts, names, where)",
            node,
            jst=self.ctx.jst,
            cond=cond_fn.name,
            body=body_fn.name,
            args=gast.Tuple(elts=args, ctx=gast.Load()),
            consts=tuple_of(consts),
            names=gast.Tuple(elts=[constant(v) for v in loop_vars], ctx=gast.Load()),
            where=self.location(node),
        )[0]
        if arrays:
            elts = [constant(v) for v in sorted(arrays)]
            value = gast.Tuple(elts=elts, ctx=gast.Load())
            call.value.keywords.append(gast.keyword(arg="arrays", value=value))
        if loop_vars:
            call = gast.copy_location(
                gast.Assign(
                    targets=[tuple_of(loop_vars, store=True)], value=call.value, type_comment=None
                ),
                node,
            )
        header = set(anno.get(node, anno.LOOP_LIVE_IN_HEADER))
        risky = {v for v in loop_vars if v not in defined and v in header}
        test = gast.copy_location(gast.Expr(value=node.test), node)
        shared = self.shareable([test] + node.body, modified, reads, risky)
        unbind = self.unbind([v for v in loop_vars if v not in defined], node) if shared else []
        return [cond_fn, body_fn] + reads_before + [call] + unbind, shared
