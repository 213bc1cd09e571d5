"""Shrunk counterexamples found by the fuzzers, kept as regression tests."""

from __future__ import annotations

#: ``(source, (a, b, xs))`` checked original == converted on both bodies.
PYTHON_CASES: list = [
    # a `return` in a `for`'s else inside a loop: the break/continue lowering guarded an
    # empty rest (`if not __do_return: <nothing>`, which does not compile)
    (
        "def f(a, b, xs):\n    v0 = 0\n    v1 = 1\n    fl = 0.5\n"
        "    for t0 in range((0 + 0) % 5):\n        v0 += t0\n        k1 = 0\n"
        "        while k1 < 0:\n            k1 += 1\n            v0 = ((0 + 0) + (0 + 0))\n"
        "        else:\n            return (v0, v1, fl)\n    return (v0, v1, fl)\n",
        (0, 0, []),
    ),
]

#: ``(source, (a, b))``: eager == static on int64 tensors of shape [1].
TENSOR_CASES: list = [
    (  # the same, with a tensor-dependent outer loop
        "def f(a, b):\n    v0 = a\n    v1 = b\n    k0 = 0\n"
        "    while k0 < 0 and (0 < 0 and 0 < 0):\n        k0 += 1\n"
        "        for t1 in range(0):\n            v0 += t1\n            v0 = 0\n"
        "        else:\n            return v0\n    return v0\n",
        (0, 0),
    ),
    (  # a loop's `else` assigns v0 before any read: v0 is not carried by the while, whose
        # functional form inside the guard's branch function read it unbound
        "def f(a, b):\n    v0 = a\n    for t0 in range(4):\n        if not (0 < a):\n"
        "            break\n        return v0\n    k0 = 0\n    while k0 < 0:\n        v0 = 0\n"
        "    else:\n        v0 = 0\n    return v0 + b\n",
        (0, -1),
    ),
    (  # a return flag whose `= False` Python never reads (every path sets it) is still
        # bound: a tensor if passes it on to its branch functions
        "def f(a, b):\n    for t in range(1):\n        continue\n    else:\n"
        "        if b >= b:\n            while a != a:\n                b = a\n"
        "            else:\n                return a\n        else:\n            return b\n",
        (1, 0),
    ),
    (  # a variable bound before a tensor loop and set in both branches of a tensor if in
        # its body: the if's symbolic form passes it on, so the body function takes it
        "def f(a, b):\n    x = 0\n    k = 0\n    s = 0\n    while k < b:\n"
        "        if a > k:\n            x = 1\n        else:\n            x = 2\n"
        "        s = s + x\n        k += 1\n    return s\n",
        (1, 3),
    ),
    (  # the same for a return flag inside the guard after a loop that may return
        "def f(a, b):\n    v0 = a\n    for t0 in range(2):\n        if not (0 < a):\n"
        "            break\n        return v0\n    k0 = 0\n    while k0 < 0:\n        v0 = 0\n"
        "    else:\n        if 0 < 0:\n            while k0 < 0:\n                v0 += 0\n"
        "            else:\n                return v0\n        else:\n            return v0\n",
        (0, 0),
    ),
    (  # and a tensor loop whose inner for-else returns on the first pass
        "def f(a, b):\n    v0 = a\n    k0 = b * 0\n    while k0 < b:\n        k0 += 1\n"
        "        for t1 in range(0):\n            v0 += t1\n        else:\n"
        "            return v0 + k0\n    return v0\n",
        (3, 2),
    ),
    (  # a variable a tensor if does not keep (dead after it), changed again by a later
        # tensor loop that passes it on: bound in Python, unbound in the converted code
        "def f(a, b):\n    v0 = a\n    for t0 in range(2):\n        for t1 in range(0):\n"
        "            v0 = 4\n        else:\n            for t2 in range(0):\n"
        "                return v0\n            if b >= 2:\n                return v0\n"
        "    if not (not (0 < 3)):\n        k1 = 0\n    else:\n        k1 += 1\n    k0 = 0\n"
        "    while k0 < 0:\n        k1 = 0\n    return v0 + b\n",
        (1, -2),
    ),
    (  # the same, by itself
        "def f(a, b):\n    v0 = a\n    if a > 0:\n        k1 = 1\n    else:\n        k1 = 2\n"
        "    k0 = b * 0\n    while k0 < b:\n        k1 = 0\n        k0 += 1\n    return v0 + k0\n",
        (1, 3),
    ),
    (  # and with a later tensor if
        "def f(a, b):\n    if a > 0:\n        k1 = 1\n    else:\n        k1 = 2\n    if b > 0:\n"
        "        k1 = 3\n        s = a + k1\n    else:\n        s = b\n    return s\n",
        (1, 3),
    ),
]
