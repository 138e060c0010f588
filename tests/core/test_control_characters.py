"""A character YAML does not allow (a raw NUL, other control characters) in any YAML or JSON file the CLI reads is
one line naming the file, exit 2 (issue 34 §5: an OPPO `config.yml` holding a NUL gave a `yaml.reader.ReaderError`
traceback). Every YAML file is read by `sanitize.files.loads_yaml` (checked below: no other module parses YAML),
every JSON file by `loads_json`; both are checked over every forbidden character, then each YAML file the CLI reads
end to end: OPPO's `config.yml`, an OpenAPI spec, ToolEval's `config.yaml`, and an OPPO tool document (JSON)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from langgraph_anytool.paper_prompts import PromptSourceError, tooleval_book
from langgraph_anytool.paper_prompts.testing import write_fake_checkout
from langgraph_anytool.sanitize.files import DataFileError, loads_data, loads_json, loads_yaml
from tests.cli_support import cli_error

DATA = Path(__file__).parents[1] / "data"
PACKAGE = Path(__file__).parents[2] / "langgraph_anytool"
# what PyYAML's reader refuses (`Reader.NON_PRINTABLE`): C0 controls but tab, LF and CR; C1 controls but NEL;
# U+FFFE and U+FFFF
FORBIDDEN = ([chr(c) for c in range(0x20) if chr(c) not in "\t\n\r"] + [chr(c) for c in range(0x7F, 0xA0)
                                                                           if c != 0x85] + ["\ufffe", "\uffff"])
PLACES = ("key{}: value\n", "key: val{}ue\n", "# a comment {}\nkey: value\n", "key: 'quoted {}'\n",
          "key: value\n{}")


@pytest.mark.parametrize("place", PLACES)
def test_every_forbidden_character_anywhere_in_yaml_is_one_line(place: str) -> None:
    for ch in FORBIDDEN:
        text = place.format(ch)
        for load in (lambda t: loads_yaml(t, source="c.yml"), lambda t: loads_data(t, source="c.yml", suffix=".yml"),
                     lambda t: loads_data(t, source="c", suffix="")):
            with pytest.raises(DataFileError) as info:
                load(text)
            message = str(info.value)
            assert message.startswith("c") and "\n" not in message and ch not in message, (repr(ch), message)
            assert f"U+{ord(ch):04X}" in message or "invalid" in message


def test_a_raw_control_character_in_a_json_string_is_one_line() -> None:
    for ch in [chr(c) for c in range(0x20)]:
        with pytest.raises(DataFileError) as info:
            loads_json('{"a": "x' + ch + 'y"}', source="f.json")
        assert "\n" not in str(info.value) and str(info.value).startswith("f.json: invalid JSON")


def test_no_module_but_the_bounded_reader_parses_yaml() -> None:
    parsers = []
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        if re.search(r"^\s*(import yaml|from yaml)", text, re.M) and re.search(r"yaml\.(safe_)?load|Loader\(", text):
            parsers.append(path.relative_to(PACKAGE).as_posix())
    assert parsers == ["sanitize/files.py"]


@pytest.fixture
def toolset(tmp_path: Path) -> Path:
    root = tmp_path / "toolset"
    shutil.copytree(DATA / "oppo_toolset", root)
    return root


@pytest.mark.parametrize("ch", ["\x00", "\x01", "\x1b", "\x7f", "\ufffe"])
def test_oppo_config_with_a_forbidden_character_on_any_line_is_one_line(
        toolset: Path, capsys: pytest.CaptureFixture[str], ch: str) -> None:
    cfg = toolset / "config.yml"
    lines = cfg.read_text(encoding="utf-8").splitlines(keepends=True)
    for n in range(0, len(lines), max(1, len(lines) // 6)):
        cfg.write_text("".join([*lines[:n], lines[n].rstrip("\n") + ch + "\n", *lines[n + 1:]]), encoding="utf-8")
        line = cli_error(capsys, "catalog", "--catalog", str(toolset))
        assert "config.yml" in line and f"U+{ord(ch):04X}" in line, (n, line)


def test_an_openapi_yaml_spec_with_a_nul_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "petstore.yaml"
    spec.write_text((DATA / "openapi" / "petstore.yaml").read_text(encoding="utf-8").replace("title:", "title:\x00", 1),
                    encoding="utf-8")
    line = cli_error(capsys, "catalog", "--catalog", str(spec))
    assert "petstore.yaml" in line and "U+0000" in line


def test_an_oppo_doc_with_a_raw_nul_is_one_line(toolset: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = toolset / "rapidapi" / "docs" / "fx_rates.json"  # a tool config.yml turns on
    doc.write_text(doc.read_text(encoding="utf-8").replace('"', '"\x00', 1), encoding="utf-8")
    line = cli_error(capsys, "catalog", "--catalog", str(toolset))
    assert doc.name in line


def test_a_tooleval_config_with_a_nul_is_one_line(tmp_path: Path) -> None:
    root = write_fake_checkout(tmp_path / "StableToolBench", "tooleval")
    cfg = next(root.rglob("config.yaml"))
    cfg.write_text(cfg.read_text(encoding="utf-8") + "extra: a\x00b\n", encoding="utf-8")
    with pytest.raises(PromptSourceError, match=r"config\.yaml: invalid YAML: the character U\+0000") as info:
        tooleval_book(root)
    assert "\n" not in str(info.value)
