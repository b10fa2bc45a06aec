"""``clir assignment list|start|check``: the teaching kit's graded assignments."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

DEFAULT_DIR = Path("assignments")


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add the command's parser to ``commands``."""
    from clir_toolkit.teaching import ASSIGNMENTS

    p = commands.add_parser(
        "assignment",
        help="course assignments: re-implement a piece of the toolkit, graded against it",
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
    from clir_toolkit.teaching.grading import format_grade, grade, load_student, student_path

    item = assignment(args.name)
    if args.reference:
        module, source = item.reference(), "the toolkit's own implementation"
    else:
        path = args.file or student_path(args.dir, item)
        module, source = load_student(path), str(path)
    result = grade(item, module, source, args.collection)
    print(format_grade(result))
    return 0 if result.passed else 1
