"""Adapters to other IR frameworks, each an optional extra.

:mod:`clir_toolkit.integrations.pyterrier` (``pip install clir_toolkit[pyterrier]``) makes
the translator, the BM25 searcher and the neural reranker PyTerrier transformers, so that
they compose with ``>>`` and run in ``pt.Experiment`` (docs/pyterrier.md). Importing this
package imports none of them.
"""
