"""The PyTerrier reranker: :class:`ClirReranker`, ``clir rerank score`` and ``clir rerank
train`` as a PyTerrier Estimator (:mod:`clir_toolkit.integrations.pyterrier`, whose
docstring says how the adapters compose)."""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

import clir_toolkit as ct
from clir_toolkit.errors import UsageError
from clir_toolkit.integrations.pyterrier_frames import column_ids, column_texts, pt, require_columns

#: What :meth:`ClirReranker.fit` decides itself: the files it writes from its DataFrames.
_FILE_OPTIONS = ("collection", "topics", "qrels", "run", "output",
                 "dev_topics", "dev_qrels", "dev_run")  # fmt: skip


class ClirReranker(pt.Estimator):
    """Rerank candidates with a model of ``clir rerank train``: ``clir rerank score``.

    ``model`` is the model file, ``collection`` the collection directory the documents are
    read from (the ``docno`` values are its document ids); ``depth``, ``interpolate``,
    ``device``, ``batch_size``, ``precision`` and ``cache_dir`` are the options of
    :func:`clir_toolkit.score_run`. ``query_column`` names the column of the query text the
    model reads (default: ``query_0`` when present, i.e. the English before translation,
    otherwise ``query``).

    As an Estimator, :meth:`fit` trains a reranker on the candidates and the qrels it is
    given and writes it to ``model``, as ``clir rerank train`` does: ``train`` holds the
    training options. With a ``"model"`` among them (``{"model": "knrm", "epochs": 5}``) a
    word-level model is trained from scratch (:class:`clir_toolkit.TrainConfig`,
    :func:`clir_toolkit.train_reranker`); without, the pretrained sentence encoder is
    fine-tuned (:class:`clir_toolkit.TunedConfig`, :func:`clir_toolkit.train_tuned`), the
    toolkit's default reranker.
    """

    def __init__(
        self,
        model: str | Path,
        collection: str | Path,
        *,
        depth: int = 100,
        interpolate: float | None = None,
        device: str = "auto",
        batch_size: int | None = None,
        precision: str = "fp32",
        cache_dir: str | Path | None = None,
        query_column: str | None = None,
        train: Mapping[str, Any] | None = None,
        verbose: bool = False,
    ) -> None:
        self.model = Path(model)
        self.collection = Path(collection)
        self.depth = depth
        self.interpolate = interpolate
        self.device = device
        self.batch_size = batch_size
        self.precision = precision
        self.cache_dir = None if cache_dir is None else Path(cache_dir)
        self.query_column = query_column
        self.verbose = verbose
        self.train = dict(train or {})
        config = self._train_config()
        known = [f.name for f in dataclasses.fields(config) if f.name not in _FILE_OPTIONS]
        unknown = sorted(set(self.train) - set(known))
        if unknown:
            raise UsageError(
                f"ClirReranker: unknown training option '{unknown[0]}' "
                f"(use options of {config.__name__}: {', '.join(known)})"
            )

    def __repr__(self) -> str:
        return f"ClirReranker({self.model.name}, depth {self.depth})"

    def transform(self, inp: pd.DataFrame) -> pd.DataFrame:
        require_columns(inp, ("qid", "docno", "score"), "ClirReranker")
        if inp.empty:
            return inp.assign(rank=pd.Series(dtype="int64"))
        with tempfile.TemporaryDirectory(prefix="clir-pyterrier-") as directory:
            topics, run = self._write_candidates(Path(directory), inp)
            output = Path(directory) / "reranked.trec"
            ct.score_run(
                self.model, self.collection, topics, run, output, depth=self.depth,
                device=self.device, interpolate=self.interpolate, batch_size=self.batch_size,
                cache_dir=self.cache_dir, precision=self.precision, verbose=self.verbose,
            )  # fmt: skip
            reranked = {(row.qid, row.docid): row for row in ct.read_run(output)}
        keys = list(zip(column_ids(inp, "qid"), column_ids(inp, "docno"), strict=True))
        out = inp.copy()
        out["score"] = [reranked[key].score for key in keys]
        out["rank"] = [reranked[key].rank - 1 + pt.model.FIRST_RANK for key in keys]
        # Queries in their first-seen order, each query's documents best first.
        query_order = {qid: i for i, qid in enumerate(dict.fromkeys(qid for qid, _ in keys))}
        place = [(query_order[qid], reranked[qid, docno].rank) for qid, docno in keys]
        rows = sorted(range(len(keys)), key=place.__getitem__)
        return out.iloc[rows].reset_index(drop=True)

    def fit(
        self,
        topics_or_res_tr: pd.DataFrame,
        qrels_tr: pd.DataFrame,
        topics_or_res_va: pd.DataFrame | None = None,
        qrels_va: pd.DataFrame | None = None,
    ) -> None:
        """Train a reranker on the candidates ``topics_or_res_tr`` (a retriever's results)
        judged by ``qrels_tr`` (``qid``, ``docno``, ``label``), the validation pair picking
        the best epoch when given; the model is written to ``model``."""
        with tempfile.TemporaryDirectory(prefix="clir-pyterrier-") as directory:
            files: dict[str, Any] = {}
            splits = [("", topics_or_res_tr, qrels_tr)]
            if topics_or_res_va is not None and qrels_va is not None:
                splits.append(("dev_", topics_or_res_va, qrels_va))
            for prefix, results, qrels in splits:
                folder = Path(directory) / (prefix or "train_")
                folder.mkdir()
                require_columns(results, ("qid", "docno", "score"), "ClirReranker.fit")
                require_columns(qrels, ("qid", "docno", "label"), "ClirReranker.fit (qrels)")
                topics, run = self._write_candidates(folder, results)
                judgements = folder / "qrels.txt"
                judged = zip(column_ids(qrels, "qid"), column_ids(qrels, "docno"), qrels["label"],
                             strict=True)  # fmt: skip
                ct.write_qrels(judgements, [ct.Qrel(q, d, _grade(label)) for q, d, label in judged])
                files.update({f"{prefix}topics": topics, f"{prefix}qrels": judgements,
                              f"{prefix}run": run})  # fmt: skip
            settings: dict[str, Any] = {"cache_dir": self.cache_dir, "verbose": self.verbose}
            config_class = self._train_config()
            word_level = config_class is ct.TrainConfig
            if word_level:  # the fine-tuned encoder runs on the CPU, in fp32
                settings.update(device=self.device, precision=self.precision)
            settings.update(self.train)
            settings.update(collection=self.collection, output=self.model, **files)
            config = config_class(**settings)
            (ct.train_reranker if word_level else ct.train_tuned)(config)

    def _train_config(self) -> Any:
        """The configuration class :meth:`fit` trains with: a word-level model when the
        training options name one (``clir rerank train --model``), else fine-tuning."""
        return ct.TrainConfig if "model" in self.train else ct.TunedConfig

    def _query_column(self, inp: pd.DataFrame) -> str:
        if self.query_column is not None:
            return self.query_column
        return "query_0" if "query_0" in inp.columns else "query"

    def _write_candidates(self, folder: Path, inp: pd.DataFrame) -> tuple[Path, Path]:
        """Write the topics (one query text per qid) and the candidates as a TREC run."""
        column = self._query_column(inp)
        require_columns(inp, (column,), "ClirReranker")
        qids, docnos = column_ids(inp, "qid"), column_ids(inp, "docno")
        seen: set[tuple[str, str]] = set()
        for key in zip(qids, docnos, strict=True):
            if key in seen:
                raise UsageError(
                    f"ClirReranker: document {key[1]} appears twice for query {key[0]}"
                )
            seen.add(key)
        texts = dict(zip(qids, column_texts(inp, column), strict=True))
        topics, run = folder / "topics.tsv", folder / "candidates.trec"
        ct.write_topics_tsv(topics, [ct.Topic(qid, text) for qid, text in texts.items()])
        scores = [float(score) for score in inp["score"]]
        ct.write_run(run, [
            ct.RunRow(qid, docno, 0, score, "candidates")
            for qid, docno, score in zip(qids, docnos, scores, strict=True)
        ])  # fmt: skip
        return topics, run


def _grade(label: Any) -> Any:
    """A relevance label as a Python number: numpy scalars unwrapped, 2.0 read as 2
    (:func:`clir_toolkit.write_qrels` refuses a grade that is not a whole number)."""
    value = label.item() if hasattr(label, "item") else label
    return int(value) if isinstance(value, float) and value.is_integer() else value
