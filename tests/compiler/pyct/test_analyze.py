"""analyze() end to end: a real function through the parser, and its work."""

from __future__ import annotations

import gast

from autostatic.pyct import analyze, anno, parser
from tests.work import python_calls


def model_step(self, x, n):
    total = 0
    for i in range(n):
        if x > i:
            total += x
        else:
            self.misses += 1
    return total


def test_analyze_a_parsed_function():
    node = parser.parse_function(model_step).node
    info = analyze(node)
    assert info.params == ("self", "x", "n")
    assert info.locals == {"self", "x", "n", "total", "i"}
    assert anno.get(node, anno.FUNCTION_INFO) is info
    loop = node.body[1]
    assert set(anno.get(loop, anno.LIVE_IN)) == {"self", "self.misses", "x", "n", "total"}
    assert set(anno.get(loop, anno.LIVE_OUT)) == {"total", "self.misses"}
    assert set(anno.get(loop, anno.DEFINED_IN)) == {"self", "x", "n", "total"}
    assert "self.misses" in info.always_live
    assert info.graph.nodes[0].kind == "entry"


def test_analyze_twice_gives_the_same_annotations():
    node = parser.parse_function(model_step).node
    analyze(node)
    first = {k: anno.get(node.body[1], k) for k in anno.keys(node.body[1])}
    analyze(node)
    assert {k: anno.get(node.body[1], k) for k in anno.keys(node.body[1])} == first


FIFTY_LINES = """
def sample(x, y, n, self):
    total = 0
    acc = []
    i = 0
    while i < n:
        i += 1
        if x > y:
            z = x - y
            total += z
        elif x < 0:
            z = -x
            if z > 10:
                break
        else:
            z = 0
            continue
        for j in range(z):
            acc.append(j * total)
            if j % 3 == 0:
                self.count = self.count + 1
            else:
                total -= 1
        else:
            total += len(acc)
    try:
        w = total / n
    except ZeroDivisionError as e:
        w = 0
    finally:
        acc.clear()
    with open('f') as fh:
        data = fh.read()
    k = [v * 2 for v in acc if v > w]
    if (m := len(k)) > 3:
        total += m
    def helper(a):
        return a + total
    while True:
        total = helper(total)
        if total > 100:
            break
    result = {'t': total, 'w': w}
    for key, val in result.items():
        if val is None:
            del result[key]
    self.buf[0] = total
    q = lambda t: t + y
    out = q(total) + sum(x for x in acc)
    return out, data
"""


def test_analysis_work_grows_linearly():
    """Twice the statements, about twice the work (the benchmark measures the time)."""
    one = gast.parse(FIFTY_LINES).body[0]
    two = gast.parse(FIFTY_LINES).body[0]
    two.body = two.body[:-1] + gast.parse(FIFTY_LINES).body[0].body
    analyze(gast.parse(FIFTY_LINES).body[0])  # one-time imports
    small = python_calls(lambda: analyze(one))
    large = python_calls(lambda: analyze(two))
    assert 1.5 * small < large < 2.5 * small, (small, large)
