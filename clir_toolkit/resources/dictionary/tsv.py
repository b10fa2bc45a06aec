"""Your own dictionary: a TSV file of ``source<TAB>target[<TAB>weight]`` pairs."""

from __future__ import annotations

from pathlib import Path

from clir_toolkit.errors import FormatError
from clir_toolkit.formats import iter_lines, parse_number, quoted
from clir_toolkit.resources.dictionary.bilingual import BilingualDictionary
from clir_toolkit.resources.dictionary.phrases import normalise_phrase

__all__ = ["read_dictionary_tsv"]


def read_dictionary_tsv(path: str | Path) -> BilingualDictionary:
    """A dictionary from a UTF-8 TSV file, one translation pair per line::

        # English -> French; the weight column is optional
        hard disk<TAB>disque dur<TAB>0.9
        hard disk<TAB>disque<TAB>0.1

    Columns: source phrase, target phrase, and optionally a positive weight (for instance a
    translation probability; weights are normalised per source phrase). Give every line a
    weight or none. Lines starting with ``#`` and blank lines are ignored; a pair may appear
    once. Candidates keep the file's order.
    """
    path = Path(path)
    entries: dict[str, list[str]] = {}
    weights: dict[str, list[float]] = {}
    first_line: dict[tuple[str, str], int] = {}
    weighted_line: int | None = None
    unweighted_line: int | None = None
    for number, line in iter_lines(path):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) not in (2, 3):
            raise FormatError(
                path,
                number,
                f"expected source<TAB>target[<TAB>weight], found {len(fields)} columns",
                "separate the columns with one tab each",
            )
        source, target = normalise_phrase(fields[0]), " ".join(fields[1].split())
        if not source or not target:
            side = "source" if not source else "target"
            raise FormatError(path, number, f"empty {side} phrase")
        if len(fields) == 3:
            weight = _weight(path, number, fields[2])
            weighted_line = weighted_line or number
        else:
            weight = 1.0
            unweighted_line = unweighted_line or number
        if weighted_line and unweighted_line:
            raise FormatError(
                path,
                max(weighted_line, unweighted_line),
                f"line {min(weighted_line, unweighted_line)} "
                + (
                    "has a weight and this one has not"
                    if weighted_line < unweighted_line
                    else "has no weight and this one has one"
                ),
                "give every pair a weight or none",
            )
        pair = (source, target.casefold())
        if pair in first_line:
            raise FormatError(
                path, number, f"the pair '{source}' → '{target}' repeats line {first_line[pair]}"
            )
        first_line[pair] = number
        entries.setdefault(source, []).append(target)
        weights.setdefault(source, []).append(weight)
    if not entries:
        raise FormatError(path, None, "no translation pairs", "write source<TAB>target lines")
    return BilingualDictionary(entries, name=str(path), weights=weights if weighted_line else None)


def _weight(path: Path, number: int, text: str) -> float:
    """A positive weight written in ASCII decimal notation (not "١٢" or "1_0", which
    Python's float() would read)."""
    problem = FormatError(path, number, f"weight {quoted(text)} is not a positive number")
    try:
        weight = parse_number(path, number, "weight", text.strip())
    except FormatError:
        raise problem from None
    if weight <= 0:
        raise problem
    return weight
