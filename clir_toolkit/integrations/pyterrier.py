"""PyTerrier adapters: the toolkit's three stages as PyTerrier transformers.

`PyTerrier <https://pyterrier.readthedocs.io>`_ builds retrieval experiments as pipelines of
*transformers*, each a function from one pandas ``DataFrame`` to the next, composed with
``>>`` and compared with ``pt.Experiment``. This module makes the toolkit's three stages
such transformers (install with ``pip install clir_toolkit[pyterrier]``; docs/pyterrier.md)::

    import pyterrier as pt
    import clir_toolkit as ct
    from clir_toolkit.integrations.pyterrier import ClirReranker, ClirRetriever, ClirTranslator

    options = ct.TranslationOptions(translate="dict")
    pipeline = (
        ClirTranslator(options, "fr")
        >> ClirRetriever("indexes/manpages-en-fr", structure=options.default_structure)
        >> ClirReranker("models/knrm.pt", "data/manpages-en-fr")
    )
    pt.Experiment([pipeline], topics, qrels, eval_metrics=["ndcg_cut_10"])

The DataFrame columns follow PyTerrier's conventions:

:class:`ClirTranslator` (a query rewriter)
    in: ``qid``, ``query`` (English). Out: the same rows with the English moved to
    ``query_0`` (an older ``query_0`` to ``query_1``, and so on: ``pt.model.push_queries``),
    ``query`` the translation as plain text (every alternative of every term, the readable
    bag that ``clir translate`` writes to a TSV file) and ``clir_query`` the structured
    query itself (:class:`clir_toolkit.StructuredQuery`: each source term with its weighted
    alternatives).
:class:`ClirRetriever` (a retriever)
    in: ``qid``, ``query`` and, when a translator ran, ``clir_query``. Out: one row per
    retrieved document, the query columns followed by ``docno``, ``score`` (BM25) and
    ``rank`` (from 0, as in PyTerrier; a TREC run numbers from 1), best first.
:class:`ClirDenseRetriever` (a retriever)
    in: ``qid`` and the English query (``query_0`` when present, otherwise ``query``). Out:
    one row per retrieved document, ``docno``, ``score`` (the cosine) and ``rank``, as
    ``clir search --dense`` ranks them over the index's stored vectors.
:class:`ClirReranker` (a reranker and an ``Estimator``)
    in: ``qid``, ``docno``, ``score`` and the query text: ``query_0`` when present (after
    :class:`ClirTranslator`, the English query the reranker was trained with), otherwise
    ``query``. Out: the same rows with the neural ``score`` and the new ``rank``.

How structured queries travel. A PyTerrier column of text cannot hold Pirkola's structure
(which alternatives belong to one source term) nor the weights of the alternatives, so the
translator writes the structured query to ``clir_query`` beside the plain ``query``. The
retriever searches the structured query when the row's ``query`` is still the text the
translator wrote, with the structure it was given (``syn``, ``and`` or ``or``); when a later
stage rewrote ``query``, or there is no ``clir_query``, it searches ``query`` as plain text.

The adapters need none of Terrier's Java: no ``pt.java.init()``, no Terrier index. The
retriever starts the toolkit's own JVM (Lucene, through pyserini) on first use, as
``clir search`` does. A process has one JVM, whose class path is fixed when it starts:
Terrier's own Java stages (``pt.terrier.Retriever``) want Terrier's jars on it, the
retriever Anserini's, so mixing the two in one process is not supported.

The reranker reuses :func:`clir_toolkit.score_run`, :func:`clir_toolkit.train_reranker` and
:func:`clir_toolkit.train_tuned` unchanged: it writes the candidates (and, to train, the
qrels) to a temporary directory as the command line's files, so that its scores are those
of ``clir rerank score`` and its models those of ``clir rerank train``. It lives in
:mod:`.pyterrier_rerank`, and what the adapters share (PyTerrier's import, the reading of a
DataFrame's columns) in :mod:`.pyterrier_frames`; all are imported from here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

import clir_toolkit as ct
from clir_toolkit.errors import UsageError
from clir_toolkit.integrations.pyterrier_frames import (
    column_ids,
    column_texts,
    pt,
    require_columns,
    results_frame,
)
from clir_toolkit.integrations.pyterrier_pipeline import ClirPipeline
from clir_toolkit.integrations.pyterrier_rerank import ClirReranker
from clir_toolkit.search import DEFAULT_B, DEFAULT_HITS, DEFAULT_K1
from clir_toolkit.search.searcher import check_search_options

__all__ = ["STRUCTURED_COLUMN", "ClirDenseRetriever", "ClirPipeline", "ClirReranker",
           "ClirRetriever", "ClirTranslator", "query_text"]  # fmt: skip

#: The column that carries a translated query's structure (a StructuredQuery per row).
STRUCTURED_COLUMN = "clir_query"


def query_text(query: Any) -> str:
    """A structured query as one line of plain text: every alternative of every term.

    ``list → {liste, lister}`` and ``files → {fichiers}`` give ``"liste lister fichiers"``;
    the weights and the grouping into terms are left out (they stay in ``clir_query``).
    """
    return " ".join(
        word for term in query.terms for alternative in term.alternatives
        for word in alternative.text.split()
    )  # fmt: skip


class ClirTranslator(pt.Transformer):
    """Translate (and expand) English queries as ``clir search`` does.

    ``options`` are the translation options of :func:`clir_toolkit.build_queries`
    (:class:`clir_toolkit.TranslationOptions`), ``doc_lang`` the language of the documents
    (``"fr"``). ``transform`` takes one row per topic (``qid``, ``query``) and returns them
    with ``query_0`` (the English), ``query`` (the translation as text) and ``clir_query``
    (the structured translation); other columns are kept.
    """

    def __init__(self, options: Any, doc_lang: str) -> None:
        self.options = options
        self.doc_lang = doc_lang

    def __repr__(self) -> str:
        return f"ClirTranslator({self.options.describe()} → {self.doc_lang})"

    def transform(self, inp: pd.DataFrame) -> pd.DataFrame:
        require_columns(inp, ("qid", "query"), "ClirTranslator")
        qids = column_ids(inp, "qid")
        if len(set(qids)) != len(qids):
            repeated = next(qid for qid in qids if qids.count(qid) > 1)
            raise UsageError(f"ClirTranslator: topic {repeated} appears twice (one row a topic)")
        topics = [
            ct.Topic(qid, text) for qid, text in zip(qids, column_texts(inp, "query"), strict=True)
        ]
        translated = ct.build_queries(topics, self.options, self.doc_lang)
        by_qid = {query.qid: query for query in translated}  # in the rows' order, whatever
        queries = [by_qid[qid] for qid in qids]  # order a translator plug-in returns
        out = pt.model.push_queries(inp)  # query → query_0, query_0 → query_1, ...
        out["query"] = [query_text(query) for query in queries]
        out[STRUCTURED_COLUMN] = pd.Series(queries, index=out.index, dtype=object)
        return out


class ClirRetriever(pt.Transformer):
    """BM25 over an index built by ``clir index``: the search of ``clir search``.

    ``hits``, ``k1``, ``b`` and ``structure`` are the options of
    :func:`clir_toolkit.search_to_run`, and the ranking is the same: score descending, ties
    broken by docid in descending order, as trec_eval reads a run. The index is opened when
    the retriever is made (a directory that is not an index is one :class:`ClirError`) and
    stays open until :meth:`close` (or the end of a ``with`` block).
    """

    def __init__(
        self,
        index: str | Path,
        *,
        hits: int = DEFAULT_HITS,
        k1: float = DEFAULT_K1,
        b: float = DEFAULT_B,
        structure: str = "or",
    ) -> None:
        check_search_options(hits=hits, structure=structure)  # clir search's own rule
        self.index = Path(index)
        self.hits = hits
        self.structure = structure
        self._searcher = ct.Searcher(self.index, k1=k1, b=b)

    def __repr__(self) -> str:
        return f"ClirRetriever({self.index.name}, {self.structure}, top {self.hits})"

    def close(self) -> None:
        """Close the index (the retriever cannot search afterwards)."""
        self._searcher.close()

    def __enter__(self) -> ClirRetriever:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def transform(self, inp: pd.DataFrame) -> pd.DataFrame:
        require_columns(inp, ("qid", "query"), "ClirRetriever")
        if "docno" in inp.columns:  # results of an earlier stage: search their queries again
            kept = [*pt.model.query_columns(inp)]
            if STRUCTURED_COLUMN in inp.columns:
                kept.append(STRUCTURED_COLUMN)
            inp = inp[kept].drop_duplicates("qid")
        found = (self._searcher.search(q, self.hits, self.structure) for q in self._queries(inp))
        return results_frame(inp, found)

    def _queries(self, inp: pd.DataFrame) -> Iterable[Any]:
        """Each row's query: its ``clir_query`` while ``query`` is still that query's text,
        otherwise ``query`` as plain text (one term per word)."""
        qids = column_ids(inp, "qid")
        texts = column_texts(inp, "query")
        structured: Sequence[Any] = (
            list(inp[STRUCTURED_COLUMN]) if STRUCTURED_COLUMN in inp.columns else [None] * len(qids)
        )
        for qid, text, query in zip(qids, texts, structured, strict=True):
            written = query_text(query) if isinstance(query, ct.StructuredQuery) else None
            if written == " ".join(text.split()):
                yield query
            else:
                yield ct.StructuredQuery.plain(qid, text)


class ClirDenseRetriever(pt.Transformer):
    """Exact cosine search over the vectors stored with an index (``clir index --dense``):
    the search of ``clir search --dense``.

    The query text is ``query_0`` when present (after :class:`ClirTranslator`, the English
    query: the multilingual encoder needs no translation), otherwise ``query``. ``encoder``
    and ``model`` are those of :func:`clir_toolkit.dense_search_to_run` (default: the encoder
    that made the index's vectors; another is one :class:`ClirError`). Out: one row per
    retrieved document with ``docno``, ``score`` (the cosine) and ``rank`` (from 0), ranked
    as ``clir search --dense`` ranks them.
    """

    def __init__(
        self,
        index: str | Path,
        *,
        hits: int = DEFAULT_HITS,
        encoder: str | None = None,
        model: str | Path | None = None,
    ) -> None:
        check_search_options(hits=hits)
        self.index = Path(index)
        self.hits = hits
        self._searcher = ct.DenseSearcher(self.index, encoder, model)

    def __repr__(self) -> str:
        return (
            f"ClirDenseRetriever({self.index.name}, {self._searcher.encoder.name}, top {self.hits})"
        )

    def transform(self, inp: pd.DataFrame) -> pd.DataFrame:
        require_columns(inp, ("qid", "query"), "ClirDenseRetriever")
        column = "query_0" if "query_0" in inp.columns else "query"
        if "docno" in inp.columns:  # results of an earlier stage: search their queries again
            inp = inp[[*pt.model.query_columns(inp)]].drop_duplicates("qid")
        topics = [
            ct.Topic(qid, text)
            for qid, text in zip(column_ids(inp, "qid"), column_texts(inp, column), strict=True)
        ]
        found = (hits for _, hits in self._searcher.batch_search(topics, self.hits))
        return results_frame(inp, found)
