"""``clir index``: build a Lucene index from a collection.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from clir_toolkit.errors import UsageError


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add the command's parser to ``commands``."""
    p = commands.add_parser(
        "index",
        parents=[common],
        help="build a Lucene index from a collection",
        description="Index a collection directory (or a bare corpus file).",
    )
    p.add_argument(
        "--collection",
        required=True,
        type=Path,
        help="collection directory (with corpus.jsonl) or a corpus file",
    )
    p.add_argument("--index", required=True, type=Path, help="where to write the index")
    p.add_argument(
        "--language", help="document language (ISO 639-1); default: doc_lang of manifest.json"
    )
    p.add_argument(
        "--threads",
        type=int,
        default=os.cpu_count() or 1,
        help="indexing threads (default: all cores)",
    )
    p.add_argument(
        "--store-raw",
        action="store_true",
        help="also store raw document text in the index (for pyserini's doc())",
    )
    p.set_defaults(handler=cmd_index)


def cmd_index(args: argparse.Namespace) -> int:
    from clir_toolkit.index import build_index

    if args.threads < 1:
        raise UsageError(f"--threads must be at least 1 (got {args.threads})")
    info = build_index(
        args.collection,
        args.index,
        language=args.language,
        threads=args.threads,
        store_raw=args.store_raw,
        verbose=not args.quiet,
        java_logs=args.debug,
    )
    print(
        f"indexed {info.documents} documents ({info.language}, {info.analyzer_name}) "
        f"into {args.index} in {info.seconds:.1f} s"
    )
    return 0
