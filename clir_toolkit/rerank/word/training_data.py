"""The data of one training, read, tokenised and encoded once (:func:`prepare_data`).

Queries in the query language (English), documents in the document language, one vocabulary
each: the thesis' *bilingual training data* (Liu, *Neural CLIR*, ch. 3 and §6.1.3), where
the model learns cross-language soft matches from relevance judgements alone. Positives are
the judged relevant documents, negatives the first-stage run's top candidates that are not
(:func:`clir_toolkit.rerank.data.examples.relevance_examples`); sentence pairs of a parallel corpus
become pre-training examples of the same form; the dev split's top ``depth`` candidates are
encoded once for the evaluation after every epoch.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clir_toolkit.errors import ClirError
from clir_toolkit.rerank.data.examples import EncodedExamples
from clir_toolkit.rerank.data.tokens import WORDS
from clir_toolkit.rerank.data.vocabulary import Vocabulary
from clir_toolkit.rerank.word.train_config import (
    SUBWORD_SOURCE,
    TrainConfig,
    has_parallel,
    uses_subwords,
)


@dataclass
class DevData:
    """The dev split, encoded once: reranked and evaluated after every epoch."""

    ranked: dict[str, list[Any]]  # qid -> RunRow list in trec_eval order
    qrels: list[Any]
    encoded: Any  # rerank.word.batches.EncodedCandidates of the top ``depth`` candidates


@dataclass
class TrainingData:
    """Encoded examples (relevance and optional parallel) and the two vocabularies."""

    query_vocab: Vocabulary
    doc_vocab: Vocabulary
    relevance: EncodedExamples
    parallel: EncodedExamples | None
    dev: DevData | None


def build_vocabularies(
    config: TrainConfig, scheme: str, query_lists: list[Any], doc_lists: list[Any]
) -> tuple[Vocabulary, Vocabulary]:
    """The query and document vocabularies of a training's token lists.

    Words: one vocabulary per language (the thesis' bilingual setting). Pieces of the
    subword table: one vocabulary of the pieces of both languages, read with each side's
    language, since a piece is the same token, with the same vector, in either.
    """
    assert config.query_language is not None and config.doc_language is not None
    if scheme == WORDS:
        return (
            Vocabulary.build(
                query_lists, config.query_language, config.min_count, config.max_vocab
            ),
            Vocabulary.build(doc_lists, config.doc_language, config.min_count, config.max_vocab),
        )
    both = Vocabulary.build(
        [*query_lists, *doc_lists], config.doc_language, config.min_count, config.max_vocab, scheme
    )
    return Vocabulary(both.words, config.query_language, scheme), both


def prepare_data(
    config: TrainConfig,
    corpus: Path,
    cache_dir: Path,
    vocabularies: tuple[Vocabulary, Vocabulary] | None = None,
) -> TrainingData:
    """Read, tokenise and encode the training (and dev) data of ``config``.

    ``vocabularies`` (query, document) are reused when resuming; otherwise they are built from
    the training queries and documents (and the parallel sentences), first ``max_*_len``
    tokens of each, words seen at least ``min_count`` times.
    """
    from clir_toolkit.formats import read_qrels, read_run, read_topics
    from clir_toolkit.rerank.candidates import ranked_by_query
    from clir_toolkit.rerank.data.documents import DocumentEncoder, load_documents
    from clir_toolkit.rerank.data.examples import (
        index_examples,
        parallel_examples,
        read_parallel_tsv,
        relevance_examples,
    )
    from clir_toolkit.rerank.data.tokens import tokenize_all
    from clir_toolkit.rerank.data.vocabulary import encode_texts
    from clir_toolkit.rerank.word.batches import encode_candidates

    assert config.query_language is not None and config.doc_language is not None
    assert config.max_doc_len is not None  # resolved_config fills it in
    topics = {t.qid: t.query for t in read_topics(config.topics)}
    examples = relevance_examples(
        read_qrels(config.qrels), read_run(config.run), config.negatives_per_query, topics
    )
    if not examples:
        raise ClirError(
            f"{config.qrels}: no query has both a topic in {config.topics} and a relevant "
            "document; check that the topics, qrels and run belong to the same split"
        )
    qids = list(dict.fromkeys(e.qid for e in examples))
    docids = list(dict.fromkeys(e.docid for e in examples))

    parallel = None
    if config.parallel is not None and has_parallel(config):
        parallel = parallel_examples(
            read_parallel_tsv(config.parallel), config.parallel_negatives, config.seed
        )

    scheme = SUBWORD_SOURCE if uses_subwords(config) else WORDS
    doc_tokens = None  # when resuming, the documents come from the tensor cache
    if vocabularies is None:
        query_lang, doc_lang = config.query_language, config.doc_language
        q_len, d_len = config.max_query_len, config.max_doc_len
        query_tokens = tokenize_all(
            {q: topics[q] for q in qids}, query_lang, "queries", scheme, q_len
        )
        doc_texts = load_documents(corpus, docids)
        doc_tokens = tokenize_all(doc_texts, doc_lang, "documents", scheme, d_len)
        query_lists = list(query_tokens.values())
        doc_lists = list(doc_tokens.values())
        if parallel is not None:
            query_lists += tokenize_all(
                parallel.queries, query_lang, "sentences", scheme, q_len
            ).values()
            doc_lists += tokenize_all(
                parallel.documents, doc_lang, "sentences", scheme, d_len
            ).values()
        vocabularies = build_vocabularies(config, scheme, query_lists, doc_lists)
    query_vocab, doc_vocab = vocabularies

    queries = encode_texts([topics[q] for q in qids], query_vocab, config.max_query_len)
    encoder = DocumentEncoder(corpus, doc_vocab, config.max_doc_len, cache_dir)
    doc_rows, documents = encoder.encode(docids, tokens=doc_tokens)
    query_rows = {qid: i for i, qid in enumerate(qids)}
    relevance = index_examples(examples, query_rows, doc_rows, queries, documents)

    parallel_encoded = None
    if parallel is not None:
        keys = list(parallel.queries)
        rows = {key: i for i, key in enumerate(keys)}
        parallel_encoded = index_examples(
            parallel.examples,
            rows,
            rows,
            encode_texts([parallel.queries[k] for k in keys], query_vocab, config.max_query_len),
            encode_texts([parallel.documents[k] for k in keys], doc_vocab, config.max_doc_len),
        )

    dev = None
    if config.dev_topics is not None and config.dev_qrels is not None and config.dev_run:
        dev_topics = {t.qid: t.query for t in read_topics(config.dev_topics)}
        ranked = ranked_by_query(read_run(config.dev_run))
        ranked = {qid: rows for qid, rows in ranked.items() if qid in dev_topics}
        if not ranked:
            raise ClirError(f"{config.dev_run}: no query of the dev run has a dev topic")
        candidates = {qid: [r.docid for r in rows[: config.depth]] for qid, rows in ranked.items()}
        encoded = encode_candidates(
            dev_topics, candidates, query_vocab, config.max_query_len, encoder
        )
        dev = DevData(ranked, read_qrels(config.dev_qrels), encoded)
    return TrainingData(query_vocab, doc_vocab, relevance, parallel_encoded, dev)
