"""``clir completion bash|zsh|tcsh``: shell completion scripts."""

from __future__ import annotations

import argparse
from typing import Any

from clir_toolkit.cli.commands import command_help


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add the command's parser to ``commands``."""
    p = commands.add_parser(
        "completion",
        help=command_help("completion"),
        description="Print a completion script for clir's commands, options and choices; "
        "e.g. clir completion bash > ~/.local/share/bash-completion/completions/clir",
    )
    p.add_argument("shell", choices=["bash", "zsh", "tcsh"])
    p.set_defaults(handler=cmd_completion)


def cmd_completion(args: argparse.Namespace) -> int:
    """``clir completion SHELL``: the completion script shtab generates from the parser."""
    import shtab

    from clir_toolkit.cli import build_parser

    print(shtab.complete(build_parser(), shell=args.shell))
    return 0
