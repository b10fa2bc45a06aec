"""``clir run``: TOML recipes, their runs and RESULTS.md (the experiments layer)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from clir_toolkit.cli.commands import command_help
from clir_toolkit.cli.options import _ray_cluster, _ray_options
from clir_toolkit.cli.outputs import add_output


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add the command's parser to ``commands``."""
    p = commands.add_parser(
        "run",
        parents=[common],
        help=command_help("run"),
        description="Run recipes (one TOML file per system) on their collections: build "
        "what is missing, write the runs under runs/, regenerate RESULTS.md beside the recipes.",
    )
    p.add_argument("recipes", nargs="+", type=Path, metavar="RECIPE.toml")
    add_output(p, "--results", help="where to write RESULTS.md (default: beside the first recipe)")
    p.add_argument(
        "--force",
        action="store_true",
        help="run every recipe again, even those whose runs are up to date",
    )
    _ray_options(p, "run the recipes' (recipe, language) jobs in parallel (the same runs, "
                 "models and RESULTS.md)")  # fmt: skip
    p.set_defaults(handler=cmd_run)

    p = commands.add_parser(
        "figures",
        parents=[common],
        help=command_help("figures"),
        description="Rewrite every figure that these markdown files quote from a results "
        'table, written as `[FIGURE](RESULTS.md "SECTION; ROW; COLUMN")`, from the table as '
        "it is now; with --check, list those that differ and change nothing (docs/evaluation.md).",
    )
    p.add_argument("documents", nargs="+", type=Path, metavar="FILE.md|DIR",
                   help="markdown files, or directories: every .md file below them")  # fmt: skip
    p.add_argument("--check", action="store_true",
                   help="change nothing; exit 1 if a figure differs from its table")  # fmt: skip
    p.set_defaults(handler=cmd_figures)


def cmd_run(args: argparse.Namespace) -> int:
    from clir_toolkit.experiments.runner import run_recipes

    cluster = _ray_cluster(args)[0] if args.ray is not None else None
    results = run_recipes(
        args.recipes, quiet=args.quiet, results=args.results, force=args.force, cluster=cluster
    )
    print(f"wrote {results}")
    return 0


def cmd_figures(args: argparse.Namespace) -> int:
    from clir_toolkit.errors import ClirError
    from clir_toolkit.experiments.figures import check, markdown_files, refresh

    documents = markdown_files(args.documents)
    if args.check:
        mismatches = check(documents)
        for mismatch in mismatches:
            print(mismatch)
        if mismatches:
            raise ClirError(f"{len(mismatches)} figures differ from their tables (clir figures "
                            "FILES rewrites them from the tables)")  # fmt: skip
        return 0
    for document in documents:
        changed = refresh(document)
        if changed:
            print(f"{document}: {changed} figures rewritten from their tables")
    return 0
