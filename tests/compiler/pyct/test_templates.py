"""Templates: ``replace`` builds what a copy of the parsed template with its placeholders
replaced (``_instantiate``, the reference) makes, for every template the converter uses."""

from __future__ import annotations

import gast
import pytest

from autostatic.pyct import templates
from autostatic.pyct.templates import _instantiate, _parsed, replace


def _reference(template, origin=None, **replacements):
    if origin is not None and getattr(origin, "lineno", None) is None:
        origin = None
    return _instantiate(_parsed(template).body, replacements, origin)


def _dump(stmts: list) -> list:
    return [gast.dump(s, include_attributes=True) for s in stmts]


def _origin():
    return gast.parse("\n\nif x:\n    pass\n").body[0]


def test_names_expressions_and_statements():
    template = """
        try:
            tmp = value
        except NameError:
            tmp = jst.UNDEFINED
        body
        def fn(a, *args):
            return f(a, k=1)
    """
    stmt = gast.parse("y = 1").body[0]
    call = gast.parse("g(z)").body[0].value
    for origin in (None, _origin()):
        kwargs = dict(tmp="t", value=call, jst="_jst", body=[stmt], fn="fn_1")
        expected = _dump(_reference(template, origin, **kwargs))
        assert _dump(replace(template, origin, **kwargs)) == expected


def test_a_statement_placeholder_given_an_expression():
    template = "body\nx = 1"
    value = gast.parse("f()").body[0].value
    assert _dump(replace(template, _origin(), body=value)) == _dump(
        _reference(template, _origin(), body=value)
    )


def test_statements_in_an_expression_are_refused():
    with pytest.raises(ValueError, match="placeholder 'v' takes statements"):
        replace("x = v", None, v=[gast.Pass()])


def test_new_nodes_each_time():
    a = replace("x = f(y)", _origin(), y="z")
    b = replace("x = f(y)", _origin(), y="z")
    assert _dump(a) == _dump(b)
    assert a[0] is not b[0] and a[0].value is not b[0].value


def test_every_template_the_converter_uses(monkeypatch):
    """Spy on the converter's calls over the test catalogue; each call again, both ways."""
    from autostatic import conversion
    from tests.programs import PROGRAMS

    seen = []
    real = templates._builder

    def spy(template, placeholders):
        build = real(template, placeholders)

        def checked(replacements, origin):
            out = build(replacements, origin)
            seen.append(template)
            assert _dump(out) == _dump(_reference(template, origin, **replacements)), template
            return out

        return checked

    monkeypatch.setattr(templates, "_builders", {})
    monkeypatch.setattr(templates, "_builder", spy)
    for fn in PROGRAMS:
        conversion._cache.pop(fn.__code__, None)
        conversion.convert_code(fn)
        conversion._cache.pop(fn.__code__, None)
    assert len(set(seen)) >= 10
