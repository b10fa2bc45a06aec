"""The seed dictionary of an alignment: word pairs that both have a vector, split by hash.

Step 4 of ``clir embed train`` (:mod:`clir_toolkit.translate.embed_train`): single-word
dictionary entries whose both sides have a vector (:func:`seed_pairs`), split into training
and held-out pairs by a hash of the English word (:func:`split_pairs`), so that all
translations of a word fall on one side.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from typing import Any

from clir_toolkit.errors import UsageError
from clir_toolkit.resources.dictionary.phrases import has_letter
from clir_toolkit.translate.embed_text import Tokenizer

__all__ = ["seed_pairs", "split_pairs"]


def seed_pairs(
    dictionary: Any,
    source_vocabulary: Iterable[str],
    target_vocabulary: Iterable[str],
    target_tokenize: Tokenizer,
) -> list[tuple[str, str]]:
    """``(English word, target word)`` pairs of ``dictionary`` that both have a vector.

    Only single-word entries count: the headword is one word of the English vocabulary and
    the candidate, tokenised as the target text was, is one word of the target vocabulary
    (so "hard disk" and "disque dur" are skipped, and a Chinese candidate that jieba splits
    too). Words without a letter (numbers) are skipped. Dictionary order is kept.
    """
    source_known = set(source_vocabulary)
    target_known = set(target_vocabulary)
    pairs: dict[tuple[str, str], None] = {}
    for headword in dictionary:
        if " " in headword or headword not in source_known or not has_letter(headword):
            continue
        for candidate in dictionary.translations(headword):
            words = target_tokenize(candidate)
            if len(words) == 1 and words[0] in target_known and has_letter(words[0]):
                pairs[(headword, words[0])] = None
    return list(pairs)


def _held_out(word: str, test_fraction: float) -> bool:
    digest = hashlib.sha256(word.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < test_fraction


def split_pairs(
    pairs: Sequence[tuple[str, str]], test_fraction: float = 0.2
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """``(train, test)``: a pair is held out when a hash of its English word says so.

    A hash (not a random draw) makes the split the same on every machine and for every
    seed, and keeps all translations of one word on the same side, so that no test word
    was seen in training. About ``test_fraction`` of the English words are held out.
    """
    if not 0.0 <= test_fraction < 1.0:
        raise UsageError(f"the test fraction must be in [0, 1) (got {test_fraction})")
    train: list[tuple[str, str]] = []
    test: list[tuple[str, str]] = []
    for pair in pairs:
        (test if _held_out(pair[0], test_fraction) else train).append(pair)
    return train, test
