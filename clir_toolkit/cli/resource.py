"""``clir resource coverage|parallel|monolingual|wordnet|java``: resources, offline."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from clir_toolkit.cli.commands import command_help
from clir_toolkit.cli.options import _read_topics, _topic_options, ranged
from clir_toolkit.cli.outputs import add_output
from clir_toolkit.errors import UsageError


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add the command's parser to ``commands``."""
    p = commands.add_parser(
        "resource",
        parents=[common],
        help=command_help("resource"),
        description="Build or inspect the translation resources, offline, from installed packages.",
    )
    resource = p.add_subparsers(dest="resource_command", metavar="WHAT", required=True)
    r = resource.add_parser(
        "coverage", parents=[common], help="share of a topic file's words a dictionary knows"
    )
    r.add_argument(
        "--dict",
        dest="dictionary",
        required=True,
        help="freedict:eng-fra[+fra-eng], cedict or a TSV file",
    )
    _topic_options(r)
    r.add_argument(
        "--base-forms",
        action="store_true",
        help="also look words up by their WordNet base form (files → file)",
    )
    r.add_argument("--top", type=ranged("--top"), default=20,
                   help="most frequent missing words shown")  # fmt: skip
    r.set_defaults(handler=cmd_resource_coverage)
    r = resource.add_parser(
        "parallel",
        parents=[common],
        help="English→L sentence pairs from gettext catalogs or Debian's package descriptions",
    )
    r.add_argument("--lang", required=True, help="document language, e.g. fr")
    add_output(r, "--out", required=True, help="TSV to write (english<TAB>L)")
    r.add_argument(
        "--source",
        default="gettext",
        choices=["gettext", "ddtp"],
        help="gettext: the installed message catalogs (default); ddtp: Debian's translated "
        "package descriptions, synopses and aligned paragraphs",
    )
    r.add_argument(
        "--lists",
        type=Path,
        metavar="DIR",
        help="--source ddtp: apt lists saved in DIR (default: $CLIR_DATA/ddtp/lists, where "
        "`clir collection build ddtp` keeps them; nothing is fetched)",
    )
    r.add_argument(
        "--exclude",
        type=Path,
        action="append",
        default=[],
        metavar="COLLECTION",
        help="--source ddtp: leave out every description judged in this collection's dev or "
        "test qrels (repeatable)",
    )
    r.set_defaults(handler=cmd_resource_parallel)
    r = resource.add_parser(
        "monolingual", parents=[common], help="text of one language, one line each, for embeddings"
    )
    r.add_argument("--lang", required=True)
    add_output(r, "--out", required=True, help="file to write")
    r.add_argument(
        "--corpus",
        type=Path,
        action="append",
        default=[],
        help="also the contents of this corpus.jsonl (repeatable)",
    )
    r.set_defaults(handler=cmd_resource_monolingual)
    r = resource.add_parser(
        "wordnet", parents=[common], help="set up WordNet for nltk from Debian's wordnet-base"
    )
    r.add_argument("--data-dir", type=Path, help="nltk data directory (default: $CLIR_DATA)")
    r.set_defaults(handler=cmd_resource_wordnet)
    r = resource.add_parser(
        "java",
        parents=[common],
        help="compile the toolkit's Java class (with a JDK's javac) and make the class archive "
        "that lets every command start Java faster (make setup does)",
    )
    r.add_argument("--force", action="store_true", help="make it again even if it is there")
    r.set_defaults(handler=cmd_resource_java)


def cmd_resource_coverage(args: argparse.Namespace) -> int:
    from clir_toolkit.resources import wordnet
    from clir_toolkit.resources.dictionary import load_dictionary
    from clir_toolkit.resources.dictionary.coverage import coverage, format_coverage

    base_forms = wordnet.base_forms if args.base_forms else None
    report = coverage(
        load_dictionary(args.dictionary),
        _read_topics(args),
        top_missing=args.top,
        base_forms=base_forms,
    )
    print(format_coverage(report))
    return 0


def cmd_resource_parallel(args: argparse.Namespace) -> int:
    if args.source == "ddtp":
        return _resource_parallel_ddtp(args)
    for option, given in (("--lists", args.lists is not None), ("--exclude", args.exclude)):
        if given:
            raise UsageError(f"{option} reads Debian's package descriptions: add --source ddtp")
    from clir_toolkit.resources.parallel import collect_parallel

    summary = collect_parallel(args.lang, args.out)
    print(
        f"{summary.pairs} sentence pairs en→{args.lang} from {summary.catalogs} catalogs "
        f"→ {args.out}"
    )
    return 0


def _resource_parallel_ddtp(args: argparse.Namespace) -> int:
    from clir_toolkit.resources.ddtp_parallel import collect_ddtp_parallel, format_summary

    summary = collect_ddtp_parallel(
        args.lang, args.out, lists=args.lists, exclude=args.exclude, progress=not args.quiet
    )
    print(format_summary(summary))
    return 0


def cmd_resource_monolingual(args: argparse.Namespace) -> int:
    from clir_toolkit.resources.monolingual import collect_monolingual

    lines = collect_monolingual(args.lang, args.out, args.corpus)
    print(f"{lines} lines of {args.lang} text → {args.out}")
    return 0


def cmd_resource_wordnet(args: argparse.Namespace) -> int:
    from clir_toolkit.resources.wordnet import ensure_wordnet

    root = ensure_wordnet(args.data_dir)
    print(f"WordNet ready for nltk in {root} (export NLTK_DATA={root} to use it elsewhere)")
    return 0


def cmd_resource_java(args: argparse.Namespace) -> int:
    from clir_toolkit import jvm
    from clir_toolkit.java_archive import build_class_archive

    archive = build_class_archive(force=args.force)
    size = archive.stat().st_size / 2**20
    print(f"Java class archive ready: {archive} ({size:.0f} MiB); commands map it at start-up")
    hit_reader = jvm.hit_reader_jar()
    if hit_reader is not None:
        print(f"the toolkit's HitReader compiled: {hit_reader}; searches read their hits with it")
    else:
        print("note: no javac (a JDK), so the toolkit's HitReader is not compiled; searches read "
              "their hits through Anserini, about 0.5 ms a query slower", file=sys.stderr)
    return 0
