"""The reranker's vocabularies: words to ids, one vocabulary per language.

One vocabulary for the query language and one for the document language, as in the thesis'
bilingual training (Liu, *Neural CLIR*, §6.1.3: "separate vocabulary is used for English and
Chinese terms"). Id 0 pads, id 1 stands for every word outside the vocabulary (words seen
fewer than ``min_count`` times in training). :func:`encode_texts` turns short texts (queries,
parallel sentences) into padded id tensors; documents go through the tensor cache of
:mod:`clir_toolkit.rerank.data.documents`.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clir_toolkit.errors import ClirError, FormatError
from clir_toolkit.files import atomic_write
from clir_toolkit.rerank.data.tokens import WORDS, text_tokens

if TYPE_CHECKING:
    import torch

PAD = "<pad>"
OOV = "<oov>"
PAD_ID = 0
OOV_ID = 1


class Vocabulary:
    """Words ↔ ids for one language: id 0 is ``<pad>``, id 1 is ``<oov>``, then the words.

    Words are ordered by decreasing training frequency (ties alphabetically), so the same
    texts always give the same ids. ``tokens`` is the scheme that cuts texts into its words
    (:func:`clir_toolkit.rerank.data.tokens.text_tokens`): ``words``, or ``use-m3-tokens``, the
    pieces of USE-m3's subword table.
    """

    def __init__(self, words: Sequence[str], language: str, tokens: str = WORDS) -> None:
        if list(words[:2]) != [PAD, OOV]:
            raise ValueError(f"a vocabulary starts with {PAD} and {OOV}")
        self.words: list[str] = list(words)
        self.language = language
        self.tokens = tokens
        self._ids = {word: index for index, word in enumerate(self.words)}
        if len(self._ids) != len(self.words):
            raise ValueError("a vocabulary lists each word once")

    @classmethod
    def build(
        cls,
        token_lists: Iterable[Sequence[str]],
        language: str,
        min_count: int = 1,
        max_size: int | None = None,
        tokens: str = WORDS,
    ) -> Vocabulary:
        """Count the words of ``token_lists``; keep those seen at least ``min_count`` times.

        ``max_size`` caps the number of words (besides ``<pad>`` and ``<oov>``), keeping the
        most frequent.
        """
        if min_count < 1:
            raise ClirError(f"min_count must be at least 1, not {min_count}")
        counts: Counter[str] = Counter()
        for token_list in token_lists:
            counts.update(token_list)
        counts.pop(PAD, None)
        counts.pop(OOV, None)
        kept = sorted(
            (word for word, count in counts.items() if count >= min_count),
            key=lambda word: (-counts[word], word),
        )
        if max_size is not None:
            kept = kept[:max_size]
        return cls([PAD, OOV, *kept], language, tokens)

    def __len__(self) -> int:
        return len(self.words)

    def __contains__(self, word: object) -> bool:
        return word in self._ids

    def id(self, word: str) -> int:
        """The id of ``word``; :data:`OOV_ID` for a word outside the vocabulary."""
        return self._ids.get(word, OOV_ID)

    def encode(self, tokens: Sequence[str], max_len: int) -> list[int]:
        """Exactly ``max_len`` ids: the first ``max_len`` tokens, padded with :data:`PAD_ID`."""
        ids = [self._ids.get(token, OOV_ID) for token in tokens[:max_len]]
        return ids + [PAD_ID] * (max_len - len(ids))

    def tokenize(self, text: str, limit: int | None = None) -> list[str]:
        """The tokens of ``text`` in this vocabulary's scheme and language (the first
        ``limit``)."""
        return text_tokens(self.tokens, self.language, text, limit)

    def to_dict(self) -> dict[str, Any]:
        """``language`` and ``words``; ``tokens`` too when it is not the word scheme (so
        that a vocabulary of words reads, and hashes, as it always did)."""
        data: dict[str, Any] = {"language": self.language, "words": self.words}
        if self.tokens != WORDS:
            data["tokens"] = self.tokens
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Vocabulary:
        """The vocabulary :meth:`to_dict` wrote; ValueError when ``data`` is not one."""
        from clir_toolkit.rerank.data.tokens import token_schemes

        if (
            not isinstance(data, Mapping)
            or not {"language", "words"} <= set(data)
            or not (set(data) <= {"language", "words", "tokens"})
        ):
            raise ValueError("expected the keys 'language' and 'words' (and 'tokens')")
        words, language = data["words"], data["language"]
        tokens = data.get("tokens", WORDS)
        if not isinstance(language, str) or not language:
            raise ValueError("its language is not a language code")
        if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
            raise ValueError("its words are not a list of strings")
        if tokens not in token_schemes():
            raise ValueError(f"its tokens are not one of {', '.join(token_schemes())}")
        return cls(words, language, tokens)

    def fingerprint(self) -> str:
        """sha256 of the language, the words in id order and the scheme (not words)."""
        payload = json.dumps(self.to_dict(), ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()

    def save(self, path: str | Path) -> None:
        """Write the vocabulary as JSON (atomically)."""
        with atomic_write(path) as handle:
            json.dump(self.to_dict(), handle, ensure_ascii=False)
            handle.write("\n")

    @classmethod
    def load(cls, path: str | Path) -> Vocabulary:
        """Read a vocabulary written by :meth:`save`."""
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
            return cls.from_dict(data)
        except OSError as exc:
            raise FormatError(path, None, f"cannot read the vocabulary: {exc.strerror}") from None
        except (ValueError, KeyError, TypeError) as exc:
            raise FormatError(path, None, f"not a vocabulary file ({exc})") from None


def encode_texts(texts: Sequence[str], vocabulary: Vocabulary, max_len: int) -> torch.Tensor:
    """``int64[len(texts), max_len]`` ids of short texts (queries, parallel sentences)."""
    import torch

    rows = [vocabulary.encode(vocabulary.tokenize(text, max_len), max_len) for text in texts]
    return torch.tensor(rows, dtype=torch.long).reshape(-1, max_len)
