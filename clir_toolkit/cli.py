"""The ``clir`` command line: argument parsing only; the work happens in library functions.

Each sub-command's handler imports what it needs when it runs, so ``clir --help`` starts
neither Java nor torch. Every :class:`~clir_toolkit.errors.ClirError` is printed as one line
on stderr (``clir: error: ...``) with exit status 1 (2 for a usage error); ``--debug``
shows the traceback instead.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from clir_toolkit.errors import ClirError, UsageError

DEFAULT_HITS = 1000
DEFAULT_K1 = 0.9
DEFAULT_B = 0.4


def _common_options() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    group = common.add_argument_group("general options")
    group.add_argument("--quiet", action="store_true", help="no progress bars or notes on stderr")
    group.add_argument("--debug", action="store_true", help="show tracebacks of errors")
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
    parser.add_argument("--k1", type=float, default=DEFAULT_K1, help="BM25 k1 (default: 0.9)")
    parser.add_argument("--b", type=float, default=DEFAULT_B, help="BM25 b (default: 0.4)")
    parser.add_argument(
        "--hits",
        type=int,
        default=DEFAULT_HITS,
        help="documents retrieved per query (default: 1000)",
    )
    parser.add_argument(
        "--structure",
        default="or",
        choices=["and", "or", "syn"],
        help="how a term's alternatives combine: 'or' one bag of words, 'and' "
        "terms AND'ed, 'syn' Pirkola's synonym pseudo-terms (default: or)",
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="Java threads searching the segments of an index (default: 1)",
    )


def build_parser() -> argparse.ArgumentParser:
    common = _common_options()
    parser = argparse.ArgumentParser(
        prog="clir",
        description="Cross-language information retrieval: BM25 over Lucene with query "
        "translation, neural reranking, evaluation with significance tests.",
    )
    from clir_toolkit import __version__

    parser.add_argument("--version", action="version", version=f"clir_toolkit {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = commands.add_parser(
        "index",
        parents=[common],
        help="build a Lucene index from a collection",
        description="Index a collection directory (or a bare corpus file).",
    )
    p.add_argument(
        "--collection",
        required=True,
        type=Path,
        help="collection directory (with corpus.jsonl) or a corpus file",
    )
    p.add_argument("--index", required=True, type=Path, help="where to write the index")
    p.add_argument(
        "--language", help="document language (ISO 639-1); default: doc_lang of manifest.json"
    )
    p.add_argument(
        "--threads",
        type=int,
        default=os.cpu_count() or 1,
        help="indexing threads (default: all cores)",
    )
    p.add_argument(
        "--store-raw",
        action="store_true",
        help="also store raw document text in the index (for pyserini's doc())",
    )
    p.set_defaults(handler=cmd_index)

    p = commands.add_parser(
        "search",
        parents=[common],
        help="BM25 batch search into a TREC run",
        description="Search an index with every topic; write a TREC run.",
    )
    p.add_argument("--index", required=True, type=Path, help="index built by 'clir index'")
    _topic_options(p)
    p.add_argument("--output", required=True, type=Path, help="TREC run file to write")
    _bm25_options(p)
    p.add_argument("--tag", default="clir", help="run tag, the 6th column (default: clir)")
    p.set_defaults(handler=cmd_search)

    p = commands.add_parser(
        "eval",
        parents=[common],
        help="evaluate runs side by side",
        description="Evaluate runs with ir_measures; paired significance "
        "tests against a baseline run.",
    )
    p.add_argument("--qrels", required=True, type=Path, help="TREC qrels (graded)")
    p.add_argument("runs", nargs="+", type=Path, metavar="RUN", help="TREC run files")
    p.add_argument(
        "--measures",
        help='ir_measures names, e.g. "nDCG@10 P(rel=2)@1 AP" (default: the seeds\' nine measures)',
    )
    p.add_argument("--baseline", help="run (path or name) the others are tested against")
    p.add_argument(
        "--test",
        default="ttest",
        choices=["ttest", "wilcoxon"],
        help="paired test (default: ttest)",
    )
    p.add_argument(
        "--correction",
        default="holm",
        choices=["holm", "bonferroni", "none"],
        help="multiple-comparison correction across runs (default: holm)",
    )
    p.add_argument("--alpha", type=float, default=0.05, help="significance level (default: 0.05)")
    p.add_argument(
        "--format",
        default="table",
        choices=["table", "markdown", "csv", "json"],
        help="output format (default: table)",
    )
    p.add_argument("--per-query", action="store_true", help="also print per-query values")
    p.set_defaults(handler=cmd_eval)

    p = commands.add_parser(
        "bench",
        parents=[common],
        help="benchmarks (speed)",
        description="Speed benchmarks; figures go to the README.",
    )
    bench = p.add_subparsers(dest="bench", metavar="WHAT", required=True)
    b = bench.add_parser(
        "search", parents=[common], help="queries/s of clir search vs Anserini's batch_search"
    )
    b.add_argument("--index", required=True, type=Path)
    _topic_options(b)
    _bm25_options(b)
    b.add_argument("--repeat", type=int, default=3, help="timed repetitions, best kept (default 3)")
    b.set_defaults(handler=cmd_bench_search)

    p = commands.add_parser(
        "demo",
        parents=[common],
        help="the end-to-end demonstration",
        description="Index a collection, search it with its English and "
        "human-translated topics, and print the evaluation.",
    )
    p.add_argument(
        "--collection",
        type=Path,
        default=Path("tests/fixtures/tiny-fr"),
        help="collection directory (default: the hand-made tests/fixtures/tiny-fr)",
    )
    p.add_argument("--split", default="dev", help="topic split to evaluate (default: dev)")
    p.add_argument(
        "--workdir",
        type=Path,
        default=Path("."),
        help="where indexes/ and runs/ are written (default: .)",
    )
    p.set_defaults(handler=cmd_demo)
    return parser


# --- handlers -------------------------------------------------------------------------------


def _read_topics(args: argparse.Namespace) -> list:
    from clir_toolkit.formats import read_topics

    return read_topics(
        args.topics, field=args.topic_field, lang=args.topic_lang, source=args.topic_source
    )


def cmd_index(args: argparse.Namespace) -> int:
    from clir_toolkit.index import build_index

    if args.threads < 1:
        raise UsageError(f"--threads must be at least 1 (got {args.threads})")
    info = build_index(
        args.collection,
        args.index,
        language=args.language,
        threads=args.threads,
        store_raw=args.store_raw,
        verbose=not args.quiet,
    )
    print(
        f"indexed {info.documents} documents ({info.language}, {info.analyzer_name}) "
        f"into {args.index} in {info.seconds:.1f} s"
    )
    return 0


def cmd_search(args: argparse.Namespace) -> int:
    from clir_toolkit.search import plain_queries, search_to_run

    queries = plain_queries(_read_topics(args))
    stats = search_to_run(
        args.index,
        queries,
        args.output,
        hits=args.hits,
        k1=args.k1,
        b=args.b,
        structure=args.structure,
        threads=args.threads,
        tag=args.tag,
        progress=not args.quiet,
    )
    if not args.quiet:
        print(
            f"{stats.queries} queries, {stats.hits} hits → {args.output} ({stats.seconds:.2f} s)",
            file=sys.stderr,
        )
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    from clir_toolkit.evaluate import evaluate_runs, format_result

    result = evaluate_runs(
        args.qrels,
        args.runs,
        measures=args.measures,
        baseline=args.baseline,
        test=args.test,
        correction=args.correction,
        alpha=args.alpha,
    )
    print(format_result(result, args.format, per_query=args.per_query))
    return 0


def cmd_bench_search(args: argparse.Namespace) -> int:
    from clir_toolkit.bench import bench_search, format_bench_search

    result = bench_search(
        args.index,
        _read_topics(args),
        hits=args.hits,
        k1=args.k1,
        b=args.b,
        structure=args.structure,
        threads=args.threads,
        repeat=args.repeat,
    )
    print(format_bench_search(result))
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from clir_toolkit.demo import run_demo

    print(run_demo(args.collection, args.workdir, split=args.split, quiet=args.quiet))
    return 0


# --- entry point ----------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if getattr(args, "java_heap", None):
            from clir_toolkit import jvm

            jvm.configure(args.java_heap)
        return int(args.handler(args))
    except ClirError as exc:
        if args.debug:
            raise
        print(f"clir: error: {exc}", file=sys.stderr)
        return 2 if isinstance(exc, UsageError) else 1
    except KeyboardInterrupt:
        print("clir: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
