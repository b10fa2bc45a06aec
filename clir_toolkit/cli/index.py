"""``clir index``: build a Lucene index from a collection."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from clir_toolkit.cli.commands import command_help
from clir_toolkit.cli.options import _ray_cluster, _ray_options
from clir_toolkit.cli.outputs import add_output
from clir_toolkit.errors import UsageError


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
        type=int,
        help="indexing threads (default: all cores; with --ray, 1 per shard)",
    )
    p.add_argument(
        "--store-raw",
        action="store_true",
        help="also store raw document text in the index (for pyserini's doc())",
    )
    p.add_argument(
        "--shards",
        type=int,
        default=1,
        metavar="N",
        help="split the documents into N Lucene indexes, searched as one with the statistics "
        "of the whole collection: the same runs as one index (default: 1)",
    )
    _ray_options(p, "build the shards in parallel (the workers must see --index's directory)")
    p.set_defaults(handler=cmd_index)


def cmd_index(args: argparse.Namespace) -> int:
    from clir_toolkit.index import build_index

    threads = args.threads
    if threads is None:
        threads = 1 if args.ray else os.cpu_count() or 1
    if threads < 1:
        raise UsageError(f"--threads must be at least 1 (got {threads})")
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
        verbose=not args.quiet,
        java_logs=args.debug,
    )
    shards = f" ({info.shards} shards)" if info.shards > 1 else ""
    print(
        f"indexed {info.documents} documents ({info.language}, {info.analyzer_name}) "
        f"into {args.index}{shards} in {info.seconds:.1f} s"
    )
    return 0
