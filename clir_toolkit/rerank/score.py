"""Rerank a TREC run with a trained neural model (``clir rerank score``).

Reranking is the second stage of the pipeline: BM25 retrieves candidates cheaply, and a
slower neural model rescores the top ``depth`` of them (Zhao, *Neural CLIR*, §6.1: K-NRM
"reranking of high-quality initial ranking results"). The procedure:

1. Read the model file written by :func:`clir_toolkit.rerank.train.train_reranker`: model
   type and configuration, weights, both vocabularies, analysis languages, maximum lengths.
2. Read the topics and the run; take each query's top ``depth`` documents in the order
   trec_eval reads the run (score descending, ties by docid).
3. Encode queries and documents exactly as in training (:mod:`clir_toolkit.rerank.data`;
   documents come from the tensor cache when they were encoded before) and score every
   (query, candidate) pair in batches, on the GPU when there is one.
4. Optionally interpolate with the first-stage score. The two scores live on different
   scales, so each is min-max normalised over the query's reranked candidates first:
   ``score = λ·neural + (1 − λ)·first_stage``.
5. Documents below ``depth`` keep their first-stage order beneath the reranked ones: their
   scores are shifted so that the best of them scores 1 below the lowest reranked score.
6. Write the new run with :func:`clir_toolkit.formats.write_run` (sorted, ties by docid,
   written atomically).
"""

from __future__ import annotations

import sys
import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clir_toolkit.errors import ClirError, FormatError
from clir_toolkit.params import Param, check_options, declare, show
from clir_toolkit.rerank.data import PAD_ID, Vocabulary

if TYPE_CHECKING:
    import torch

    from clir_toolkit.collection import Collection
    from clir_toolkit.formats import RunRow
    from clir_toolkit.rerank.data import DocumentEncoder

MODEL_FORMAT = "clir-toolkit-reranker/1"
DEFAULT_DEPTH = 100

SCORE_PARAMS = declare(
    Param("depth", int, DEFAULT_DEPTH, "candidates reranked per query", minimum=1,
          flag="--depth"),
    Param("batch_size", int, 256, "pairs scored per batch", minimum=1, flag="--batch-size"),
    Param("interpolate", float, doc="λ of λ·neural + (1 − λ)·first stage", minimum=0,
          maximum=1, optional=True, flag="--interpolate"),
)  # fmt: skip
"""The options of :func:`score_run` that a value can be wrong for."""


@dataclass
class LoadedReranker:
    """A trained reranker and everything needed to feed it the way it was trained."""

    model: Any  # torch.nn.Module with forward(query_ids, doc_ids) -> scores
    model_type: str
    query_vocab: Vocabulary
    doc_vocab: Vocabulary
    max_query_len: int
    max_doc_len: int
    training: dict[str, Any] = field(default_factory=dict)
    history: list[dict[str, Any]] = field(default_factory=list)

    @property
    def query_language(self) -> str:
        return self.query_vocab.language

    @property
    def doc_language(self) -> str:
        return self.doc_vocab.language


@dataclass(frozen=True)
class ScoreReport:
    """What :func:`score_run` did."""

    output: Path
    queries: int
    reranked: int
    kept_below_depth: int
    device: str
    seconds: float


def model_classes() -> dict[str, Any]:
    """``model_type`` → model class of the built-in reranker architectures."""
    from clir_toolkit.rerank.dual import DualEncoder
    from clir_toolkit.rerank.knrm import KNRM

    return {cls.model_type: cls for cls in (KNRM, DualEncoder)}


def model_class(name: str) -> Any:
    """The model class called ``name``: a built-in one, or an installed plug-in's
    (:mod:`clir_toolkit.plugins`, group ``clir_toolkit.rerankers``); None if none is."""
    from clir_toolkit import plugins
    from clir_toolkit.rerank import MODEL_NAMES

    builtin = model_classes()
    if name in builtin:
        return builtin[name]
    if MODEL_NAMES.is_plugin(name):
        return plugins.load(plugins.RERANKERS, name)
    return None


MODEL_KEYS = {
    "format": "str",
    "model_type": "str",
    "config": "table",
    "state_dict": "tensors",
    "query_vocab": "table",
    "doc_vocab": "table",
    "max_query_len": "count",
    "max_doc_len": "count",
    "training": "table?",
    "history": "list?",
}
"""The keys of a model file and the kind of value each holds (``?``: may be None or absent)."""


def torch_load(path: Path, problem: str, fix: str = "") -> Any:
    """The object in a file written with ``torch.save``, read with ``weights_only=True``.

    A file that cannot be read (not torch's format, a pickle of other objects) is one
    FormatError; torch's warnings about such files are silenced, not printed.
    """
    import torch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return torch.load(path, map_location="cpu", weights_only=True)
        except Exception as exc:
            raise FormatError(path, None, f"{problem} ({type(exc).__name__})", fix) from None


def _kind_of(value: Any, kind: str) -> bool:
    import torch

    if kind.endswith("?") and value is None:
        return True
    kind = kind.rstrip("?")
    if kind == "tensors":
        return isinstance(value, dict) and all(
            isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in value.items()
        )
    checks: dict[str, Any] = {
        "str": lambda v: isinstance(v, str),
        "int": lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0,
        "count": lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 1,
        "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
        "table": lambda v: isinstance(v, dict),
        "list": lambda v: isinstance(v, list),
        "tensor": lambda v: isinstance(v, torch.Tensor),
    }
    return bool(checks[kind](value))


KIND_NAMES = {
    "str": "a string",
    "int": "an integer ≥ 0",
    "count": "an integer ≥ 1",
    "number": "a number",
    "table": "a dictionary",
    "list": "a list",
    "tensor": "a tensor",
    "tensors": "a dictionary of named tensors",
}


def check_record(
    path: Path, data: Any, kinds: Mapping[str, str], what: str, fix: str = ""
) -> dict[str, Any]:
    """``data`` if it is a dict with each key of ``kinds`` holding a value of that kind.

    Otherwise one FormatError: ``not a clir_toolkit reranker: missing key 'x'``.
    """
    if not isinstance(data, dict):
        raise FormatError(path, None, f"not {what}: a {type(data).__name__}, not a dict", fix)
    for key, kind in kinds.items():
        if key not in data:
            if kind.endswith("?"):
                continue
            raise FormatError(path, None, f"not {what}: missing key {key!r}", fix)
        if not _kind_of(data[key], kind):
            expected = KIND_NAMES[kind.rstrip("?")] + (" or None" if kind.endswith("?") else "")
            raise FormatError(
                path,
                None,
                f"not {what}: key {key!r} holds {type(data[key]).__name__}, expected {expected}",
                fix,
            )
    return data


def check_state_dict(
    path: Path, state: Mapping[str, Any], module: Any, what: str, fix: str = ""
) -> None:
    """The named tensors ``state`` fit ``module``: same names, same shapes, floating types.

    So that ``load_state_dict`` cannot fail: a mismatch is one FormatError naming the tensor.
    """
    expected = module.state_dict()
    for name in expected:
        if name not in state:
            raise FormatError(path, None, f"not {what}: missing tensor {name!r}", fix)
    for name, tensor in state.items():
        if name not in expected:
            raise FormatError(path, None, f"not {what}: unexpected tensor {name!r}", fix)
        shape, wanted = tuple(tensor.shape), tuple(expected[name].shape)
        if shape != wanted:
            raise FormatError(
                path, None, f"tensor {name!r} has shape {shape}, expected {wanted}", fix
            )
        if expected[name].is_floating_point() and not tensor.is_floating_point():
            raise FormatError(
                path, None, f"tensor {name!r} holds {tensor.dtype}, expected floating point", fix
            )


def read_vocabulary(
    path: Path, data: Mapping[str, Any], key: str, what: str, fix: str = ""
) -> Vocabulary:
    """The vocabulary stored under ``key`` of a model file or checkpoint."""
    try:
        return Vocabulary.from_dict(data[key])
    except (KeyError, TypeError, ValueError) as exc:
        problem = f"not {what}: key {key!r} is not a vocabulary ({_one_line(exc)})"
        raise FormatError(path, None, problem, fix) from None


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def build_saved_model(path: Path, model_type: Any, config: Any, what: str) -> Any:
    """The model a file's ``model_type`` and ``config`` describe, built on the meta device.

    No memory is allocated for the weights: the skeleton only tells their names and shapes
    (:func:`check_state_dict`). A type or config that builds no model is one FormatError.
    """
    import torch

    from clir_toolkit.rerank import MODEL_NAMES

    cls = model_class(model_type) if isinstance(model_type, str) else None
    if cls is None:
        raise FormatError(
            path,
            None,
            f"unknown model type {show(model_type)} (known: {', '.join(MODEL_NAMES)}; "
            "a plug-in's model needs its package installed)",
        )
    if not all(isinstance(key, str) for key in config):
        raise FormatError(path, None, f"not {what}: the model config has a key that is not a name")
    try:
        with torch.device("meta"):
            return cls(**config)
    except (ClirError, TypeError, ValueError, RuntimeError, OverflowError) as exc:
        raise FormatError(
            path, None, f"not {what}: its config makes no {model_type} model ({_one_line(exc)})"
        ) from None


def read_model_file(path: Path) -> Any:
    """The object saved in a model file (read with weights only; any kind of model)."""
    if not path.is_file():
        raise ClirError(f"{path}: no such model file (train one with: clir rerank train)")
    return torch_load(path, "not a reranker model file")


def load_model(
    path: str | Path, device: str | torch.device = "cpu", data: Any = None
) -> LoadedReranker:
    """Read a model file written by training; the model is put on ``device`` in eval mode.

    ``data`` is the file's content when the caller has read it already
    (:func:`read_model_file`).

    Every key, type and tensor shape is checked first: a file that is not a model of this
    toolkit is one FormatError naming it, never an exception of torch's.
    """
    import torch

    from clir_toolkit.rerank.device import resolve_device

    target = device if isinstance(device, torch.device) else resolve_device(device)
    path = Path(path)
    what = "a clir_toolkit reranker"
    if data is None:
        data = read_model_file(path)
    if not isinstance(data, dict) or data.get("format") != MODEL_FORMAT:
        raise ClirError(
            f"{path}: not a reranker model file of this toolkit (expected format {MODEL_FORMAT})"
        )
    check_record(path, data, MODEL_KEYS, what)
    query_vocab = read_vocabulary(path, data, "query_vocab", what)
    doc_vocab = read_vocabulary(path, data, "doc_vocab", what)
    skeleton = build_saved_model(path, data["model_type"], data["config"], what)
    check_state_dict(path, data["state_dict"], skeleton, what)
    for side, vocab in (("query", query_vocab), ("doc", doc_vocab)):
        rows = data["config"].get(f"{side}_vocab_size")
        if rows != len(vocab):
            raise FormatError(
                path,
                None,
                f"the {side} vocabulary has {len(vocab)} words but the model {rows} rows",
            )
    model = model_class(data["model_type"])(**data["config"])
    model.load_state_dict(data["state_dict"])
    model.to(target).eval()
    return LoadedReranker(
        model=model,
        model_type=data["model_type"],
        query_vocab=query_vocab,
        doc_vocab=doc_vocab,
        max_query_len=data["max_query_len"],
        max_doc_len=data["max_doc_len"],
        training=dict(data.get("training") or {}),
        history=list(data.get("history") or []),
    )


def trim_padding(ids: torch.Tensor) -> torch.Tensor:
    """Drop the trailing columns that are padding in every row of a batch (at least one kept).

    Both models ignore padding, so scores do not change; the work shrinks with the longest
    text of the batch instead of the maximum length.
    """
    used = (ids != PAD_ID).any(dim=0).nonzero()
    length = int(used[-1]) + 1 if used.numel() else 1
    return ids[:, :length]


def score_pairs(
    model: Any,
    queries: torch.Tensor,
    documents: torch.Tensor,
    query_index: torch.Tensor,
    doc_index: torch.Tensor,
    device: torch.device,
    batch_size: int = 256,
    precision: str = "fp32",
    desc: str = "scoring",
) -> torch.Tensor:
    """Model scores (``float32[N]``, on the CPU) of the pairs ``(query_index, doc_index)``.

    ``queries`` and ``documents`` are padded id matrices; the indices pick their rows. The
    model is switched to eval mode (no dropout) and back to its previous mode afterwards.
    """
    import torch

    from clir_toolkit.progress import progress_bar
    from clir_toolkit.rerank.device import autocast

    was_training = model.training
    model.eval()
    scores = []
    total = int(query_index.shape[0])
    try:
        with torch.inference_mode():
            for start in progress_bar(
                range(0, total, batch_size), desc=desc, unit="batch", leave=False
            ):
                q = trim_padding(queries[query_index[start : start + batch_size]]).to(device)
                d = trim_padding(documents[doc_index[start : start + batch_size]]).to(device)
                with autocast(precision, device):
                    batch_scores = model(q, d)
                scores.append(batch_scores.float().cpu())
    finally:
        model.train(was_training)
    return torch.cat(scores) if scores else torch.zeros(0)


def _min_max(values: Sequence[float]) -> list[float]:
    """Scale to [0, 1] by the query's minimum and maximum (all 0 when they are equal)."""
    low, high = min(values), max(values)
    if high == low:
        return [0.0] * len(values)
    return [(v - low) / (high - low) for v in values]


def rerank_rows(
    ranked: Mapping[str, Sequence[RunRow]],
    neural: Mapping[tuple[str, str], float],
    depth: int,
    interpolate: float | None = None,
    tag: str = "rerank",
) -> list[RunRow]:
    """New run rows: the top ``depth`` of each query rescored, the rest shifted below them.

    ``ranked`` holds each query's rows in trec_eval order; ``neural`` the model score of each
    reranked (qid, docid). With ``interpolate = λ`` the new score is
    ``λ·minmax(neural) + (1 − λ)·minmax(first stage)`` over the query's reranked rows.
    """
    from clir_toolkit.formats import RunRow

    rows: list[RunRow] = []
    for qid, query_rows in ranked.items():
        top, rest = list(query_rows[:depth]), list(query_rows[depth:])
        if not top:
            continue
        scores = [neural[(qid, row.docid)] for row in top]
        if interpolate is not None:
            first_stage = _min_max([row.score for row in top])
            scores = [
                interpolate * n + (1.0 - interpolate) * b
                for n, b in zip(_min_max(scores), first_stage, strict=True)
            ]
        rows.extend(
            RunRow(qid, row.docid, 0, score, tag) for row, score in zip(top, scores, strict=True)
        )
        if rest:
            # Keep the first-stage order and gaps below the lowest reranked score.
            shift = min(scores) - 1.0 - max(row.score for row in rest)
            rows.extend(RunRow(qid, row.docid, 0, row.score + shift, tag) for row in rest)
    return rows


def ranked_by_query(run: Sequence[RunRow]) -> dict[str, list[RunRow]]:
    """Each query's rows in the order trec_eval reads them."""
    from clir_toolkit.formats import sort_run

    ranked: dict[str, list[RunRow]] = {}
    for row in sort_run(run):
        ranked.setdefault(row.qid, []).append(row)
    return ranked


@dataclass
class EncodedCandidates:
    """The (query, document) pairs to score, as rows of two padded id matrices."""

    pairs: list[tuple[str, str]]
    queries: torch.Tensor
    documents: torch.Tensor
    query_index: torch.Tensor
    doc_index: torch.Tensor


def encode_candidates(
    query_texts: Mapping[str, str],
    candidates: Mapping[str, Sequence[str]],
    query_vocab: Vocabulary,
    max_query_len: int,
    encoder: DocumentEncoder,
) -> EncodedCandidates:
    """Encode each query once and each candidate document through the tensor cache."""
    import torch

    from clir_toolkit.rerank.data import encode_texts

    qids = list(candidates)
    queries = encode_texts([query_texts[qid] for qid in qids], query_vocab, max_query_len)
    pairs = [(qid, docid) for qid in qids for docid in candidates[qid]]
    doc_rows, documents = encoder.encode(docid for _, docid in pairs)
    query_row = {qid: i for i, qid in enumerate(qids)}
    return EncodedCandidates(
        pairs=pairs,
        queries=queries,
        documents=documents,
        query_index=torch.tensor([query_row[qid] for qid, _ in pairs], dtype=torch.long),
        doc_index=torch.tensor([doc_rows[docid] for _, docid in pairs], dtype=torch.long),
    )


def score_encoded(
    model: Any,
    encoded: EncodedCandidates,
    device: torch.device,
    batch_size: int = 256,
    precision: str = "fp32",
) -> dict[tuple[str, str], float]:
    """Model score of every (qid, docid) pair of ``encoded``."""
    scores = score_pairs(
        model,
        encoded.queries,
        encoded.documents,
        encoded.query_index,
        encoded.doc_index,
        device,
        batch_size=batch_size,
        precision=precision,
    )
    return dict(zip(encoded.pairs, scores.tolist(), strict=True))


@dataclass
class RunCandidates:
    """What reranking a run starts from: the collection, the queries and the candidates."""

    collection: Collection
    query_texts: dict[str, str]
    ranked: dict[str, list[RunRow]]  # each query's rows in trec_eval order
    candidates: dict[str, list[str]]  # each query's top ``depth`` docids


def read_candidates(
    collection: str | Path, topics: str | Path, run: str | Path, depth: int
) -> RunCandidates:
    """Open the collection, read the topics and the run, take each query's top ``depth``.

    Every query of the run needs a topic: a run made from other topics is one ClirError.
    """
    from clir_toolkit.collection import open_collection
    from clir_toolkit.formats import read_run, read_topics

    coll = open_collection(collection)
    query_texts = {topic.qid: topic.query for topic in read_topics(topics)}
    ranked = ranked_by_query(read_run(run))
    missing = [qid for qid in ranked if qid not in query_texts]
    if missing:
        shown = ", ".join(missing[:5]) + (", ..." if len(missing) > 5 else "")
        raise ClirError(
            f"{topics}: no topic for {len(missing)} query id(s) of the run {run} ({shown}); "
            "pass the topics the run was made from"
        )
    candidates = {qid: [row.docid for row in rows[:depth]] for qid, rows in ranked.items()}
    return RunCandidates(coll, query_texts, ranked, candidates)


def encode_run(
    reranker: LoadedReranker,
    collection: str | Path,
    topics: str | Path,
    run: str | Path,
    depth: int,
    cache_dir: str | Path | None = None,
) -> tuple[dict[str, list[RunRow]], EncodedCandidates]:
    """The run's rows by query, and its top ``depth`` candidates encoded for ``reranker``."""
    from clir_toolkit.rerank.data import DocumentEncoder, cache_dir_for

    read = read_candidates(collection, topics, run, depth)
    encoder = DocumentEncoder(
        read.collection.corpus,
        reranker.doc_vocab,
        reranker.max_doc_len,
        cache_dir_for(read.collection.root, cache_dir),
    )
    encoded = encode_candidates(
        read.query_texts, read.candidates, reranker.query_vocab, reranker.max_query_len, encoder
    )
    return read.ranked, encoded


def score_run(
    model_path: str | Path,
    collection: str | Path,
    topics: str | Path,
    run: str | Path,
    output: str | Path,
    depth: int = DEFAULT_DEPTH,
    device: str = "auto",
    interpolate: float | None = None,
    batch_size: int = 256,
    cache_dir: str | Path | None = None,
    precision: str = "fp32",
    tag: str | None = None,
    verbose: bool = True,
) -> ScoreReport:
    """Rerank the top ``depth`` documents of each query of ``run`` and write ``output``.

    See the module docstring for the procedure. ``interpolate`` (λ in [0, 1]) mixes the
    normalised neural and first-stage scores (None: the model alone, except for a fine-tuned
    encoder, whose measured :data:`clir_toolkit.rerank.tuned.INTERPOLATION` applies);
    ``cache_dir`` defaults to ``<collection>/.cache/rerank``; ``tag`` to the model type.
    """
    from clir_toolkit.formats import write_run
    from clir_toolkit.rerank.device import check_precision, resolve_device
    from clir_toolkit.rerank.threads import use_fastest_threads
    from clir_toolkit.rerank.tuned import INTERPOLATION as TUNED_INTERPOLATION
    from clir_toolkit.rerank.tuned import is_tuned_model, score_run_tuned

    use_fastest_threads()
    started = time.perf_counter()
    check_options(
        {"depth": depth, "batch_size": batch_size, "interpolate": interpolate},
        SCORE_PARAMS.values(),
    )
    target = resolve_device(device)
    check_precision(precision, target)
    data = read_model_file(Path(model_path))
    if is_tuned_model(data):  # a fine-tuned pretrained encoder: vectors, not word ids
        if interpolate is None:
            interpolate = TUNED_INTERPOLATION
        read = read_candidates(collection, topics, run, depth)
        ranked = read.ranked
        neural, name = score_run_tuned(Path(model_path), data, read, cache_dir, verbose)
        used = "cpu"  # the maps are tiny; the encoder runs on the CPU
    else:
        reranker = load_model(model_path, target, data)
        ranked, encoded = encode_run(reranker, collection, topics, run, depth, cache_dir)
        neural = score_encoded(reranker.model, encoded, target, batch_size, precision)
        name, used = reranker.model_type, str(target)
    rows = rerank_rows(ranked, neural, depth, interpolate, tag or name)
    write_run(output, rows)
    reranked = len(neural)
    report = ScoreReport(
        output=Path(output),
        queries=len(ranked),
        reranked=reranked,
        kept_below_depth=len(rows) - reranked,
        device=used,
        seconds=time.perf_counter() - started,
    )
    if verbose:
        print(
            f"reranked {reranked} documents of {report.queries} queries with "
            f"{name} on {report.device} in {report.seconds:.1f} s -> {output}",
            file=sys.stderr,
        )
    return report
