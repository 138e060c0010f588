"""Attack classes on `prompts_from` (issue 34 §3), for `benchmarks/hardening.py`: a checkout of the authors'
repository is data we did not write. Constants whose `.replace` calls grow them past any memory, sums of thousands
of terms, constants nested past Python's recursion limit, and every file a prompt book reads made a symbolic link
(the file, or its folder) to a copy outside the checkout.

An attempt holds when the book is refused with one `PromptSourceError` line naming the file (and the constant),
within seconds and without building the text; or, for a long but well-formed sum, read exactly. Run one class
alone: `python benchmarks/hardening_attacks/checkout.py CLASS`.
"""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.hardening_attacks.local import _workdir  # noqa: E402


def _refused(load: Callable[[], object], *needles: str, seconds: float = 20) -> bool:
    from langgraph_anytool.paper_prompts import PromptSourceError

    started = time.monotonic()
    try:
        load()
    except PromptSourceError as exc:
        text = str(exc)
        return "\n" not in text and all(n in text for n in needles) and time.monotonic() - started < seconds
    except Exception:  # a traceback (a MemoryError too: the class's address-space limit was reached)
        return False
    return False


def constants() -> tuple[int, int]:
    """`.replace` bombs (growth by 2 to 10⁶ per call, 1 to 40 calls, the empty string, same-size ping-pong over
    20 M characters), sums of 990 to 50,000 terms, and sums, calls and parentheses nested 990 to 3,000 deep."""
    from langgraph_anytool.paper_prompts import load_book
    from langgraph_anytool.paper_prompts.book import BookSpec, Slot

    spec = BookSpec("test/repo", "p.py", (("x", Slot("p.py", "P", "replace", ())),))
    results: list[bool] = []
    with _workdir() as tmp:
        source = tmp / "p.py"

        def attempt(body: str, *needles: str) -> None:
            source.write_text(f"P = {body}\n")
            results.append(_refused(lambda: load_book(spec, tmp), "p.py", *needles))

        for seed in (1, 1_000, 400_000):
            for grow in (2, 10, 1_000, 1_000_000):
                calls = next(k for k in range(1, 60) if seed * grow ** k > 1_000_000)
                attempt(f"'{'x' * seed}'" + f".replace('x', '{'x' * grow}')" * calls, "refused")
        attempt("'abc'.replace('', '" + "y" * 1_000_000 + "')", "refused")
        for pairs in (12, 20, 40):
            attempt("'" + "a" * 900_000 + "'" + ".replace('a', 'b').replace('b', 'a')" * pairs, "refused")
        for terms in (990, 5_000, 50_000):  # long but well formed: read exactly, or one line
            source.write_text("P = " + " + ".join(["'a'"] * terms) + "\n")
            try:
                book = load_book(spec, tmp)
                results.append(book.templates["x"].text == "a" * terms)
            except Exception as exc:  # any other exception than the one-line refusal is a break
                from langgraph_anytool.paper_prompts import PromptSourceError

                results.append(isinstance(exc, PromptSourceError) and "\n" not in str(exc))
        for depth in (990, 2_000, 3_000):
            attempt("".join(["('a' + "] * depth) + "'a'" + ")" * depth)
            attempt("'{x}'" + ".replace('{x}', y)" * depth)
            attempt("'a'" + ".replace('a', 'a')" * depth)
    return len(results), sum(results)


def checkout_links() -> tuple[int, int]:
    """Each file each of the four prompt books reads (AnyTool, α-UMi, OPPO, ToolEval: the prompt files, `scripts/`,
    ToolEval's `config.yaml` and `template.txt`), and each folder holding one, made a link to a copy outside the
    checkout; and paths with `..` or absolute ones asked of the checkout directly."""
    from langgraph_anytool.paper_prompts import load_book
    from langgraph_anytool.paper_prompts.source import Checkout
    from langgraph_anytool.paper_prompts.testing import SPECS, write_fake_checkout

    results: list[bool] = []
    with _workdir() as tmp:
        n = 0
        for repo, spec in sorted(SPECS.items()):
            files = sorted(load_book(spec, write_fake_checkout(tmp / f"probe-{repo}", repo)).files)
            for rel in files:
                parents = [p for p in Path(rel).parents if p != Path(".")]
                for target in [rel, *[p.as_posix() for p in parents]]:
                    n += 1
                    root = write_fake_checkout(tmp / f"c{n}", repo)
                    outside = tmp / f"outside{n}"
                    outside.mkdir()
                    moved = root / target
                    copy = outside / moved.name
                    shutil.move(str(moved), copy)
                    moved.symlink_to(copy, target_is_directory=copy.is_dir())
                    results.append(_refused(lambda spec=spec, root=root: load_book(spec, root), "outside the checkout", str(outside)))
            checkout = Checkout.open(tmp / f"probe-{repo}", spec.repo, spec.marker)
            for rel in ("../x", "/etc/hostname", f"{files[0]}/../../../x", "a/../../x"):
                results.append(_refused(lambda rel=rel, checkout=checkout: checkout.data(rel), "outside the checkout"))
    return len(results), sum(results)


ATTACKS: list[tuple[str, Callable[[], tuple[int, int]]]] = [
    ("prompts_from constants", constants),
    ("prompts_from links out of the checkout", checkout_links),
]


if __name__ == "__main__":  # each class in a fresh process, as benchmarks/hardening.py runs them
    from benchmarks.hardening import main

    sys.exit(main(["--only", *(sys.argv[1:] or [name for name, _ in ATTACKS])]))
