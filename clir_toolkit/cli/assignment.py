"""``clir assignment list|start|check``: the teaching kit's graded assignments."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from clir_toolkit.cli.commands import command_help
from clir_toolkit.cli.options import ranged

DEFAULT_DIR = Path("assignments")
MAX_TIME_LIMIT = 7 * 24 * 3600.0
"""The longest --time-limit, in seconds (a week): a larger one would overflow the clock."""
MAX_MEMORY_GIB = 1 << 20
"""The largest --memory-limit, in GiB (a pebibyte): a larger one overflows RLIMIT_AS."""


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add the command's parser to ``commands``."""
    from clir_toolkit.teaching import ASSIGNMENTS

    p = commands.add_parser(
        "assignment",
        help=command_help("assignment"),
        description="Assignments on the toolkit's own methods (docs/teaching.md): 'start' "
        "writes a skeleton to fill in, 'check' grades it against the toolkit's own code.",
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    listing = actions.add_parser("list", parents=[common], help="the assignments")
    listing.set_defaults(handler=cmd_list)
    for action, text in (
        ("start", "write the skeleton module of an assignment"),
        ("check", "grade a module; exit 1 unless every check passes"),
    ):
        a = actions.add_parser(action, parents=[common], help=text, description=text)
        a.add_argument("name", choices=list(ASSIGNMENTS), metavar="NAME",
                       help=f"one of: {', '.join(ASSIGNMENTS)}")  # fmt: skip
        a.add_argument("--dir", type=Path, default=DEFAULT_DIR,
                       help=f"the student's directory (default: {DEFAULT_DIR}/)")  # fmt: skip
        a.set_defaults(handler=cmd_start if action == "start" else cmd_check)
    check = a
    check.add_argument("--file", type=Path, help="the module to grade (default: DIR/NAME.py)")
    check.add_argument(
        "--reference",
        action="store_true",
        help="grade the toolkit's own implementation instead (full marks)",
    )
    check.add_argument(
        "--collection",
        type=Path,
        help="the collection whose dev queries the retrieval checks use (default: the French "
        "man pages in data/manpages-en-fr, built there when missing)",
    )
    check.add_argument(
        "--time-limit",
        type=ranged("--time-limit", float, minimum=None, above=0, maximum=MAX_TIME_LIMIT),
        default=60.0,
        metavar="SECONDS",
        help="wall-clock time the module may take per check, its import included (default: "
        "60); past it, its process is killed and the check fails",
    )
    check.add_argument(
        "--memory-limit",
        type=ranged("--memory-limit", float, minimum=None, above=0, maximum=MAX_MEMORY_GIB),
        default=4.0,
        metavar="GIB",
        help="address space of the module's process, in GiB (default: 4; torch alone "
        "takes about 0.7)",
    )


def cmd_list(args: argparse.Namespace) -> int:
    from clir_toolkit.teaching import ASSIGNMENTS, assignment

    for name in ASSIGNMENTS:
        item = assignment(name)
        print(f"{name:<16} {item.title} (~{item.minutes} min, {item.points} points)")
    return 0


def cmd_start(args: argparse.Namespace) -> int:
    from clir_toolkit.teaching import assignment
    from clir_toolkit.teaching.grading import write_skeleton

    path = write_skeleton(assignment(args.name), args.dir)
    print(f"wrote {path}: fill in the functions, then run: clir assignment check {args.name}"
          + (f" --dir {args.dir}" if args.dir != DEFAULT_DIR else ""))  # fmt: skip
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    from clir_toolkit.teaching import assignment
    from clir_toolkit.teaching.grading import format_grade, grade, student_path
    from clir_toolkit.teaching.sandbox import Limits

    item = assignment(args.name)
    path = None if args.reference else args.file or student_path(args.dir, item)
    limits = Limits(seconds=args.time_limit, memory=int(args.memory_limit * (1 << 30)))
    result = grade(item, path, args.collection, limits)
    print(format_grade(result))
    return 0 if result.passed else 1
