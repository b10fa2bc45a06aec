"""``clir encode``: a collection's document vectors written to a file, for ``clir index
--dense ENCODER --vectors FILE`` on another machine (:mod:`clir_toolkit.index.imported`)."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from clir_toolkit.cli.commands import command_help
from clir_toolkit.cli.options import _ray_cluster, _ray_options, ranged
from clir_toolkit.cli.outputs import add_output
from clir_toolkit.compute.threads import MAX_THREADS
from clir_toolkit.vectors import DEFAULT_DENSE_ENCODER


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add the command's parser to ``commands``."""
    p = commands.add_parser(
        "encode",
        parents=[common],
        help=command_help("encode"),
        description="Encode every document of a collection with a sentence encoder and write "
        "the vectors (docids, vectors, and the encoder that made them) to one .npz file: the "
        "step to run on a machine with a GPU, or on a Ray cluster, for a large collection. "
        "Store them with an index where it is searched: clir index --collection C --index I "
        "--dense ENCODER --vectors FILE.npz.",
    )
    p.add_argument("--collection", required=True, type=Path, help="collection directory")
    p.add_argument(
        "--encoder",
        default=DEFAULT_DENSE_ENCODER,
        help=f"sentence encoder: use-m3, e5-small or hf:DIR (default: {DEFAULT_DENSE_ENCODER})",
    )
    add_output(p, "--output", required=True, help="vectors file to write (FILE.npz)")
    p.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"],
                   help="where the encoder runs (default: a GPU when there is one)")  # fmt: skip
    p.add_argument("--threads", type=ranged("--threads", maximum=MAX_THREADS),
                   help="CPU threads of the encoder (default: the toolkit's)")  # fmt: skip
    _ray_options(p, "encode the documents")
    p.set_defaults(handler=cmd_encode)


def cmd_encode(args: argparse.Namespace) -> int:
    from clir_toolkit.collection import open_collection
    from clir_toolkit.index.imported import export_vectors

    started = time.perf_counter()
    collection = open_collection(args.collection)
    if args.ray is not None:  # on the cluster, into the collection's vector cache
        from clir_toolkit.distributed.encode import fill_vector_cache_on_ray

        cluster, worker_env = _ray_cluster(args)
        fill_vector_cache_on_ray(cluster, args.collection, args.encoder, worker_env=worker_env,
                                 verbose=not args.quiet)  # fmt: skip
    report = export_vectors(
        collection, args.encoder, args.output, device=args.device, threads=args.threads,
        verbose=not args.quiet,
    )  # fmt: skip
    print(
        f"wrote the {args.encoder} vectors of {report.documents} documents ({report.dim} "
        f"dimensions) to {report.output} in {time.perf_counter() - started:.1f} s"
    )
    return 0
