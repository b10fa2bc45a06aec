"""From topics to the structured queries a search runs: expand → translate.

The order is the thesis' (§5.2): WordNet expansion acts on the English query, before
translation; Rocchio/RM3 feedback acts on the translated query, inside the search
(:mod:`clir_toolkit.expand.feedback`). This module builds the first two steps from the
command line's options, so that ``clir search`` and ``clir translate`` share them.

Which translators and expanders there are is the registry's business
(:mod:`clir_toolkit.registry`): the built-ins are the modules of
:mod:`clir_toolkit.translate.translators` and :mod:`clir_toolkit.expand.expanders`, each
declaring what it reads and how it searches best; the plug-ins are entry points. Nothing
here names one of them.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from clir_toolkit import registry
from clir_toolkit.errors import UsageError
from clir_toolkit.files import atomic_write
from clir_toolkit.formats import Topic
from clir_toolkit.params import Param, declare, with_defaults
from clir_toolkit.query import StructuredQuery
from clir_toolkit.translate import Translator

TRANSLATIONS = registry.names("translators")
"""``--translate`` and ``[search] translate``: the built-in translators, then the names of
installed translator plug-ins (:mod:`clir_toolkit.plugins`)."""

EXPANSIONS = registry.names("expanders")
"""``--expand`` and ``[search] expand``: the built-in expanders, then installed plug-ins'."""


@dataclass(frozen=True)
class TranslationOptions:
    """The translation and pre-translation expansion options of ``clir search``.

    One field per option that the built-in translators and expanders declare
    (:data:`TRANSLATION_PARAMS`), with its default; ``base_forms`` and ``device`` are
    library-only. An option that a newer translator or expander declares in its own file
    needs no field here: :meth:`of` keeps it in :attr:`extra`, and ``options.NAME`` reads
    it (or its declared default), so that the component stays one file.
    """

    translate: str = "none"
    dictionary: str | None = None
    dict_mode: str = "all"
    parallel: str | None = None
    #: Dictionary translation: weight of the untranslated English word kept beside its
    #: translations, relative to the strongest one (0: translations only; 0.5 raised
    #: nDCG@10 on the dev split of every man-page collection).
    keep_source: float = 0.5
    mt: str | None = None
    mt_target_lang: str | None = None
    embed: str | None = None
    embed_top: int = 1
    w_major: float = 1.0
    w_context: float = 0.2
    expand: str | None = None
    wordnet_synonyms: int = 3
    wordnet_weight: float = 0.5
    base_forms: bool = True
    device: str = "auto"
    extra: tuple[tuple[str, Any], ...] = ()
    """The values of declared options that are not fields, as sorted (name, value) pairs."""

    @classmethod
    def of(cls, values: Mapping[str, Any]) -> TranslationOptions:
        """The options with these values (a command line's or a recipe's, by option name):
        fields where there are, the other declared options in :attr:`extra`."""
        fields = {f.name for f in dataclasses.fields(cls)} - {"extra"}
        extra = tuple(sorted((k, v) for k, v in values.items() if k not in fields))
        return cls(**{k: v for k, v in values.items() if k in fields}, extra=extra)

    def __getattr__(self, name: str) -> Any:
        # Only reached for a name that is not a field: a component's own declared option.
        if name.startswith("_") or name == "extra":
            raise AttributeError(name)
        given = dict(self.extra)
        if name in given:
            return given[name]
        if name in TRANSLATION_PARAMS:
            return TRANSLATION_PARAMS[name].default
        raise AttributeError(f"no translation option {name!r}")

    @property
    def default_structure(self) -> str:
        """The query structure to search with when none is asked for: ``syn`` for a
        translator that declares itself ``structured`` (a built-in's trait, a plug-in's
        attribute), ``or`` for the others.

        ``syn`` for term-by-term translations: on the dev split of the man-page
        collections it beat ``or`` by 0.05–0.15 nDCG@10 in five of seven languages and was
        within 0.011 of it in Italian and Russian. ``or`` for plain text (untranslated or machine
        translated), where ``syn`` would pool the tokens of one word — or, for a Chinese or
        Japanese query without spaces, of the whole query — into one pseudo-term.
        """
        structured = registry.component("translators", self.translate).trait("structured")
        return "syn" if structured is True else "or"

    def structure(self, asked: str | None = None) -> str:
        """The query structure to search these queries with: ``asked`` when a user asked for
        one (``clir search --structure``, a recipe's ``structure``), else
        :attr:`default_structure`. The one place that decides it, for ``clir search``,
        ``clir bench search`` and the demo alike."""
        return asked or self.default_structure

    def describe(self) -> str:
        """``wordnet+dict:default/all+source 0.5``: the expansion and the translator's
        ``label`` (a plug-in's: its name), or ``untranslated``."""
        parts = [] if self.expand is None else [self.expand]
        label = registry.component("translators", self.translate).trait("label")
        parts.append(label(self) if callable(label) else self.translate)
        return "+".join(part for part in parts if part) or "untranslated"


def _translation_params() -> dict[str, Param]:
    """``translate``, the options each built-in translator declares, ``expand`` and the
    options each built-in expander declares, in the built-ins' order."""
    translate = Param(
        "translate",
        str,
        doc="how English queries become document-language queries",
        choices=TRANSLATIONS,
        flag="--translate",
        note="none searches with the English query as it is",
    )
    expand = Param(
        "expand", str, doc="pre-translation expansion", choices=EXPANSIONS, flag="--expand"
    )
    declared = [translate]
    declared += [p for c in registry.builtins("translators").values() for p in c.params]
    declared += [expand]
    declared += [p for c in registry.builtins("expanders").values() for p in c.params]
    return with_defaults(declare(*declared), TranslationOptions)


TRANSLATION_PARAMS = _translation_params()
"""The options of :class:`TranslationOptions` a user sets (``clir search``, recipes)."""

TRANSLATION_CODE = (
    __name__,
    *registry.homes("translators", "expanders"),
)
"""The code that translated queries depend on (:func:`clir_toolkit.freshness.code_fingerprint`):
this module and the home packages of the translators and expanders, which it reaches by name
through the registry (the fingerprint follows a home package into all of its modules)."""


@cache
def make_translator(options: TranslationOptions, target_lang: str) -> Translator:
    """The translator the options name, for documents in ``target_lang``.

    A built-in is made from the options (after the options it ``requires`` are checked to
    be there), a plug-in from the language alone. Cached per process: loading a dictionary
    or estimating translation probabilities is done once, however many runs (``clir run``)
    use it.
    """
    found = registry.component("translators", options.translate)
    if not found.builtin:
        return _checked(found.factory(target_lang), "translate", found,
                        "clir_toolkit.translate.Translator")  # fmt: skip
    _refuse_options_of_others(options, found)
    _require(options, found)
    translator: Translator = found.factory(target_lang, options)
    return translator


def make_expander(options: TranslationOptions) -> Any:
    """The pre-translation expander the options name (None: no expansion): a built-in made
    from the options, a plug-in with no arguments."""
    if options.expand is None:
        return None
    found = registry.component("expanders", options.expand)
    if found.builtin:
        return found.factory(options)
    return _checked(found.factory(), "expand", found, "clir_toolkit.plugins")


def _refuse_options_of_others(options: TranslationOptions, found: registry.Component) -> None:
    """Refuse a resource option that only another built-in translator reads (``--mt`` with
    ``--translate dict``): it would be ignored without a word. Only the options that are
    absent unless given (a dictionary, a parallel text, an MT system, an embedding space)
    are told apart this way; a weight always has a value (recipes default some of them
    otherwise), and a weight of an unused translator changes nothing."""
    own = {param.name for param in found.params}
    for other in registry.builtins("translators").values():
        for param in other.params:
            if param.name in own or TRANSLATION_PARAMS[param.name].default is not None:
                continue
            if getattr(options, param.name) is not None:
                translate = TRANSLATION_PARAMS["translate"].flag
                raise UsageError(
                    f"{param.flag} is an option of {translate} {other.name}, not of "
                    f"{translate} {found.name}: drop it or choose {translate} {other.name}"
                )


def _require(options: TranslationOptions, found: registry.Component) -> None:
    """Refuse a built-in whose ``requires`` trait names an option that was not given, in the
    words of that option's declaration."""
    for name in found.trait("requires", ()):
        if getattr(options, name) is None:
            translate, needed = TRANSLATION_PARAMS["translate"], TRANSLATION_PARAMS[name]
            raise UsageError(f"{translate.flag} {found.name} needs {needed.flag} ({needed.doc})")


def _checked(made: Any, method: str, found: registry.Component, contract: str) -> Any:
    """What a plug-in's factory ``made``, when it has the ``method`` its kind calls."""
    if not callable(getattr(made, method, None)):
        raise UsageError(
            f"the {registry.KINDS[found.kind].what} plug-in {found.name!r} made "
            f"{type(made).__name__}, which has no {method}(queries) method (see {contract})"
        )
    return made


def build_queries(
    topics: Sequence[Topic], options: TranslationOptions, target_lang: str
) -> list[StructuredQuery]:
    """Plain queries of the topics, expanded and translated as the options say."""
    queries = [StructuredQuery.plain(t.qid, t.query) for t in topics]
    expander = make_expander(options)
    if expander is not None:
        queries = list(expander.expand(queries))
    return make_translator(options, target_lang).translate(queries)


def write_translations(path: str | Path, queries: Sequence[StructuredQuery]) -> None:
    """Write translated queries: ``.jsonl`` keeps the structure, ``.tsv`` a readable bag.

    The TSV (``qid<TAB>all alternatives``) is a topics file that any tool can search; the
    JSONL records each source term with its weighted alternatives.
    """
    path = Path(path)
    with atomic_write(path) as handle:
        for query in queries:
            if path.suffix == ".jsonl":
                record = {
                    "qid": query.qid,
                    "original": query.original,
                    "terms": [
                        {
                            "source": t.source,
                            "alternatives": [
                                {"text": a.text, "weight": round(a.weight, 6)}
                                for a in t.alternatives
                            ],
                        }
                        for t in query.terms
                    ],
                }
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
            else:
                bag = " ".join(a.text for t in query.terms for a in t.alternatives)
                handle.write(f"{query.qid}\t{' '.join(bag.split())}\n")
