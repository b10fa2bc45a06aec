"""``manpages``: English queries against Debian's translated manual pages.

The collections ``manpages-en-L`` and ``manpages-en-L-hard`` (documents without their NAME
section), built from the installed packages by
:func:`clir_toolkit.collection.manpages.build_manpages_collection`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from clir_toolkit.collection.builder import CollectionFamily
from clir_toolkit.collection.manpages import VARIANTS, build_manpages_collection, format_summary
from clir_toolkit.collection.manpages.packages import LANGUAGES
from clir_toolkit.registry import register


@register("collections", "manpages", order=1)
class ManPages(CollectionFamily):
    """English→L CLIR collection from Debian's translated man pages"""

    languages = tuple(LANGUAGES)
    variants = VARIANTS
    variant_help = "hard: documents without their NAME section"

    def build(
        self, language: str, out: Path, variant: str, progress: bool, **options: Any
    ) -> Any:
        return build_manpages_collection(language, out, variant=variant, progress=progress)

    def format_summary(self, summary: Any) -> str:
        return format_summary(summary)
