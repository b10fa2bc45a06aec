"""``clir collection build FAMILY|irds``: build a test collection directory.

One sub-command per collection family of the registry (built-in or plug-in, each
:class:`~clir_toolkit.collection.builder.CollectionFamily` says its languages, variants and
further options), and ``irds`` for a dataset of ir_datasets named as ir_datasets names it.
"""

from __future__ import annotations

import argparse
import functools
from typing import Any

from clir_toolkit import registry
from clir_toolkit.cli.commands import command_help
from clir_toolkit.cli.options import add_options, given_values
from clir_toolkit.cli.outputs import add_output
from clir_toolkit.collection.builder import family
from clir_toolkit.errors import ClirError


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add the command's parser to ``commands``."""
    p = commands.add_parser(
        "collection",
        parents=[common],
        help=command_help("collection"),
        description="Build a collection directory: corpus, topics, human topics, graded "
        "qrels and manifest, split 60/20/20 into train/dev/test.",
    )
    collection = p.add_subparsers(dest="collection_command", metavar="ACTION", required=True)
    build = collection.add_parser("build", help="build a collection").add_subparsers(
        dest="source", metavar="SOURCE", required=True
    )
    for name in registry.names("collections"):
        _add_family(build, common, name)
    c = build.add_parser(
        "irds", parents=[common], help="a collection from an ir_datasets dataset (cached locally)"
    )
    c.add_argument(
        "--dataset", required=True, help="wikiclir/LANG, hc4/LANG[/SPLIT], neuclir/1/LANG[/SUBSET]"
    )
    add_output(c, "--out", required=True, help="collection directory to write")
    c.add_argument("--limit-docs", type=int, help="keep only the first N documents")
    c.add_argument(
        "--download",
        action="store_true",
        help="let ir_datasets fetch missing files (needs a network)",
    )
    c.set_defaults(handler=cmd_collection_irds)


def _add_family(build: Any, common: argparse.ArgumentParser, name: str) -> None:
    """``clir collection build NAME``: --lang, --out, --variant and the family's options."""
    try:
        chosen = family(name)
    except ClirError as exc:  # a plug-in that cannot be imported: said when it is asked for
        c = build.add_parser(name, parents=[common], help=str(exc))
        for flag in ("--lang", "--out", "--variant"):  # what every family takes
            c.add_argument(flag)
        c.set_defaults(handler=functools.partial(_refuse, exc))
        return
    c = build.add_parser(name, parents=[common], help=chosen.summary)
    c.add_argument("--lang", required=True, help=", ".join(chosen.languages))
    add_output(c, "--out", required=True, help="collection directory to write")
    c.add_argument(
        "--variant",
        default=chosen.variants[0],
        choices=chosen.variants,
        help=(chosen.variant_help or "the collection variant")
        + f" (default: {chosen.variants[0]})",
    )
    add_options(c, chosen.params)
    c.set_defaults(handler=cmd_collection_build, collection_family=chosen)


def _refuse(error: ClirError, args: argparse.Namespace) -> int:
    raise error


def cmd_collection_build(args: argparse.Namespace) -> int:
    chosen = args.collection_family
    options = given_values(args, chosen.params)
    chosen.check_language(args.lang)  # every family, a plug-in's too, before any work
    summary = chosen.build(args.lang, args.out, args.variant, not args.quiet, **options)
    print(chosen.format_summary(summary))
    return 0


def cmd_collection_irds(args: argparse.Namespace) -> int:
    from clir_toolkit.collection.irds import build_irds_collection, format_summary

    summary = build_irds_collection(
        args.dataset,
        args.out,
        progress=not args.quiet,
        limit_docs=args.limit_docs,
        download=args.download,
    )
    print(format_summary(summary))
    return 0
