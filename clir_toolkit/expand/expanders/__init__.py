"""The built-in pre-translation query expanders, one module each: the home package of the
``expanders`` kind (:mod:`clir_toolkit.registry`).

A module here registers one expander, and that is all it takes for ``clir search --expand
NAME``, ``clir translate`` and a recipe's ``expand = "NAME"`` to offer it::

    register("expanders", NAME, factory, summary=..., params=(...), order=N)

``factory(options)`` makes, from the
:class:`~clir_toolkit.translate.pipeline.TranslationOptions`, an object whose
``expand(queries)`` returns the English structured queries with alternatives added; it runs
before translation, so the added words are translated with the query's own. A plug-in's
factory is called with no arguments (:mod:`clir_toolkit.plugins`). ``params`` declares the
options it reads, as a translator's do (:mod:`clir_toolkit.translate.translators`).

The modules are imported whenever the names of expanders are needed, so each keeps its
heavy imports (NLTK) inside the factory.
"""
