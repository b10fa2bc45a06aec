"""Collections from the CLIR test collections of ir_datasets (WikiCLIR, HC4, NeuCLIR).

:mod:`~clir_toolkit.collection.irds.build` writes the collection directory (its docstring
says what it holds); :mod:`~clir_toolkit.collection.irds.datasets` resolves a dataset name
(``wikiclir/fr``, ``hc4/zh/dev``) to a build plan, and
:mod:`~clir_toolkit.collection.irds.reader` reads the plan's datasets through ir_datasets,
offline unless asked. ir_datasets itself is imported only when a collection is built.
"""

from clir_toolkit.collection.irds.build import IrdsSummary, build_irds_collection, format_summary

__all__ = ["IrdsSummary", "build_irds_collection", "format_summary"]
