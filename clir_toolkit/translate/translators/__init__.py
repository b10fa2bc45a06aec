"""The built-in query translators, one module each: the home package of the ``translators``
kind (:mod:`clir_toolkit.registry`).

A module here registers one translator, and that is all it takes for ``clir search
--translate NAME``, ``clir translate`` and a recipe's ``translate = "NAME"`` to offer it::

    register("translators", NAME, factory, summary=..., params=(...), order=N,
             structured=..., label=..., requires=(...))

* ``factory(target_lang, options)`` makes the translator (:class:`~clir_toolkit.translate.
  Translator`) for documents in ``target_lang`` from the
  :class:`~clir_toolkit.translate.pipeline.TranslationOptions`; a plug-in's factory is
  called with ``target_lang`` alone (:mod:`clir_toolkit.plugins`).
* ``params``: the declared :class:`~clir_toolkit.params.Param` of each option it reads. They
  become options of ``clir search`` and keys of a recipe's ``[search]`` table
  (:data:`~clir_toolkit.translate.pipeline.TRANSLATION_PARAMS`); each is a field of
  ``TranslationOptions``, whose default it takes.
* ``structured``: True when it gives each source term weighted alternatives, which searches
  pool with Pirkola's structure (``syn``) unless another structure is asked for.
* ``label(options)``: how run descriptions name it (default: its name).
* ``requires``: the options it cannot work without, refused in one line before any work.

The modules are imported whenever the names of translators are needed (``clir search
--help`` lists them), so each keeps its heavy imports (torch, NLTK, numpy) inside the
factory.
"""
