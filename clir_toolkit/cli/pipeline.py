"""``clir pipeline train|search``: the best pipeline, trained on the toolkit's collections and
run on a collection of the user's own (:mod:`clir_toolkit.pipeline`)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from clir_toolkit.cli.commands import command_help
from clir_toolkit.cli.options import (
    _ray_cluster,
    _ray_options,
    add_options,
    add_workdir,
    run_tag,
)
from clir_toolkit.cli.outputs import add_output


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add the command's parser to ``commands``."""
    from clir_toolkit.pipeline.definition import IN_DOMAIN_ENCODER, TRANSFER_ENCODER
    from clir_toolkit.search import BM25_PARAMS

    p = commands.add_parser(
        "pipeline",
        parents=[common],
        help=command_help("pipeline"),
        description="The best pipeline measured on collections its models never saw: the "
        "hybrid first stage (BM25 of the dictionary translation fused with a pretrained "
        "encoder's dense run) reranked by K-NRM, as one trained directory (docs/pipeline.md).",
    )
    actions = p.add_subparsers(dest="pipeline_command", metavar="ACTION", required=True)
    t = actions.add_parser(
        "train",
        parents=[common],
        help="train the pipeline's model on several collections at once",
        description="Train K-NRM on the train splits of several collections at once (the "
        "epoch kept is the best on their dev splits) and write DIR: the model and "
        "pipeline.json (stages, settings, collections, dev figures). Without --collection: "
        "the French and German man pages and package descriptions (hard), built under "
        "--workdir/data when missing. Indexes, runs and the model are reused when their "
        "inputs are unchanged.",
    )
    add_output(t, "--output", required=True, help="pipeline directory to write (e.g. models/all)")
    t.add_argument(
        "--collection",
        type=Path,
        action="append",
        help="a collection with a train split (repeat for several; default: the mix above)",
    )
    t.add_argument(
        "--in-domain",
        action="store_true",
        help="train for the one --collection's own topics: USE-m3 fine-tuned there carries the "
        "dense run, and λ is the best on its dev split (what clir demo does)",
    )
    t.add_argument(
        "--encoder",
        metavar="NAME",
        help="the first stage's dense encoder: use-m3, e5-small or hf:DIR, or several joined "
        "by commas (e5-small,use-m3: BM25 fused with each one's dense run) (default: "
        f"{TRANSFER_ENCODER}, chosen by transfer; in domain: {IN_DOMAIN_ENCODER}); the "
        "indexes searched need their vectors (clir index --dense NAME)",
    )
    add_workdir(t, "data/ and indexes/")
    t.set_defaults(handler=cmd_pipeline_train)

    s = actions.add_parser(
        "search",
        parents=[common],
        help="run a trained pipeline on a collection: no judgements needed",
        description="Search --topics over --index with the pipeline of --models: the hybrid "
        "first stage, then K-NRM reranking its top documents at the stored λ; write one TREC "
        "run. The index needs the pipeline encoder's vectors (clir index --dense).",
    )
    s.add_argument("--models", required=True, type=Path, help="directory of clir pipeline train")
    s.add_argument("--index", required=True, type=Path, help="index built by clir index --dense")
    s.add_argument("--topics", required=True, type=Path, help="topics: TSV qid<TAB>query, ...")
    s.add_argument(
        "--collection", type=Path, help="the documents (default: the index's collection)"
    )
    add_output(s, "--output", required=True, help="TREC run file to write")
    s.add_argument("--tag", default="pipeline", type=run_tag,
                   help="run tag, the 6th column (default: pipeline)")  # fmt: skip
    s.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"],
                   help="where the reranker scores (default: a GPU when there is one)")  # fmt: skip
    add_options(s, [BM25_PARAMS["threads"]])
    _ray_options(s, "run both stages", workers="chunks of topics, and scoring actors "
                 "(default: one per CPU of the cluster)")  # fmt: skip
    s.set_defaults(handler=cmd_pipeline_search)


def cmd_pipeline_train(args: argparse.Namespace) -> int:
    from clir_toolkit.pipeline import train_pipeline

    pipeline = train_pipeline(args.output, args.collection, args.workdir, quiet=args.quiet,
                              in_domain=args.in_domain, encoder=args.encoder)  # fmt: skip
    reranking = pipeline.reranking
    assert reranking is not None
    for figures in pipeline.dev:
        print(
            f"{figures['name']} dev ({figures['queries']} queries): nDCG@10 "
            f"{figures['nDCG@10']:.4f} ({figures['first_stage']}) → "
            f"{figures['reranked nDCG@10']:.4f} (K-NRM, λ {reranking.interpolate:g}, chosen on "
            f"{reranking.chosen_on})"
        )
    print(f"wrote {args.output / 'pipeline.json'}")
    return 0


def cmd_pipeline_search(args: argparse.Namespace) -> int:
    from clir_toolkit.pipeline import search_pipeline

    cluster, worker_env = _ray_cluster(args) if args.ray is not None else (None, None)
    search_pipeline(
        args.models, args.index, args.topics, args.output, collection=args.collection,
        threads=args.threads, device=args.device, tag=args.tag, quiet=args.quiet,
        cluster=cluster, workers=args.workers, worker_env=worker_env,
    )  # fmt: skip
    return 0
