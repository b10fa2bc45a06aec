"""The man-page collections: English queries against Debian's translated manual pages.

:mod:`~clir_toolkit.collection.manpages.build` builds a collection directory (its
docstring describes the construction); the steps are the other modules of this package:
:mod:`~clir_toolkit.collection.manpages.packages` (the languages and Debian's packages),
:mod:`~clir_toolkit.collection.manpages.root` (the unique pages of a man root),
:mod:`~clir_toolkit.collection.manpages.documents` (a page's text less the boilerplate),
:mod:`~clir_toolkit.collection.manpages.topics` (queries, filters, grade-1 pages), and the
page reader: :mod:`~clir_toolkit.collection.manpages.troff` (the troff language),
:mod:`~clir_toolkit.collection.manpages.macros` (man(7) and mdoc(7)) and
:mod:`~clir_toolkit.collection.manpages.page` (a page's sections). The family is
registered by :mod:`clir_toolkit.collection.families.manpages`.
"""

from clir_toolkit.collection.manpages.build import (
    VARIANTS,
    ManPagesSummary,
    build_manpages_collection,
    format_summary,
)

__all__ = ["VARIANTS", "ManPagesSummary", "build_manpages_collection", "format_summary"]
