"""``--translate dict``: a bilingual dictionary, term by term
(:mod:`clir_toolkit.translate.dictionary`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from clir_toolkit.errors import UsageError
from clir_toolkit.registry import register
from clir_toolkit.translate.dictionary import (
    DEFAULT_DICTIONARIES,
    DICTIONARY_PARAMS,
    DictionaryTranslator,
    estimate_translation_probabilities,
    read_parallel_pairs,
)

if TYPE_CHECKING:
    from clir_toolkit.translate.pipeline import TranslationOptions


def label(options: TranslationOptions) -> str:
    """``dict:freedict:eng-fra/all+source 0.5``: the dictionary, the mode, the kept word."""
    keep = f"+source {options.keep_source:g}" if options.keep_source else ""
    return f"dict:{options.dictionary or 'default'}/{options.dict_mode}{keep}"


@register(
    "translators",
    "dict",
    order=1,
    params=tuple(DICTIONARY_PARAMS.values()),
    structured=True,
    label=label,
    summary="a bilingual dictionary, term by term (FreeDict, CC-CEDICT or a TSV file)",
)
def dictionary_translator(target_lang: str, options: TranslationOptions) -> DictionaryTranslator:
    """The dictionary of ``options.dictionary`` (default: the one of the documents'
    language), its candidates weighted by IBM Model 1 on ``options.parallel`` in the
    ``weighted`` mode, words looked up again by their WordNet base form."""
    from clir_toolkit.resources.dictionary import load_dictionary

    spec = options.dictionary or DEFAULT_DICTIONARIES.get(target_lang)
    if spec is None:
        flag = DICTIONARY_PARAMS["dictionary"].flag
        raise UsageError(
            f"no default dictionary for documents in '{target_lang}' "
            f"(pass {flag} freedict:eng-XXX, cedict or a TSV file)"
        )
    if options.parallel and options.dict_mode != "weighted":
        parallel, mode = DICTIONARY_PARAMS["parallel"].flag, DICTIONARY_PARAMS["dict_mode"].flag
        raise UsageError(f"{parallel} weights the candidates of {mode} weighted only: add "
                         f"{mode} weighted or drop {parallel}")  # fmt: skip
    dictionary = load_dictionary(spec)
    probabilities = None
    if options.dict_mode == "weighted" and options.parallel:
        pairs = read_parallel_pairs(options.parallel)
        probabilities = estimate_translation_probabilities(dictionary, pairs)
    base_forms = None
    if options.base_forms:
        from clir_toolkit.resources.wordnet import base_forms as wordnet_base_forms

        base_forms = wordnet_base_forms
    return DictionaryTranslator(
        dictionary, options.dict_mode, probabilities, base_forms, options.keep_source
    )
