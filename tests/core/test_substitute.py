"""Recorded values are replaced by new ones in one pass, so a new value that contains an old one is left alone."""

from stripebench_tui.core.substitute import replacer, substitute


def test_a_new_path_containing_the_old_one_is_not_rewritten_again() -> None:
    rewrite = replacer([("/tmp/ep/workspace", "/tmp/ep2/workspace"), ("/tmp/ep", "/tmp/ep2")])
    assert rewrite("cat /tmp/ep/workspace/app.py > /tmp/ep/out") == "cat /tmp/ep2/workspace/app.py > /tmp/ep2/out"


def test_the_longest_old_value_wins_whatever_the_order_given() -> None:
    rewrite = replacer({"127.0.0.1:5000": "127.0.0.1:6000", "http://127.0.0.1:5000/x": "http://127.0.0.1:7000/x"})
    assert rewrite("http://127.0.0.1:5000/x and 127.0.0.1:5000") == "http://127.0.0.1:7000/x and 127.0.0.1:6000"


def test_values_are_walked_and_an_empty_mapping_changes_nothing() -> None:
    rewrite = replacer([("a", "b"), ("", "ignored")])
    assert substitute({"k": ["a", {"a": "aa"}, 3]}, rewrite) == {"k": ["b", {"a": "bb"}, 3]}
    assert replacer([])("same") == "same"
