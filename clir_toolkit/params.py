"""Declared parameters: each option's type, range, default and meaning, written once as data.

A :class:`Param` describes one option the way both of its readers need it: a recipe's TOML
table (``[search]``, ``[rerank]``, the top-level keys) and a library entry point that the
command line calls (:class:`clir_toolkit.rerank.word.train_config.TrainConfig`,
:func:`clir_toolkit.rerank.score.score_run`). Both check a value with :meth:`Param.check`,
so a value refused in one is refused in the other, and each reports it in its own words:

* a recipe, as a :class:`~clir_toolkit.errors.FormatError` naming the file, the table and
  the key: ``x.toml: [search] hits: expected an integer, found "10" (hits: ...)``
  (:func:`check_table`);
* an option, as a :class:`~clir_toolkit.errors.UsageError` spelled as on the command
  line: ``--batch-size must be at least 1 (got 0)`` (:func:`check_options`).

Types are strict: TOML ``"10"`` is not an integer, ``10.5`` is not one either, ``"no"``
is not a boolean; an integer is accepted where a number is expected. Numbers must be finite,
strings non-empty and free of control characters.

Every number has a range, declared or not: an integer without a declared maximum is at most
:data:`LARGEST_INT` (what Java's ``int`` and torch's sizes hold), a number at most
:data:`LARGEST_NUMBER` in size (what a 32-bit float holds: Lucene's weights, torch's
parameters). A value beyond either would otherwise fail deep inside Java or torch, after the
work had begun.

The command line reads an option's text with :meth:`Param.parse` (argparse's ``type``), which
ends in the same :meth:`Param.check`: ``--hits 0`` and a recipe's ``hits = 0`` are refused
in the same words.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import math
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clir_toolkit.errors import ClirError, FormatError, UsageError

SHOWN_CHARS = 60
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")  # what may break a line


MAX_WEIGHT = 1000.0
"""The largest relative weight of a query's parts (``--keep-source``, ``--alpha``,
``--beta``, ``--wordnet-weight``, ``--w-major``, ``--w-context``): weights are relative, so
1,000 already drowns every other part, and a larger one overflows Lucene's float boosts
once normalised and summed."""

@dataclass(frozen=True)
class Form:
    """The form a string must have: a regular expression (matched whole) and a noun phrase
    saying it in words (``a device: auto, cpu, cuda or cuda:N``)."""

    regex: str
    description: str


#: A name that becomes part of a file name: runs/<collection>/<split>/NAME.trec, a figure.
SAFE_NAME = Form(
    r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,99}",
    "a name made of letters, digits, '-', '_' and '.', not starting with a dot, at most 100"
    " characters",
)

LARGEST_INT = 2**31 - 1
"""The largest integer a parameter takes unless it declares a maximum of its own: Java's
``Integer.MAX_VALUE`` (Lucene's hit counts, thread counts) and the largest size torch's
32-bit index arithmetic is safe with."""

LARGEST_NUMBER = 3.4028234663852886e38
"""The largest magnitude of a number parameter: the largest 32-bit float, the precision of
Lucene's weights and of torch's parameters (a larger value would become infinity there)."""

TYPE_NAMES = {
    bool: "true or false",
    int: "an integer",
    float: "a number",
    str: "a string",
    Path: "a file name",
}


@dataclass(frozen=True)
class Param:
    """One option: what a value must be, its default, and a line about what it does.

    ``type`` is ``int``, ``float``, ``str``, ``bool`` or ``Path`` (a string or a path).
    ``shape``: ``"one"`` value, a non-empty ``"list"`` (of ``length`` values if given,
    ``increasing`` if asked), or ``"one or list"``. ``minimum``/``maximum`` are inclusive
    bounds, ``above``/``below`` exclusive ones. ``optional``: ``None`` stands for the default
    (library calls only; TOML has no null). ``flag``: the command line's spelling (default:
    ``--`` and the name with hyphens); ``note`` and ``metavar`` only shape ``--help``.
    """

    name: str
    type: type
    default: Any = None
    doc: str = ""
    choices: Sequence[Any] = ()  # a tuple, or registry.Names (built-ins + plug-ins)
    minimum: float | None = None
    maximum: float | None = None
    above: float | None = None
    below: float | None = None
    form: Form | None = None
    shape: str = "one"
    length: int | None = None
    increasing: bool = False
    optional: bool = False
    flag: str | None = None
    note: str = ""
    """More for ``--help`` than an error message needs: why the default, what was measured."""
    metavar: str | None = None

    # -- what a value must be, in words ------------------------------------------------------

    def noun(self) -> str:
        """``an integer``, ``a list of 2 numbers``, ``a string or a list of strings``."""
        one = TYPE_NAMES[self.type]
        many = _plural(one)
        if self.shape == "list":
            count = f"{self.length} " if self.length else ""
            order = " in increasing order" if self.increasing else ""
            return f"a list of {count}{many}{order}"
        if self.shape == "one or list":
            return f"{one} or a list of {many}"
        return one

    def bounds(self) -> str:
        """The range or choices in words: ``at least 1``, ``between 0 and 1``, ``one of ...``."""
        if self.choices:
            return "one of " + ", ".join(show(c) for c in self.choices)
        if self.form is not None:
            return self.form.description
        low = _bound(self.minimum, "at least") or _bound(self.above, "greater than")
        high = _bound(self.maximum, "at most") or _bound(self.below, "less than")
        if self.minimum is not None and self.maximum is not None:
            return f"between {_number(self.minimum)} and {_number(self.maximum)}"
        return " and ".join(part for part in (low, high) if part)

    def describe(self) -> str:
        """One line for a user: ``hits: documents retrieved per query; an integer ...``."""
        bounds = self.bounds()
        if bounds and self.shape != "one":
            bounds = f"each {bounds}"
        what = " ".join(part for part in (self.noun(), bounds) if part)
        default = "" if self.default is None else f", default {show(self.default)}"
        doc = f"{self.doc}; " if self.doc else ""
        return f"{self.name}: {doc}{what}{default}"

    # -- checking ----------------------------------------------------------------------------

    def check(self, value: Any) -> Any:
        """``value`` if it is valid (numbers as float, lists as tuples), or a ParamError."""
        if value is None and self.optional:
            return None
        if self.shape == "one" or (self.shape == "one or list" and not _is_list(value)):
            return self._check_one(value)
        if not _is_list(value) or not value:
            raise ParamError(self, value, self.noun())
        if self.length is not None and len(value) != self.length:
            raise ParamError(self, value, self.noun())
        values = tuple(self._check_one(item) for item in value)
        if self.increasing and any(a >= b for a, b in zip(values, values[1:], strict=False)):
            raise ParamError(self, value, self.noun())
        return values

    def _check_one(self, value: Any) -> Any:
        value = self._check_type(value)
        if self.choices and value not in self.choices:
            raise ParamError(self, value, self.bounds())
        if self.form is not None and not re.fullmatch(self.form.regex, str(value)):
            raise ParamError(self, value, self.form.description)
        if isinstance(value, int | float) and not isinstance(value, bool):
            too_low = (self.minimum is not None and value < self.minimum) or (
                self.above is not None and value <= self.above
            )
            too_high = (self.maximum is not None and value > self.maximum) or (
                self.below is not None and value >= self.below
            )
            if too_low or too_high:
                bounds = self.bounds()
                raise ParamError(self, value, f"{TYPE_NAMES[self.type]} {bounds}", bounds)
            self._check_size(value)
        return value

    def _check_size(self, value: float) -> None:
        """The range every number has (:data:`LARGEST_INT`, :data:`LARGEST_NUMBER`), said
        with the declared bounds where it is exceeded."""
        largest = LARGEST_INT if self.type is int else LARGEST_NUMBER
        if abs(value) <= largest:
            return
        lowest = self.minimum if self.minimum is not None else self.above
        if lowest is not None and lowest >= 0 and self.maximum is None and self.below is None:
            bounds = f"{self.bounds()} and at most {_number(largest)}"
        elif self.maximum is None and self.below is None and lowest is None:
            bounds = f"between {_number(-largest)} and {_number(largest)}"
        else:
            bounds = self.bounds()
        raise ParamError(self, value, f"{TYPE_NAMES[self.type]} {bounds}", bounds)

    def parse(self, text: str) -> Any:
        """One value of the option as the command line gives it (a string), checked by
        :meth:`check` (one value of a list option: argparse reads each in turn).

        The type's own spelling is all that is accepted: ``10`` for an integer, ``1e-3`` for
        a number, ``true``/``false`` for a boolean. A refusal is a :class:`ParamError` that
        says the whole range (``an integer at least 1``), whatever was wrong.
        """
        one = dataclasses.replace(self, shape="one", optional=False)
        wanted = " ".join(part for part in (TYPE_NAMES[self.type], self.bounds()) if part)
        value: Any = text
        if self.type is int:
            value = _parse_int(text)
        elif self.type is float:
            value = _parse_float(text)
        elif self.type is bool:
            value = {"true": True, "false": False}.get(text.lower(), text)
        elif self.type is Path and text:
            value = Path(text)  # Path("") would be ".", the current directory
        if self.type in (int, float, bool) and isinstance(value, str):
            raise ParamError(self, text, wanted)
        if self.type is float and not math.isfinite(value):
            raise ParamError(self, value, f"a finite number {self.bounds()}".strip())
        return one._check_one(value)

    def _check_type(self, value: Any) -> Any:
        noun = TYPE_NAMES[self.type]
        if self.type is bool:
            if not isinstance(value, bool):
                raise ParamError(self, value, noun)
        elif self.type is int:
            if not isinstance(value, int) or isinstance(value, bool):
                raise ParamError(self, value, noun)
        elif self.type is float:
            if not isinstance(value, int | float) or isinstance(value, bool):
                raise ParamError(self, value, noun)
            if isinstance(value, int) and abs(value) > sys.float_info.max:
                raise ParamError(self, value, "a finite number")
            value = float(value)
            if not math.isfinite(value):
                raise ParamError(self, value, "a finite number")
        elif self.type is Path:
            if not isinstance(value, str | Path) or not str(value) or _CONTROL.search(str(value)):
                raise ParamError(self, value, noun)
        elif not isinstance(value, str):
            raise ParamError(self, value, noun)
        elif not value:
            raise ParamError(self, value, "a non-empty string")
        elif _CONTROL.search(value):
            raise ParamError(self, value, "a string without control characters")
        return value


def _parse_int(text: str) -> int | str:
    """``text`` as an integer (``10``, ``-3``, ``1_000``), or ``text`` itself when it is not
    one; a number of more than 4,000 digits is not parsed (Python's own limit is 4,300)."""
    digits = text.strip().lstrip("+-").replace("_", "")
    if not digits.isdigit() or not digits.isascii() or len(digits) > 4000:
        return text
    try:
        return int(text)
    except ValueError:
        return text


def _parse_float(text: str) -> float | str:
    """``text`` as a number (``0.5``, ``1e-3``, ``inf``), or ``text`` itself when it is not one."""
    try:
        return float(text)
    except ValueError:
        return text


def _is_list(value: Any) -> bool:
    return isinstance(value, list | tuple)


def _plural(noun: str) -> str:
    return {
        "an integer": "integers",
        "a number": "numbers",
        "a string": "strings",
        "a file name": "file names",
        "true or false": "booleans",
    }[noun]


def _number(value: float) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _bound(value: float | None, words: str) -> str:
    return "" if value is None else f"{words} {_number(value)}"


def show(value: Any) -> str:
    """A value as TOML writes it (strings quoted), shortened to one short line."""
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, str | Path):
        quoted = json.dumps(str(value), ensure_ascii=False)
        # Line and paragraph separators, format characters...: escaped, one line stays one.
        text = "".join(ch if ch.isprintable() else f"\\u{ord(ch):04x}" for ch in quoted)
    elif isinstance(value, float):
        text = repr(value)
    elif isinstance(value, int):
        text = str(value) if abs(value) < 10**30 else f"a {len(str(abs(value)))}-digit integer"
    elif isinstance(value, list | tuple):
        text = "[" + ", ".join(show(v) for v in value) + "]"
    elif isinstance(value, dict):
        text = "a table"
    elif isinstance(value, datetime.date | datetime.time):
        text = value.isoformat()
    else:
        text = type(value).__name__
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"


class ParamError(ClirError):
    """A value that its :class:`Param` refuses; the callers below say where it came from."""

    def __init__(self, param: Param, value: Any, expected: str, short: str = "") -> None:
        self.param = param
        self.value = value
        self.expected = expected  # "an integer at least 1"
        self.short = short or expected  # "at least 1": the type was right
        super().__init__(f"{param.name}: {self.problem}")

    @property
    def problem(self) -> str:
        """``expected an integer at least 1, found 0`` (a recipe's words)."""
        return f"expected {self.expected}, found {show(self.value)}"

    def option_message(self) -> str:
        """``--batch-size must be at least 1 (got 0)`` (the command line's words)."""
        name = self.param.flag or self.param.name
        return f"{name} must be {self.short} (got {show(self.value)})"


# ---------------------------------------------------------------------------------------------
# The two readers: TOML tables and library options
# ---------------------------------------------------------------------------------------------


def declare(*params: Param) -> dict[str, Param]:
    """Parameters by name, in the order given."""
    return {param.name: param for param in params}


def renamed(params: Mapping[str, Param], names: Mapping[str, str]) -> dict[str, Param]:
    """``params[old]`` under each ``new`` name of ``names`` (new → old): a TOML key for a field."""
    return {new: dataclasses.replace(params[old], name=new) for new, old in names.items()}


def table_label(table: str, key: str) -> str:
    """``[search] hits``, or ``name`` for a top-level key (``table`` empty)."""
    return f"[{table}] {key}" if table else key


def reject_unknown_keys(
    path: Path, table: Mapping[str, Any], allowed: Iterable[str], what: str, fix: str
) -> None:
    """A one-line FormatError naming the keys of ``table`` that are not in ``allowed``."""
    unknown = sorted(set(table) - set(allowed))
    if unknown:
        names = ", ".join(key if re.fullmatch(r"[\w.-]+", key) else show(key) for key in unknown)
        raise FormatError(path, None, f"unknown {what} {names}", fix)


def check_value(path: Path, table: str, param: Param, value: Any) -> Any:
    """``param.check(value)``, its refusal a FormatError naming the file, table and key."""
    try:
        return param.check(value)
    except ParamError as exc:
        label = table_label(table, param.name)
        raise FormatError(path, None, f"{label}: {exc.problem}", param.describe()) from None


def check_table(
    path: Path,
    table: str,
    values: Any,
    params: Mapping[str, Param],
    keys: str = "keys",
    fix: str = "",
) -> dict[str, Any]:
    """The values of one TOML table, each checked by its declared parameter.

    Unknown keys (``unknown [table] <keys> x``, then ``fix`` or the known keys), a value
    that is not a table and a value of the wrong type or range are FormatErrors naming
    ``path`` and the key.
    """
    if not isinstance(values, dict):
        raise FormatError(
            path, None, f"[{table}] must be a table, found {show(values)}", f"write [{table}]"
        )
    reject_unknown_keys(
        path,
        values,
        params,
        f"[{table}] {keys}" if table else keys,
        fix or f"allowed: {', '.join(params)}",
    )
    return {key: check_value(path, table, params[key], value) for key, value in values.items()}


def check_options(values: Mapping[str, Any], params: Iterable[Param]) -> dict[str, Any]:
    """Library options by name, checked; a refusal is a UsageError in the command line's words."""
    checked = {}
    for param in params:
        try:
            checked[param.name] = param.check(values[param.name])
        except ParamError as exc:
            raise UsageError(exc.option_message()) from None
    return checked


def with_defaults(params: Mapping[str, Param], cls: type) -> dict[str, Param]:
    """``params`` with each default taken from the dataclass field of the same name."""
    defaults = {
        f.name: f.default for f in dataclasses.fields(cls) if f.default is not dataclasses.MISSING
    }
    return {
        name: dataclasses.replace(param, default=defaults.get(name, param.default))
        for name, param in params.items()
    }
