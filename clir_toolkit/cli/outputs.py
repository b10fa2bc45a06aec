"""The options that name what a command writes, and the one check they all get.

Every option naming an output is declared with :func:`add_output`, which records it on the
command's parser. Before a command's handler runs, :func:`check_outputs` refuses, in one
line and before any work, an output that would destroy what the command reads (see
:func:`clir_toolkit.files.check_not_an_input`): one of its input files (through symbolic
or hard links), or a file inside an index or a collection. Every other path option of the
command is an input, so a new option is covered without being listed anywhere; so is every
existing file that a text option names (``--dict d.tsv``, ``--mt file:mt.tsv``, ``--embed
a.vec,b.vec``: :func:`_named_in_text`).

``-`` follows the convention of command-line tools where it makes sense: it is standard
output for the outputs declared with ``stdout=True`` (a run, translated topics); elsewhere,
and as an input, it is refused in one line rather than taken as a file named ``-``
(``./-`` names such a file).
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clir_toolkit.errors import UsageError
from clir_toolkit.files import check_not_an_input, is_stdout

DECLARED = "output_options"
"""Where the namespace of a parsed command keeps its :class:`Output` declarations."""


def _is_index(directory: Path) -> bool:
    from clir_toolkit.index import SIDECAR

    return (directory / SIDECAR).is_file()


def _is_collection(directory: Path) -> bool:
    from clir_toolkit.collection import CORPUS_NAMES, MANIFEST

    return (directory / MANIFEST).is_file() and any(
        (directory / name).is_file() for name in CORPUS_NAMES
    )


CONTAINERS = {"an index": _is_index, "a collection": _is_collection}
"""Directories whose files no output may replace, and how each kind is recognised."""


@dataclass(frozen=True)
class Output:
    """One option naming an output of a command."""

    dest: str
    flag: str
    stdout: bool
    """Whether ``-`` (standard output) is accepted."""


def add_output(parser: Any, flag: str, *, stdout: bool = False, **options: Any) -> None:
    """Add the option ``flag`` (a path) naming an output of the command of ``parser`` (a
    parser or one of its argument groups); ``stdout``: ``-`` means standard output."""
    if stdout:
        options["help"] = options.get("help", "file to write") + " ('-': standard output)"
    action = parser.add_argument(flag, type=Path, **options)
    declared = parser.get_default(DECLARED) or ()
    parser.set_defaults(**{DECLARED: (*declared, Output(action.dest, flag, stdout))})


def _paths(value: Any) -> list[Path]:
    values = value if isinstance(value, list | tuple) else [value]
    return [item for item in values if isinstance(item, Path)]


def _named_in_text(value: Any) -> list[Path]:
    """The existing files or directories a text option's value may name: the value itself, and
    each part of it between commas or plus signs, with or without a ``prefix:`` (``file:T.tsv``,
    ``hf:DIR``, ``use-m3-tokens:TEXT.txt``). A text that names nothing on disk names no input."""
    if not isinstance(value, str) or not value:
        return []
    parts = {value, *value.replace("+", ",").split(",")}
    candidates = {*parts, *(part.split(":", 1)[1] for part in parts if ":" in part)}
    return [Path(text) for text in sorted(candidates) if text and os.path.exists(text)]


def check_outputs(args: argparse.Namespace) -> None:
    """Refuse, before the command runs, an output that is one of its inputs or lies inside an
    index or a collection, and a ``-`` where it means nothing (see the module's doc)."""
    outputs: tuple[Output, ...] = getattr(args, DECLARED, None) or ()
    destinations = {output.dest for output in outputs}
    inputs = [
        path
        for dest, value in vars(args).items()
        if dest not in destinations
        for path in [*_paths(value), *_named_in_text(value)]
    ]
    for path in inputs:
        if is_stdout(path):
            raise UsageError(
                "'-' (standard input) is not read by clir: give the input's file name "
                "(./- for a file named '-')"
            )
    for output in outputs:
        value = getattr(args, output.dest, None)
        if value is None:
            continue
        if is_stdout(value) and not output.stdout:
            raise UsageError(
                f"{output.flag} -: this output cannot go to standard output; give a path "
                "(./- for a file named '-')"
            )
        check_not_an_input(value, inputs, containers=CONTAINERS, option=output.flag)
