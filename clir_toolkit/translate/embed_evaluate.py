"""How well an embedding space translates words: ``clir embed evaluate``.

The measure is the one ``clir embed train`` reports (bilingual lexicon induction, Conneau et
al. 2018): precision@1 and @5 of word translation by nearest neighbours and by CSLS
(:func:`clir_toolkit.translate.alignment.lexicon_precision`), on held-out dictionary pairs.
The pairs are the ones ``clir embed train`` holds out for the same language: single-word
entries of the language's default dictionary whose English word and translation are both in
the vocabularies of the machine's text (words seen :data:`~clir_toolkit.translate.
subword_space.MIN_COUNT` times; :func:`~clir_toolkit.translate.seed_pairs.seed_pairs`), the
held-out part chosen by a hash of the English word
(:func:`~clir_toolkit.translate.seed_pairs.split_pairs`). So the figures of any space — the
pretrained subword table (``use-m3-tokens``) or a trained ``.vec`` file — stand beside
those of ``clir embed train``.

A held-out English word whose translations are all missing from the space's candidate
words (left out as English, or beyond the most frequent ``limit``) counts as a miss, so
that every space is measured on the same words.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from clir_toolkit.errors import UsageError
from clir_toolkit.translate.dictionary import DEFAULT_DICTIONARIES, DICTIONARY_PARAMS
from clir_toolkit.translate.embed_text import SOURCE_LANGUAGE, tokenizer_for
from clir_toolkit.translate.seed_pairs import seed_pairs, split_pairs

__all__ = ["TranslationScores", "evaluate_embeddings"]


@dataclass(frozen=True)
class TranslationScores:
    """Word-translation precision of one space on one language's held-out pairs."""

    lang: str
    embed: str
    dictionary: str
    #: Held-out ``(English, target)`` pairs and their English words.
    test_pairs: int
    test_words: int
    #: Translation candidates of the space in the target language.
    candidates: int
    #: ``precision[method][k]``, ``method`` ``nn`` or ``csls``, ``k`` 1 or 5.
    precision: dict[str, dict[int, float]]

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False, indent=2) + "\n"

    def __str__(self) -> str:
        lines = [
            f"{self.embed}: en -> {self.lang}, {self.test_words:,} held-out English words "
            f"({self.test_pairs:,} pairs of {self.dictionary}), {self.candidates:,} candidate "
            "words"
        ]
        for method, by_k in self.precision.items():
            scores = "  ".join(f"P@{k} {100 * p:5.1f}" for k, p in by_k.items())
            lines.append(f"{method.upper():<5} {scores}")
        return "\n".join(lines)


def evaluate_embeddings(
    lang: str,
    embed: str,
    *,
    dictionary: str | None = None,
    test_fraction: float = 0.2,
    limit: int | None = None,
) -> TranslationScores:
    """Precision@1 and @5 (nearest neighbour and CSLS) of ``embed`` translating English
    into ``lang`` on the held-out dictionary pairs of ``clir embed train``.

    ``embed`` is what ``--embed`` takes: ``use-m3-tokens`` (the pretrained subword table,
    its pairs drawn from the vocabularies of the machine's text), or a ``.vec`` file of
    ``clir embed train`` (its pairs drawn from the file's own vocabularies, which are the
    same when it was trained on the machine's text). ``limit`` caps the candidate words of
    the subword table (default: as ``clir search`` does).
    """
    import numpy as np

    from clir_toolkit.analysis import normalise_language
    from clir_toolkit.resources.dictionary import load_dictionary
    from clir_toolkit.translate.alignment import AlignedSpace, lexicon_precision
    from clir_toolkit.translate.embedding import EmbeddingSpace
    from clir_toolkit.translate.subword_space import parse_spec, text_vocabulary

    code = normalise_language(lang)
    spec = dictionary or DEFAULT_DICTIONARIES.get(code)
    if spec is None:
        raise UsageError(
            f"no default dictionary for '{code}': give one with "
            f"{DICTIONARY_PARAMS['dictionary'].flag} (a source<TAB>target TSV file, or "
            "freedict:eng-XXX)"
        )
    bilingual = load_dictionary(spec)
    space = EmbeddingSpace.load(embed, SOURCE_LANGUAGE, code, limit=limit)
    subwords, text = parse_spec(embed)
    if subwords:
        source_vocabulary = text_vocabulary(SOURCE_LANGUAGE).words
        target_vocabulary = text_vocabulary(code, text).words
    else:
        source_vocabulary = list(space.source_index)
        target_vocabulary = space.target_words
    pairs = seed_pairs(bilingual, source_vocabulary, target_vocabulary, tokenizer_for(code)[0])
    _, test = split_pairs(pairs, test_fraction)
    english = list(dict.fromkeys(source for source, _ in test))
    if not english:
        raise UsageError(
            f"no held-out pair of {spec} has both words in the vocabularies: give a larger "
            f"dictionary or a larger --test-fraction"
        )
    known, vectors = space.source_rows(english)
    # CSLS's hubness penalty r_S(y) needs the English neighbourhood of every candidate: the
    # whole English vocabulary, as clir embed train scores it (the subword table's words
    # each the mean of its pieces), not only the held-out words.
    held_out = set(known)
    others = [w for w in source_vocabulary if w not in held_out]
    _, more = space.source_rows(others)
    aligned = AlignedSpace(
        known + others, np.vstack([vectors, more]), space.target_words, space.target_vectors
    )
    scores = lexicon_precision(aligned, test, at=(1, 5))
    # lexicon_precision leaves out a word whose every translation lacks a vector; here it
    # is a miss, so that every space is scored on the same words.
    evaluated = [w for w in english if w in aligned.source_index]
    share = scores.words / len(evaluated) if evaluated else 0.0
    precision = {
        method: {k: p * share for k, p in by_k.items()} for method, by_k in scores.precision.items()
    }
    return TranslationScores(
        lang=code,
        embed=embed,
        dictionary=spec,
        test_pairs=sum(1 for source, _ in test if source in aligned.source_index),
        test_words=len(evaluated),
        candidates=len(space.target_words),
        precision=precision,
    )


def write_scores(scores: TranslationScores, path: Path) -> None:
    """``scores`` as JSON in ``path``, written atomically."""
    from clir_toolkit.files import atomic_write

    with atomic_write(path) as handle:
        handle.write(scores.to_json())
