"""Options and argument handling that several commands share.

The BM25, translation and feedback options are generated from their declarations in the
library (:data:`clir_toolkit.search.BM25_PARAMS`,
:data:`clir_toolkit.translate.pipeline.TRANSLATION_PARAMS`,
:data:`clir_toolkit.expand.feedback.FEEDBACK_PARAMS`; :func:`add_options`),
the same declarations a recipe's ``[search]`` table is checked against: flags, types, choices,
defaults and help are written once.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clir_toolkit.compute.threads import MAX_THREADS
from clir_toolkit.errors import UsageError
from clir_toolkit.params import Param, ParamError

if TYPE_CHECKING:
    from clir_toolkit.distributed.cluster import ClusterSpec
    from clir_toolkit.expand.feedback import Feedback
    from clir_toolkit.translate.pipeline import TranslationOptions


def _common_options() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    group = common.add_argument_group("general options")
    group.add_argument("--quiet", action="store_true", help="no progress bars or notes on stderr")
    group.add_argument(
        "--debug",
        action="store_true",
        help="show tracebacks of errors, and Java's own log lines (Anserini writes them on stdout)",
    )
    group.add_argument(
        "--java-heap",
        metavar="SIZE",
        help="maximum Java heap, e.g. 4g (default: $CLIR_JAVA_HEAP or Java's own)",
    )
    return common


def _topic_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--topics",
        required=True,
        type=Path,
        help="topics: TSV qid<TAB>query, TREC <top> SGML, or JSONL (HC4/NeuCLIR)",
    )
    parser.add_argument(
        "--topic-field",
        default="title",
        choices=["title", "desc", "title+desc"],
        help="which part of SGML/JSONL topics is the query (default: title)",
    )
    parser.add_argument("--topic-lang", help="JSONL topics with several languages: which one")
    parser.add_argument(
        "--topic-source", help="JSONL topics: which translation, e.g. 'human translation'"
    )


def _bm25_options(parser: argparse.ArgumentParser) -> None:
    from clir_toolkit.search import BM25_PARAMS

    add_options(parser, BM25_PARAMS.values())


def _translation_options(parser: argparse.ArgumentParser) -> None:
    from clir_toolkit.translate.pipeline import TRANSLATION_PARAMS

    group = parser.add_argument_group("translation and expansion (thesis chapter 5)")
    add_options(group, TRANSLATION_PARAMS.values())


def _feedback_options(parser: argparse.ArgumentParser) -> None:
    from clir_toolkit.expand.feedback import FEEDBACK_PARAMS

    group = parser.add_argument_group("pseudo-relevance feedback (after translation)")
    add_options(group, FEEDBACK_PARAMS.values())


def _dense_options(parser: argparse.ArgumentParser) -> None:
    from clir_toolkit.search.dense import DENSE_PARAMS

    group = parser.add_argument_group("dense and hybrid first stages (clir index --dense)")
    add_options(group, DENSE_PARAMS.values())
    # None until given, so that --hybrid-weight without --hybrid can be refused (its default
    # applies in cmd_search).
    parser.set_defaults(hybrid_weight=None)


def ranged(flag: str, kind: type = int, minimum: float | None = 1,
           maximum: float | None = None, above: float | None = None) -> Any:
    """argparse's ``type`` for an option declared here rather than by a component: a number
    in [``minimum``, ``maximum``] (or greater than ``above``; integers also at most
    2,147,483,647), refused in the words of a declared option's (:func:`option_type`)."""
    name = flag.lstrip("-").replace("-", "_")
    return option_type(
        Param(name, kind, minimum=minimum, maximum=maximum, above=above, flag=flag)
    )


def add_workdir(parser: Any, holds: str) -> None:
    """``--workdir DIR``: the workspace a command keeps its products in (``holds`` says
    which: ``data/, indexes/ and runs/``), the current directory by default."""
    parser.add_argument(
        "--workdir", type=Path, default=Path("."), help=f"where {holds} are (default: .)"
    )


def run_tag(value: str) -> str:
    """``--tag``'s type: the 6th column of a TREC run, refused as the option's value (empty,
    with whitespace, ...) rather than as the output file's line."""
    from clir_toolkit.errors import FormatError
    from clir_toolkit.formats.checks import check_id

    try:
        return check_id("--tag", None, "tag", value)
    except FormatError as exc:
        raise argparse.ArgumentTypeError(exc.problem) from None


def _read_topics(args: argparse.Namespace) -> list:
    from clir_toolkit.formats import read_topics

    return read_topics(
        args.topics, field=args.topic_field, lang=args.topic_lang, source=args.topic_source
    )


def _translation(args: argparse.Namespace) -> TranslationOptions:
    from clir_toolkit.translate.pipeline import TRANSLATION_PARAMS, TranslationOptions

    return TranslationOptions.of(given_values(args, TRANSLATION_PARAMS.values()))


def _feedback(args: argparse.Namespace) -> Feedback | None:
    from clir_toolkit.expand.feedback import feedback_from

    return feedback_from(vars(args))


def _ray_options(parser: argparse.ArgumentParser, what: str, workers: str | None = None) -> None:
    """``--ray CLUSTER`` (and ``--workers N`` when ``workers`` says what they are): ``what``
    the command does on the cluster."""
    group = parser.add_argument_group("on a Ray cluster (pip install 'clir_toolkit[ray]')")
    group.add_argument(
        "--ray",
        metavar="CLUSTER",
        help=f"{what} on Ray: auto (the cluster ray start --head started here), HOST:PORT, "
        "ray://HOST:PORT, or local:N (N CPUs here, for this command)",
    )
    if workers:
        group.add_argument("--workers", type=ranged("--workers", maximum=MAX_THREADS), metavar="N",
                           help=workers)  # fmt: skip


def refuse_workers_without_ray(args: argparse.Namespace) -> None:
    """``--workers`` of a command with ``--ray`` counts chunks or actors on the cluster:
    without ``--ray`` it would be ignored, so it is refused, for every such command at once
    (the promise of docs/guarantees.md: no option silently ignored). A command without
    ``--ray`` (``clir embed``'s own ``--workers``) is not concerned."""
    if getattr(args, "workers", None) is not None and getattr(args, "ray", False) is None:
        raise UsageError("--workers is for --ray (chunks or actors on the cluster); add --ray "
                         "local:N or leave --workers out")  # fmt: skip


def _ray_cluster(args: argparse.Namespace) -> tuple[ClusterSpec, dict[str, str] | None]:
    """The cluster of ``--ray`` and the environment its workers need (``--java-heap``).
    A cluster address where nothing answers is refused here, before any work is done."""
    from clir_toolkit.distributed.cluster import check_reachable, parse_cluster
    from clir_toolkit.jvm import HEAP_ENV

    workers = getattr(args, "workers", None)
    if workers is not None and workers < 1:
        raise UsageError(f"--workers must be at least 1 (got {workers})")
    heap = args.java_heap or os.environ.get(HEAP_ENV)
    cluster = parse_cluster(args.ray)
    check_reachable(cluster)
    return cluster, ({HEAP_ENV: heap} if heap else None)


# -- options generated from declared parameters (clir_toolkit.params.Param) ----------------


def option_flag(param: Param) -> str:
    """``--batch-size`` for ``batch_size``, or the declared ``flag``."""
    return param.flag or "--" + param.name.replace("_", "-")


def option_dest(param: Param) -> str:
    """Where argparse keeps the option's value: its flag with underscores (``--dict`` →
    ``dict``, ``--pretrained`` → ``pretrained``)."""
    return option_flag(param).lstrip("-").replace("-", "_")


def _plain(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, tuple | list):
        return " ".join(_plain(v) for v in value)
    return str(value)


def option_help(param: Param, default: str | None = None) -> str:
    """``--help``'s line: the doc, then the default (or ``default``, said otherwise) and the
    note in parentheses."""
    if default is None and param.default is not None and param.type is not bool:
        default = _plain(param.default)
    extra = "; ".join(part for part in (default and f"default: {default}", param.note) if part)
    text = f"{param.doc} ({extra})" if extra else param.doc
    return text.replace("%", "%%")  # argparse formats help with %


def add_options(
    parser: Any,
    params: Iterable[Param],
    *,
    given_only: bool = False,
    defaults: Mapping[str, str] | None = None,
) -> None:
    """One command-line option per declared parameter: its flag, type, choices, default and
    help all come from the :class:`~clir_toolkit.params.Param`, so that they are written once.
    Each value is checked as argparse reads it (:func:`option_type`), by the same
    :meth:`~clir_toolkit.params.Param.check` that checks a recipe's value: a value out of
    range stops the command before any work, in one line naming the option.

    ``given_only``: an option the user does not give is None (bool: None too), so that the
    config it goes to applies its own default (:func:`given_values`); ``defaults`` then says
    in words what that default is, by the option's dest, where one declaration cannot.
    """
    for param in params:
        dest = option_dest(param)
        shown = (defaults or {}).get(dest)
        options: dict[str, Any] = {"dest": dest, "help": option_help(param, shown)}
        if param.type is bool:
            options["action"] = "store_true"
            if given_only:
                options["default"] = None
        else:
            # An option left to its config (given_only) may be shared by two configs with
            # different ranges (clir rerank train's --lr): argparse checks the type and the
            # sizes every number has, the config the range (check_options), before any work.
            # argparse checks a choice itself (``invalid choice: 'x' (choose from ...)``), its
            # list including plug-ins' names that are installed.
            checked = dataclasses.replace(param, choices=())
            options["type"] = option_type(_type_only(checked) if given_only else checked)
            options["default"] = None if given_only else param.default
            if param.choices:
                options["choices"] = param.choices
            if param.metavar:
                options["metavar"] = param.metavar
            if param.shape == "list":
                options["nargs"] = param.length or "+"
        parser.add_argument(option_flag(param), **options)


def _type_only(param: Param) -> Param:
    """``param`` without its declared range: its type and the sizes every number has."""
    return dataclasses.replace(param, minimum=None, maximum=None, above=None, below=None)


def option_type(param: Param) -> Any:
    """argparse's ``type`` for a declared option: the text parsed and checked by
    :meth:`Param.parse <clir_toolkit.params.Param.parse>`; a refusal becomes argparse's
    ``argument --hits: expected an integer at least 1, found 0``."""

    def parse(text: str) -> Any:
        try:
            return param.parse(text)
        except ParamError as exc:
            raise argparse.ArgumentTypeError(exc.problem) from None

    parse.__name__ = param.type.__name__  # what argparse and shtab call the type
    return parse


def given_values(args: Any, params: Iterable[Param]) -> dict[str, Any]:
    """``{name: value}`` of the declared options that the user gave on the command line
    (lists as tuples), so that a config's own defaults apply to the others."""
    values = {}
    for param in params:
        value = getattr(args, option_dest(param), None)
        if value is not None:
            values[param.name] = tuple(value) if isinstance(value, list) else value
    return values
