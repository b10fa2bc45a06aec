"""``clir search`` (BM25 batch search into a TREC run) and ``clir translate`` (the translated
topics, for inspection).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from clir_toolkit.cli.commands import command_help
from clir_toolkit.cli.options import (
    _bm25_options,
    _dense_options,
    _feedback,
    _feedback_options,
    _ray_cluster,
    _ray_options,
    _read_topics,
    _topic_options,
    _translation,
    _translation_options,
    run_tag,
)
from clir_toolkit.cli.outputs import add_output
from clir_toolkit.errors import UsageError


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add the command's parser to ``commands``."""
    p = commands.add_parser(
        "search",
        parents=[common],
        help=command_help("search"),
        description="Search an index with every topic; write a TREC run.",
    )
    p.add_argument("--index", required=True, type=Path, help="index built by 'clir index'")
    _topic_options(p)
    add_output(p, "--output", stdout=True, required=True, help="TREC run file to write")
    _bm25_options(p)
    p.add_argument("--tag", default="clir", type=run_tag,
                   help="run tag, the 6th column (default: clir)")  # fmt: skip
    _translation_options(p)
    _feedback_options(p)
    _dense_options(p)
    _ray_options(p, "search the topics in parallel (the run file is the same as without)",
                 workers="chunks of topics (default: the cluster's CPUs)")  # fmt: skip
    p.set_defaults(handler=cmd_search)

    p = commands.add_parser(
        "translate",
        parents=[common],
        help=command_help("translate"),
        description="Write what a translator produces: .jsonl keeps each "
        "term's weighted alternatives, .tsv a bag per topic.",
    )
    _topic_options(p)
    add_output(p, "--output", stdout=True, required=True, help="T.translated.tsv or .jsonl")
    p.add_argument("--target-lang", help="document language (default: the --index's language)")
    p.add_argument("--index", type=Path, help="index whose language is the target language")
    _translation_options(p)
    p.set_defaults(handler=cmd_translate)


def cmd_search(args: argparse.Namespace) -> int:
    from clir_toolkit.index import read_index_info
    from clir_toolkit.search import search_to_run
    from clir_toolkit.translate.pipeline import build_queries

    if not (args.dense or args.hybrid) and (args.encoder or args.model or args.approximate):
        raise UsageError("--encoder, --model and --approximate are options of --dense and --hybrid")
    if args.hybrid_weight is not None and not args.hybrid:  # (None: the encoder's own)
        raise UsageError("--hybrid-weight is the dense run's weight in --hybrid: add --hybrid")
    info = read_index_info(args.index)  # once: the searcher is handed it
    language = info.language
    translation = _translation(args)
    topics = _read_topics(args)
    # --dense encodes the topics' own text: no translation to build
    queries = [] if args.dense else build_queries(topics, translation, language)
    options = {
        "hits": args.hits,
        "k1": args.k1,
        "b": args.b,
        "structure": translation.structure(args.structure),
        "tag": args.tag,
        "progress": not args.quiet,
        "feedback": _feedback(args),
    }
    if args.dense or args.hybrid:
        stats = _dense_search(args, topics, queries, {**options, "info": info})
    elif args.ray is not None:
        from clir_toolkit.distributed.search import search_to_run_on_ray

        cluster, worker_env = _ray_cluster(args)
        stats = search_to_run_on_ray(
            cluster, args.index, queries, args.output, workers=args.workers,
            worker_env=worker_env, **options,
        )  # fmt: skip
    else:
        stats = search_to_run(
            args.index, queries, args.output, threads=args.threads, info=info, **options
        )
    if not args.quiet:
        print(
            f"{stats.queries} queries, {stats.hits} hits → {args.output} ({stats.seconds:.2f} s)",
            file=sys.stderr,
        )
    return 0


def _dense_search(
    args: argparse.Namespace, topics: list, queries: list, options: dict[str, Any]
) -> Any:
    """``--dense`` or ``--hybrid``: the dense run alone, or fused with the BM25 run."""
    from clir_toolkit.search.dense import dense_search_to_run
    from clir_toolkit.search.hybrid import hybrid_search_to_run

    if args.dense and args.hybrid:
        raise UsageError("choose one of --dense (the dense run alone) and --hybrid (fused)")
    dense = {
        "encoder": args.encoder, "model": args.model, "approximate": args.approximate,
        "ef_search": args.ef_search,
    }  # fmt: skip
    if args.ray is not None:
        from clir_toolkit.distributed.dense import (
            dense_search_to_run_on_ray,
            hybrid_search_to_run_on_ray,
        )

        cluster, worker_env = _ray_cluster(args)
        spread = {"workers": args.workers, "worker_env": worker_env}
        if args.dense:
            return dense_search_to_run_on_ray(
                cluster, args.index, topics, args.output, hits=options["hits"],
                tag=options["tag"], progress=options["progress"], **dense, **spread,
            )  # fmt: skip
        del options["info"]  # each worker reads the index's sidecar itself
        return hybrid_search_to_run_on_ray(
            cluster, args.index, queries, topics, args.output,
            hybrid_weight=args.hybrid_weight, **dense, **options, **spread,
        )  # fmt: skip
    if args.dense:
        return dense_search_to_run(
            args.index, topics, args.output, hits=options["hits"], tag=options["tag"],
            progress=options["progress"], **dense,
        )  # fmt: skip
    return hybrid_search_to_run(
        args.index, queries, topics, args.output, hybrid_weight=args.hybrid_weight,
        threads=args.threads, **dense, **options,
    )  # fmt: skip


def cmd_translate(args: argparse.Namespace) -> int:
    from clir_toolkit.index import read_index_info
    from clir_toolkit.translate.pipeline import build_queries, write_translations

    if args.target_lang is None and args.index is None:
        raise UsageError("clir translate needs --target-lang L or --index IDX")
    language = args.target_lang or read_index_info(args.index).language
    queries = build_queries(_read_topics(args), _translation(args), language)
    write_translations(args.output, queries)
    if not args.quiet:
        for query in queries[:3]:
            print(f"{query.qid}: {query.describe()}", file=sys.stderr)
    return 0
