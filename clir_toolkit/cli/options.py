"""Options and argument handling that several commands share.

The BM25, translation and feedback options are generated from their declarations in the
library (:data:`clir_toolkit.search.BM25_PARAMS`,
:data:`clir_toolkit.translate.pipeline.TRANSLATION_PARAMS`,
:data:`clir_toolkit.expand.feedback.FEEDBACK_PARAMS`; :func:`clir_toolkit.params.add_options`),
the same declarations a recipe's ``[search]`` table is checked against: flags, types, choices,
defaults and help are written once.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from clir_toolkit.params import add_options, given_values

if TYPE_CHECKING:
    from clir_toolkit.expand.feedback import Feedback
    from clir_toolkit.translate.pipeline import TranslationOptions


def _common_options() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    group = common.add_argument_group("general options")
    group.add_argument("--quiet", action="store_true", help="no progress bars or notes on stderr")
    group.add_argument(
        "--debug",
        action="store_true",
        help="show tracebacks of errors, and Java's own log lines (Anserini writes them on stdout)",
    )
    group.add_argument(
        "--java-heap",
        metavar="SIZE",
        help="maximum Java heap, e.g. 4g (default: $CLIR_JAVA_HEAP or Java's own)",
    )
    return common


def _topic_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--topics",
        required=True,
        type=Path,
        help="topics: TSV qid<TAB>query, TREC <top> SGML, or JSONL (HC4/NeuCLIR)",
    )
    parser.add_argument(
        "--topic-field",
        default="title",
        choices=["title", "desc", "title+desc"],
        help="which part of SGML/JSONL topics is the query (default: title)",
    )
    parser.add_argument("--topic-lang", help="JSONL topics with several languages: which one")
    parser.add_argument(
        "--topic-source", help="JSONL topics: which translation, e.g. 'human translation'"
    )


def _bm25_options(parser: argparse.ArgumentParser) -> None:
    from clir_toolkit.search import BM25_PARAMS

    add_options(parser, BM25_PARAMS.values())


def _translation_options(parser: argparse.ArgumentParser) -> None:
    from clir_toolkit.translate.pipeline import TRANSLATION_PARAMS

    group = parser.add_argument_group("translation and expansion (thesis chapter 5)")
    add_options(group, TRANSLATION_PARAMS.values())


def _feedback_options(parser: argparse.ArgumentParser) -> None:
    from clir_toolkit.expand.feedback import FEEDBACK_PARAMS

    group = parser.add_argument_group("pseudo-relevance feedback (after translation)")
    add_options(group, FEEDBACK_PARAMS.values())


def _read_topics(args: argparse.Namespace) -> list:
    from clir_toolkit.formats import read_topics

    return read_topics(
        args.topics, field=args.topic_field, lang=args.topic_lang, source=args.topic_source
    )


def _translation(args: argparse.Namespace) -> TranslationOptions:
    from clir_toolkit.translate.pipeline import TRANSLATION_PARAMS, TranslationOptions

    return TranslationOptions(**given_values(args, TRANSLATION_PARAMS.values()))


def _feedback(args: argparse.Namespace) -> Feedback | None:
    from clir_toolkit.expand.feedback import feedback_from

    return feedback_from(vars(args))
