"""``clir embed train``: cross-lingual word embeddings, trained offline; ``clir embed
evaluate``: how well a space (trained, or USE-m3's pretrained subword table) translates."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from clir_toolkit.cli.commands import command_help
from clir_toolkit.cli.options import ranged
from clir_toolkit.cli.outputs import add_output
from clir_toolkit.compute.threads import MAX_THREADS


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
    e.add_argument("--seed", type=ranged("--seed", minimum=0, maximum=2**31 - 1), default=1)
    e.add_argument("--refine", type=int, default=2, choices=range(6), metavar="0..5")
    e.add_argument("--test-fraction", type=float, default=0.2)
    e.add_argument("--workers", type=ranged("--workers", maximum=MAX_THREADS), default=1,
                   help="1 keeps training deterministic")  # fmt: skip
    e.add_argument("--work-dir", type=Path, help="keep the collected text here")
    e.add_argument(
        "--no-cache",
        action="store_true",
        help="collect text and train both languages again, ignoring "
        "$CLIR_DATA/cache/embeddings (the English side is otherwise trained once)",
    )
    e.set_defaults(handler=cmd_embed_train)
    v = embed.add_parser(
        "evaluate",
        parents=[common],
        help="word-translation precision of a space on the held-out pairs of 'embed train'",
        description="Precision@1 and @5 of English -> L word translation (nearest neighbour "
        "and CSLS) on the dictionary pairs that 'clir embed train' holds out for L.",
    )
    v.add_argument("--lang", required=True, help="document language, e.g. fr")
    v.add_argument(
        "--embed",
        required=True,
        metavar="FILE.vec|use-m3-tokens",
        help="a .vec file of 'clir embed train', or use-m3-tokens (USE-m3's pretrained "
        "subword table)",
    )
    v.add_argument("--dict", dest="dictionary", help="dictionary (default: per language)")
    v.add_argument(
        "--test-fraction",
        type=float,
        default=0.2,
        help="share of English words held out: the --test-fraction the space was trained with",
    )
    v.add_argument(
        "--max-words",
        type=int,
        help="use-m3-tokens: candidate words of L (default: as clir search, 50000)",
    )
    add_output(v, "--output", help="also write the scores as JSON here")
    v.set_defaults(handler=cmd_embed_evaluate)


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


def cmd_embed_evaluate(args: argparse.Namespace) -> int:
    from clir_toolkit.translate.embed_evaluate import evaluate_embeddings, write_scores

    if args.max_words is not None and args.max_words < 1:
        from clir_toolkit.errors import UsageError

        raise UsageError(f"--max-words must be at least 1 (got {args.max_words})")
    scores = evaluate_embeddings(
        args.lang,
        args.embed,
        dictionary=args.dictionary,
        test_fraction=args.test_fraction,
        limit=args.max_words,
    )
    if args.output is not None:
        write_scores(scores, args.output)
    print(scores)
    return 0
