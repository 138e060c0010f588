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
