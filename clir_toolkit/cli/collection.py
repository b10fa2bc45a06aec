"""``clir collection build manpages|ddtp|irds``: build a test collection directory."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from clir_toolkit.cli.commands import command_help
from clir_toolkit.cli.outputs import add_output


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
    c = build.add_parser(
        "manpages",
        parents=[common],
        help="English→L CLIR collection from Debian's translated man pages",
    )
    c.add_argument("--lang", required=True, help="fr, de, es, it, ru, ja or zh")
    add_output(c, "--out", required=True, help="collection directory to write")
    c.add_argument(
        "--variant",
        default="standard",
        choices=["standard", "hard"],
        help="hard: documents without their NAME section (default: standard)",
    )
    c.set_defaults(handler=cmd_collection_manpages)
    c = build.add_parser(
        "ddtp",
        parents=[common],
        help="English→L CLIR collection from Debian's translated package descriptions",
    )
    c.add_argument("--lang", required=True, help="fr, de, it, ja, ru, es or zh")
    add_output(c, "--out", required=True, help="collection directory to write")
    c.add_argument(
        "--variant",
        default="standard",
        choices=["standard", "hard"],
        help="hard: documents without their translated synopsis (default: standard)",
    )
    c.add_argument(
        "--lists",
        type=Path,
        help="build offline from apt lists saved in DIR (default: fetch them with apt-get "
        "into $CLIR_DATA/ddtp/lists, kept for reuse)",
        metavar="DIR",
    )
    c.set_defaults(handler=cmd_collection_ddtp)
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


def cmd_collection_manpages(args: argparse.Namespace) -> int:
    from clir_toolkit.collection.manpages import build_manpages_collection, format_summary

    summary = build_manpages_collection(
        args.lang, args.out, variant=args.variant, progress=not args.quiet
    )
    print(format_summary(summary))
    return 0


def cmd_collection_ddtp(args: argparse.Namespace) -> int:
    from clir_toolkit.collection.ddtp import build_ddtp_collection, format_summary

    summary = build_ddtp_collection(
        args.lang, args.out, variant=args.variant, lists=args.lists, progress=not args.quiet
    )
    print(format_summary(summary))
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
