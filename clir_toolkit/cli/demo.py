"""``clir demo``: the end-to-end demonstration."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from clir_toolkit.cli.commands import command_help
from clir_toolkit.cli.options import add_workdir


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add the command's parser to ``commands``."""
    p = commands.add_parser(
        "demo",
        parents=[common],
        help=command_help("demo"),
        description="Build the English→French man-page collection (if missing), index it "
        "with use-m3's dense vectors, search its dev topics untranslated, translated by "
        "dictionary, written by people, and by the hybrid of the dictionary run and the dense "
        "run; then train the pipeline for the collection's own topics and run it, as clir "
        "pipeline train --in-domain and clir pipeline search do (the hybrid through the towers "
        "of use-m3 fine-tuned on the train split, reranked by K-NRM on use-m3's subword table "
        "at the λ best on the dev split; models reused when their inputs are unchanged); print "
        "the evaluation with significance tests. Progress goes to stderr (none with --quiet).",
    )
    p.add_argument(
        "--collection",
        type=Path,
        help="use this collection directory instead (e.g. tests/fixtures/tiny-fr)",
    )
    p.add_argument(
        "--lang", default="fr", help="man-page collection language when --collection is not given"
    )
    p.add_argument("--split", default="dev", help="topic split to evaluate (default: dev)")
    add_workdir(p, "data/, indexes/ and runs/")
    p.set_defaults(handler=cmd_demo)


def cmd_demo(args: argparse.Namespace) -> int:
    from clir_toolkit.experiments.demo import run_demo

    print(
        run_demo(
            args.collection, args.workdir, split=args.split, language=args.lang, quiet=args.quiet
        )
    )
    return 0
