"""``docs/cli.md``, the command-line reference, written from the parser itself.

Every command, its usage line and a table of its options (flags, what they take, help with
defaults) come from :func:`clir_toolkit.cli.build_parser`, the parser ``clir`` runs, so the
reference cannot drift from ``--help``; ``tests/test_docs.py`` fails when the committed file
is stale. Make it again with::

    python -m clir_toolkit.cli.reference > docs/cli.md
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator

#: Characters per line of the usage blocks: fixed, so the file does not depend on the terminal.
WIDTH = 100

_HEADER = """\
# Command-line reference

Generated from the parser by `python -m clir_toolkit.cli.reference > docs/cli.md`
(`tests/test_docs.py` fails when this file is stale); `clir COMMAND --help` says the same.

Every command takes the general options: `--quiet` (no progress bars or notes on stderr),
`--debug` (tracebacks of errors, and Java's own log lines) and `--java-heap SIZE` (the Java
heap, e.g. `4g`; default `$CLIR_JAVA_HEAP` or Java's own; more JVM options in
`$CLIR_JAVA_OPTIONS`). Results go to stdout, progress to stderr; bad input is one line on
stderr and exit status 1 (2 for options that do not fit) — see [guarantees.md](guarantees.md).
"""

#: Options every command has, described once in the header.
_GENERAL = {"--quiet", "--debug", "--java-heap", "-h", "--help"}


Subcommand = tuple[str, str, argparse.ArgumentParser]


def _subcommands(parser: argparse.ArgumentParser) -> Iterator[Subcommand]:
    """(name, one-line help, parser) of each sub-command of ``parser``, in declaration order."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            for name, sub in action.choices.items():
                yield name, helps.get(name, ""), sub


def _usage(parser: argparse.ArgumentParser) -> str:
    formatter = argparse.HelpFormatter(parser.prog, width=WIDTH)
    formatter.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups, "")
    return formatter.format_help().strip()


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _option_rows(parser: argparse.ArgumentParser) -> list[str]:
    formatter = argparse.HelpFormatter(parser.prog, width=WIDTH)
    rows = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) or _GENERAL & set(action.option_strings):
            continue
        name = ", ".join(action.option_strings) or action.dest
        takes = ""
        if action.nargs != 0:
            takes = formatter._format_args(action, action.dest.upper())
        help_text = formatter._expand_help(action) if action.help else ""
        if action.required and action.option_strings:
            help_text = f"(required) {help_text}"
        rows.append(f"| `{name}` | {_cell(f'`{takes}`' if takes else '')} | {_cell(help_text)} |")
    return rows


def _section(path: str, about: str, parser: argparse.ArgumentParser, level: int) -> list[str]:
    subcommands = list(_subcommands(parser))
    lines = [f"{'#' * level} `{path}`", ""]
    description = parser.description or about
    if description:
        lines += [_cell(description), ""]
    lines += ["```", _usage(parser), "```", ""]
    rows = _option_rows(parser)
    if rows:
        lines += ["| option | takes | meaning |", "|---|---|---|", *rows, ""]
    for name, sub_about, sub in subcommands:
        lines += _section(f"{path} {name}", sub_about, sub, min(level + 1, 4))
    return lines


def markdown(parser: argparse.ArgumentParser | None = None) -> str:
    """The whole reference as Markdown: the commands in ``clir --help``'s order."""
    if parser is None:
        from clir_toolkit.cli import build_parser

        parser = build_parser()
    lines = [_HEADER]
    commands = list(_subcommands(parser))
    lines += ["| command | what it does |", "|---|---|"]
    lines += [f"| [`clir {name}`](#clir-{name}) | {_cell(about)} |" for name, about, _ in commands]
    lines.append("")
    for name, about, sub in commands:
        lines += _section(f"clir {name}", about, sub, 2)
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":
    print(markdown(), end="")
