"""BM25 search over a Lucene index: :mod:`.searcher` (structured queries into Lucene's three
forms, scored by BM25) and :mod:`.runs` (a batch of queries into a TREC run)."""

from clir_toolkit.search.runs import (
    SearchStats,
    cyclic_gc_paused,
    plain_queries,
    search_rows,
    search_to_run,
    write_search_run,
)
from clir_toolkit.search.searcher import (
    BM25_PARAMS,
    DEFAULT_B,
    DEFAULT_HITS,
    DEFAULT_K1,
    STRUCTURES,
    Hit,
    Searcher,
    parse_java_map,
)

__all__ = [
    "BM25_PARAMS", "DEFAULT_B", "DEFAULT_HITS", "DEFAULT_K1", "STRUCTURES", "Hit", "SearchStats",
    "Searcher", "cyclic_gc_paused", "parse_java_map", "plain_queries", "search_rows",
    "search_to_run", "write_search_run",
]  # fmt: skip
