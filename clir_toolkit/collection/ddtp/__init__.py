"""The DDTP collections: English queries against Debian's translated package descriptions.

:mod:`~clir_toolkit.collection.ddtp.build` builds a collection directory (its docstring
describes the construction); the steps are the other modules of this package:
:mod:`~clir_toolkit.collection.ddtp.lists` (apt's lists: fetched, found, their languages),
:mod:`~clir_toolkit.collection.ddtp.records` (the descriptions read from them) and
:mod:`~clir_toolkit.collection.ddtp.queries` (documents, queries, filters and splits). The
family is registered by :mod:`clir_toolkit.collection.families.ddtp`.
"""

from clir_toolkit.collection.ddtp.build import (
    VARIANTS,
    DdtpSummary,
    build_ddtp_collection,
    format_summary,
)

__all__ = ["VARIANTS", "DdtpSummary", "build_ddtp_collection", "format_summary"]
