"""clir_toolkit: cross-language information retrieval experiments from the shell.

Stage 1 is BM25 over Lucene (through pyserini/Anserini) with query translation and
expansion; stage 2 is a neural reranker; everything in between is a standard TREC file.
See README.md for the tour and DESIGN notes.
"""

__version__ = "0.1.0"
