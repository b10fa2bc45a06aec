"""BM25 batch search of plain or structured queries over a Lucene index.

Scoring is Lucene's ``BM25Similarity`` (Robertson et al.'s Okapi BM25 with Lucene's
document-length normalisation). The defaults k1 = 1.5, b = 0.75 were chosen by transfer:
the best mean dev nDCG@10 of the dictionary run over four collections (the French and
German man pages and DDTP descriptions; ``transfer/DEFAULTS.md`` has the grid). With pyserini's
``k1=0.9, b=0.4`` a plain query gets the same ranking and scores as its ``LuceneSearcher``.

A :class:`~clir_toolkit.query.StructuredQuery` becomes one Lucene query. With ``t`` the
source terms and ``a`` the analysed alternatives of a term (weights as boosts):

``or``  (bag of words)
    every token of every alternative is one SHOULD clause; a token that occurs more than
    once has its weights summed. For a plain string this is pyserini's bag-of-words query.
``and`` (the thesis' form: alternatives OR'ed, terms AND'ed)
    ``+(a11 a12 ...) +(a21 a22 ...) ...``: a document must match some alternative of
    every term; terms whose alternatives are all stop words are left out.
``syn`` (Pirkola's structured query, 1998)
    the single-token alternatives of a term are pooled into one pseudo-term by Lucene's
    ``SynonymQuery``: term frequency is summed over the alternatives and document
    frequency is that of the most frequent alternative, so rare wrong translations no
    longer dominate the score. Terms are OR'ed. A multi-word alternative (a phrase
    translation) adds each of its words to the pseudo-term. The relative weights of a
    pseudo-term's tokens are rounded to multiples of 1/256 (:data:`SYNONYM_WEIGHT_STEP`):
    Lucene adds the weighted frequencies in an order that depends on the terms each index
    segment holds, and with such weights every sum is exact whatever its order, so a
    document scores the same in one index, in any segment layout, or in a sharded index.

Lucene queries are immutable, so a searcher builds each term's clause once and reuses it
in every topic that has the same term (translated topics repeat the same source words).
Each query runs on its own (``IndexSearcher.search``): the Java heap holds one result
list at a time in each searching thread, whatever the number of topics. Hits are sorted
by score, ties broken by docid in descending order, as trec_eval sorts (pyserini lists tied
documents in ascending docid order; evaluation is the same either way), and read back from
Java as two arrays (docids, scores) per query: field-by-field access through pyjnius costs
about 5 µs a hit. The toolkit's own Java class reads them (:mod:`clir_toolkit.java_hits`)
when ``clir resource java`` could compile it, else Anserini's ``ScoredDocs``.

Lucene finds the top ``k`` by score alone, asking for one document more (``k + 1``):
when the last kept document and the first left out score differently, the ``k`` kept
are the only possible top ``k`` and their ties are ordered here. Only when they tie at the
cut-off does the choice among tied documents matter; that query is searched again sorted
by score and then docid (descending), so the cut-off keeps the documents trec_eval would
rank first. The plain search is two to three times cheaper than the sorted one (which
compares docids at every collected hit and scores the hits a second time); on the French
man pages 7 % of queries tie at the cut-off of 100. With the toolkit's ``HitReader``, a
tied query is searched sorted only when very many documents tie (:data:`TIED_LIMIT`):
otherwise it collects every document that scores at least the tied score
(``HitReader.atLeast``; the scorer skips what cannot reach it, as the top-k search does),
and those are ordered here and cut, the same ``k`` (at 1,000,000 documents and 1,000
topics of a repeated collection, where nearly every query ties, 11.6 s of searching became
7.9 s; in-process, 2026-11-29).
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from clir_toolkit import jvm
from clir_toolkit.analysis import shared_analyzer
from clir_toolkit.compute.threads import MAX_THREADS
from clir_toolkit.errors import ClirError
from clir_toolkit.index import IndexInfo, open_reader, read_index_info
from clir_toolkit.params import Param, check_options, declare
from clir_toolkit.query import QueryTerm, StructuredQuery

if TYPE_CHECKING:
    from clir_toolkit.expand.feedback import Feedback

Item = TypeVar("Item")
Result = TypeVar("Result")
Structure = Literal["and", "or", "syn"]
STRUCTURES: tuple[str, ...] = ("and", "or", "syn")
CONTENTS_FIELD = "contents"
ID_FIELD = "id"
DEFAULT_HITS = 1000
DEFAULT_K1 = 1.5
DEFAULT_B = 0.75
SYNONYM_WEIGHT_STEP = 1 / 256
"""The grid a pseudo-term's relative token weights are rounded to (see the module docstring):
with w = k/256 and integer term frequencies, every weighted frequency and every sum of them
below 65,536 is exact in a 32-bit float (24-bit significand), so addition order cannot
change a score; the rounding moves a weight by at most 0.2 %."""

BM25_PARAMS = declare(
    Param("k1", float, DEFAULT_K1, "BM25 k1", minimum=0, flag="--k1",
          note="with b 0.75 the best mean dev nDCG@10 over the man pages and DDTP, fr and de "
          "(transfer/DEFAULTS.md); pyserini's is 0.9"),
    Param("b", float, DEFAULT_B, "BM25 b", minimum=0, maximum=1, flag="--b",
          note="chosen with k1 (transfer/DEFAULTS.md); pyserini's is 0.4"),
    Param("hits", int, DEFAULT_HITS, "documents retrieved per query", minimum=1,
          flag="--hits"),
    Param("structure", str, doc="how a term's alternatives combine: 'or' one bag of words, "
          "'and' terms AND'ed, 'syn' Pirkola's synonym pseudo-terms", choices=STRUCTURES,
          flag="--structure",
          note="default: syn for --translate dict and embed: on the man pages' dev split "
          "0.05-0.15 nDCG@10 ahead of 'or' in five languages, within 0.011 in it and ru; 'or' "
          "for untranslated and machine-translated text, which has no alternatives to pool"),
    Param("threads", int, None, "threads searching the topics, each one query at a time",
          minimum=1, maximum=MAX_THREADS, optional=True, flag="--threads",
          note="default: the cores this process may use; on the French man pages' 1,059 "
          "topics, 2 threads on 2 cores took 0.60-0.64 of one thread's wall time"),
)  # fmt: skip
"""The options of :func:`search_to_run` (``clir search``'s BM25 options)."""


@dataclass(frozen=True, slots=True)
class Hit:
    docid: str
    score: float


def parse_java_map(text: str) -> dict[str, int]:
    """``{term=3, other=1}`` (``Map.toString()`` of a document vector) as a dict."""
    body = text.strip()[1:-1]
    if not body:
        return {}
    result = {}
    for item in body.split(", "):
        term, _, count = item.rpartition("=")
        result[term] = int(count)
    return result


def pooled_tokens(alternatives: Sequence[tuple[list[str], float]]) -> dict[str, float]:
    """Every token of a term's alternatives with its weight, a token's weights summed over
    the alternatives it occurs in (a phrase alternative gives each of its words its weight):
    Pirkola's pseudo-term before Lucene's SynonymQuery, and ``or``'s bag of words."""
    weights: dict[str, float] = defaultdict(float)
    for tokens, weight in alternatives:
        for token in tokens:
            weights[token] += weight
    return dict(weights)


def synonym_boost(relative_weight: float) -> float:
    """A pseudo-term token's boost: its weight relative to the largest, in (0, 1], rounded
    to the nearest multiple of :data:`SYNONYM_WEIGHT_STEP` (at least one step)."""
    steps = max(1, round(relative_weight / SYNONYM_WEIGHT_STEP))
    return steps * SYNONYM_WEIGHT_STEP


def check_search_options(**values: Any) -> None:
    """Refuse search options outside what :data:`BM25_PARAMS` declares (``k1``, ``b``,
    ``hits``, ``structure``, ``threads``; NaN and infinities included): the one rule for
    the command line (argparse reads the options with the same :class:`Param`), a recipe
    and a library call, refused in the command line's words (``--k1 must be at least 0
    (got -1.0)``)."""
    check_options(values, [BM25_PARAMS[name] for name in values])


class Searcher:
    """BM25 over one index, analysing queries with the index's own analyzer.

    ``threads`` above 1: :meth:`batch_search` searches that many queries at once, each in a
    thread of its own (Lucene's searcher and queries are thread-safe, and pyjnius lets go of
    Python's lock while Java runs); the results come out in the queries' order. A thread
    builds its query and reads its hits under :data:`clir_toolkit.jvm.OBJECT_CALLS` (pyjnius
    could otherwise send a call to another thread's builder or hit list); the searches
    themselves, on the one shared ``IndexSearcher``, run at once. None: one
    thread per core this process may use. ``info``: the index's sidecar when the caller has
    read it already (``clir search`` reads it for the index's language), so that one search
    reads it once; None: read here.
    """

    #: Term and pseudo-term queries kept for reuse (see :meth:`_cached`).
    QUERY_CACHE_SIZE = 100_000

    def __init__(
        self,
        index: str | Path,
        k1: float = DEFAULT_K1,
        b: float = DEFAULT_B,
        threads: int | None = 1,
        info: IndexInfo | None = None,
    ) -> None:
        check_search_options(k1=k1, b=b, threads=threads)
        self.k1, self.b = k1, b
        self.info = read_index_info(index) if info is None else info
        self.analyzer = shared_analyzer(self.info.analyzer)
        self._classes = _LuceneClasses()
        c = self._classes
        self._reader = open_reader(index, self.info)
        reader = jvm.cast("org.apache.lucene.index.IndexReader", self._reader)
        if threads is None:
            from clir_toolkit.compute.threads import usable_cores

            threads = usable_cores()
        self.threads = threads
        self._searcher = c.IndexSearcher(reader)
        self._searcher.setSimilarity(c.BM25Similarity(float(k1), float(b)))
        self._hit_reader = None if c.HitReader is None else c.HitReader(self._searcher)
        # Score descending, ties by docid descending: the order trec_eval evaluates in, so
        # the cut-off at `hits` keeps the documents trec_eval would rank first.
        self._df_cache: dict[str, int] = {}
        self._query_cache: dict[tuple[Any, ...], Any] = {}
        self._sort = c.Sort(
            c.SortField.FIELD_SCORE, c.SortField(ID_FIELD, c.SortFieldType.STRING_VAL, True)
        )

    def close(self) -> None:
        self._reader.close()

    def __enter__(self) -> Searcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def documents(self) -> int:
        return int(self._reader.numDocs())

    # --- from a structured query to a Lucene query -------------------------------------
    def analysed_term(self, term: QueryTerm) -> list[tuple[list[str], float]]:
        """The alternatives of one term as (tokens, weight); empty alternatives dropped."""
        alternatives = []
        for alternative in term.alternatives:
            tokens = self.analyzer.tokens(alternative.text)
            if tokens and alternative.weight > 0:
                alternatives.append((tokens, alternative.weight))
        return alternatives

    def analysed(self, query: StructuredQuery) -> list[list[tuple[list[str], float]]]:
        """For each term, its alternatives as (tokens, weight); terms left empty dropped."""
        return [alternatives for term in query.terms if (alternatives := self.analysed_term(term))]

    def lucene_query(self, query: StructuredQuery, structure: str = "or") -> Any | None:
        """The Lucene ``Query`` for ``query`` under ``structure``; None if nothing is left."""
        if structure == "or":
            terms = self.analysed(query)
            return self._bag([alt for term in terms for alt in term]) if terms else None
        check_search_options(structure=structure)
        clauses = [clause for term in query.terms if (clause := self._term_clause(term, structure))]
        if not clauses:
            return None
        c = self._classes
        return self._boolean(clauses, c.MUST if structure == "and" else c.SHOULD)

    def _term_clause(self, term: QueryTerm, structure: str) -> Any | None:
        """One term's clause: the bag of its alternatives (``and``) or its pseudo-term
        (``syn``); None when analysis leaves nothing. A translated source word has the same
        alternatives in every topic, so the clause is built once per term (:meth:`_cached`).
        """

        def build() -> Any | None:
            alternatives = self.analysed_term(term)
            if not alternatives:
                return None
            if structure == "and":
                return self._bag(alternatives)
            return self._pirkola_pseudo_term(alternatives)

        return self._cached((structure, term), build)

    def _cached(self, key: tuple[Any, ...], build: Callable[[], Any]) -> Any:
        """The Lucene query for ``key`` (None: nothing to search), built once.

        Lucene queries are immutable, and translated queries repeat the same sub-queries
        (a source word has the same alternatives in every topic), so each is built through
        pyjnius only once; measured on 1,055 French topics this halves query construction.
        """
        if key in self._query_cache:
            return self._query_cache[key]
        query = build()
        if len(self._query_cache) < self.QUERY_CACHE_SIZE:
            self._query_cache[key] = query
        return query

    def _term_query(self, token: str, weight: float) -> Any:
        c = self._classes

        def build() -> Any:
            query = c.TermQuery(c.Term(CONTENTS_FIELD, token))
            return query if weight == 1.0 else c.BoostQuery(query, float(weight))

        return self._cached(("term", token, weight), build)

    def _bag(self, alternatives: Sequence[tuple[list[str], float]]) -> Any:
        """OR of all tokens, weights summed per token (pyserini's bag of words)."""
        weights = pooled_tokens(alternatives)
        clauses = [self._term_query(token, w) for token, w in weights.items()]
        return clauses[0] if len(clauses) == 1 else self._boolean(clauses, self._classes.SHOULD)

    def _pirkola_pseudo_term(self, alternatives: Sequence[tuple[list[str], float]]) -> Any:
        """Pirkola's pseudo-term: one SynonymQuery over every token of the alternatives.

        A multi-word alternative (a phrase translation) contributes each of its words:
        measured on the French man pages, this beats keeping phrases as separate bags
        (nDCG@10 0.381 vs 0.337 over 1,055 queries).
        """
        c = self._classes
        weights = pooled_tokens(alternatives)
        if len(weights) == 1:
            return self._term_query(*next(iter(weights.items())))

        def build() -> Any:
            top = max(weights.values())
            with jvm.OBJECT_CALLS:  # each thread's builder is its own object
                builder = c.SynonymQueryBuilder(CONTENTS_FIELD)
                for token, weight in weights.items():
                    # SynonymQuery accepts boosts in (0, 1]: scale by the largest weight.
                    builder.addTerm(c.Term(CONTENTS_FIELD, token), synonym_boost(weight / top))
                synonym = builder.build()
            return synonym if top == 1.0 else c.BoostQuery(synonym, float(top))

        return self._cached(("pseudo-term", *weights.items()), build)

    def _boolean(self, clauses: Sequence[Any], occur: Any) -> Any:
        with jvm.OBJECT_CALLS:  # each thread's builder is its own object
            builder = self._classes.BooleanQueryBuilder()
            for clause in clauses:
                builder.add(clause, occur)
            return builder.build()

    # --- searching ----------------------------------------------------------------------
    def search(
        self,
        query: StructuredQuery,
        hits: int = DEFAULT_HITS,
        structure: str = "or",
        feedback: Feedback | None = None,
    ) -> list[Hit]:
        """The top ``hits`` documents for one query, best first (ties by docid).

        With ``feedback`` (Rocchio or RM3), a first search finds the feedback documents
        and the query is expanded with their terms before the final search.
        """
        try:
            lucene_query = self.lucene_query(query, structure)
            if lucene_query is None:
                return []
            if feedback is not None:
                lucene_query = feedback.expand(self, lucene_query, len(self.analysed(query)))
            return self.search_lucene(lucene_query, hits)
        except Exception as exc:
            if jvm.is_java_exception(exc) and "TooManyClauses" in str(exc.classname):  # type: ignore[attr-defined]
                raise ClirError(
                    f"topic {query.qid}: its query has more terms than Lucene searches at once "
                    "(1,024 clauses); shorten it, or ask for fewer alternatives a term "
                    "(--embed-top, --wordnet-synonyms, --fb-terms)"
                ) from None
            raise

    def collection_statistics(self) -> tuple[int, float]:
        """(documents with text, their mean length in tokens): BM25's N and avgdl."""
        stats = self._searcher.collectionStatistics(CONTENTS_FIELD)
        with jvm.OBJECT_CALLS:
            return int(stats.docCount()), stats.sumTotalTermFreq() / stats.docCount()

    # --- what feedback needs: document vectors, statistics, weighted bags ---------------
    def document_vector(self, docid: str) -> dict[str, int]:
        """Term frequencies of a document, from the vectors stored at indexing time."""
        utils = self._classes.IndexReaderUtils
        vector = utils.getDocumentVector(self._reader, docid)
        if vector is None:
            return {}
        with jvm.OBJECT_CALLS:  # each thread's map is its own object
            text = vector.toString()
        return parse_java_map(text)

    def document_frequency(self, term: str) -> int:
        """In how many documents ``term`` (an index term) occurs; cached."""
        if term not in self._df_cache:
            c = self._classes
            self._df_cache[term] = int(self._reader.docFreq(c.Term(CONTENTS_FIELD, term)))
        return self._df_cache[term]

    def weighted_terms_query(self, weights: dict[str, float]) -> Any:
        """A bag of index terms (no analysis), each boosted by its weight."""
        clauses = [self._term_query(t, w) for t, w in weights.items() if w > 0]
        return self._boolean(clauses, self._classes.SHOULD)

    def combine(self, weighted: Sequence[tuple[Any, float]]) -> Any:
        """SHOULD-combination of sub-queries, each boosted by its weight."""
        c = self._classes
        clauses = [q if w == 1.0 else c.BoostQuery(q, float(w)) for q, w in weighted if w > 0]
        return self._boolean(clauses, c.SHOULD)

    def search_lucene(self, lucene_query: Any, hits: int) -> list[Hit]:
        """The top ``hits`` documents of a Lucene ``Query`` (one built here, or elsewhere as
        by feedback expansion), best first, ties by docid descending (module docstring).
        More hits than the index has documents are as many as it has: Lucene caps them so,
        and one more than 2,147,483,647 would not reach it (a Java int)."""
        hits = min(int(hits), max(1, self.info.documents))
        found = self._hits(self._searcher.search(lucene_query, hits + 1))
        if len(found) > hits and found[hits].score == found[hits - 1].score:
            # Tied at the cut-off: which tied documents are kept depends on their docids.
            tied = None if self._hit_reader is None else self._hit_reader.atLeast(
                lucene_query, found[hits - 1].score, TIED_LIMIT * hits
            )  # fmt: skip
            if tied is None:  # no HitReader, or too many documents tie: searched sorted
                return self._hits(self._searcher.search(lucene_query, hits, self._sort, True))
            found = self._read(tied)
        found.sort(key=_rank_key, reverse=True)
        del found[hits:]
        return found

    def _hits(self, top: Any) -> list[Hit]:
        """The hits of a Lucene ``TopDocs``, in its order."""
        # The docids and scores come as two Java arrays, which pyjnius converts in bulk
        # (reading hit objects one by one costs ~5 µs a hit): from the toolkit's HitReader,
        # which reads each document's id once (clir_toolkit.java_hits), else from Anserini's
        # ScoredDocs, which reads every hit's whole stored document (six times slower).
        if self._hit_reader is not None:
            return self._read(self._hit_reader.read(top))
        return self._read(self._classes.ScoredDocs.fromTopDocs(top, self._searcher))

    @staticmethod
    def _read(found: Any) -> list[Hit]:
        """The hits of a Java ``Hits`` or ``ScoredDocs`` (two arrays), in their order."""
        with jvm.OBJECT_CALLS:  # each thread's hits are its own object
            docids, scores = found.docids, found.scores
        return [Hit(docid, score) for docid, score in zip(docids, scores, strict=True)]

    def batch_search(
        self,
        queries: Sequence[StructuredQuery],
        hits: int = DEFAULT_HITS,
        structure: str = "or",
        progress: bool = True,
        feedback: Feedback | None = None,
    ) -> Iterator[tuple[str, list[Hit]]]:
        """(qid, hits) for each query, in order; one query in Java memory at a time in each
        of the searcher's threads."""
        from clir_toolkit.progress import progress_bar

        def search(query: StructuredQuery) -> list[Hit]:
            return self.search(query, hits, structure, feedback)

        found = (
            map(search, queries)
            if self.threads == 1
            else in_threads(search, queries, self.threads, jvm.detach_thread)
        )
        pairs = zip(queries, found, strict=True)
        for query, query_hits in progress_bar(
            pairs, desc="searching", unit=" queries", show=progress, leave=False, total=len(queries)
        ):
            yield query.qid, query_hits


def in_threads(
    work: Callable[[Item], Result],
    items: Sequence[Item],
    threads: int,
    at_thread_end: Callable[[], None] | None = None,
) -> Iterator[Result]:
    """``work(item)`` for each item, in the items' order, by ``threads`` threads that each
    take the next item not yet taken. A result waits only until the earlier ones are handed
    out; an error in any thread stops the others and is raised here. ``at_thread_end`` runs
    in each thread as it ends (the searcher's threads detach from the JVM)."""
    results: dict[int, Result] = {}
    failures: list[BaseException] = []
    stop = threading.Event()
    taken = iter(range(len(items)))
    taking = threading.Lock()
    ready = threading.Condition()

    def worker() -> None:
        try:
            while not stop.is_set():
                with taking:
                    position = next(taken, None)
                if position is None:
                    return
                result = work(items[position])
                with ready:
                    results[position] = result
                    ready.notify_all()
        except BaseException as exc:  # handed to the caller's thread
            with ready:
                failures.append(exc)
                ready.notify_all()
        finally:
            if at_thread_end is not None:
                at_thread_end()

    workers = [threading.Thread(target=worker, name=f"search-{i}") for i in range(threads)]
    for thread in workers:
        thread.start()
    try:
        for position in range(len(items)):
            with ready:
                while position not in results and not failures:
                    ready.wait()
                if failures:
                    raise failures[0]
                result = results.pop(position)
            yield result
    finally:
        stop.set()
        for thread in workers:
            thread.join()


TIED_LIMIT = 4
"""A query tied at the cut-off of ``k`` hits is searched again sorted by docid (Lucene keeps
``k`` documents at a time) when more than ``TIED_LIMIT × k`` documents reach the tied
score; below that, they are collected and ordered here (``HitReader.atLeast``)."""


def _rank_key(hit: Hit) -> tuple[float, str]:
    """Score, then docid: sorted descending, trec_eval's order."""
    return hit.score, hit.docid


class _LuceneClasses:
    """The Lucene classes the searcher uses, loaded once through :mod:`clir_toolkit.jvm`."""

    def __init__(self) -> None:
        load = jvm.java_class
        self.IndexSearcher = load("org.apache.lucene.search.IndexSearcher")
        self.BM25Similarity = load("org.apache.lucene.search.similarities.BM25Similarity")
        self.Term = load("org.apache.lucene.index.Term")
        self.TermQuery = load("org.apache.lucene.search.TermQuery")
        self.BoostQuery = load("org.apache.lucene.search.BoostQuery")
        self.BooleanQueryBuilder = load("org.apache.lucene.search.BooleanQuery$Builder")
        self.SynonymQueryBuilder = load("org.apache.lucene.search.SynonymQuery$Builder")
        occur = load("org.apache.lucene.search.BooleanClause$Occur")
        self.SHOULD = occur.SHOULD
        self.MUST = occur.MUST
        self.Sort = load("org.apache.lucene.search.Sort")
        self.SortField = load("org.apache.lucene.search.SortField")
        self.SortFieldType = load("org.apache.lucene.search.SortField$Type")
        self.IndexReaderUtils = load("io.anserini.index.IndexReaderUtils")
        self.ScoredDocs = load("io.anserini.search.ScoredDocs")
        self.HitReader = jvm.hit_reader_class()
