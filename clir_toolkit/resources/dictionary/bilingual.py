"""The bilingual dictionary: source-language phrases mapped to target-language candidates.

Dictionary-based query translation (thesis §2.2.2 and §4.4.1) looks each query term up in a
bilingual dictionary and keeps its list of translation candidates. Multi-word headwords
("take care", "hard disk") are kept, because translating phrases as units closes much of
the gap to monolingual retrieval (Hull [1], quoted in §2.2.2);
:meth:`BilingualDictionary.lookup_longest` finds them by greedy longest match.

Keys are phrases normalised by :func:`~.phrases.normalise_phrase`; candidates keep the
dictionary's spelling and order, without duplicates.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from clir_toolkit.resources.dictionary.phrases import normalise_phrase

__all__ = ["BilingualDictionary"]


class BilingualDictionary:
    """Source phrase → target-language candidates, in dictionary order, with optional weights.

    ``entries`` maps source phrases (normalised with :func:`normalise_phrase`; phrases that
    normalise alike are merged) to candidate lists; candidates are deduplicated ignoring
    case and keep their first spelling. ``weights``, when given, maps the same phrases to one
    positive number per candidate (for instance translation probabilities); without it every
    candidate of a phrase weighs the same.
    """

    def __init__(
        self,
        entries: Mapping[str, Sequence[str]],
        name: str = "dictionary",
        weights: Mapping[str, Sequence[float]] | None = None,
    ) -> None:
        self.name = name
        self.weighted = weights is not None
        self._candidates: dict[str, list[str]] = {}
        self._weights: dict[str, list[float]] = {}  # only for a weighted dictionary
        for phrase, targets in entries.items():
            given = weights.get(phrase) if weights is not None else None
            if given is not None and len(given) != len(targets):
                raise ValueError(f"{len(targets)} candidates but {len(given)} weights: {phrase!r}")
            key = normalise_phrase(phrase)
            if not key:
                continue
            for position, target in enumerate(targets):
                self._add(key, target, given[position] if given is not None else 1.0)
        self.max_words = max((key.count(" ") + 1 for key in self._candidates), default=0)

    @classmethod
    def _from_normalised(cls, candidates: dict[str, list[str]], name: str) -> BilingualDictionary:
        """An unweighted dictionary from keys and candidates that are already clean."""
        dictionary = cls({}, name)
        dictionary._candidates = candidates
        dictionary.max_words = max((key.count(" ") + 1 for key in candidates), default=0)
        return dictionary

    def _add(self, key: str, target: str, weight: float) -> None:
        target = " ".join(target.split())
        if not target:
            return
        known = self._candidates.setdefault(key, [])
        folded = target.casefold()
        if any(candidate.casefold() == folded for candidate in known):
            return
        known.append(target)
        if self.weighted:
            self._weights.setdefault(key, []).append(weight)

    def __contains__(self, phrase: object) -> bool:
        return isinstance(phrase, str) and normalise_phrase(phrase) in self._candidates

    def __len__(self) -> int:
        return len(self._candidates)

    def __iter__(self) -> Iterator[str]:
        """The normalised source phrases, in the order they were first added."""
        return iter(self._candidates)

    def __repr__(self) -> str:
        return f"BilingualDictionary({self.name!r}, {len(self)} phrases)"

    def translations(self, phrase: str) -> list[str]:
        """The candidates of ``phrase`` in dictionary order ([] when it is not in it)."""
        return list(self._candidates.get(normalise_phrase(phrase), ()))

    def weights(self, phrase: str) -> list[float]:
        """One weight per candidate of ``phrase``, summing to 1 (uniform unless weighted)."""
        key = normalise_phrase(phrase)
        if not self.weighted:
            count = len(self._candidates.get(key, ()))
            return [1.0 / count] * count
        raw = self._weights.get(key, [])
        total = sum(raw)
        return [weight / total for weight in raw]

    def lookup_longest(self, words: Sequence[str], start: int) -> tuple[int, list[str]]:
        """Greedy longest match at ``words[start]``: (number of words matched, candidates).

        Tries the phrase of ``max_words`` words first, then shorter ones, down to the single
        word; returns ``(0, [])`` when not even ``words[start]`` is in the dictionary.
        ``words`` should come from :func:`phrase_words`.
        """
        if not 0 <= start < len(words):
            return 0, []
        for size in range(min(self.max_words, len(words) - start), 0, -1):
            found = self._candidates.get(normalise_phrase(" ".join(words[start : start + size])))
            if found:
                return size, list(found)
        return 0, []

    def merged(self, other: BilingualDictionary, name: str | None = None) -> BilingualDictionary:
        """A dictionary with this one's candidates first, then ``other``'s (weights dropped)."""
        entries: dict[str, list[str]] = {
            key: list(value) for key, value in self._candidates.items()
        }
        for key, candidates in other._candidates.items():
            entries.setdefault(key, []).extend(candidates)
        return BilingualDictionary(entries, name or f"{self.name}+{other.name}")
