"""Dictionary-based query translation (thesis §5.2; Pirkola 1998; Darwish & Oard 2003).

Each source term is looked up in a bilingual dictionary, longest multi-word match first
("file system" before "file"), and replaced by its candidate translations. A term the
dictionary lacks is kept as it is (names, commands and numbers often survive unchanged).
English stop words are not translated. Three modes decide what a term keeps:

``all``
    every candidate, weight 1 each — the thesis' form; combined at search time as
    ``(a1 OR a2 ...) AND (b1 OR ...)`` (structure ``and``), one bag (``or``) or Pirkola's
    synonym pseudo-terms (``syn``);
``first``
    the first candidate only (dictionaries list the commonest sense first);
``weighted``
    every candidate, weighted by a translation probability p(t | s) — the probabilistic
    structured query of Darwish & Oard (2003). Probabilities come from the dictionary
    (a user TSV can carry them) or are estimated on parallel text by
    :func:`estimate_translation_probabilities` (IBM Model 1 restricted to the dictionary's
    candidate pairs).

A word the dictionary lacks is looked up again by its base form (``files`` → ``file``,
WordNet's morphy) when ``base_forms`` is given: exact match first, as in Oard's
experiments with stemmed dictionary lookup (thesis §2.2.2).

When the query was expanded before translation (WordNet synonyms as extra alternatives of
a term), each alternative is translated and its weight multiplies its candidates' weights.

``keep_source`` (a weight w > 0) keeps the untranslated English word as one more
alternative of every translated term, weighted w times the term's strongest candidate: in
Pirkola's structure the word and its translations then form one pseudo-term, so a page that
kept the English word (a command name, a technical term left in English) matches as well as
one that translated it. A word the dictionary lacks is kept in every mode (it is its own
only alternative).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from clir_toolkit.analysis import ENGLISH_STOP_WORDS
from clir_toolkit.params import MAX_WEIGHT, Param, check_options, declare
from clir_toolkit.query import Alternative, QueryTerm, StructuredQuery, source_words

DICT_MODES = ("all", "first", "weighted")

#: The dictionary used for each document language when none is named (``--dict``).
DEFAULT_DICTIONARIES = {
    "fr": "freedict:eng-fra+fra-eng",
    "de": "freedict:eng-deu",
    "es": "freedict:eng-spa",
    "it": "freedict:eng-ita",
    "ru": "freedict:eng-rus",
    "ja": "freedict:eng-jpn",
    "zh": "cedict",
}

DICTIONARY_PARAMS = declare(
    Param("dictionary", str, doc="freedict:eng-fra[+fra-eng], cedict or a TSV file",
          flag="--dict", metavar="SPEC",
          note="default: a FreeDict/CC-CEDICT dictionary for the index language"),
    Param("dict_mode", str, doc="dictionary candidates kept per term", choices=DICT_MODES,
          flag="--dict-mode",
          note="'all' keeps every one; 'weighted' with --parallel weights them by IBM Model 1 "
          "on parallel text, better still where such text exists, but it needs that file"),
    Param("keep_source", float, doc="--translate dict: keep the English word beside its "
          "translations, at W times the weight of the best one; 0: translations only",
          minimum=0, maximum=MAX_WEIGHT, flag="--keep-source", metavar="W", note="man pages "
          "keep many English words; on the dev split it raised nDCG@10 in all seven languages"),
    Param("parallel", str, doc="--dict-mode weighted: parallel text to estimate "
          "p(target|source)", flag="--parallel", metavar="FILE.tsv"),
)  # fmt: skip
"""The options of dictionary translation (``clir search --translate dict``, a recipe's
``[search]``); their defaults are those of
:class:`~clir_toolkit.translate.pipeline.TranslationOptions`."""


class DictionaryTranslator:
    """Word-by-word (and phrase-by-phrase) translation with a bilingual dictionary."""

    def __init__(
        self,
        dictionary: Any,
        mode: str = "all",
        probabilities: dict[str, dict[str, float]] | None = None,
        base_forms: Callable[[str], list[str]] | None = None,
        keep_source: float = 0.0,
    ) -> None:
        check_options(
            {"dict_mode": mode, "keep_source": keep_source},
            [DICTIONARY_PARAMS["dict_mode"], DICTIONARY_PARAMS["keep_source"]],
        )
        self.dictionary = dictionary
        self.mode = mode
        self.probabilities = probabilities
        self.base_forms = base_forms
        self.keep_source = keep_source
        self._memory: dict[str, list[tuple[str, float]]] = {}
        keep = f"+source {keep_source:g}" if keep_source else ""
        self.name = f"dict:{getattr(dictionary, 'name', 'dictionary')}/{mode}{keep}"

    def translate(self, queries: Sequence[StructuredQuery]) -> list[StructuredQuery]:
        return [self.translate_one(query) for query in queries]

    def translate_one(self, query: StructuredQuery) -> StructuredQuery:
        terms: list[QueryTerm] = []
        for source, alternatives in self._phrases(query):
            translated: dict[str, float] = {}
            for alternative in alternatives:
                for text, weight in self.candidates(alternative.text):
                    translated[text] = translated.get(text, 0.0) + weight * alternative.weight
            if translated and self.keep_source:
                self._keep_source(source, translated)
            if translated:
                terms.append(
                    QueryTerm(source, tuple(Alternative(t, w) for t, w in translated.items()))
                )
        return StructuredQuery(query.qid, tuple(terms), query.original)

    def _keep_source(self, source: str, translated: dict[str, float]) -> None:
        """Add the source word(s) to a term's translations, ``keep_source`` × the strongest."""
        text = " ".join(source_words(source))
        if text and text not in translated:
            translated[text] = self.keep_source * max(translated.values())

    def _phrases(self, query: StructuredQuery) -> list[tuple[str, list[Alternative]]]:
        """Source terms, merging consecutive plain words that form a dictionary headword."""
        terms = [t for t in query.terms if source_words(t.source)]
        words = [source_words(t.source) for t in terms]
        flat = [w for ws in words for w in ws]
        # Longest match runs over the original words when each term is one word; the
        # alternatives of a term (e.g. WordNet synonyms) are translated one by one.
        plain = all(len(ws) == 1 for ws in words)
        result: list[tuple[str, list[Alternative]]] = []
        if plain:
            i = 0
            while i < len(flat):
                length, _ = self.dictionary.lookup_longest(flat, i)
                if length > 1:
                    phrase = " ".join(flat[i : i + length])
                    result.append((phrase, [Alternative(phrase)]))
                    i += length
                    continue
                result.append((flat[i], list(terms[i].alternatives)))
                i += 1
            return result
        return [(term.source, list(term.alternatives)) for term in terms]

    def candidates(self, text: str) -> list[tuple[str, float]]:
        """Weighted translations of one source word or phrase (itself if untranslatable).

        Remembered per translator: query words repeat across topics.
        """
        found = self._memory.get(text)
        if found is None:
            found = self._memory[text] = self._lookup(text)
        return list(found)

    def _lookup(self, text: str) -> list[tuple[str, float]]:
        words = source_words(text)
        if not words or all(w in ENGLISH_STOP_WORDS for w in words):
            return []
        phrase = " ".join(words)
        found = list(self.dictionary.translations(phrase))
        if not found and len(words) == 1 and self.base_forms is not None:
            # "files" is not a headword but "file" is (WordNet's morphy; thesis §2.2.2).
            for base in self.base_forms(phrase):
                found = list(self.dictionary.translations(base))
                if found:
                    phrase = base
                    break
        if not found and len(words) > 1:
            # An expansion phrase the dictionary lacks: translate its words as one bag.
            return [c for w in words if w not in ENGLISH_STOP_WORDS for c in self.candidates(w)]
        if not found:
            return [(phrase, 1.0)]
        if self.mode == "first":
            return [(found[0], 1.0)]
        if self.mode == "all":
            return [(c, 1.0) for c in found]
        return list(zip(found, self._weights(phrase, found), strict=True))

    def _weights(self, phrase: str, found: list[str]) -> list[float]:
        if self.probabilities is not None and phrase in self.probabilities:
            table = self.probabilities[phrase]
            raw = [table.get(c, 0.0) for c in found]
        else:
            raw = list(self.dictionary.weights(phrase))
        # Smooth so that no dictionary candidate vanishes, then normalise to sum 1.
        smoothed = [w + 0.01 for w in raw]
        total = sum(smoothed)
        return [w / total for w in smoothed]


def estimate_translation_probabilities(
    dictionary: Any, pairs: Iterable[tuple[str, str]], iterations: int = 5
) -> dict[str, dict[str, float]]:
    """p(target | source) by IBM Model 1 EM (Brown et al. 1993) over dictionary pairs only.

    Each sentence pair's target words are explained by its source words; alignment is only
    allowed between a source word and its dictionary candidates, so the model re-weights
    the dictionary instead of inventing translations. Starts uniform over candidates.
    """
    corpus: list[tuple[list[str], set[str]]] = []
    for english, foreign in pairs:
        source = [w for w in source_words(english) if w not in ENGLISH_STOP_WORDS]
        corpus.append((source, set(source_words(foreign))))
    table: dict[str, dict[str, float]] = {}
    for source, _ in corpus:
        for word in source:
            if word not in table and word in dictionary:
                found = [c for c in dictionary.translations(word) if " " not in c]
                if found:
                    table[word] = {c.lower(): 1.0 / len(found) for c in found}
    for _ in range(iterations):
        counts: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
        for source, foreign_words in corpus:
            links = [(s, t) for s in source if s in table for t in table[s] if t in foreign_words]
            by_target: dict[str, float] = defaultdict(float)
            for s, t in links:
                by_target[t] += table[s][t]
            for s, t in links:
                counts[s][t] += table[s][t] / by_target[t]
        for s, row in table.items():
            total = sum(counts[s].values())
            if total > 0:
                table[s] = {t: counts[s].get(t, 0.0) / total for t in row}
    return table


def read_parallel_pairs(path: str | Path, limit: int | None = None) -> list[tuple[str, str]]:
    """``english<TAB>foreign`` lines of a parallel TSV (as ``clir resource parallel`` writes)."""
    from clir_toolkit.errors import FormatError

    pairs = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 2:
                raise FormatError(
                    path,
                    number,
                    f"expected 2 tab-separated columns, found {len(parts)}",
                    "english<TAB>foreign per line",
                )
            pairs.append((parts[0], parts[1]))
            if limit and len(pairs) >= limit:
                break
    return pairs
