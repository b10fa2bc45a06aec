"""``clir compare``: one run against a baseline, query by query, with a chart."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from clir_toolkit.cli.commands import command_help
from clir_toolkit.cli.options import ranged
from clir_toolkit.cli.outputs import add_output
from clir_toolkit.errors import UsageError
from clir_toolkit.evaluate.compare import DEFAULT_MEASURE, DEFAULT_TOP
from clir_toolkit.evaluate.compare_plot import PLOT_SUFFIXES
from clir_toolkit.evaluate.significance import TESTS


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add the command's parser to ``commands``."""
    p = commands.add_parser(
        "compare",
        parents=[common],
        help=command_help("compare"),
        description="Compare RUN_B with the baseline RUN_A on one measure, query by query: "
        "the per-query deltas, wins/ties/losses, the mean delta and a paired test's p-value, "
        "and the queries won and lost most. --plot draws the deltas sorted from the largest "
        "gain to the largest loss.",
    )
    p.add_argument("baseline", type=Path, metavar="RUN_A", help="the baseline TREC run")
    p.add_argument("run", type=Path, metavar="RUN_B", help="the TREC run compared with it")
    p.add_argument("--qrels", required=True, type=Path, help="TREC qrels (graded)")
    p.add_argument(
        "--measure",
        default=DEFAULT_MEASURE,
        help=f"one ir_measures name, e.g. AP or P(rel=2)@5 (default: {DEFAULT_MEASURE})",
    )
    p.add_argument("--topics", type=Path, help="topics, to show the text of each query listed")
    p.add_argument(
        "--top",
        type=ranged("--top"),
        default=DEFAULT_TOP,
        metavar="K",
        help=f"list the K largest wins and losses (default: {DEFAULT_TOP})",
    )
    p.add_argument(
        "--test",
        default="ttest",
        choices=TESTS,
        help="paired test (default: ttest)",
    )
    add_output(
        p,
        "--plot",
        metavar="FILE",
        help=f"write the sorted per-query delta chart to FILE ({', '.join(PLOT_SUFFIXES)}); "
        "an .html page also holds the tables of the largest wins and losses",
    )
    p.set_defaults(handler=cmd_compare)


def cmd_compare(args: argparse.Namespace) -> int:
    from clir_toolkit.evaluate import compare_runs, format_comparison, write_plot
    from clir_toolkit.evaluate.compare_plot import check_plot_path

    if args.top < 1:
        raise UsageError(f"--top must be at least 1 (got {args.top})")
    if args.plot is not None:
        check_plot_path(args.plot)  # before the evaluation: a wrong name fails at once
    comparison = compare_runs(
        args.qrels,
        args.baseline,
        args.run,
        measure=args.measure,
        topics=args.topics,
        test=args.test,
    )
    if args.plot is not None:
        write_plot(comparison, args.plot, top=args.top)
    print(format_comparison(comparison, top=args.top))
    if args.plot is not None and not args.quiet:
        print(f"chart → {args.plot}", file=sys.stderr)
    return 0
