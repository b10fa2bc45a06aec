"""``clir index``: build a Lucene index from a collection."""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from typing import Any

from clir_toolkit.cli.commands import command_help
from clir_toolkit.cli.options import _ray_cluster, _ray_options, ranged
from clir_toolkit.cli.outputs import add_output
from clir_toolkit.compute.threads import MAX_THREADS
from clir_toolkit.errors import UsageError
from clir_toolkit.vectors import DEFAULT_DENSE_ENCODER


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add the command's parser to ``commands``."""
    p = commands.add_parser(
        "index",
        parents=[common],
        help=command_help("index"),
        description="Index a collection directory (or a bare corpus file).",
    )
    p.add_argument(
        "--collection",
        required=True,
        type=Path,
        help="collection directory (with corpus.jsonl) or a corpus file",
    )
    add_output(p, "--index", required=True, help="where to write the index")
    p.add_argument(
        "--language", help="document language (ISO 639-1); default: doc_lang of manifest.json"
    )
    p.add_argument(
        "--threads",
        type=ranged("--threads", maximum=MAX_THREADS),
        help="threads of the build (default: all cores): one reads the corpus while the others "
        "index it; with --shards, each shard's indexing threads, after the corpus is read (with "
        "--ray, 1 per shard)",
    )
    p.add_argument(
        "--store-raw",
        action="store_true",
        help="also store raw document text in the index (for pyserini's doc())",
    )
    p.add_argument(
        "--shards",
        type=ranged("--shards", maximum=MAX_THREADS),
        default=1,
        metavar="N",
        help="split the documents into N Lucene indexes, searched as one with the statistics "
        "of the whole collection: the same runs as one index (default: 1)",
    )
    p.add_argument(
        "--dense",
        nargs="?",
        const=DEFAULT_DENSE_ENCODER,
        metavar="ENCODER",
        help="also store every document's vector by a sentence encoder (use-m3, e5-small or "
        f"hf:DIR; default: {DEFAULT_DENSE_ENCODER}), for clir search --dense and --hybrid; on "
        "an existing index of the collection, only the vectors are added, beside those of "
        "other encoders",
    )
    p.add_argument(
        "--vectors",
        type=Path,
        metavar="FILE.npz",
        help="with --dense ENCODER, the documents' vectors made elsewhere by clir encode "
        "(on a GPU machine, say) instead of encoding them here; checked against the "
        "collection and the encoder",
    )
    p.add_argument(
        "--hnsw",
        type=ranged("--hnsw", minimum=0),
        default=0,
        metavar="M",
        help="with --dense, also store an approximate index of the vectors (Faiss' HNSW "
        "graph, M neighbours a node, e.g. 32), for clir search --approximate (default: none)",
    )
    p.add_argument(
        "--hnsw-threads",
        type=ranged("--hnsw-threads", maximum=MAX_THREADS),
        default=1,
        metavar="N",
        help="threads building the HNSW graph (default: 1, which makes the same graph from "
        "the same vectors every time; more build faster, and an approximate run may then "
        "differ between builds)",
    )
    _ray_options(p, "build the shards, and encode --dense's documents, in parallel (the "
                 "workers must see --index's directory)")  # fmt: skip
    p.set_defaults(handler=cmd_index)


def cmd_index(args: argparse.Namespace) -> int:
    from clir_toolkit.index import build_index

    threads = args.threads
    if threads is None:
        threads = 1 if args.ray else os.cpu_count() or 1
    if threads < 1:
        raise UsageError(f"--threads must be at least 1 (got {threads})")
    if args.vectors is not None and args.dense is None:
        raise UsageError("--vectors needs --dense ENCODER: the encoder that made them")
    encoders = dense_encoders(args.dense, args.vectors)
    if encoders and args.ray is not None and args.vectors is None:
        # the vectors first, on the cluster
        from clir_toolkit.distributed.encode import fill_vector_cache_on_ray

        cluster, worker_env = _ray_cluster(args)
        for encoder in encoders:
            fill_vector_cache_on_ray(cluster, args.collection, encoder, worker_env=worker_env,
                                     verbose=not args.quiet)  # fmt: skip
    if encoders and _vectors_only(args):
        from clir_toolkit.index import add_dense_vectors

        started = time.perf_counter()
        for encoder in reversed(encoders):  # the first named is added last: the index's own
            info = add_dense_vectors(
                args.index, encoder, args.collection, verbose=not args.quiet, hnsw=args.hnsw,
                vectors=args.vectors, hnsw_threads=args.hnsw_threads,
            )  # fmt: skip
        assert info.dense is not None
        kept = f"; it keeps {', '.join(info.encoders[1:])}'s" if info.other_dense else ""
        print(
            f"added the vectors of {info.dense.documents} documents ({info.dense.encoder}, "
            f"{info.dense.dim} dimensions) to {args.index} in {time.perf_counter() - started:.1f} s"
            f"{kept}"
        )
        return 0
    builder = None
    if args.ray is not None:
        from clir_toolkit.distributed.index import shard_builder_on_ray

        builder = shard_builder_on_ray(*_ray_cluster(args))
    info = build_index(
        args.collection,
        args.index,
        language=args.language,
        threads=threads,
        store_raw=args.store_raw,
        shards=args.shards,
        shard_builder=builder,
        dense=args.dense,
        dense_vectors=args.vectors,
        hnsw=args.hnsw,
        hnsw_threads=args.hnsw_threads,
        verbose=not args.quiet,
        java_logs=args.debug,
    )
    shards = f" ({info.shards} shards)" if info.shards > 1 else ""
    vectors = f" with {' and '.join(info.encoders)} vectors" if info.dense else ""
    print(
        f"indexed {info.documents} documents ({info.language}, {info.analyzer_name}) "
        f"into {args.index}{shards}{vectors} in {info.seconds:.1f} s"
    )
    return 0


def dense_encoders(dense: str | None, vectors: Path | None) -> list[str]:
    """The encoders of ``--dense`` (several joined by commas); ``--vectors`` holds one's."""
    from clir_toolkit.encoders import encoder_names

    names = [name for name in encoder_names(dense) if name is not None]
    if vectors is not None and len(names) > 1:
        raise UsageError(f"--vectors holds one encoder's vectors; --dense {dense} names "
                         f"{len(names)}: add the others with --dense NAME alone")  # fmt: skip
    return names


def _vectors_only(args: argparse.Namespace) -> bool:
    """Whether ``--dense`` only adds vectors: ``--index`` is already the index of
    ``--collection`` as it is now, built with the options given (else it is rebuilt)."""
    from clir_toolkit.index import is_index_of, read_index_info

    if not is_index_of(args.index, args.collection):
        return False
    info = read_index_info(args.index)
    same_language = args.language is None or args.language == info.language
    return same_language and info.shards == args.shards and info.store_raw == args.store_raw
