"""``clir eval``: evaluate runs side by side, with paired significance tests."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from clir_toolkit.cli.commands import command_help


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add the command's parser to ``commands``."""
    p = commands.add_parser(
        "eval",
        parents=[common],
        help=command_help("eval"),
        description="Evaluate runs with ir_measures; paired significance "
        "tests against a baseline run.",
    )
    p.add_argument("--qrels", required=True, type=Path, help="TREC qrels (graded)")
    p.add_argument("runs", nargs="+", type=Path, metavar="RUN", help="TREC run files")
    p.add_argument(
        "--measures",
        help='ir_measures names, e.g. "nDCG@10 P(rel=2)@1 AP" (default: the seeds\' nine measures)',
    )
    p.add_argument("--baseline", help="run (path or name) the others are tested against")
    p.add_argument(
        "--test",
        default="ttest",
        choices=["ttest", "wilcoxon"],
        help="paired test (default: ttest)",
    )
    p.add_argument(
        "--correction",
        default="holm",
        choices=["holm", "bonferroni", "none"],
        help="multiple-comparison correction across runs (default: holm)",
    )
    p.add_argument("--alpha", type=float, default=0.05, help="significance level (default: 0.05)")
    p.add_argument(
        "--format",
        default="table",
        choices=["table", "markdown", "csv", "json"],
        help="output format (default: table)",
    )
    p.add_argument(
        "--per-query",
        action="store_true",
        help="also print per-query values (see clir compare for the queries one run "
        "won and lost against another, and a plot)",
    )
    p.set_defaults(handler=cmd_eval)


def cmd_eval(args: argparse.Namespace) -> int:
    from clir_toolkit.evaluate import evaluate_runs, format_result

    result = evaluate_runs(
        args.qrels,
        args.runs,
        measures=args.measures,
        baseline=args.baseline,
        test=args.test,
        correction=args.correction,
        alpha=args.alpha,
    )
    if not args.quiet:
        for line in result.coverage_warnings(args.qrels):
            print(f"clir: warning: {line}", file=sys.stderr)
    print(format_result(result, args.format, per_query=args.per_query))
    return 0
