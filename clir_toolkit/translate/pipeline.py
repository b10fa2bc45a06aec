"""From topics to the structured queries a search runs: expand → translate.

The order is the thesis' (§5.2): WordNet expansion acts on the English query, before
translation; Rocchio/RM3 feedback acts on the translated query, inside the search
(:mod:`clir_toolkit.expand.feedback`). This module builds the first two steps from the
command line's options, so that ``clir search`` and ``clir translate`` share them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from clir_toolkit import plugins
from clir_toolkit.errors import UsageError
from clir_toolkit.files import atomic_write
from clir_toolkit.formats import Topic
from clir_toolkit.params import Param, declare, with_defaults
from clir_toolkit.plugins import Names
from clir_toolkit.query import StructuredQuery
from clir_toolkit.translate import Translator

TRANSLATIONS = Names(("none", "dict", "mt", "embed"), plugins.TRANSLATORS)
"""``--translate`` and ``[search] translate``: the built-in translations, then the names of
installed translator plug-ins (:mod:`clir_toolkit.plugins`)."""

#: Translations that give each source term several weighted alternatives, which Pirkola's
#: structure (``syn``) pools into one pseudo-term; the others give plain text.
STRUCTURED_TRANSLATIONS = ("dict", "embed")

EXPANSIONS = Names(("wordnet",), plugins.EXPANDERS)
"""``--expand`` and ``[search] expand``: WordNet, then installed expander plug-ins."""

#: The dictionary used for each document language when ``--dict`` is not given.
DEFAULT_DICTIONARIES = {
    "fr": "freedict:eng-fra+fra-eng",
    "de": "freedict:eng-deu",
    "es": "freedict:eng-spa",
    "it": "freedict:eng-ita",
    "ru": "freedict:eng-rus",
    "ja": "freedict:eng-jpn",
    "zh": "cedict",
}


@dataclass(frozen=True)
class TranslationOptions:
    """The translation and pre-translation expansion options of ``clir search``."""

    translate: str = "none"
    dictionary: str | None = None
    dict_mode: str = "all"
    parallel: str | None = None
    #: Dictionary translation: weight of the untranslated English word kept beside its
    #: translations, relative to the strongest one (0: translations only; 0.5 raised
    #: nDCG@10 on the dev split of every man-page collection).
    keep_source: float = 0.5
    mt: str | None = None
    mt_target_lang: str | None = None
    embed: str | None = None
    embed_top: int = 1
    w_major: float = 1.0
    w_context: float = 0.2
    expand: str | None = None
    wordnet_synonyms: int = 3
    wordnet_weight: float = 0.5
    base_forms: bool = True
    device: str = "auto"

    @property
    def default_structure(self) -> str:
        """The query structure to search with when none is asked for.

        ``syn`` for term-by-term translations: on the dev split of the man-page
        collections it beat ``or`` by 0.05–0.15 nDCG@10 in five of seven languages and was
        within 0.011 of it in Italian and Russian. ``or`` for plain text (untranslated or machine
        translated), where ``syn`` would pool the tokens of one word — or, for a Chinese or
        Japanese query without spaces, of the whole query — into one pseudo-term.
        """
        if TRANSLATIONS.is_plugin(self.translate):
            structured = plugins.load(plugins.TRANSLATORS, self.translate).structured
            return "syn" if structured is True else "or"
        return "syn" if self.translate in STRUCTURED_TRANSLATIONS else "or"

    def structure(self, asked: str | None = None) -> str:
        """The query structure to search these queries with: ``asked`` when a user asked for
        one (``clir search --structure``, a recipe's ``structure``), else
        :attr:`default_structure`. The one place that decides it, for ``clir search``,
        ``clir bench search`` and the demo alike."""
        return asked or self.default_structure

    def describe(self) -> str:
        parts = [] if self.expand is None else [self.expand]
        if self.translate == "dict":
            keep = f"+source {self.keep_source:g}" if self.keep_source else ""
            parts.append(f"dict:{self.dictionary or 'default'}/{self.dict_mode}{keep}")
        elif self.translate == "mt":
            parts.append(f"mt:{self.mt}")
        elif self.translate == "embed":
            parts.append(f"embed/top{self.embed_top}")
        elif self.translate != "none":
            parts.append(self.translate)  # a plug-in
        return "+".join(parts) or "untranslated"


TRANSLATION_PARAMS = with_defaults(declare(
    Param("translate", str, doc="how English queries become document-language queries",
          choices=TRANSLATIONS, note="none searches with the English query as it is"),
    Param("dictionary", str, doc="freedict:eng-fra[+fra-eng], cedict or a TSV file",
          flag="--dict", metavar="SPEC",
          note="default: a FreeDict/CC-CEDICT dictionary for the index language"),
    Param("dict_mode", str, doc="dictionary candidates kept per term",
          choices=("all", "first", "weighted"),
          note="'all' keeps every one; 'weighted' with --parallel weights them by IBM Model 1 "
          "on parallel text, better still where such text exists, but it needs that file"),
    Param("keep_source", float, doc="--translate dict: keep the English word beside its "
          "translations, at W times the weight of the best one; 0: translations only",
          minimum=0, metavar="W", note="man pages keep many English words; on the dev split "
          "it raised nDCG@10 in all seven languages"),
    Param("parallel", str, doc="--dict-mode weighted: parallel text to estimate "
          "p(target|source)", metavar="FILE.tsv"),
    Param("mt", str, doc="apertium:eng-spa, hf:MODEL_DIR or file:T.tsv", metavar="SPEC"),
    Param("mt_target_lang", str, doc="hf NLLB/M2M100 models: target language token, "
          "e.g. fra_Latn", metavar="CODE"),
    Param("embed", str, doc="aligned embeddings: one language-prefixed .vec file or "
          "SOURCE.vec,TARGET.vec", metavar="FILE.vec"),
    Param("embed_top", int, doc="embedding candidates per term", minimum=1),
    Param("w_major", float, doc="equation 5.2: weight of the term", minimum=0),
    Param("w_context", float, doc="equation 5.2: weight of the context", minimum=0),
    Param("expand", str, doc="pre-translation expansion", choices=EXPANSIONS),
    Param("wordnet_synonyms", int, doc="WordNet synonyms added per term", minimum=0),
    Param("wordnet_weight", float, doc="weight of a synonym relative to the original word",
          minimum=0),
), TranslationOptions)  # fmt: skip
"""The options of :class:`TranslationOptions` a user sets (``clir search``, recipes)."""


@cache
def make_translator(options: TranslationOptions, target_lang: str) -> Translator | None:
    """The translator the options name, for documents in ``target_lang``; None for none.

    Cached per process: loading a dictionary or estimating translation probabilities is
    done once, however many runs (``clir run``) use it.
    """
    if options.translate not in TRANSLATIONS:
        raise UsageError(
            f"unknown --translate '{options.translate}' (use one of: {', '.join(TRANSLATIONS)})"
        )
    if options.translate == "none":
        return None
    if TRANSLATIONS.is_plugin(options.translate):
        return _plugin_translator(options.translate, target_lang)
    if options.translate == "dict":
        from clir_toolkit.resources.dictionary import load_dictionary
        from clir_toolkit.translate.dictionary import (
            DictionaryTranslator,
            estimate_translation_probabilities,
            read_parallel_pairs,
        )

        spec = options.dictionary or DEFAULT_DICTIONARIES.get(target_lang)
        if spec is None:
            raise UsageError(
                f"no default dictionary for documents in '{target_lang}' "
                "(pass --dict freedict:eng-XXX, cedict or a TSV file)"
            )
        dictionary = load_dictionary(spec)
        probabilities = None
        if options.dict_mode == "weighted" and options.parallel:
            pairs = read_parallel_pairs(options.parallel)
            probabilities = estimate_translation_probabilities(dictionary, pairs)
        base_forms = None
        if options.base_forms:
            from clir_toolkit.resources.wordnet import base_forms as wordnet_base_forms

            base_forms = wordnet_base_forms
        return DictionaryTranslator(
            dictionary, options.dict_mode, probabilities, base_forms, options.keep_source
        )
    if options.translate == "mt":
        from clir_toolkit.translate.mt import make_machine_translator

        if not options.mt:
            raise UsageError("--translate mt needs --mt apertium:eng-spa|hf:MODEL_DIR|file:T.tsv")
        return make_machine_translator(options.mt, options.mt_target_lang, options.device)
    from clir_toolkit.translate.embedding import EmbeddingSpace, EmbeddingTranslator

    if not options.embed:
        raise UsageError("--translate embed needs --embed FILE.vec (or SOURCE.vec,TARGET.vec)")
    space = EmbeddingSpace.load(options.embed, "en", target_lang)
    return EmbeddingTranslator(space, options.embed_top, options.w_major, options.w_context)


def _plugin_translator(name: str, target_lang: str) -> Translator:
    """The translator of an installed plug-in, made for documents in ``target_lang``."""
    factory = plugins.load(plugins.TRANSLATORS, name)
    translator = factory(target_lang)
    if not callable(getattr(translator, "translate", None)):
        raise UsageError(
            f"the translator plug-in {name!r} made {type(translator).__name__}, which has no "
            "translate(queries) method (see clir_toolkit.translate.Translator)"
        )
    return translator


def build_queries(
    topics: Sequence[Topic], options: TranslationOptions, target_lang: str
) -> list[StructuredQuery]:
    """Plain queries of the topics, expanded (WordNet) and translated as the options say."""
    queries = [StructuredQuery.plain(t.qid, t.query) for t in topics]
    if options.expand == "wordnet":
        from clir_toolkit.expand.wordnet import WordNetExpander

        queries = WordNetExpander(options.wordnet_synonyms, options.wordnet_weight).expand(queries)
    elif options.expand is not None and EXPANSIONS.is_plugin(options.expand):
        queries = list(plugins.load(plugins.EXPANDERS, options.expand)().expand(queries))
    elif options.expand is not None:
        raise UsageError(
            f"unknown --expand '{options.expand}' (use one of: {', '.join(EXPANSIONS)})"
        )
    translator = make_translator(options, target_lang)
    return queries if translator is None else translator.translate(queries)


def write_translations(path: str | Path, queries: Sequence[StructuredQuery]) -> None:
    """Write translated queries: ``.jsonl`` keeps the structure, ``.tsv`` a readable bag.

    The TSV (``qid<TAB>all alternatives``) is a topics file that any tool can search; the
    JSONL records each source term with its weighted alternatives.
    """
    path = Path(path)
    with atomic_write(path) as handle:
        for query in queries:
            if path.suffix == ".jsonl":
                record = {
                    "qid": query.qid,
                    "original": query.original,
                    "terms": [
                        {
                            "source": t.source,
                            "alternatives": [
                                {"text": a.text, "weight": round(a.weight, 6)}
                                for a in t.alternatives
                            ],
                        }
                        for t in query.terms
                    ],
                }
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
            else:
                bag = " ".join(a.text for t in query.terms for a in t.alternatives)
                handle.write(f"{query.qid}\t{' '.join(bag.split())}\n")
