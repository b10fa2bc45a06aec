"""``clir bench scale``: the cost of each command as the collection grows
(:mod:`clir_toolkit.bench_scale`)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from clir_toolkit.cli.options import ranged


def register_scale(bench: Any, common: argparse.ArgumentParser) -> None:
    """``clir bench scale``: the cost of each command as the collection grows."""
    b = bench.add_parser(
        "scale",
        parents=[common],
        help="wall, CPU and memory of each command at N documents (a real collection "
        "repeated), against Anserini's IndexCollection and SearchCollection",
        description="Repeat a collection's documents to each N of --docs (replica k of d "
        "under the docid d~k; its first --topics topics of --split and their qrels), then run "
        "each command --runs times in a fresh process (the medians): clir index (against "
        "IndexCollection), clir search top 1000 with one thread and the default (against "
        "SearchCollection, whose run is compared), --translate dict, clir eval and clir fuse "
        "of those runs, with --rerank-topics clir rerank score of the dictionary run (use-m3, "
        "--rerank-model), and up to --dense-docs documents clir index --dense use-m3 and clir "
        "search --dense. Prints a markdown table and each step's growth exponent "
        "(docs/speed.md).",
    )
    b.add_argument("--collection", required=True, type=Path,
                   help="the collection repeated (e.g. data/ddtp-en-fr-hard)")  # fmt: skip
    b.add_argument("--docs", nargs="+", required=True, metavar="N",
                   type=ranged("--docs", maximum=100_000_000),
                   help="collection sizes measured, in documents")  # fmt: skip
    b.add_argument("--topics", type=ranged("--topics", maximum=1_000_000), default=1000,
                   help="topics searched (the first of the split; default 1000)")  # fmt: skip
    b.add_argument("--split", default="dev", help="the split whose topics and qrels are used")
    b.add_argument("--workdir", type=Path, default=Path("bench-scale"),
                   help="where the collections, indexes and runs of each size are kept "
                   "(default: bench-scale; a collection already there is reused)")  # fmt: skip
    b.add_argument("--dense-docs", type=ranged("--dense-docs", minimum=0, maximum=100_000_000),
                   default=0, metavar="M",
                   help="also time clir index --dense use-m3 and clir search --dense at the "
                   "sizes up to M documents (default 0: none; use-m3 encodes about 200 "
                   "documents/s a core, docs/speed.md)")  # fmt: skip
    b.add_argument("--rerank-topics", type=ranged("--rerank-topics", minimum=0,
                   maximum=1_000_000), default=0, metavar="N",
                   help="also time clir rerank score of the dictionary run's first N topics, "
                   "top 100 each, by use-m3 and by --rerank-model (default 0: none)")  # fmt: skip
    b.add_argument("--rerank-model", type=Path, metavar="M.pt",
                   help="a model of clir rerank train (e.g. K-NRM) timed beside use-m3")
    b.add_argument("--runs", type=ranged("--runs", maximum=1000), default=1,
                   help="runs of each command, the median kept (default 1; one run varies "
                   "by about 10 percent on a busy machine)")  # fmt: skip
    b.add_argument("--no-anserini", action="store_true", help="time clir alone")
    b.set_defaults(handler=cmd_bench_scale)


def cmd_bench_scale(args: argparse.Namespace) -> int:
    import os

    from clir_toolkit.bench_scale import bench_scale, format_bench_scale

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    steps = bench_scale(
        args.collection, args.docs, args.workdir, topics=args.topics, split=args.split,
        dense_docs=args.dense_docs, anserini=not args.no_anserini, runs=args.runs,
        quiet=args.quiet, rerank_topics=args.rerank_topics, rerank_model=args.rerank_model,
    )  # fmt: skip
    print(format_bench_scale(steps, load))
    return 0
