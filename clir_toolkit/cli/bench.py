"""``clir bench search|commands|rerank|dense``: speed benchmarks (``scale``:
:mod:`clir_toolkit.cli.bench_scale`)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from clir_toolkit.cli.bench_scale import register_scale
from clir_toolkit.cli.commands import command_help
from clir_toolkit.cli.options import (
    _bm25_options,
    _ray_cluster,
    _ray_options,
    _read_topics,
    _topic_options,
    _translation,
    _translation_options,
    ranged,
)
from clir_toolkit.compute.threads import MAX_THREADS
from clir_toolkit.errors import UsageError

DENSE_DOCUMENTS = 200
"""``clir bench dense --documents``' default (:data:`clir_toolkit.bench_dense.DEFAULT_DOCUMENTS`,
not imported here: listing the commands stays cheap)."""


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add the command's parser to ``commands``."""
    from clir_toolkit.rerank import MODEL_NAMES  # the rerankers' names, read when listed

    p = commands.add_parser(
        "bench",
        parents=[common],
        help=command_help("bench"),
        description="Speed benchmarks; figures go to the README.",
    )
    bench = p.add_subparsers(dest="bench", metavar="WHAT", required=True)
    b = bench.add_parser(
        "search", parents=[common], help="queries/s of clir search vs Anserini's batch_search"
    )
    b.add_argument("--index", required=True, type=Path)
    _topic_options(b)
    _bm25_options(b)
    _translation_options(b)
    b.add_argument("--repeat", type=ranged("--repeat", maximum=1000), default=3,
                   help="timed repetitions, best kept (default 3)")  # fmt: skip
    _ray_options(b, "instead: time clir search against one process (warm, the cluster's "
                 "start apart)", workers="with --ray: chunks of topics")  # fmt: skip
    b.add_argument(
        "--shards",
        type=ranged("--shards", maximum=MAX_THREADS),
        default=1,
        metavar="N",
        help="with --ray: index the collection again into N shards on the cluster and one "
        "index here, and time building and searching both (default: 1, the index as it is)",
    )
    b.set_defaults(handler=cmd_bench_search)
    b = bench.add_parser(
        "commands",
        parents=[common],
        help="whole commands from a cold shell: clir --help, one query, all topics vs Anserini",
        description="Time whole commands, each in a fresh process as a user types it (wall "
        "and CPU seconds, peak memory; the median of --runs): clir --help; clir search of the "
        "first topic, untranslated and translated; clir search of every topic, --threads 1 "
        "and then with its default threads (one per core), against Anserini's own "
        "SearchCollection with as many threads on the same index and topics, taken in turns, "
        "with both runs compared (same scores, the same ranks up to ties).",
    )
    b.add_argument("--index", required=True, type=Path)
    _topic_options(b)
    b.add_argument("--hits", type=int, default=100, help="documents per topic (default 100)")
    b.add_argument("--runs", type=int, default=5, help="timed runs of each (default 5)")
    b.add_argument("--warmup", type=int, default=1, help="untimed runs first (default 1)")
    b.add_argument(
        "--translate",
        default="dict",
        help="the translator of the one-query row ('none': no such row; default dict)",
    )
    b.add_argument(
        "--no-anserini", action="store_true", help="time clir search alone, without Anserini"
    )
    b.set_defaults(handler=cmd_bench_commands)
    b = bench.add_parser(
        "rerank",
        parents=[common],
        help="pairs/s scored and training steps/s of K-NRM and the dual encoder",
        description="Scoring throughput and training speed of the rerankers on random ids, "
        "on the CPU and on CUDA when torch sees a GPU (with the implied share of the GPU's "
        "memory bandwidth).",
    )
    b.add_argument(
        "--models",
        nargs="+",
        choices=MODEL_NAMES,
        help="rerankers measured: the registered names (clir rerank train --model); "
        "default: the built-in ones",
    )
    b.add_argument("--encoder", default="avg", choices=["avg", "cnn", "lstm"])
    b.add_argument(
        "--device",
        default="auto",
        choices=["auto", "cpu", "cuda"],
        help="auto: the CPU, and CUDA when present (default)",
    )
    b.add_argument("--precision", default="fp32", choices=["fp32", "bf16", "fp16"])
    b.add_argument("--query-len", type=int, default=10)
    b.add_argument("--doc-len", type=int, default=300)
    b.add_argument("--dim", type=int, default=300)
    b.add_argument("--query-vocab", type=int, default=50_000)
    b.add_argument("--doc-vocab", type=int, default=100_000)
    b.add_argument(
        "--batch-size",
        type=int,
        help="pairs per scoring batch (default: clir rerank score's, 256 on the CPU and 4096 "
        "on CUDA)",
    )
    b.add_argument("--train-batch-size", type=int, default=128)
    b.add_argument("--warmup", type=int, default=3, help="untimed calls first (default 3)")
    b.add_argument("--seconds", type=float, default=2.0, help="time per measurement (default 2)")
    b.add_argument(
        "--threads",
        type=ranged("--threads", maximum=MAX_THREADS),
        help="CPU threads for torch (default: the toolkit's choice, all cores but one, "
        "unless OMP_NUM_THREADS is set)",
    )
    b.add_argument(
        "--compile",
        action="store_true",
        help="fuse K-NRM's kernel pooling with torch.compile before scoring",
    )
    b.add_argument(
        "--peak-bandwidth-gbs",
        type=float,
        default=3350.0,
        help="GPU memory bandwidth for the bandwidth share (default: H100 SXM, 3350)",
    )
    real = b.add_argument_group(
        "one epoch on a real collection (instead of random ids)",
        "time clir rerank train's steps on a collection's training split and the first-stage "
        "run of its negatives, and print the epoch time they imply",
    )
    real.add_argument("--collection", type=Path, help="collection directory")
    real.add_argument("--run", type=Path, help="first-stage run of the split (negatives)")
    real.add_argument("--split", default="train", help="the split trained on (default train)")
    b.set_defaults(handler=cmd_bench_rerank)
    _register_dense(bench, common)
    register_scale(bench, common)


def _register_dense(bench: Any, common: argparse.ArgumentParser) -> None:
    """``clir bench dense``: the speed and size of dense retrieval."""
    b = bench.add_parser(
        "dense",
        parents=[common],
        help="encoding documents/s and queries/s, dense search queries/s (exact, HNSW), "
        "HNSW recall, disk and memory per 10,000 documents",
        description="For an index with vectors (clir index --dense [--hnsw M]): documents/s "
        "and queries/s of each encoder at each thread count (each in a fresh process, its "
        "threads set before the encoder loads), queries/s of exact and HNSW search of the "
        "topics (query encoding excluded) and HNSW's recall against exact, and disk and "
        "memory per 10,000 documents (file sizes; resident set growth on reading). Prints a "
        "markdown table with the command and the load average at its start and end; each "
        "rate with its wall and CPU seconds and the thread pools its process ran with.",
    )
    b.add_argument("--index", required=True, type=Path, help="an index with dense vectors")
    _topic_options(b)
    b.add_argument(
        "--encoders",
        nargs="+",
        metavar="NAME",
        help="encoders whose speed is measured (registered names or hf:DIR); default: the "
        "one that made the index's vectors",
    )
    b.add_argument(
        "--threads",
        nargs="+",
        type=ranged("--threads", maximum=MAX_THREADS),
        metavar="N",
        help="thread counts measured (default: 1 and the usable cores)",
    )
    b.add_argument(
        "--documents",
        type=int,
        default=DENSE_DOCUMENTS,
        metavar="N",
        help=f"the first N documents of the index's collection are encoded (default "
        f"{DENSE_DOCUMENTS}; 0: no document-encoding rows)",
    )
    b.add_argument("--hits", type=int, default=100, help="documents per query (default 100)")
    b.add_argument(
        "--ef-search", type=int, metavar="EF", help="HNSW's candidate list (default: clir "
        "search's, raised to --hits when smaller)",
    )  # fmt: skip
    b.add_argument("--repeat", type=ranged("--repeat", maximum=1000), default=3,
                   help="timed repetitions, best kept (default 3)")  # fmt: skip
    b.set_defaults(handler=cmd_bench_dense)


def cmd_bench_search(args: argparse.Namespace) -> int:
    from clir_toolkit.bench import bench_search, format_bench_search
    from clir_toolkit.compute.threads import usable_cores

    translation = _translation(args)
    if args.ray is not None:
        return _bench_search_on_ray(args, translation)
    if args.shards != 1:
        raise UsageError("--shards needs --ray (the sharded index is built and searched there)")
    result = bench_search(
        args.index,
        _read_topics(args),
        hits=args.hits,
        k1=args.k1,
        b=args.b,
        structure=translation.structure(args.structure),
        threads=args.threads or usable_cores(),
        repeat=args.repeat,
        translation=translation,
    )
    print(format_bench_search(result))
    return 0


def cmd_bench_commands(args: argparse.Namespace) -> int:
    import os

    from clir_toolkit.bench import bench_commands, format_bench_commands

    for name in ("hits", "runs"):
        if getattr(args, name) < 1:
            raise UsageError(f"--{name} must be at least 1 (got {getattr(args, name)})")
    if args.warmup < 0:
        raise UsageError(f"--warmup must be 0 or more (got {args.warmup})")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    rows = bench_commands(
        args.index, _read_topics(args), hits=args.hits, runs=args.runs, warmup=args.warmup,
        translate=None if args.translate == "none" else args.translate,
        anserini=not args.no_anserini,
    )  # fmt: skip
    print(format_bench_commands(rows, load))
    return 0


def cmd_bench_dense(args: argparse.Namespace) -> int:
    import os
    import shlex
    import sys

    from clir_toolkit.bench_dense import bench_dense, format_bench_dense
    from clir_toolkit.compute.threads import usable_cores

    threads = sorted(set(args.threads or [1, usable_cores()]))
    if threads[0] < 1:
        raise UsageError(f"--threads must be at least 1 (got {threads[0]})")
    for name in ("hits", "repeat"):
        if getattr(args, name) < 1:
            raise UsageError(f"--{name} must be at least 1 (got {getattr(args, name)})")
    if args.documents < 0:
        raise UsageError(f"--documents must be 0 or more (got {args.documents})")
    if args.ef_search is not None and args.ef_search < 1:
        raise UsageError(f"--ef-search must be at least 1 (got {args.ef_search})")

    def load() -> float | None:
        return os.getloadavg()[0] if hasattr(os, "getloadavg") else None

    started = load()
    rows = bench_dense(
        args.index, [topic.query for topic in _read_topics(args)], encoders=args.encoders,
        threads=threads, documents=args.documents, hits=args.hits, ef_search=args.ef_search,
        repeat=args.repeat,
    )  # fmt: skip
    command = shlex.join(["clir", *sys.argv[1:]])
    print(format_bench_dense(rows, command, args.index, (started, load())))
    return 0


def _bench_search_on_ray(args: argparse.Namespace, translation: Any) -> int:
    from clir_toolkit.distributed.search import bench_search_on_ray, format_ray_bench
    from clir_toolkit.index import read_index_info
    from clir_toolkit.translate.pipeline import build_queries

    queries = build_queries(_read_topics(args), translation, read_index_info(args.index).language)
    options = {"hits": args.hits, "k1": args.k1, "b": args.b,
               "structure": translation.structure(args.structure)}  # fmt: skip
    if args.shards < 1:
        raise UsageError(f"--shards must be at least 1 (got {args.shards})")
    cluster, _ = _ray_cluster(args)
    result = bench_search_on_ray(
        cluster, args.index, queries, workers=args.workers, repeat=args.repeat,
        options=options, shards=args.shards,
    )  # fmt: skip
    print(format_ray_bench(result))
    return 0


def cmd_bench_rerank(args: argparse.Namespace) -> int:
    from clir_toolkit.rerank.word.bench import BenchSettings, bench_rerank, format_bench_rerank

    settings = BenchSettings(
        query_len=args.query_len,
        doc_len=args.doc_len,
        dim=args.dim,
        query_vocab=args.query_vocab,
        doc_vocab=args.doc_vocab,
        batch_size=args.batch_size,
        train_batch_size=args.train_batch_size,
        precision=args.precision,
        encoder=args.encoder,
        warmup=args.warmup,
        seconds=args.seconds,
        peak_bandwidth_gbs=args.peak_bandwidth_gbs,
        threads=args.threads,
        compiled=args.compile,
    )
    if (args.collection is None) != (args.run is None):
        raise UsageError("--collection and --run go together: the run gives the negatives")
    if args.collection is not None:
        return _bench_training_epoch(args, settings)
    devices = None if args.device == "auto" else [args.device]
    rows = bench_rerank(settings, args.models, devices)  # None: the built-ins
    print(format_bench_rerank(settings, rows))
    return 0


def _bench_training_epoch(args: argparse.Namespace, settings: Any) -> int:
    """``clir bench rerank --collection DIR --run RUN``: one epoch's time per model."""
    from clir_toolkit.collection import open_collection
    from clir_toolkit.rerank.word.bench import bench_training_epoch, format_epoch_benches
    from clir_toolkit.rerank.word.train_config import TrainConfig

    collection = open_collection(args.collection)
    rows = []
    from clir_toolkit.rerank import MODEL_NAMES

    for model in args.models or MODEL_NAMES.builtin:
        config = TrainConfig(
            collection=collection.root,
            topics=collection.split_file("topics", args.split),
            qrels=collection.split_file("qrels", args.split),
            run=args.run,
            output=collection.root / "bench-unused.pt",
            model=model,
            encoder=args.encoder,
            precision=args.precision,
            device=args.device,
            verbose=not args.quiet,
        )
        rows.append(bench_training_epoch(config, settings))
    print(format_epoch_benches(collection.root, rows))
    return 0
