"""``clir embed train``: cross-lingual word embeddings, trained offline."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from clir_toolkit.cli.commands import command_help
from clir_toolkit.cli.outputs import add_output


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add the command's parser to ``commands``."""
    p = commands.add_parser(
        "embed",
        parents=[common],
        help=command_help("embed"),
        description="Skip-gram vectors per language (gensim), aligned by orthogonal Procrustes "
        "on dictionary seed pairs (Smith et al. 2017), evaluated by CSLS lexicon induction.",
    )
    embed = p.add_subparsers(dest="embed_command", metavar="ACTION", required=True)
    e = embed.add_parser("train", parents=[common], help="train aligned English–L vectors")
    e.add_argument("--lang", required=True, help="document language, e.g. fr")
    add_output(e, "--out", required=True, help=".vec file to write (en:/L: words)")
    e.add_argument("--dict", dest="dictionary", help="seed dictionary (default: per language)")
    e.add_argument("--source-text", type=Path, help="English text, one line each")
    e.add_argument("--target-text", type=Path, help="document-language text, one line each")
    e.add_argument("--source-corpus", type=Path, action="append", default=[])
    e.add_argument("--target-corpus", type=Path, action="append", default=[])
    e.add_argument("--dim", type=int, default=300)
    e.add_argument("--epochs", type=int, default=20)
    e.add_argument("--min-count", type=int, default=3)
    e.add_argument("--window", type=int, default=5)
    e.add_argument("--seed", type=int, default=1)
    e.add_argument("--refine", type=int, default=2, choices=range(6), metavar="0..5")
    e.add_argument("--test-fraction", type=float, default=0.2)
    e.add_argument("--workers", type=int, default=1, help="1 keeps training deterministic")
    e.add_argument("--work-dir", type=Path, help="keep the collected text here")
    e.add_argument(
        "--no-cache",
        action="store_true",
        help="collect text and train both languages again, ignoring "
        "$CLIR_DATA/cache/embeddings (the English side is otherwise trained once)",
    )
    e.set_defaults(handler=cmd_embed_train)


def cmd_embed_train(args: argparse.Namespace) -> int:
    from clir_toolkit.translate.embed_train import format_report, train_bilingual_embeddings

    report = train_bilingual_embeddings(
        args.lang,
        args.out,
        source_text=args.source_text,
        target_text=args.target_text,
        dictionary=args.dictionary,
        dim=args.dim,
        epochs=args.epochs,
        min_count=args.min_count,
        window=args.window,
        seed=args.seed,
        test_fraction=args.test_fraction,
        refine=args.refine,
        workers=args.workers,
        source_corpora=args.source_corpus,
        target_corpora=args.target_corpus,
        work_dir=args.work_dir,
        use_cache=not args.no_cache,
        progress=not args.quiet,
    )
    print(format_report(report))
    return 0
