"""Query translation by cross-lingual word embeddings (thesis §5.3, equation 5.2).

Source and target words live in one vector space (monolingual embeddings aligned by
orthogonal Procrustes, Smith et al. 2017 — see :mod:`clir_toolkit.translate.alignment`).
A source term's candidates are target words near it, scored in the context of the whole
query so that "machine" in "virtual machine" prefers "computer" to "machine gun":

    score(q_i, t) = w_major · cos(q_i, t) + Σ_{j≠i} w_context · cos(q_j, t)      (5.2)

with w_major > w_context. The ``top`` best-scoring target words (1, 3 or 5 in the
thesis) become the term's alternatives. Source terms without a vector stay untranslated.

Embeddings come either as one ``.vec`` file whose words carry a language prefix
(``en:list``, ``fr:liste``; what ``clir embed train`` writes), as two aligned files,
``SOURCE.vec,TARGET.vec`` (the MUSE convention), or from USE-m3's pretrained subword table,
``use-m3-tokens`` (:mod:`clir_toolkit.translate.subword_space`: a word is the mean of its
SentencePiece pieces' rows, so that every English word has a vector).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from clir_toolkit.analysis import ENGLISH_STOP_WORDS
from clir_toolkit.encoders import unit_rows
from clir_toolkit.errors import UsageError, missing_file
from clir_toolkit.params import MAX_WEIGHT, Param, check_options, declare
from clir_toolkit.query import Alternative, QueryTerm, StructuredQuery, source_words

EMBEDDING_PARAMS = declare(
    Param("embed", str, doc="aligned embeddings: one language-prefixed .vec file, "
          "SOURCE.vec,TARGET.vec, or use-m3-tokens (USE-m3's pretrained subword table; "
          "use-m3-tokens:TEXT.txt: candidate words from that text of the documents' language)",
          flag="--embed", metavar="FILE.vec|use-m3-tokens"),
    Param("embed_top", int, doc="embedding candidates per term", minimum=1,
          flag="--embed-top"),
    Param("w_major", float, doc="equation 5.2: weight of the term", minimum=0,
          maximum=MAX_WEIGHT, flag="--w-major"),
    Param("w_context", float, doc="equation 5.2: weight of the context", minimum=0,
          maximum=MAX_WEIGHT, flag="--w-context"),
)  # fmt: skip
"""The options of embedding translation (``clir search --translate embed``, a recipe's
``[search]``); their defaults are those of
:class:`~clir_toolkit.translate.pipeline.TranslationOptions`."""


class EmbeddingSpace:
    """Unit-length source and target word vectors in one aligned space.

    ``encode``, when given, makes a vector for any source word that ``source_words`` lacks
    (the subword space's English words): no source word is then out of vocabulary.
    """

    def __init__(
        self,
        source_words: list[str],
        source_vectors: Any,
        target_words: list[str],
        target_vectors: Any,
        encode: Callable[[Sequence[str]], Any] | None = None,
    ) -> None:
        self.source_index = {w: i for i, w in enumerate(source_words)}
        self.source_vectors = unit_rows(source_vectors)
        self.target_words = target_words
        self.target_vectors = unit_rows(target_vectors)
        self.encode = encode

    def source_rows(self, words: Sequence[str]) -> tuple[list[str], Any]:
        """The ``words`` that have a vector (all of them with ``encode``), and their unit
        vectors as the rows of one matrix."""
        if self.encode is not None:
            return list(words), unit_rows(self.encode(words))
        known = [w for w in words if w in self.source_index]
        return known, self.source_vectors[[self.source_index[w] for w in known]]

    @classmethod
    def from_subwords(
        cls, target_lang: str, target_text: Path | None = None, limit: int | None = None
    ) -> EmbeddingSpace:
        """USE-m3's subword table (:mod:`clir_toolkit.translate.subword_space`): English
        words encoded on demand, the target language's candidate words from the machine's
        text of that language, or from ``target_text``; at most ``limit`` of them (default
        :data:`~clir_toolkit.translate.subword_space.MAX_WORDS`)."""
        import numpy as np

        from clir_toolkit.translate import subword_space

        candidates = subword_space.target_candidates(
            target_lang, target_text, subword_space.MAX_WORDS if limit is None else limit
        )
        empty = np.zeros((0, subword_space.subwords.DIM), dtype=np.float32)
        return cls([], empty, candidates.words, candidates.vectors(), subword_space.word_vectors)

    @classmethod
    def load(
        cls,
        spec: str | Path,
        source_lang: str = "en",
        target_lang: str | None = None,
        limit: int | None = None,
    ) -> EmbeddingSpace:
        """From ``FILE.vec`` (language-prefixed words), ``SOURCE.vec,TARGET.vec``, or
        ``use-m3-tokens[:TEXT.txt]`` (:meth:`from_subwords`; ``limit`` caps its candidates)."""
        from clir_toolkit.resources.embeddings import load_vec
        from clir_toolkit.translate.subword_space import SOURCE, parse_spec

        text = str(spec)
        subwords, given = parse_spec(text)
        if subwords:
            if target_lang is None:
                raise UsageError(f"--embed {SOURCE} needs the documents' language")
            return cls.from_subwords(target_lang, given, limit)
        for path in text.split(",", 1):
            if not Path(path).is_file():
                raise missing_file(
                    path,
                    f"{path}: no such embeddings file (--embed takes a .vec file of 'clir "
                    f"embed train', SOURCE.vec,TARGET.vec, or {SOURCE} for USE-m3's "
                    "pretrained subword table)"
                )
        if "," in text:
            source_path, target_path = text.split(",", 1)
            source, target = load_vec(source_path, limit=limit), load_vec(target_path, limit=limit)
            return cls(source.words, source.vectors, target.words, target.vectors)
        both = load_vec(text)
        prefix_source = f"{source_lang}:"
        rows_source = [i for i, w in enumerate(both.words) if w.startswith(prefix_source)]
        if target_lang:
            prefix_target = f"{target_lang}:"
            rows_target = [i for i, w in enumerate(both.words) if w.startswith(prefix_target)]
        else:
            rows_target = [
                i for i, w in enumerate(both.words) if ":" in w and not w.startswith(prefix_source)
            ]
        if not rows_source or not rows_target:
            raise UsageError(
                f"{spec}: expected words prefixed '{source_lang}:' and the target "
                "language's code (as 'clir embed train' writes), or give two "
                "aligned files as SOURCE.vec,TARGET.vec"
            )
        if limit:
            rows_source, rows_target = rows_source[:limit], rows_target[:limit]
        strip = len(prefix_source)
        source_words_ = [both.words[i][strip:] for i in rows_source]
        target_words_ = [both.words[i].split(":", 1)[1] for i in rows_target]
        return cls(
            source_words_, both.vectors[rows_source], target_words_, both.vectors[rows_target]
        )


class EmbeddingTranslator:
    """Top-k target words per source term by equation 5.2."""

    def __init__(
        self, space: EmbeddingSpace, top: int = 1, w_major: float = 1.0, w_context: float = 0.2
    ) -> None:
        values = {"embed_top": top, "w_major": w_major, "w_context": w_context}
        check_options(values, [EMBEDDING_PARAMS[name] for name in values])
        if not w_major > w_context:
            raise UsageError(
                f"equation 5.2 needs w_major > w_context (got {w_major} and {w_context})"
            )
        self.space = space
        self.top = top
        self.w_major = w_major
        self.w_context = w_context
        self.name = f"embed/top{top}"

    def translate(self, queries: Sequence[StructuredQuery]) -> list[StructuredQuery]:
        return [self.translate_one(q) for q in queries]

    def translate_one(self, query: StructuredQuery) -> StructuredQuery:
        import numpy as np

        words = [
            w for t in query.terms for w in source_words(t.source) if w not in ENGLISH_STOP_WORDS
        ]
        known, vectors = self.space.source_rows(words)
        terms: list[QueryTerm] = []
        if known:
            cosines = vectors @ self.space.target_vectors.T  # (n, V)
            context = cosines.sum(axis=0, keepdims=True) - cosines  # Σ_{j≠i} cos(q_j, t)
            scores = self.w_major * cosines + self.w_context * context
            top = min(self.top, scores.shape[1])
            best = np.argsort(-scores, axis=1, kind="stable")[:, :top]
            translated = {
                word: tuple(Alternative(self.space.target_words[j]) for j in best[i])
                for i, word in enumerate(known)
            }
        else:
            translated = {}
        for word in words:
            alternatives = translated.get(word, (Alternative(word),))
            terms.append(QueryTerm(word, alternatives))
        return StructuredQuery(query.qid, tuple(terms), query.original)
