"""Pre-translation expansion with WordNet synonyms (thesis §5.2; Ballesteros & Croft 1997).

Each English query term gets its WordNet synonyms (lemmas of its most common senses) as
extra alternatives, so the query ``a b`` becomes ``(a OR a1 OR a2 …) AND (b OR b1 …)``
before translation. The thesis then combines the expanded query with the original one by
AND; with alternatives weighted, the original word keeps weight 1 and each synonym gets
``weight`` (< 1), so the original stays the strongest evidence while the synonyms add
translations the dictionary lists under another English word.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from clir_toolkit.analysis import ENGLISH_STOP_WORDS
from clir_toolkit.params import MAX_WEIGHT, Param, check_options, declare
from clir_toolkit.query import Alternative, QueryTerm, StructuredQuery, source_words

WORDNET_PARAMS = declare(
    Param("wordnet_synonyms", int, doc="WordNet synonyms added per term", minimum=0,
          flag="--wordnet-synonyms"),
    Param("wordnet_weight", float, doc="weight of a synonym relative to the original word",
          minimum=0, maximum=MAX_WEIGHT, flag="--wordnet-weight"),
)  # fmt: skip
"""The options of WordNet expansion (``clir search --expand wordnet``, a recipe's
``[search]``); their defaults are those of
:class:`~clir_toolkit.translate.pipeline.TranslationOptions`."""


class WordNetExpander:
    """Adds up to ``max_synonyms`` WordNet synonyms to every content term of a query."""

    def __init__(
        self,
        max_synonyms: int = 3,
        weight: float = 0.5,
        max_senses: int = 2,
        synonyms: Callable[[str], list[str]] | None = None,
    ) -> None:
        values = {"wordnet_synonyms": max_synonyms, "wordnet_weight": weight}
        check_options(values, [WORDNET_PARAMS[name] for name in values])
        if synonyms is None:
            from clir_toolkit.resources.wordnet import synonyms as wordnet_synonyms

            def synonyms(word: str) -> list[str]:
                return wordnet_synonyms(word, max_senses=max_senses)

        self.synonyms = synonyms
        self.max_synonyms = max_synonyms
        self.weight = weight
        self.name = f"wordnet{max_synonyms}"

    def expand(self, queries: Sequence[StructuredQuery]) -> list[StructuredQuery]:
        return [self.expand_one(q) for q in queries]

    def expand_one(self, query: StructuredQuery) -> StructuredQuery:
        terms = []
        for term in query.terms:
            words = source_words(term.source)
            if len(words) != 1 or words[0] in ENGLISH_STOP_WORDS:
                terms.append(term)
                continue
            word = words[0]
            seen = {a.text.lower() for a in term.alternatives} | {word}
            extra = []
            for synonym in self.synonyms(word):
                text = synonym.replace("_", " ").lower()
                if text not in seen:
                    seen.add(text)
                    extra.append(Alternative(text, self.weight))
                if len(extra) == self.max_synonyms:
                    break
            terms.append(QueryTerm(term.source, term.alternatives + tuple(extra)))
        return StructuredQuery(query.qid, tuple(terms), query.original)
