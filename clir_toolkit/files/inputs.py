"""An output is never an input: :func:`check_not_an_input` refuses, before any work, an
output that is (through symbolic or hard links) one of the command's inputs, or that lies
inside an index or a collection directory."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from clir_toolkit.errors import OutputError
from clir_toolkit.files.atomic import absolute, is_stdout


def _same_file(first: Path, second: Path) -> bool:
    """Whether two paths name one file: the same real path, or the same inode (hard links,
    bind mounts)."""
    if os.path.realpath(first) == os.path.realpath(second):
        return True
    try:
        a, b = os.stat(first), os.stat(second)
    except OSError:
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def check_not_an_input(
    output: str | Path,
    inputs: Iterable[str | Path],
    *,
    containers: Mapping[str, Callable[[Path], bool]],
    option: str | None = None,
) -> None:
    """Refuse, in one line and before any work, to write ``output`` where it would destroy
    what the command reads or what the toolkit built.

    ``inputs``: the command's input paths; the output may not be one of them, through
    symbolic or hard links, nor a directory that holds one. ``containers``: what a kind of
    directory is → whether a directory is one (``"an index"`` → holds
    ``clir-index.json``); the output may not lie inside such a directory (a file of a
    collection or of an index, whose checksums and Lucene files must stay as they were
    built), though it may be one (``clir index`` replaces an index). ``option`` names the
    output in the message.
    """
    if is_stdout(output):
        return
    named = f"{option} {output}" if option else str(output)
    real = Path(os.path.realpath(absolute(output)))
    for given in inputs:
        if is_stdout(given):
            continue
        if _same_file(Path(output), Path(given)):
            raise OutputError(
                f"{named}: is the input {given}; writing it would destroy that input, so "
                "nothing was changed (choose another output path)"
            )
        if real in Path(os.path.realpath(absolute(given))).parents:  # a directory replaced
            raise OutputError(
                f"{named}: holds the input {given}; replacing it would destroy that input, "
                "so nothing was changed (choose another output path)"
            )
    for directory in real.parents:
        for what, is_one in containers.items():
            if is_one(directory):
                raise OutputError(
                    f"{named}: is inside {what} ({directory}), whose files must stay as they "
                    "were built; nothing was changed (write it outside that directory)"
                )
