"""``--translate embed``: nearest words in a cross-lingual embedding space
(:mod:`clir_toolkit.translate.embedding`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from clir_toolkit.registry import register
from clir_toolkit.translate.embedding import EMBEDDING_PARAMS, EmbeddingTranslator

if TYPE_CHECKING:
    from clir_toolkit.translate.pipeline import TranslationOptions


@register(
    "translators",
    "embed",
    order=3,
    params=tuple(EMBEDDING_PARAMS.values()),
    structured=True,
    label=lambda options: f"embed/top{options.embed_top}",
    requires=("embed",),
    summary="nearest words in aligned cross-lingual embeddings, scored with the "
    "query's context (thesis equation 5.2)",
)
def embedding_translator(target_lang: str, options: TranslationOptions) -> EmbeddingTranslator:
    """The ``options.embed_top`` best target words of each query word in the space of
    ``options.embed``."""
    from clir_toolkit.translate.embedding import EmbeddingSpace

    assert options.embed is not None  # required: refused before the factory is called
    space = EmbeddingSpace.load(options.embed, "en", target_lang)
    return EmbeddingTranslator(space, options.embed_top, options.w_major, options.w_context)
