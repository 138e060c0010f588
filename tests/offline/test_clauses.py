"""The offline stand-in reads a multi-part request as its parts (issue 35, left over): ", tell me …", ", and the …",
"; also …", "Additionally, …", "Also, could you …", lists; never inside names, numbers, quoted text, "between A and
B" or a pair of nouns. The table is hand-written: request → the parts expected (each a substring of the request,
without its leading joiner). Several rows fail on the old splitter (a regular expression over sentence ends, `then`,
`also` and `and` before a question word), which read the three-part request of tests/integration/test_env_config.py
as one part."""

from __future__ import annotations

import pytest

from langgraph_anytool.offline import split_clauses

TABLE: list[tuple[str, list[str]]] = [
    # joins after a comma: a request verb, a question word, a joiner before a clause or after one
    ("Convert 26.2 miles to kilometers, tell me what day of the week 2024-02-29 was, and the geographic midpoint "
     "between Paris and Berlin.",
     ["Convert 26.2 miles to kilometers", "tell me what day of the week 2024-02-29 was",
      "the geographic midpoint between Paris and Berlin."]),
    ("Spell 256 in words, and the Roman numerals for 1994 too.",
     ["Spell 256 in words", "the Roman numerals for 1994 too."]),
    ("What is the distance between Paris and Berlin in km, and the time difference between Tokyo and London?",
     ["What is the distance between Paris and Berlin in km", "the time difference between Tokyo and London?"]),
    ("Reverse the text 'hello world', count the words of 'a b c', and check whether 'racecar' is a palindrome.",
     ["Reverse the text 'hello world'", "count the words of 'a b c'", "check whether 'racecar' is a palindrome."]),
    ("Is 2100 a leap year, what is Fibonacci number 20?", ["Is 2100 a leap year", "what is Fibonacci number 20?"]),
    ("Encode 'hi' in base64, as well as the MD5 hash of 'abc'.",
     ["Encode 'hi' in base64", "the MD5 hash of 'abc'."]),
    ("Convert 5 miles to km, then list the public holidays in France in 2025.",
     ["Convert 5 miles to km", "list the public holidays in France in 2025."]),
    ("How far is Paris from Berlin, and is 2025-07-14 a public holiday in France?",
     ["How far is Paris from Berlin", "is 2025-07-14 a public holiday in France?"]),
    # sentences, semicolons, joiners opening them
    ("Convert 5 miles to km; also, what is the capital of France?",
     ["Convert 5 miles to km", "what is the capital of France?"]),
    ("Convert 5 miles to km. Additionally, list the holidays in France.",
     ["Convert 5 miles to km.", "list the holidays in France."]),
    ("Convert 100 degrees Fahrenheit to Celsius. Also, could you tell me the time in Tokyo?",
     ["Convert 100 degrees Fahrenheit to Celsius.", "could you tell me the time in Tokyo?"]),
    ("Which day of the week was 1969-07-20? Finally, is 2024 a leap year?",
     ["Which day of the week was 1969-07-20?", "is 2024 a leap year?"]),
    ("Is July 4 a holiday in the U.S. and what time is it in New York?",
     ["Is July 4 a holiday in the U.S.", "what time is it in New York?"]),
    # a joiner without a comma, before a clause
    ("Hash 'hello' with SHA-256 and then encode it in base64.", ["Hash 'hello' with SHA-256", "encode it in base64."]),
    ("Convert 5 miles to km and tell me the distance between Paris and Berlin",
     ["Convert 5 miles to km", "tell me the distance between Paris and Berlin"]),
    # lists
    ("Please answer these:\n1. Convert 5 miles to km\n2. Is 2024 a leap year?",
     ["Convert 5 miles to km", "Is 2024 a leap year?"]),
    ("- Convert 3 km2 to square miles\n- What is the MD5 hash of 'abc'?",
     ["Convert 3 km2 to square miles", "What is the MD5 hash of 'abc'?"]),
    ("Tell me (1) the distance between Paris and Berlin and (2) the time in Tokyo.",
     ["the distance between Paris and Berlin", "the time in Tokyo."]),
    # one part: names, numbers, quoted text, "between A and B", pairs and lists of nouns, introductory phrases
    ("What is the distance between Paris and Berlin?", ["What is the distance between Paris and Berlin?"]),
    ("How many working days are there between 2024-03-01 and 2024-03-31 in the UK?",
     ["How many working days are there between 2024-03-01 and 2024-03-31 in the UK?"]),
    ("What is the difference between how and why?", ["What is the difference between how and why?"]),
    ("Give me the coordinates and population of Lyon.", ["Give me the coordinates and population of Lyon."]),
    ("Give me the coordinates, population, and the timezone of Lyon.",
     ["Give me the coordinates, population, and the timezone of Lyon."]),
    ("Give me the population, name and area of Lyon.", ["Give me the population, name and area of Lyon."]),
    ("What is the mean of 3, 5, 7 and 9?", ["What is the mean of 3, 5, 7 and 9?"]),
    ("Add 1,500 and 2,250.", ["Add 1,500 and 2,250."]),
    ('Count the words of "hello, and tell me more; also this" please.',
     ['Count the words of "hello, and tell me more; also this" please.']),
    ("How far is St. Louis from Chicago?", ["How far is St. Louis from Chicago?"]),
    ("In France, list the public holidays of 2025.", ["In France, list the public holidays of 2025."]),
    ("If 2024 is a leap year, how many days does February have?",
     ["If 2024 is a leap year, how many days does February have?"]),
    ("Paris, which is in France, is how far from Berlin?", ["Paris, which is in France, is how far from Berlin?"]),
    ("Which currencies are also used in Switzerland?", ["Which currencies are also used in Switzerland?"]),
    ("What is the next public holiday in France?", ["What is the next public holiday in France?"]),
    ("What is 5 plus 3?", ["What is 5 plus 3?"]),
    ("Is 'Bosnia and Herzegovina' a country?", ["Is 'Bosnia and Herzegovina' a country?"]),
    ("Convert 5 kg to pounds, please. Thanks!", ["Convert 5 kg to pounds, please. Thanks!"]),
    ("Run this code:\nx = 1\nprint(x + 2)", ["Run this code:\nx = 1\nprint(x + 2)"]),
    ("Convert 2.5 kg to pounds", ["Convert 2.5 kg to pounds"]),
]


@pytest.mark.parametrize(("query", "parts"), TABLE, ids=[q[:50] for q, _ in TABLE])
def test_a_request_is_read_as_its_parts(query: str, parts: list[str]) -> None:
    assert split_clauses(query) == parts


def test_the_table_covers_both_kinds() -> None:
    """Multi-part requests of every join and single-part requests of every trap (a test that cannot fail is none)."""
    assert sum(len(p) > 1 for _, p in TABLE) >= 15 and sum(len(p) == 1 for _, p in TABLE) >= 15
    for query, parts in TABLE:
        assert all(p in query for p in parts), (query, parts)


def test_empty_and_blank() -> None:
    assert split_clauses("") == [] and split_clauses("   ") == []
    assert split_clauses("Thanks!") == ["Thanks!"]
