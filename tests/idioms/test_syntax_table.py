"""docs/converter.md's "Supported syntax" table matches the tests: each row names the idiom
cases (or other tests) that show it, and each of those exists and is expected to pass."""

from __future__ import annotations

import importlib
import pathlib

import pytest

from .triage import MODULES

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "converter.md"

#: The first words of each row of the table -> idiom case ids (or "file::test" of other tests).
ROWS = {
    "`if` / `elif` / `else`, nested": ["elif_chain_on_mean", "nested_if_three_deep"],
    "`while` / `while … else`": ["while_with_tensor_counter", "while_else_without_break"],
    "`return` anywhere": [
        "return_pair", "return_nested_dict", "return_row_in_for_range", "return_in_while_true",
        "return_in_finally_under_tensor_if",
    ],
    "`break` / `continue`": ["continue_then_break", "continue_and_break_in_while"],
    "calls of your functions": ["sublayers_with_tensor_if", "callable_object_with_tensor_if"],
    "`a and b`, `a or b`, `not a`": ["or_with_none_scale", "string_mode_and_tensor"],
    "`x if c else y`": ["ternary_guarding_log", "nested_ternary_guards"],
    "`:=` in conditions": ["walrus_in_if", "walrus_in_while", "walrus_in_and"],
    "`xs.append/extend/pop(...)`, `d[k] = v`, `x[i] = v` inside a tensor `if`": [
        "append_in_both_branches", "append_in_one_branch", "dict_item_in_both_branches",
        "setitem_in_tensor_if",
    ],
    "`obj.attr = v`": [
        "layer_self_attr_in_tensor_if", "namespace_attr_in_while", "plain_object_attr_in_for",
    ],
    "a variable first bound inside a tensor loop": [
        "value_first_set_in_for", "value_first_set_in_while",
    ],
    "a loop variable started by a Python number": [
        "digits_into_int32_number", "python_zero_accumulates_floats", "none_start_then_tensor",
    ],
    "loop-carried dtypes": [
        "enumerate_counter_into_int32", "python_counter_added_to_int32_rows",
        "python_float_start_becomes_int", "int32_widened_by_int64_counter",
    ],
    "dataclasses and small objects": [
        "dataclass_carried_by_tensor_for", "dataclass_returned_from_branching_helper",
    ],
    "`raise` in a branch": [
        "tests/compiler/test_symbolic_path.py::"
        "test_a_branch_that_raises_raises_when_the_program_takes_it",
        "tests/compiler/test_symbolic_path.py::"
        "test_a_users_exception_from_a_traced_branch_keeps_its_type_and_message",
        "tests/compiler/test_error_types.py::"
        "test_a_loop_body_that_raises_while_traced_raises_when_an_iteration_runs",
    ],
    "a `global` (or `nonlocal`) name assigned inside a tensor": [
        "tests/compiler/test_globals.py::"
        "test_a_global_assigned_in_a_tensor_statement_matches_eager",
        "tests/compiler/test_globals.py::test_declarations_inside_blocks_keep_pythons_meaning",
    ],
    "an op that fails on the values it gets": [
        "tests/compiler/test_error_types.py::"
        "test_a_list_of_a_tensor_loop_fails_as_the_python_list_does",
        "tests/compiler/test_error_types.py::"
        "test_an_index_past_the_end_at_run_time_is_eagers_index_error",
        "tests/compiler/test_error_types.py::"
        "test_a_shape_known_only_at_run_time_fails_as_eager_reshape",
    ],
    "`d[k] = v`, `d[k] += v`, `d[k].append(v)`, `obj.attr = v`": [
        "dict_entry_counts_in_tensor_while", "dict_entry_first_set_in_tensor_while",
        "attribute_first_set_in_tensor_for", "list_in_dict_appended_in_one_branch",
        "dict_entry_in_one_tensor_branch", "namedtuple_list_field_updated_in_tensor_while",
        "namedtuple_dict_field_changed_in_one_tensor_branch",
    ],
    "`x.numpy()` in a condition": ["numpy_read_in_condition"],
    "`if mode in (...)`, `if x is None`": [
        "string_mode_and_tensor",
        "tests/compiler/test_symbolic_path.py::"
        "test_an_if_on_in_is_or_a_string_comparison_stays_the_users_statement",
        "tests/compiler/test_symbolic_path.py::"
        "test_value_in_a_symbolic_tensor_is_a_clear_error_at_the_users_line",
    ],
    "`a < b < c`": ["chained_comparison"],
    "`assert c, msg`": ["assert_on_tensor", "assert_inside_tensor_loop"],
    "`print(...)`": [
        "print_in_tensor_branch", "print_inside_tensor_while",
        "tests/compiler/test_builtins.py::"
        "test_values_eager_holds_as_arrays_or_numbers_print_as_eagerly",
    ],
    "`int(x)`, `float(x)`, `bool(x)`": ["int_of_dim_as_bound", "float_of_tensor_scalar"],
    "`max(a, b)`, `min(a, b)`": ["mean_of_python_count"],
    "`len(x)`": ["len_of_tensor", "len_in_tensor_while"],
    "`x.shape`": ["range_over_dim_attribute", "shape_list_unpacked"],
    "`isinstance(x, rt.Tensor)`": ["isinstance_check"],
    "`breakpoint()`, `pdb.set_trace()`": [
        "tests/compiler/test_builtins.py::test_the_debugger_stops_in_converted_code_at_the_users_line",
    ],
    "`for` / `for … else`": ["for_over_tensor_rows", "for_over_zip_of_tensors"],
    "`xs.append(v)`, `xs.extend([...])`, `xs.pop(i)` on a local list": [
        "append_in_for_then_stack", "append_and_conditional_pop_in_while",
    ],
    "`try`, `with`, generators": ["recursive_pairwise_sum", "nonlocal_counter_in_tensor_loop"],
    "functions, nested functions, lambdas": [
        "lambda_reads_branch_variable", "partial_helper_with_loop_var",
        "tests/compiler/test_nested_functions.py::"
        "test_a_nested_function_called_by_python_code_is_traced_too",
    ],
    "`@autostatic.not_to_static`": ["not_to_static_bound_method", "not_to_static_function"],
    "`break`/`continue` in a `finally` block": [
        "tests/compiler/test_jumps.py::test_a_jump_in_finally_on_a_tensor_builds_its_flag_into_the_loop",
        "tests/compiler/test_jumps.py::"
        "test_a_tensor_jump_in_finally_with_an_exception_in_flight_is_a_clear_error",
    ],
}


def _table_rows() -> list[str]:
    text = DOC.read_text()
    start = text.index("## Supported syntax")
    end = text.index("\n#", start + 1)
    rows = []
    for line in text[start:end].splitlines():
        if line.startswith("| ") and not line.startswith("| construct"):
            rows.append(line.split(" | ")[0][2:])
    return rows


def _cases() -> dict:
    found = {}
    for name in MODULES:
        module = importlib.import_module(f"tests.idioms.{name}")
        xfails = getattr(module, "XFAIL", {})
        for case in module.CASES:
            found[case.id] = case.id in xfails
    return found


def test_every_row_of_the_table_has_tests():
    rows = _table_rows()
    for row in rows:
        keys = [k for k in ROWS if row.startswith(k)]
        assert len(keys) == 1, f"no (or several) test entries for the row {row!r}"
    for key in ROWS:
        assert any(row.startswith(key) for row in rows), f"{key!r} is not in the table"


@pytest.mark.parametrize("key", sorted(ROWS))
def test_the_tests_of_each_row_exist_and_pass(key):
    cases = _cases()
    root = DOC.parents[1]
    for ref in ROWS[key]:
        if "::" in ref:
            path, test = ref.split("::")
            assert f"def {test}(" in (root / path).read_text(), ref
            continue
        assert ref in cases, f"{ref} is not an idiom case"
        assert not cases[ref], f"{ref} is marked xfail, but the table says it works"
