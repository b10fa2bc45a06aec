"""``clir fuse``: several TREC runs of the same topics fused into one."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from clir_toolkit.cli.commands import command_help
from clir_toolkit.cli.options import add_options, run_tag
from clir_toolkit.cli.outputs import add_output


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add the command's parser to ``commands``."""
    from clir_toolkit.search.fusion import FUSION_PARAMS

    p = commands.add_parser(
        "fuse",
        parents=[common],
        help=command_help("fuse"),
        description="Fuse runs of the same topics query by query: reciprocal rank fusion, or "
        "a (weighted) sum of per-query normalised scores; a document a run did not retrieve "
        "counts 0 there. Ties are broken by docid as trec_eval reads a run.",
    )
    p.add_argument("runs", nargs="+", type=Path, metavar="RUN", help="TREC runs (two or more)")
    add_output(p, "--output", stdout=True, required=True, help="the fused TREC run to write")
    p.add_argument(
        "--tag", type=run_tag, help="run tag, the 6th column (default: the method's name)"
    )
    add_options(p, FUSION_PARAMS.values())
    p.set_defaults(handler=cmd_fuse)


def cmd_fuse(args: argparse.Namespace) -> int:
    from clir_toolkit.search.fusion import fuse_runs

    report = fuse_runs(
        args.runs, args.output, args.method, weights=args.weights, normalisation=args.normalise,
        rrf_k=args.rrf_k, depth=args.depth, tag=args.tag,
    )  # fmt: skip
    if not args.quiet:
        print(
            f"{report.runs} runs fused ({args.method}): {report.queries} queries, "
            f"{report.rows} rows → {args.output}",
            file=sys.stderr,
        )
    return 0
