"""The command line page's synopsis and option tables, generated from `anytool`'s own parser, so that the page and
`--help` cannot disagree (issue 29 point 11):

    python scripts/cli_docs.py            # rewrite the generated parts of docs/cli.md
    python scripts/cli_docs.py --check    # exit 1, naming the parts, when the page differs from the parser

A generated part sits between `<!-- cli-docs: KIND COMMAND -->` and `<!-- /cli-docs -->`, where KIND is `synopsis`
(a text block of every command's usage line; COMMAND is `anytool`) or `options` (the usage line and the option
table of one command, e.g. `anytool index train`). Everything outside the markers is hand-written."""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / "docs" / "cli.md"
WIDTH = 116  # usage lines wrap here, whatever the terminal
PART = re.compile(r"(?P<open><!-- cli-docs: (?P<kind>synopsis|options) (?P<command>[\w -]+?) -->\n)(?P<body>.*?)"
                  r"(?P<close><!-- /cli-docs -->)", re.DOTALL)


def parsers(parser: argparse.ArgumentParser, name: str = "anytool") -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """(command, parser) for every command that takes options, depth first (`anytool index build`, ...)."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield name, parser
    for action in subs:
        for sub_name, sub in action.choices.items():
            yield from parsers(sub, f"{name} {sub_name}")


def formatter(parser: argparse.ArgumentParser) -> argparse.HelpFormatter:
    return argparse.HelpFormatter(parser.prog, width=WIDTH, max_help_position=40)


def usage(parser: argparse.ArgumentParser) -> str:
    """The usage line as `--help` prints it (without "usage: "), at a fixed width."""
    f = formatter(parser)
    f.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups, prefix="")
    return f.format_help().strip()


def cell(text: str) -> str:
    """Help text as a Markdown table cell: one line, with the characters Markdown would read escaped."""
    text = " ".join(text.split())
    for ch, escaped in (("\\", "\\\\"), ("|", "\\|"), ("*", "\\*"), ("<", "&lt;"), (">", "&gt;"), ("`", "\\`")):
        text = text.replace(ch, escaped)
    return text


def options_table(parser: argparse.ArgumentParser) -> str:
    """One row per option or argument (`-h` left out): how it is written, and its help with required / default."""
    f = formatter(parser)
    rows = ["| option | meaning |", "|---|---|"]
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        invocation = f._format_action_invocation(action)  # "--model M", "--solver {dfsdt,cot,umi}", "query"
        help_text = f._expand_help(action) if action.help else ""
        if action.required and action.option_strings:
            help_text = f"required. {help_text}"
        rows.append(f"| `{invocation}` | {cell(help_text)} |")
    return "\n".join(rows)


def generate(kind: str, command: str, parser: argparse.ArgumentParser) -> str:
    """The text of one generated part."""
    commands = dict(parsers(parser))
    if kind == "synopsis":
        return "```text\n" + "\n".join(usage(p) for p in commands.values()) + "\n```\n"
    if command not in commands:
        raise SystemExit(f"{PAGE}: no command {command!r}; commands: {', '.join(commands)}")
    sub = commands[command]
    out = f"```text\n{usage(sub)}\n```\n\n"
    if sub.description:
        out += sentence(sub.description) + "\n\n"
    out += options_table(sub) + "\n"
    if sub.epilog:
        out += "\n" + sentence(sub.epilog) + "\n"
    return out


def sentence(text: str) -> str:
    """A description or epilog as a sentence of the page."""
    text = cell(text).replace("\\|", "|")
    return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")


def render(text: str, parser: argparse.ArgumentParser) -> str:
    """`text` with every generated part regenerated."""
    return PART.sub(lambda m: m["open"] + generate(m["kind"], m["command"], parser) + m["close"], text)


def stale(text: str, parser: argparse.ArgumentParser) -> list[str]:
    """The generated parts of `text` that differ from what the parser gives."""
    return [f"{m['kind']} {m['command']}" for m in PART.finditer(text)
            if m["body"] != generate(m["kind"], m["command"], parser)]


def main(argv: list[str] | None = None) -> int:
    cli = argparse.ArgumentParser(description="Regenerate the generated parts of docs/cli.md from anytool's parser.")
    cli.add_argument("--check", action="store_true", help="change nothing; exit 1 when a part is out of date")
    check = cli.parse_args(argv).check
    from langgraph_anytool.cli.app import build_parser

    parser = build_parser()
    text = PAGE.read_text(encoding="utf-8")
    if check:
        parts = stale(text, parser)
        if parts:
            print(f"{PAGE.relative_to(REPO)}: out of date with the parser: {', '.join(parts)}; "
                  "run python scripts/cli_docs.py", file=sys.stderr)
        return 1 if parts else 0
    PAGE.write_text(render(text, parser), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
