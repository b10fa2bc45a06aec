"""``--expand wordnet``: WordNet synonyms of each English term
(:mod:`clir_toolkit.expand.wordnet`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from clir_toolkit.expand.wordnet import WORDNET_PARAMS, WordNetExpander
from clir_toolkit.registry import register

if TYPE_CHECKING:
    from clir_toolkit.translate.pipeline import TranslationOptions


@register(
    "expanders",
    "wordnet",
    order=0,
    params=tuple(WORDNET_PARAMS.values()),
    summary="WordNet synonyms of each English term, weighted below the term itself",
)
def wordnet_expander(options: TranslationOptions) -> WordNetExpander:
    """Up to ``options.wordnet_synonyms`` synonyms per term, each weighing
    ``options.wordnet_weight`` of the term (NLTK's WordNet is read when a query needs it)."""
    return WordNetExpander(options.wordnet_synonyms, options.wordnet_weight)
