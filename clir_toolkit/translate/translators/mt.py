"""``--translate mt``: machine translation of the whole query
(:mod:`clir_toolkit.translate.mt`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from clir_toolkit.registry import register
from clir_toolkit.translate.mt import MT_PARAMS, MachineTranslator, make_machine_translator

if TYPE_CHECKING:
    from clir_toolkit.translate.pipeline import TranslationOptions


@register(
    "translators",
    "mt",
    order=2,
    params=tuple(MT_PARAMS.values()),
    structured=False,
    label=lambda options: f"mt:{options.mt}",
    requires=("mt",),
    summary="machine translation of the whole query (Apertium, a Hugging Face model "
    "or a file of translations)",
)
def machine_translator(target_lang: str, options: TranslationOptions) -> MachineTranslator:
    """The back-end that ``options.mt`` names; its text is searched as a bag of words, since
    it has no alternatives to pool."""
    assert options.mt is not None  # required: refused before the factory is called
    return make_machine_translator(options.mt, options.mt_target_lang, options.device)
