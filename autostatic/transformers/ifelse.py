"""``if`` statements: the user's statement for Python values, a ``cond`` op when symbolic.

Before::

    if x.mean() > 0:
        y = relu(x)
    else:
        y = x - 1

After::

    __pred_0 = x.mean() > 0
    if __pred_0.__class__ is _jst_Variable:      # symbolic: one type test (~20 ns)
        def __true_fn_1(x):          # inputs are parameters, outputs are returned:
            y = relu(x)              # no closure over the user's locals (no cells)
            return (y,)
        def __false_fn_2(x):
            y = x - 1
            return (y,)
        (y,) = _jst.convert_ifelse(__pred_0, __true_fn_1, __false_fn_2, (x,), ('y',), where)
    elif __pred_0:                   # exactly the user's statement
        y = relu(x)
    else:
        y = x - 1

Outputs are the variables either branch assigns that are live after the statement; inputs
are the variables the branches read (plus the outputs, so an unassigned branch passes them
through) that may be bound before it. A possibly-unbound input is passed as
``_jst.UNDEFINED``; a branch that leaves an output unbound returns ``_jst.UNDEFINED``, which
``convert_ifelse`` reports with the variable's name.
"""

from __future__ import annotations

import gast

from autostatic.pyct import anno
from autostatic.pyct.origin import copy_location_deep
from autostatic.pyct.templates import constant, name, replace, tuple_of
from autostatic.transformers.base import Transformer, bare, clone, names_in


def function_def(fn_name: str, params: list[str], body: list, origin: gast.AST) -> gast.FunctionDef:
    """``def fn_name(params): body`` located at ``origin``."""
    args = gast.arguments(
        args=[
            gast.Name(id=p, ctx=gast.Param(), annotation=None, type_comment=None) for p in params
        ],
        posonlyargs=[],
        vararg=None,
        kwonlyargs=[],
        kw_defaults=[],
        kwarg=None,
        defaults=[],
    )
    node = gast.FunctionDef(
        name=fn_name,
        args=args,
        body=body or [gast.Pass()],
        decorator_list=[],
        returns=None,
        type_comment=None,
        type_params=[],
    )
    anno.set(node, anno.GENERATED, True)
    if isinstance(node.body[-1], gast.Return):
        anno.set(node.body[-1], anno.GENERATED, True)
    return gast.copy_location(node, origin)


def guarded_inputs(self: Transformer, names: list[str], defined: set[str], origin: gast.AST):
    """(statements, expressions): read each name, or ``UNDEFINED`` where it may be unbound."""
    stmts, exprs = [], []
    for n in names:
        if n in defined:
            exprs.append(name(n))
            continue
        tmp = self.ctx.namer.new(f"in_{n}")
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


class IfElseTransformer(Transformer):
    """Dual-path ``if``/``elif``/``else`` (see the module docstring)."""

    statements_only = True  # it rewrites statements only

    def visit_If(self, node: gast.If):
        self.generic_visit(node)  # inner statements first: they are dual-path already
        if anno.get(node, anno.BREAK_CHECK, None):  # `if <flag> is True: break`: Python bool
            return node
        pred = self.ctx.namer.new("pred")
        head = replace("pred = test", node.test, pred=pred, test=node.test)
        symbolic, shared = self._symbolic_path(node, pred)
        if shared:  # one functional form serves both paths (convert_ifelse runs Python too)
            return head + [copy_location_deep(s, node) for s in symbolic]
        python_if = gast.If(test=name(pred), body=node.body, orelse=node.orelse)
        check = gast.If(test=self.is_symbolic(name(pred)), body=symbolic, orelse=[python_if])
        return head + [copy_location_deep(check, node)]

    def _symbolic_path(self, node: gast.If, pred: str) -> tuple[list, bool]:
        """The symbolic path's statements, and whether they may serve the Python path too."""
        body_scope = anno.get(node, anno.BODY_SCOPE)
        orelse_scope = anno.get(node, anno.ORELSE_SCOPE)
        test_scope = anno.get(node, anno.TEST_SCOPE, None)
        temps = self.ctx.temporaries
        modified = (names_in(body_scope, "modified") | names_in(orelse_scope, "modified")) - temps
        error = self.blocked(
            node,
            node.body + node.orelse,
            modified,
            "an 'if'",
            (
                "; compute a value in both branches instead",
                "assign a local variable in both branches and set it after the 'if'",
            ),
        )
        if error is not None:
            return error, False
        live_out = set(anno.get(node, anno.LIVE_OUT))
        tested = names_in(test_scope, "modified")
        maybe = set(anno.get(node, anno.MAYBE_DEFINED_IN)) | tested
        defined = set(anno.get(node, anno.DEFINED_IN)) | tested
        outputs = sorted(m for m in modified if m in live_out)
        reads = bare(names_in(body_scope, "read") | names_in(orelse_scope, "read")) - temps
        inputs = sorted(n for n in reads | set(outputs) if self.is_local(n) and n in maybe)
        fns = []
        guard = anno.get(node, anno.JUMP_GUARD, False)  # its else: the code already jumped
        for branch, scope, label in (
            (node.body, body_scope, "true_fn"),
            (node.orelse, orelse_scope, "false_fn"),
        ):
            assigned = names_in(scope, "modified")
            jumped = self.jumps(branch) or (guard and branch is node.orelse)
            unset = "PLACEHOLDER" if jumped else "UNDEFINED"
            results = [
                name(o) if o in assigned or o in inputs else self.jst(unset) for o in outputs
            ]
            ret = gast.Return(value=gast.Tuple(elts=results, ctx=gast.Load()))
            body = clone(branch) + [gast.copy_location(ret, node)]
            fns.append(function_def(self.ctx.namer.new(label), inputs, body, node))
        reads_before, args = guarded_inputs(self, inputs, defined, node)
        call = replace(
            "jst.convert_ifelse(pred, true_fn, false_fn, args, names, where)",
            node,
            jst=self.ctx.jst,
            pred=pred,
            true_fn=fns[0].name,
            false_fn=fns[1].name,
            args=gast.Tuple(elts=args, ctx=gast.Load()),
            names=gast.Tuple(elts=[constant(o) for o in outputs], ctx=gast.Load()),
            where=self.location(node),
        )[0]
        if outputs:
            call = gast.copy_location(
                gast.Assign(
                    targets=[tuple_of(outputs, store=True)], value=call.value, type_comment=None
                ),
                node,
            )
        risky = {n for n in inputs if n not in defined} & reads
        shared = self.shareable(node.body + node.orelse, modified, reads, risky)
        both = names_in(body_scope, "modified") & names_in(orelse_scope, "modified")
        unbind = [o for o in outputs if o not in defined and o not in both] if shared else []
        # the guarded copies must not keep the old values alive (a generator may suspend next)
        copies = [a.id for a, n in zip(args, inputs) if n not in defined]
        release = [_delete(copies, node)] if copies else []
        return fns + reads_before + [call] + release + self.unbind(unbind, node), shared


def _delete(names: list[str], origin: gast.AST) -> gast.Delete:
    targets = [gast.Name(id=n, ctx=gast.Del(), annotation=None, type_comment=None) for n in names]
    return gast.copy_location(gast.Delete(targets=targets), origin)
