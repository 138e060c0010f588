"""The bounded data-file reader every loader shares (`sanitize.files`): each fault is one line naming the file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from langgraph_anytool.sanitize.files import (
    MAX_YAML_ALIASES,
    DataFileError,
    load_data_file,
    load_json_file,
    loads_json,
    read_text,
    replace_surrogates,
)


def _one_line(exc: pytest.ExceptionInfo[DataFileError], path: Path, *words: str) -> None:
    text = str(exc.value)
    assert "\n" not in text and str(path) in text
    for word in words:
        assert word in text


def test_size_is_capped_before_reading(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    big.write_text('{"pad": "' + "x" * 5000 + '"}')
    with pytest.raises(DataFileError) as info:
        load_json_file(big, max_bytes=4096, what="manifest")
    _one_line(info, big, "manifest", "at most 4,096")


def test_a_fifo_is_refused_instead_of_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    with pytest.raises(DataFileError) as info:
        read_text(fifo, max_bytes=100)
    _one_line(info, fifo, "not a regular file")


@pytest.mark.parametrize("text, words", [
    ("[" * 100_000 + "]" * 100_000, ("nesting too deep",)),
    ('{"rrf_k": NaN}', ("NaN",)),
    ('{"rrf_k": Infinity}', ("Infinity",)),
    ('{"rrf_k": 1e999}', ("overflows a float",)),
    ('{"id": ' + "9" * 5000 + "}", ("digits",)),
    ('{"a": 1,}', ("invalid JSON at line 1",)),
])
def test_json_faults_are_one_line(tmp_path: Path, text: str, words: tuple[str, ...]) -> None:
    path = tmp_path / "f.json"
    path.write_text(text)
    with pytest.raises(DataFileError) as info:
        load_json_file(path, max_bytes=10_000_000)
    _one_line(info, path, *words)


def test_nonfinite_numbers_load_when_allowed() -> None:
    assert loads_json('{"x": NaN}', source="s", allow_nonfinite=True)["x"] != 0


def test_yaml_alias_bomb_is_refused(tmp_path: Path) -> None:
    bomb = tmp_path / "config.yml"
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    bomb.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataFileError) as info:
        load_data_file(bomb, max_bytes=1_000_000)
    _one_line(info, bomb, "expands to more than")
    many = tmp_path / "many.yaml"
    many.write_text("x: &x [1]\ny: [" + ",".join(["*x"] * (MAX_YAML_ALIASES + 1)) + "]\n")
    with pytest.raises(DataFileError) as info:
        load_data_file(many, max_bytes=1_000_000)
    _one_line(info, many, f"more than {MAX_YAML_ALIASES} YAML aliases")


def test_yaml_gives_json_compatible_data(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("200: ok\nday: 2025-07-14\n")
    assert load_data_file(path, max_bytes=1000) == {"200": "ok", "day": "2025-07-14"}


def test_lone_surrogates_are_replaced_and_named() -> None:
    doc = loads_json('{"tools": [{"name": "a", "description": "bad \\ud800 text"}]}', source="s")
    cleaned, fields = replace_surrogates(doc)
    assert fields == ["tools[0].description"]
    assert cleaned["tools"][0]["description"] == "bad \ufffd text"
    cleaned["tools"][0]["description"].encode("utf-8")


# ------------------------------------------------------------------------------------------- lines, schema, names
def test_json_lines_are_streamed_with_a_cap_per_line(tmp_path: Path) -> None:
    from langgraph_anytool.sanitize.files import iter_json_lines

    path = tmp_path / "r.jsonl"
    path.write_text('{"a": 1}\n\n{"cut short\n' + "[" * 100_000 + "]" * 100_000 + "\n")
    rows = iter_json_lines(path, max_line_bytes=1_000_000, skip_invalid=True)
    assert next(rows) == (1, {"a": 1})
    with pytest.raises(DataFileError) as info:  # skipped: the crash's line; refused: the deep one, by its line
        next(rows)
    _one_line(info, path, "line 4", "nesting too deep")
    long = tmp_path / "long.jsonl"
    long.write_text('{"a": 1}\n' + '"' + "x" * 5000 + '"\n')
    with pytest.raises(DataFileError) as info:
        list(iter_json_lines(long, max_line_bytes=4096))
    _one_line(info, long, "line 2", "over 4,096 bytes")


def test_check_model_names_the_file_line_and_field() -> None:
    from pydantic import BaseModel

    from langgraph_anytool.sanitize.files import check_model

    class Usage(BaseModel):
        model_calls: float = 0

    class Record(BaseModel):
        usage: Usage

    with pytest.raises(DataFileError) as info:
        check_model(Record, {"usage": {"model_calls": "abc"}}, source="r.jsonl", line=3)
    assert str(info.value).startswith("r.jsonl, line 3, field 'usage.model_calls': ")
    assert "'abc'" in str(info.value)


@pytest.mark.parametrize("name", ["../../x", "/etc/passwd", "a/b", "..", ".", "", ".hidden", "x" * 500,
                                  "G1\x00", "a\\b"])
def test_names_from_data_become_file_names_inside_the_folder(tmp_path: Path, name: str) -> None:
    from langgraph_anytool.sanitize.files import path_inside, safe_file_name

    file_name = safe_file_name(name, fallback="results")
    target = path_inside(tmp_path, f"{file_name}.json")
    assert target.parent == tmp_path.resolve() and not target.name.startswith(".")
    assert safe_file_name(name) != safe_file_name(name + "_")  # distinct names stay distinct


def test_path_inside_refuses_symlinks_and_dot_dots(tmp_path: Path) -> None:
    from langgraph_anytool.sanitize.files import check_plain_name, path_inside

    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "G1.json").symlink_to(tmp_path / "elsewhere.json")
    for parts in (("G1.json",), ("..", "x.json"), ("/etc/passwd",)):
        with pytest.raises(DataFileError, match="outside"):
            path_inside(tmp_path / "out", *parts)
    assert check_plain_name("weatherapi_com", source="c", field="f") == "weatherapi_com"
    for bad in ("../x", "/abs", "..", "a\\b", "~root", ""):
        with pytest.raises(DataFileError, match="not a tool name"):
            check_plain_name(bad, source="config.yml", field="RAPIDAPI_TOOLS[0]", what="tool name")
