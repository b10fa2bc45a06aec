"""Measures, written as ir_measures names (``nDCG@10``, ``P(rel=2)@1``, ``AP``, ``RR(rel=2)``,
…; https://ir-measur.es/en/latest/measures.html): the papers' default set, and parsing a
user's list — parsed by ir_measures, never ``eval``'ed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from clir_toolkit.errors import ClirError
from clir_toolkit.params import LARGEST_INT

DEFAULT_MEASURES = (
    "nDCG@5",
    "nDCG@10",
    "P(rel=2)@1",
    "P(rel=2)@5",
    "P(rel=1)@5",
    "AP",
    "RR(rel=2)",
    "RR(rel=1)",
    "R@100",
)
"""The measures of the source papers, spelled for ir_measures (the README lists them)."""


_MEASURE_HELP = (
    "write measures in ir_measures syntax, e.g. nDCG@10 P(rel=2)@5 AP RR(rel=2); "
    "see https://ir-measur.es/en/latest/measures.html"
)


def split_measure_names(spec: str | Sequence[str] | None) -> list[str]:
    """Measure names from a string or a sequence of strings, split on commas and whitespace.

    Separators inside parentheses belong to the measure (``P(rel=2, judged_only=True)@5``).
    Duplicates are dropped, the first spelling kept; ``None`` gives :data:`DEFAULT_MEASURES`.
    """
    if spec is None:
        return list(DEFAULT_MEASURES)
    parts = [spec] if isinstance(spec, str) else [str(item) for item in spec]
    names: list[str] = []
    for part in parts:
        depth = 0
        current = ""
        for char in part:
            depth += (char == "(") - (char == ")")
            if depth <= 0 and (char == "," or char.isspace()):
                if current:
                    names.append(current)
                current = ""
            elif not (depth > 0 and char.isspace()):
                current += char
        if current:
            names.append(current)
    return list(dict.fromkeys(names))


COUNTED_PARAMS = {
    "cutoff": ("its cutoff @k (the documents looked at)", "nDCG@10"),
    "rel": ("its relevance level rel=r (the least grade that counts)", "P(rel=2)@5"),
}
"""Measure parameters that are counts, and how to write them. trec_eval (in pytrec_eval)
aborts the whole process on a cutoff of 0 (``nDCG@0``: SIGABRT, not an exception) and
refuses a relevance level of 0 or one beyond a C ``int``: such values are refused here,
before any evaluation."""


def _check_counts(name: str, measure: Any) -> None:
    """Every count among ``measure``'s parameters lies between 1 and :data:`LARGEST_INT`."""
    for param, value in measure.params.items():
        if param in COUNTED_PARAMS and isinstance(value, int) and not 1 <= value <= LARGEST_INT:
            what, example = COUNTED_PARAMS[param]
            raise ClirError(
                f"measure {name!r}: {what} must be an integer from 1 to {LARGEST_INT}, "
                f"not {value} (e.g. {example}; {_MEASURE_HELP})"
            )


def _parse_one(name: str) -> Any:
    import ir_measures

    try:
        measure = ir_measures.parse_measure(name)
        measure.validate_params()  # an unsupported parameter, e.g. P(foo=1)@5
    except Exception as exc:  # ir_measures raises NameError, ValueError, AssertionError, ...
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise ClirError(f"unknown measure {name!r}: {reason} ({_MEASURE_HELP})") from None
    _check_counts(name, measure)
    _check_computable(name, measure)
    return measure


def _check_computable(name: str, measure: Any) -> None:
    """Some installed evaluator of ir_measures computes ``measure``: otherwise ir_measures
    would fail in the middle of the evaluation (``Unsupported measures``)."""
    import ir_measures

    able = [p for p in ir_measures.providers.registry.values() if p.supports(measure)]
    if not able:
        raise ClirError(
            f"measure {name!r}: no evaluator of ir_measures computes it ({_MEASURE_HELP})"
        )
    if not any(provider.is_available() for provider in able):
        needed = " or ".join(f"pip install 'ir-measures[{p.NAME}]'" for p in able)
        raise ClirError(f"measure {name!r}: its evaluator is not installed ({needed})")


def parse_measures(spec: str | Sequence[str] | None) -> list:
    """Parse measure names (``"nDCG@10 P(rel=2)@1, AP"``) into ir_measures measure objects.

    ``None`` gives :data:`DEFAULT_MEASURES`. An unknown or malformed name raises
    :class:`ClirError` naming it.
    """
    names = split_measure_names(spec)
    if not names:
        raise ClirError(f"no measures given ({_MEASURE_HELP})")
    return [_parse_one(name) for name in names]
