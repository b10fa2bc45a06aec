"""The built-in collection families, one module each (the ``collections`` kind's home).

Each module registers one :class:`~clir_toolkit.collection.builder.CollectionFamily` with
:func:`clir_toolkit.registry.register`; the registry imports every module here the first
time a family's name is needed, so a new family is one new file (its heavy imports inside
its ``build``). ``manpages``: Debian's translated manual pages; ``ddtp``: Debian's
translated package descriptions.
"""
