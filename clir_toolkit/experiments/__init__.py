"""The experiments layer: recipes, their runs, and the RESULTS.md and figures they produce.

The library below (collections, indexing, translation, search, reranking, evaluation) knows
nothing of recipes; this layer composes it into experiments, and the command line
(:mod:`clir_toolkit.cli`) sits on top of both. The layers are enforced by import-linter
contracts (``make test``): the library never imports this package.

* :mod:`~clir_toolkit.experiments.tables` — every key of a recipe file, declared once;
  :data:`~clir_toolkit.experiments.tables.KINDS`, the runner of each kind of recipe;
* the collection families a recipe names are the library's (the ``collections`` kind of
  :mod:`clir_toolkit.registry`: :func:`clir_toolkit.collection.builder.family`);
* :mod:`~clir_toolkit.experiments.recipe` — the recipe model: reading and checking a file;
* :mod:`~clir_toolkit.experiments.rerank_table` — a rerank recipe's ``[rerank]`` table
  and its sweeps;
* :mod:`~clir_toolkit.experiments.context` — the workspace and the run context (quiet,
  ``--force``, the one rule for reusing what a run made);
* :mod:`~clir_toolkit.experiments.search_runner`, :mod:`~clir_toolkit.experiments.rerank_training`,
  :mod:`~clir_toolkit.experiments.rerank_runner` — running each kind of recipe;
* :mod:`~clir_toolkit.experiments.runner` — ``clir run``: every recipe, then RESULTS.md;
* :mod:`~clir_toolkit.experiments.results`, :mod:`~clir_toolkit.experiments.rerank_report`
  — RESULTS.md's tables and figures;
* :mod:`~clir_toolkit.experiments.demo` — ``clir demo``, the end-to-end demonstration.
"""
