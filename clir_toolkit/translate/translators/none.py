"""``--translate none``: the English query searched as it is."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from clir_toolkit.query import StructuredQuery
from clir_toolkit.registry import register

if TYPE_CHECKING:
    from clir_toolkit.translate.pipeline import TranslationOptions


class Untranslated:
    """The translator that leaves every query as it is (a monolingual search)."""

    name = "none"

    def translate(self, queries: Sequence[StructuredQuery]) -> list[StructuredQuery]:
        return list(queries)


@register(
    "translators",
    "none",
    order=0,
    structured=False,
    label=lambda options: "",
    summary="no translation: the English query is searched as it is",
)
def untranslated(target_lang: str, options: TranslationOptions) -> Untranslated:
    """Whatever the documents' language: an untranslated query matches the words that the
    documents kept in English (command names, technical terms)."""
    return Untranslated()
