"""File names made from data: a query's report page name is safe, stable and never shared by two queries."""

from __future__ import annotations

import re

from langgraph_anytool.sanitize.paths import query_page_name, safe_file_name

SAFE = re.compile(r"^[A-Za-z0-9._+-]+\.html$")


def test_a_plain_name_is_kept_and_a_changed_one_gets_a_digest() -> None:
    assert safe_file_name("G1_instruction") == "G1_instruction"
    changed = safe_file_name("../etc/passwd")
    assert changed.startswith("_etc_passwd-") and re.fullmatch(r"_etc_passwd-[0-9a-f]{16}", changed)
    assert safe_file_name("a b") != safe_file_name("a_b") == "a_b"  # the changed name never meets the plain one
    assert safe_file_name("").startswith("item-")
    assert len(safe_file_name("x" * 500)) == 120 + 17


def test_query_page_names_are_safe_and_distinct() -> None:
    assert query_page_name("G1", "42") == "G1+42.html"
    keys = [("G1", "42"), ("G1", "4/2"), ("G1", "4 2"), ("G1-4", "2"), ("G1", "4-2"), ("", "42"), ("G1", ""),
            ("G1", "..."), ("G1", "é"), ("G1+4", "2")]
    names = [query_page_name(g, q) for g, q in keys]
    assert len(set(names)) == len(keys)
    assert all(SAFE.match(n) and "/" not in n and not n.startswith(".") for n in names)
    assert query_page_name("G1", "4/2") == query_page_name("G1", "4/2")  # stable
