"""Options and argument handling that several commands share."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from clir_toolkit.expand.feedback import Feedback
    from clir_toolkit.translate.pipeline import TranslationOptions



DEFAULT_HITS = 1000


DEFAULT_K1 = 0.9


DEFAULT_B = 0.4


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
    parser.add_argument(
        "--k1",
        type=float,
        default=DEFAULT_K1,
        help="BM25 k1 (default: 0.9, pyserini's, so that plain queries rank as in pyserini; "
        "1.2 was better on the dev split of every man-page collection)",
    )
    parser.add_argument(
        "--b",
        type=float,
        default=DEFAULT_B,
        help="BM25 b (default: 0.4, pyserini's; 0.75 was better on the man pages' dev split)",
    )
    parser.add_argument(
        "--hits",
        type=int,
        default=DEFAULT_HITS,
        help="documents retrieved per query (default: 1000)",
    )
    parser.add_argument(
        "--structure",
        choices=["and", "or", "syn"],
        help="how a term's alternatives combine: 'or' one bag of words, 'and' "
        "terms AND'ed, 'syn' Pirkola's synonym pseudo-terms (default: syn for --translate "
        "dict and embed: on the man pages' dev split 0.05-0.15 nDCG@10 ahead of 'or' in "
        "five languages, within 0.011 in it and ru; 'or' for untranslated and "
        "machine-translated text, which has no alternatives to pool)",
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="Java threads searching the segments of an index (default: 1)",
    )


def _translation_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("translation and expansion (thesis chapter 5)")
    from clir_toolkit.translate.pipeline import EXPANSIONS, TRANSLATIONS

    group.add_argument(
        "--translate",
        default="none",
        choices=TRANSLATIONS,
        help="how English queries become document-language queries "
        "(default: none, the untranslated query)",
    )
    group.add_argument(
        "--dict",
        dest="dictionary",
        metavar="SPEC",
        help="freedict:eng-fra[+fra-eng], cedict or a TSV file "
        "(default: a FreeDict/CC-CEDICT dictionary for the index language)",
    )
    group.add_argument(
        "--dict-mode",
        default="all",
        choices=["all", "first", "weighted"],
        help="candidates kept per term (default: all, every one; 'weighted' with --parallel "
        "weights them by IBM Model 1 on parallel text, better still where such text exists, "
        "but it needs that file)",
    )
    group.add_argument(
        "--keep-source",
        type=float,
        default=0.5,
        metavar="W",
        help="--translate dict: keep the English word beside its translations, at W times "
        "the weight of the best one (default: 0.5; 0: translations only). Man pages keep "
        "many English words; on the dev split it raised nDCG@10 in all seven languages",
    )
    group.add_argument(
        "--parallel",
        metavar="FILE.tsv",
        help="--dict-mode weighted: parallel text to estimate p(target|source)",
    )
    group.add_argument("--mt", metavar="SPEC", help="apertium:eng-spa, hf:MODEL_DIR or file:T.tsv")
    group.add_argument(
        "--mt-target-lang",
        metavar="CODE",
        help="hf NLLB/M2M100 models: target language token, e.g. fra_Latn",
    )
    group.add_argument(
        "--embed",
        metavar="FILE.vec",
        help="aligned embeddings: one language-prefixed file or SOURCE.vec,TARGET.vec",
    )
    group.add_argument("--embed-top", type=int, default=1, help="candidates per term (default: 1)")
    group.add_argument("--w-major", type=float, default=1.0, help="equation 5.2 (default: 1.0)")
    group.add_argument("--w-context", type=float, default=0.2, help="equation 5.2 (default: 0.2)")
    group.add_argument("--expand", choices=EXPANSIONS, help="pre-translation expansion")
    group.add_argument(
        "--wordnet-synonyms", type=int, default=3, help="synonyms added per term (default: 3)"
    )
    group.add_argument(
        "--wordnet-weight",
        type=float,
        default=0.5,
        help="weight of a synonym relative to the original word (default: 0.5)",
    )


def _feedback_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("pseudo-relevance feedback (after translation)")
    group.add_argument("--prf", choices=["rocchio", "rm3"], help="feedback method")
    group.add_argument("--fb-docs", type=int, default=10, help="feedback documents (default: 10)")
    group.add_argument("--fb-terms", type=int, default=10, help="feedback terms (default: 10)")
    group.add_argument(
        "--alpha",
        type=float,
        default=1.0,
        help="Rocchio: weight of the original query (default: 1.0)",
    )
    group.add_argument(
        "--beta",
        type=float,
        default=0.75,
        help="Rocchio: weight of the feedback terms (default: 0.75)",
    )
    group.add_argument(
        "--original-weight",
        type=float,
        default=0.5,
        help="RM3: weight of the original query (default: 0.5)",
    )


def _read_topics(args: argparse.Namespace) -> list:
    from clir_toolkit.formats import read_topics

    return read_topics(
        args.topics, field=args.topic_field, lang=args.topic_lang, source=args.topic_source
    )


def _translation(args: argparse.Namespace) -> TranslationOptions:
    from clir_toolkit.translate.pipeline import TranslationOptions

    return TranslationOptions(
        translate=args.translate,
        dictionary=args.dictionary,
        dict_mode=args.dict_mode,
        parallel=args.parallel,
        keep_source=args.keep_source,
        mt=args.mt,
        mt_target_lang=args.mt_target_lang,
        embed=args.embed,
        embed_top=args.embed_top,
        w_major=args.w_major,
        w_context=args.w_context,
        expand=args.expand,
        wordnet_synonyms=args.wordnet_synonyms,
        wordnet_weight=args.wordnet_weight,
    )


def _feedback(args: argparse.Namespace) -> Feedback | None:
    from clir_toolkit.expand.feedback import Feedback

    if args.prf is None:
        return None
    if args.prf == "rm3":
        return Feedback.rm3(args.fb_docs, args.fb_terms, args.original_weight)
    return Feedback("rocchio", args.fb_docs, args.fb_terms, args.alpha, args.beta)


def given_options(args: argparse.Namespace, fields: dict[str, str]) -> dict[str, Any]:
    """``{field: value}`` of the options the user gave (flag dest → config field), so that
    the config's own defaults apply to the others (they are written once, there)."""
    return {field: getattr(args, dest) for dest, field in fields.items()
            if getattr(args, dest) is not None}  # fmt: skip
