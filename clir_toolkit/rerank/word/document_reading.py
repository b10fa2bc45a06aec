"""How K-NRM on USE-m3's subword table reads a collection's documents, chosen from their lengths.

K-NRM's soft-TF features sum kernel values over every document piece it reads (Xiong et al.
2017, §2.3, eq. 4), so what it reads decides what it can match. Two kinds of collection
measured best with different readings (dev nDCG@10, docs/training.md):

- **Long documents, read by their head.** A French man page has a median of more than 300
  pieces (its first 1,000: 777 counted to 1,000), and its NAME line and the start of its
  SYNOPSIS say what it is about: the first 50 pieces, the table trained with the model
  (3 epochs at 3e-4), 0.6483; the frozen table read to 300 pieces, 0.5662.
- **Short documents, read whole.** A Debian package description has a median of 87 pieces,
  and the words that match a query can be anywhere in its few lines: the first 50 pieces,
  0.4538 (table trained) and 0.4534 (frozen), below BM25's 0.5079; the frozen table read to
  300 pieces, best of 5 epochs, 0.5271, and significantly above BM25 on test.

:func:`document_reading` tells the two apart by the median length of a collection's first
:data:`SAMPLE` documents: at most :data:`SHORT_DOCUMENT_PIECES` pieces is a short-document
collection. Only the options a user leaves out take the reading's values.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path

SAMPLE = 200
"""Documents whose lengths are counted (the first of the corpus): enough for a median when
the two kinds lie as far apart as 87 and more than 300 pieces, and read in about a second."""
SHORT_DOCUMENT_PIECES = 300
"""The longest median document, in pieces, of a collection read whole (the measured best
window on the package descriptions; the same 300 the word-level models read in words)."""


@dataclass(frozen=True)
class DocumentReading:
    """How much of each document K-NRM reads, and whether the table trains with it."""

    kind: str
    max_doc_len: int
    train_embeddings: str


HEAD_OF_LONG_DOCUMENTS = DocumentReading("long", max_doc_len=50, train_embeddings="yes")
"""The man pages' best: the first 50 pieces (about 260 characters), the table trained.
Dev nDCG@10 by pieces over the frozen table (lr 0.01, 4 epochs): 25 0.6216, **50 0.6341**,
75 0.6252, 100 0.6187, 150 0.6015, 200 0.5911, 300 0.5662 (10 epochs), 500 0.5288; the table
trained too, 50 pieces 0.6483 against 300 pieces 0.5813 (first epochs, lr 0.001). Further
soft matches blur what the head says (K-NRM's own experiments, too, ranked documents by
their titles)."""
WHOLE_SHORT_DOCUMENTS = DocumentReading(
    "short", max_doc_len=SHORT_DOCUMENT_PIECES, train_embeddings="no"
)
"""The package descriptions' best: up to 300 pieces, the table frozen (its epochs then cost
the ranking layer alone: kernel features are computed once). Dev nDCG@10 over the frozen
table: 50 pieces 0.4534, 200 0.5189, **300 0.5271**."""


def document_reading(corpus: Path) -> DocumentReading:
    """The reading for ``corpus``: whole when its median document has at most
    :data:`SHORT_DOCUMENT_PIECES` pieces, else its head.

    Counts the pieces of the first :data:`SAMPLE` documents, each only up to one piece past
    the limit, and stops once more than half of them fall on one side of it.
    """
    from clir_toolkit.formats import iter_corpus
    from clir_toolkit.rerank.data.subwords import piece_tokens

    documents = list(itertools.islice(iter_corpus(corpus), SAMPLE))
    needed = len(documents) // 2 + 1  # more than half: the median's side
    short = long = 0
    for doc in documents:
        if len(piece_tokens(doc.contents, SHORT_DOCUMENT_PIECES + 1)) <= SHORT_DOCUMENT_PIECES:
            short += 1
        else:
            long += 1
        if short >= needed or long >= needed:
            break
    return WHOLE_SHORT_DOCUMENTS if short >= long else HEAD_OF_LONG_DOCUMENTS
