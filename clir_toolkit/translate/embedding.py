"""Query translation by cross-lingual word embeddings (thesis §5.3, equation 5.2).

Source and target words live in one vector space (monolingual embeddings aligned by
orthogonal Procrustes, Smith et al. 2017 — see :mod:`clir_toolkit.translate.alignment`).
A source term's candidates are target words near it, scored in the context of the whole
query so that "machine" in "virtual machine" prefers "computer" to "machine gun":

    score(q_i, t) = w_major · cos(q_i, t) + Σ_{j≠i} w_context · cos(q_j, t)      (5.2)

with w_major > w_context. The ``top`` best-scoring target words (1, 3 or 5 in the
thesis) become the term's alternatives. Source terms without a vector stay untranslated.

Embeddings come either as one ``.vec`` file whose words carry a language prefix
(``en:list``, ``fr:liste``; what ``clir embed train`` writes) or as two aligned files,
``SOURCE.vec,TARGET.vec`` (the MUSE convention).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from clir_toolkit.analysis import ENGLISH_STOP_WORDS
from clir_toolkit.errors import UsageError
from clir_toolkit.params import Param, check_options, declare
from clir_toolkit.query import Alternative, QueryTerm, StructuredQuery, source_words

EMBEDDING_PARAMS = declare(
    Param("embed", str, doc="aligned embeddings: one language-prefixed .vec file or "
          "SOURCE.vec,TARGET.vec", flag="--embed", metavar="FILE.vec"),
    Param("embed_top", int, doc="embedding candidates per term", minimum=1,
          flag="--embed-top"),
    Param("w_major", float, doc="equation 5.2: weight of the term", minimum=0,
          flag="--w-major"),
    Param("w_context", float, doc="equation 5.2: weight of the context", minimum=0,
          flag="--w-context"),
)  # fmt: skip
"""The options of embedding translation (``clir search --translate embed``, a recipe's
``[search]``); their defaults are those of
:class:`~clir_toolkit.translate.pipeline.TranslationOptions`."""


class EmbeddingSpace:
    """Unit-length source and target word vectors in one aligned space."""

    def __init__(
        self,
        source_words: list[str],
        source_vectors: Any,
        target_words: list[str],
        target_vectors: Any,
    ) -> None:
        import numpy as np

        def unit(matrix: Any) -> Any:
            matrix = np.asarray(matrix, dtype=np.float32)
            norms = np.linalg.norm(matrix, axis=1, keepdims=True)
            return matrix / np.maximum(norms, 1e-12)

        self.source_index = {w: i for i, w in enumerate(source_words)}
        self.source_vectors = unit(source_vectors)
        self.target_words = target_words
        self.target_vectors = unit(target_vectors)

    @classmethod
    def load(
        cls,
        spec: str | Path,
        source_lang: str = "en",
        target_lang: str | None = None,
        limit: int | None = None,
    ) -> EmbeddingSpace:
        """From ``FILE.vec`` (language-prefixed words) or ``SOURCE.vec,TARGET.vec``."""
        from clir_toolkit.resources.embeddings import load_vec

        text = str(spec)
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
        known = [w for w in words if w in self.space.source_index]
        terms: list[QueryTerm] = []
        if known:
            rows = [self.space.source_index[w] for w in known]
            cosines = self.space.source_vectors[rows] @ self.space.target_vectors.T  # (n, V)
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
