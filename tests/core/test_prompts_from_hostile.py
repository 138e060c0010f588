"""`prompts_from` on a hostile checkout (issue 34 §3): a constant whose `.replace` calls blow it up, a `+` of
thousands of terms, constants nested past the recursion limit, and files whose real path is outside the checkout
(a prompt file, a folder such as `scripts/`, ToolEval's `config.yaml` and `template.txt`: every file a book reads).
Each is one line (`PromptSourceError`), refused before the text is built. The checkouts are fake
(`paper_prompts.testing.write_fake_checkout`) or written below."""

from __future__ import annotations

import resource
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from langgraph_anytool.paper_prompts import PromptSourceError, load_book
from langgraph_anytool.paper_prompts.book import BookSpec, Slot
from langgraph_anytool.paper_prompts.source import Checkout
from langgraph_anytool.paper_prompts.testing import SPECS, write_fake_checkout


def spec(file: str = "p.py", locator: str = "P", mode: Any = "replace") -> BookSpec:
    return BookSpec("test/repo", file, (("x", Slot(file, locator, mode, ())),))


def refused(root: Path, book: BookSpec, match: str) -> str:
    with pytest.raises(PromptSourceError, match=match) as info:
        load_book(book, root)
    text = str(info.value)
    assert "\n" not in text and len(text) < 500, text
    return text


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# ------------------------------------------------------------------------------------------------ size and work
@pytest.mark.parametrize("body", [
    "'" + "x" * 400_000 + "'" + ".replace('x', 'xxxxxxxxxx')" * 9,  # the bomb, grown 10⁹ times
    "'" + "x" * 1000 + "'" + ".replace('x', 'xxxxxxxxxx')" * 10,  # a small file, a huge constant
    "'ab'" + ".replace('a', 'aa')" * 40,  # doubling: 2⁴⁰ characters
    "'abc'.replace('', '" + "y" * 2_000_000 + "')",  # the empty string matches between every two characters
    "'" + "a" * 900_000 + "'" + ".replace('a', 'b').replace('b', 'a')" * 20,  # same size, 36 M characters of work
])
def test_replace_calls_are_capped_in_size_and_work(tmp_path: Path, body: str) -> None:
    (tmp_path / "p.py").write_text(f"P = {body}\n")
    before, started = peak_mb(), time.perf_counter()
    text = refused(tmp_path, spec(), r"p\.py: P: (\.replace\(.*\) makes the constant [\d,]+ characters long|"
                                     r"the constant's \.replace calls do more than)")
    assert "refused" in text
    assert time.perf_counter() - started < 20 and peak_mb() - before < 200  # never built: no GB, no minutes


def test_a_constant_within_the_caps_is_still_read(tmp_path: Path) -> None:
    (tmp_path / "p.py").write_text("P = 'ab {x}'" + ".replace('a', 'aa')" * 10 + "\n")
    book = load_book(BookSpec("test/repo", "p.py", (("x", Slot("p.py", "P", "replace", (("x", "x"),))),)), tmp_path)
    assert book.templates["x"].fill({"x": 1}) == "a" * 1024 + "b 1"


# ------------------------------------------------------------------------------------------------ depth
@pytest.mark.parametrize("terms", [990, 5000, 20_000])
def test_a_long_sum_of_constants_is_read_or_one_line(tmp_path: Path, terms: int) -> None:
    (tmp_path / "p.py").write_text("P = " + " + ".join(["'a'"] * terms) + "\n")
    try:
        book = load_book(spec(), tmp_path)
    except PromptSourceError as exc:
        assert "\n" not in str(exc)
    else:
        assert book.templates["x"].text == "a" * terms


@pytest.mark.parametrize("body", [
    "".join(["('a' + "] * 990) + "'a'" + ")" * 990,  # nested to the right: the recursion limit
    "'{x}'" + ".replace('{x}', y)" * 3000,  # a chain of calls as deep
    "'a'" + ".replace('a', 'a')" * 3000,
    "f'{" + "(" * 150 + "x" + ")" * 150 + "}' + 1",  # not a string: the message shows the expression, shortened
])
def test_a_constant_nested_too_deeply_is_one_line(tmp_path: Path, body: str) -> None:
    (tmp_path / "p.py").write_text(f"P = {body}\n")
    with pytest.raises(PromptSourceError) as info:
        load_book(spec(), tmp_path)
    assert "\n" not in str(info.value) and "p.py" in str(info.value)


# ------------------------------------------------------------------------------------------------ real paths
def files_read(repo: str, root: Path) -> list[str]:
    """Every file the book of `repo` reads from a fake checkout (its provenance lists each file read)."""
    return sorted(load_book(SPECS[repo], root).files)


@pytest.mark.parametrize("repo", sorted(SPECS))
@pytest.mark.parametrize("link", ["file", "folder"])
def test_every_file_whose_real_path_leaves_the_checkout_is_refused(tmp_path: Path, repo: str, link: str) -> None:
    names = files_read(repo, write_fake_checkout(tmp_path / "probe", repo))
    assert names
    for k, rel in enumerate(names):
        root = write_fake_checkout(tmp_path / f"c{k}", repo)
        outside = tmp_path / f"outside{k}"
        outside.mkdir()
        moved = root / rel if link == "file" else (root / rel).parent
        if moved == root:  # a file at the top: only the file itself can be a link
            moved = root / rel
        target = outside / moved.name
        shutil.move(str(moved), target)
        moved.symlink_to(target, target_is_directory=target.is_dir())
        with pytest.raises(PromptSourceError, match="outside the checkout") as info:
            load_book(SPECS[repo], root)
        assert "\n" not in str(info.value) and str(outside) in str(info.value), (rel, str(info.value))


def test_a_link_that_stays_inside_the_checkout_is_read(tmp_path: Path) -> None:
    root = write_fake_checkout(tmp_path / "umi", "umi")
    rel = files_read("umi", root)[0]
    shutil.move(str(root / rel), root / "real.py")
    (root / rel).symlink_to(root / "real.py")
    assert load_book(SPECS["umi"], root).templates


def test_checkout_data_refuses_paths_out_of_the_checkout(tmp_path: Path) -> None:
    root = tmp_path / "c"
    root.mkdir()
    (root / "m").write_text("x")
    (tmp_path / "secret").write_text("s")
    checkout = Checkout.open(root, "r", "m")
    for rel in ("../secret", "/etc/hostname", "a/../../secret"):
        with pytest.raises(PromptSourceError, match="outside the checkout"):
            checkout.data(rel)
    assert checkout.files == {}  # nothing outside was hashed into the provenance
