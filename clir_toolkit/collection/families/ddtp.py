"""``ddtp``: English queries against Debian's translated package descriptions (DDTP).

The collections ``ddtp-en-L`` and ``ddtp-en-L-hard`` (documents without their translated
synopsis), built by :func:`clir_toolkit.collection.ddtp.build_ddtp_collection` from apt's
lists: those saved under ``--lists DIR``, else those an earlier fetch kept under
``$CLIR_DATA/ddtp/lists``, else fetched there with ``apt-get update``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from clir_toolkit.collection.builder import CollectionFamily
from clir_toolkit.collection.ddtp import VARIANTS, build_ddtp_collection, format_summary
from clir_toolkit.collection.ddtp.lists import LANGUAGES, saved_lists
from clir_toolkit.params import Param
from clir_toolkit.registry import register


@register("collections", "ddtp", order=2)
class Ddtp(CollectionFamily):
    """English→L CLIR collection from Debian's translated package descriptions"""

    languages = tuple(LANGUAGES)
    variants = VARIANTS
    variant_help = "hard: documents without their translated synopsis"
    params = (
        Param("lists", Path, doc="build offline from apt lists saved in DIR (default: those "
              "saved by an earlier fetch, else fetched with apt-get into $CLIR_DATA/ddtp/lists, "
              "kept for reuse)", metavar="DIR", optional=True),
    )  # fmt: skip

    def build(
        self, language: str, out: Path, variant: str, progress: bool, **options: Any
    ) -> Any:
        lists = options.get("lists") or saved_lists(language)  # None: fetch them
        return build_ddtp_collection(
            language, out, variant=variant, lists=lists, progress=progress
        )

    def format_summary(self, summary: Any) -> str:
        return format_summary(summary)
