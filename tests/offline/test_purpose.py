"""The stand-in's judge and evaluator check an answer's purpose (issue 35 §5): "Compute the SHA-256 hash of the word
hello." was answered `Number to Words: number: 256` and judged solved, in the loop and by `anytool eval passrate
--offline`. Three causes, each tested as a class:

1. identifiers (SHA-256, MD5, base64, UTF-8, ISO-8601, IPv4, H2O, COVID-19, mp3) were read as numbers, units or
   capitalised names; they are names, matched loosely (SHA-256 ≈ sha256 ≈ SHA256);
2. the judge accepted any answer that repeats a value and a topic word of the request, whatever API it came from:
   now the API(s) the answer rests on must serve the request's purpose (`offline/purpose.py`);
3. `code_of` read words in parentheses ("(km)") and identifiers ("SHA-256", a subtraction) as Python code.

The labelled set (`TRIPLES`) is hand-made: for one request in each corner of the builtin catalog, the API that serves
it and an API with another purpose that takes the same kind of value (a number, a date, a country, a city, a quoted
text), so a solver that confuses values would pick it. Each API is run on the arguments the stand-in reads from the
request, and its result written as an answer in two forms: `bare` ("<API>: <result>", the stand-in's own form) and
`restated` (the request repeated before the result, as an agent that restates the question writes it: such an answer
repeats every value and topic word of the request, so only the source API tells a wrong answer). Right-purpose answers
are labelled Solved, wrong-purpose ones Unsolved. Measured on this set with the in-loop judge
(`.venv/bin/python -m pytest tests/offline/test_purpose.py -k accuracy -s` prints it): before the change 93 of 140
verdicts were right (66.4%); after, 132 of 140 (94.3%). Two general rules then fixed five of the eight misses left
(`KNOWN_MISSES` lists the other three, each with its cause), on 144 answers (one more request of the name class): 141
right (97.9%), against 134 (93.1%) without them:

4. an API serves a request part only if its name shares a purpose word with the part whenever the name of another API
   that serves the part does ("What date is 45 days after …" names "date", of Add to Date, nothing of Next Public
   Holiday's name; "How many words …" names "word", of Word Count, nothing of Reverse Text's), `purpose._rival`;
5. a generic request verb ("called", "compute") is no topic word an answer must repeat (`judging.addresses`)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from langgraph_anytool import Catalog
from langgraph_anytool.catalog.builtin import builtin_implementations
from langgraph_anytool.nodes.judge.tooleval import check_is_solved
from langgraph_anytool.offline import OfflinePolicyModel, describe_response, extract_arguments, mentions_of
from langgraph_anytool.offline.mentions import code_of

BUILTIN = Catalog.builtin()

# (request, the API that serves it, an API with another purpose taking the same kind of value)
TRIPLES: list[tuple[str, str, str]] = [
    ("Convert 26.2 miles to kilometres.", "convert_units_for_universal_unit_converter",
     "round_number_for_quick_calculator"),
    ("Convert 100 degrees Fahrenheit to Celsius.", "convert_temperature_for_quick_metric_converter",
     "to_roman_numerals_for_number_notation_converter"),
    ("How many bytes are in 5 gigabytes?", "convert_data_size_for_data_size_calculator",
     "fibonacci_number_for_number_theory_toolkit"),
    ("Which day of the week was 1969-07-20?", "day_of_week_for_date_calculator",
     "is_public_holiday_for_public_holidays"),
    ("Is 2100 a leap year?", "leap_year_check_for_calendar_facts", "prime_check_for_number_theory_toolkit"),
    ("Convert the Unix timestamp 1700000000 to a date.", "timestamp_to_date_for_unix_time_converter",
     "scientific_notation_for_quick_calculator"),
    ("What date is 45 days after 2024-01-15?", "add_to_date_for_date_calculator",
     "next_public_holiday_for_public_holidays"),
    ("How many days are in February 2024?", "days_in_month_for_calendar_facts", "month_calendar_for_calendar_facts"),
    ("List the public holidays in France in 2025.", "list_public_holidays_for_public_holidays",
     "get_country_for_country_profile"),
    ("Is 2024-12-26 a public holiday in Germany?", "is_public_holiday_for_public_holidays",
     "day_of_week_for_date_calculator"),
    ("How many working days are there between 2024-03-01 and 2024-03-31 in the UK?",
     "working_days_between_dates_for_business_day_calculator", "languages_of_country_for_language_reference"),
    ("Which currencies are used in Switzerland?", "currencies_of_country_for_currency_reference",
     "languages_of_country_for_language_reference"),
    ("What languages are spoken in Belgium?", "languages_of_country_for_language_reference",
     "currencies_of_country_for_currency_reference"),
    ("How is Spain called in French?", "country_name_in_language_for_country_profile",
     "get_country_for_country_profile"),
    ("What is the distance between Paris and Berlin in km?", "distance_between_cities_for_geo_distance_calculator",
     "city_details_for_world_cities_database"),
    ("Give me the coordinates and population of Lyon.", "city_details_for_world_cities_database",
     "next_public_holiday_for_public_holidays"),
    ("How long is a flight from Paris to Tokyo?", "estimate_flight_time_for_travel_distance_estimator",
     "distance_between_cities_for_geo_distance_calculator"),
    ("What is the time difference between Tokyo and London?", "time_difference_between_zones_for_world_clock",
     "distance_between_cities_for_geo_distance_calculator"),
    ("Is 97 a prime number?", "prime_check_for_number_theory_toolkit",
     "number_to_words_for_number_notation_converter"),
    ("Write 1994 in Roman numerals.", "to_roman_numerals_for_number_notation_converter",
     "leap_year_check_for_calendar_facts"),
    ("What is Fibonacci number 20?", "fibonacci_number_for_number_theory_toolkit",
     "prime_check_for_number_theory_toolkit"),
    ("Spell 256 in words.", "number_to_words_for_number_notation_converter",
     "to_roman_numerals_for_number_notation_converter"),
    ("Compute the SHA-256 hash of the word hello.", "hash_text_for_hash_generator",
     "number_to_words_for_number_notation_converter"),
    ("What is the area of a circle with a radius of 3 metres?", "circle_properties_for_geometry_calculator",
     "convert_length_for_quick_metric_converter"),
    ("What is the mean of 3, 5, 7 and 9?", "mean_calculator_for_descriptive_statistics",
     "gcd_and_lcm_for_number_theory_toolkit"),
    ("What is the monthly payment on a 200000 loan at 5% over 30 years?", "loan_payment_for_loan_calculator",
     "compound_interest_for_investment_calculator"),
    ("How much tip should I leave on a bill of 85 at 18%?", "tip_calculator_for_shopping_calculator",
     "discount_price_for_shopping_calculator"),
    ("How many words are in 'the quick brown fox'?", "word_count_for_text_analyzer",
     "reverse_text_for_string_transformer"),
    ("Reverse the text 'hello world'.", "reverse_text_for_string_transformer", "word_count_for_text_analyzer"),
    ("Is 'racecar' a palindrome?", "palindrome_check_for_string_transformer", "reverse_text_for_string_transformer"),
    ("Generate a password of 16 characters.", "generate_password_for_password_and_id_generator",
     "fibonacci_number_for_number_theory_toolkit"),
    ("Encode 'hello' in base64.", "base64_encode_for_base64_toolkit", "hash_text_for_hash_generator"),
    ("What is the MD5 hash of 'abc'?", "hash_text_for_hash_generator", "base64_encode_for_base64_toolkit"),
    ("URL-encode 'café & crêpes'.", "url_encode_for_url_toolkit", "base64_encode_for_base64_toolkit"),
    ("What is the CRC-32 checksum of 'hello'?", "checksum_for_hash_generator", "word_count_for_text_analyzer"),
    ("Convert 3 km2 to square miles.", "convert_area_for_quick_metric_converter",
     "fibonacci_number_for_number_theory_toolkit"),
]
FORMS = ("bare", "restated")
# Verdicts the judge still gets wrong, with the cause (the accuracy test lists them; no other pair may be wrong):
KNOWN_MISSES: dict[tuple[str, str, str], str] = {
    ("URL-encode 'café & crêpes'.", "base64_encode_for_base64_toolkit", "bare"):
        "Base64 Encode's name has 'encode' and it documents a 'url safe' field: its words cover the request as URL "
        "Encode's do, and its name shares a word with it",
    ("URL-encode 'café & crêpes'.", "base64_encode_for_base64_toolkit", "restated"):
        "Base64 Encode's name has 'encode' and it documents a 'url safe' field: its words cover the request as URL "
        "Encode's do, and its name shares a word with it",
    ("What is the mean of 3, 5, 7 and 9?", "mean_calculator_for_descriptive_statistics", "bare"):
        "the bare answer repeats none of the numbers (the list went to one argument the answer does not name): the "
        "value/topic rule, which sees the answer and not the call's arguments",
}


def answer_of(query: str, function: str, form: str) -> str:
    """The answer the API gives to the request: run on the arguments the stand-in reads from it."""
    api = BUILTIN.api_for_function(function)
    args = extract_arguments(api, query)
    result = builtin_implementations()[api.id](**args)
    given = "; ".join(f"{k}: {v}" for k, v in args.items() if isinstance(v, str | int | float))
    sentence = f"{api.name} ({given}): {describe_response(result)}"
    return sentence if form == "bare" else f"{query.rstrip('.?')}: {sentence}"


def labelled() -> Iterator[tuple[str, str, str, str, str]]:
    """(request, function, form, answer, expected label) for every pair of the set."""
    for query, right, wrong in TRIPLES:
        for function, label in ((right, "Solved"), (wrong, "Unsolved")):
            for form in FORMS:
                yield query, function, form, answer_of(query, function, form), label


def in_loop_verdict(model: OfflinePolicyModel, query: str, answer: str, function: str) -> str:
    """The in-loop judge's label: the judge node's call (`check_is_solved` with the attempt's call records)."""
    result = check_is_solved(model, query, answer, [], inputs={"calls": [{"function": function, "status": "ok"}]})
    return result.label


# ------------------------------------------------------------------------------------------ 2. purpose, measured
def test_judge_accuracy_on_the_labelled_set() -> None:
    model = OfflinePolicyModel(catalog=BUILTIN)
    rows = list(labelled())
    assert len(rows) >= 2 * 30 and len({r[0].split()[0] for r in rows}) > 10
    wrong = [(q, f, form) for q, f, form, answer, label in rows if in_loop_verdict(model, q, answer, f) != label]
    accuracy = 1 - len(wrong) / len(rows)
    print(f"\njudge accuracy on {len(rows)} labelled answers: {accuracy:.1%}; misses: {wrong}")
    assert set(wrong) <= set(KNOWN_MISSES), [w for w in wrong if w not in KNOWN_MISSES]
    assert set(KNOWN_MISSES) <= set(wrong), [k for k in KNOWN_MISSES if k not in wrong]  # the list is no older
    assert accuracy >= 0.97


@pytest.mark.parametrize(("query", "right", "wrong"), [t for t in TRIPLES if not any(
    k[0] == t[0] and k[1] == t[2] for k in KNOWN_MISSES)])
def test_a_restated_answer_from_an_api_of_another_purpose_is_never_solved(query: str, right: str, wrong: str) -> None:
    """The restated answer repeats every value and topic word of the request: only its source tells it is wrong."""
    model = OfflinePolicyModel(catalog=BUILTIN)
    answer = answer_of(query, wrong, "restated")
    result = check_is_solved(model, query, answer, [], inputs={"calls": [{"function": wrong, "status": "ok"}]})
    assert result.label == "Unsolved" and "purpose" in result.reason, (answer, result.reason)
    fine = answer_of(query, right, "restated")
    assert in_loop_verdict(model, query, fine, right) == "Solved", fine


def _record(qid: str, query: str, answer: str, function: str) -> dict[str, Any]:
    """A result record of `anytool eval run`: the answer and the one successful call it rests on."""
    node = {"calls": [{"tool_call_id": "c0", "function": function, "arguments": {}, "status": "ok"}],
            "messages": [{"role": "tool", "tool_call_id": "c0", "content": answer}]}
    return {"group": "G", "query_id": qid, "query": query, "answer": answer, "status": "solved", "model": "m",
            "pool": [function], "trajectory": [{"attempt": 1, "finish_type": "give_answer", "tree": [node]}]}


def test_the_offline_evaluator_checks_the_purpose_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`anytool eval passrate --offline` on results whose answers restate the request: those from an API of
    another purpose fail, those from the right API pass."""
    from langgraph_anytool.cli.app import main

    triples = [t for t in TRIPLES if not any(k[0] == t[0] and k[1] == t[2] for k in KNOWN_MISSES)]
    records, expected = [], {}
    for i, (query, right, wrong) in enumerate(triples):
        for function, value in ((right, 1.0), (wrong, 0.0)):
            qid = f"{i}-{'right' if value else 'wrong'}"
            records.append(_record(qid, query, answer_of(query, function, "restated"), function))
            expected[qid] = value
    results = tmp_path / "results.jsonl"
    results.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert main(["eval", "passrate", str(results), "--offline", "--samples", "1", "--no-cache", "--json"]) == 0
    got = {q["query_id"]: q["value"] for q in json.loads(capsys.readouterr().out)["queries"]}
    assert got == expected, {q: (got.get(q), v) for q, v in expected.items() if got.get(q) != v}


def test_the_sha_request_of_the_issue_in_both_judges() -> None:
    """The issue's own answer: `Number to Words: number: 256` for the SHA-256 request is Unsolved, with or without
    the request's words around it; the hash is Solved whether the answer writes sha256 or SHA-256."""
    model = OfflinePolicyModel(catalog=BUILTIN)
    query = "Compute the SHA-256 hash of the word hello."
    for answer in ("Number to Words: number: 256; words: two hundred fifty-six.",
                   "The SHA-256 hash of the word hello: Number to Words: number: 256; words: two hundred fifty-six."):
        assert in_loop_verdict(model, query, answer, "number_to_words_for_number_notation_converter") == "Unsolved"
    digest = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
    for quoted in (query, 'Compute the SHA-256 hash of "hello".', "Compute the SHA256 hash of 'hello'."):
        for said in ("sha256", "SHA-256", "SHA256"):
            answer = f"Hash Text: algorithm: {said}; hex: {digest}."
            assert in_loop_verdict(model, quoted, answer, "hash_text_for_hash_generator") == "Solved", (quoted, said)


# ------------------------------------------------------------------------------------------ 1. identifiers
IDENTIFIERS = ["SHA-256", "MD5", "base64", "UTF-8", "ISO-8601", "IPv4", "H2O", "COVID-19", "mp3", "sha3_256", "SHA3-512"]


@pytest.mark.parametrize("ident", IDENTIFIERS)
def test_identifiers_are_names_not_numbers_units_or_capitalised_names(ident: str) -> None:
    me = mentions_of(f"Tell me about {ident} for the report, then 42 more.")
    assert [m.text for m in me.identifiers] == [ident]
    assert [m.value for m in me.numbers] == [42]  # the identifier's digits are no number; the real one is
    assert not me.units and not me.names and not me.currencies


@pytest.mark.parametrize(("text", "numbers", "units"), [
    ("Convert 3 km2 to m2.", [3], ["km2", "m2"]),  # units written with a digit stay units
    ("Sales in Jan-2024 grew.", [2024], []),  # a month and its year: not an identifier
    ("What happened before-2020?", [2020], []),
])
def test_what_is_not_an_identifier(text: str, numbers: list[int], units: list[str]) -> None:
    me = mentions_of(text)
    assert not me.identifiers and [m.value for m in me.numbers] == numbers and [u.text for u in me.units] == units


@pytest.mark.parametrize(("spelled", "algorithm"), [
    ("SHA-256", "sha256"), ("sha256", "sha256"), ("SHA256", "sha256"), ("SHA-512", "sha512"), ("MD5", "md5"),
    ("SHA-1", "sha1"), ("SHA3-256", "sha3_256"), ("sha3_512", "sha3_512"), ("BLAKE2b", "blake2b"),
])
def test_an_identifier_is_read_loosely_and_the_right_api_leads(spelled: str, algorithm: str) -> None:
    """The algorithm parameter takes the identifier however it is spelled, and the hash API leads the relevance
    ranking: no number, so no number API (the 256 of SHA-256 made Number to Words lead with 3.62 against 3.00)."""
    query = f"Compute the {spelled} hash of the word hello."
    hash_text = BUILTIN.api_for_function("hash_text_for_hash_generator")
    assert extract_arguments(hash_text, query)["algorithm"] == algorithm
    ranked = OfflinePolicyModel(catalog=BUILTIN).heuristics().ranked_apis(query)
    assert ranked[0][1].id == hash_text.id, [(round(r, 2), a.name) for r, a in ranked[:3]]


def test_the_sha_request_runs_to_the_hash() -> None:
    """The whole graph, offline: the issue's request is answered by the hash API, with the SHA-256 digest."""
    from langgraph_anytool import create_anytool_graph

    out = create_anytool_graph(BUILTIN, "offline").invoke({"query": "Compute the SHA-256 hash of the word hello."})
    assert out["status"] == "solved" and "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824" in out[
        "answer"], out["answer"]


# ------------------------------------------------------------------------------------------ 3. code in prose
@pytest.mark.parametrize("text", [
    "Convert 5 miles to kilometres (km).", "How far is it (km) from Paris to Rome?", "Give the weight (kg, lb) of 3 apples",
    "Compute the SHA-256 hash of the word hello.", "Encode it as UTF-8 (not latin-1).", "Is (a) or (b) right?",
])
def test_words_in_parentheses_and_identifiers_are_not_code(text: str) -> None:
    assert code_of(text, "eval") is None and code_of(text, "exec") is None


def test_the_offline_evaluators_cache_key_names_its_rules() -> None:
    """Verdicts cached by `eval passrate --offline` under older judge rules are not reused: the rules' revision is part
    of the evaluator's cache key (its identity, shown in reports, stays the stand-in's label)."""
    import argparse

    from langgraph_anytool.cli.eval_commands import Evaluator
    from langgraph_anytool.eval.anytool.runner import OFFLINE_LABEL
    from langgraph_anytool.offline.judging import JUDGE_RULES

    args = argparse.Namespace(evaluator=None, offline=True, catalog=None, prompts_from=None, protocol="anytool",
                              evaluator_settings="tooleval")
    evaluator = Evaluator(args)
    assert JUDGE_RULES in evaluator.key and "purpose" in JUDGE_RULES
    assert evaluator.identity["model"] == OFFLINE_LABEL
