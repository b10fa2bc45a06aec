"""Evaluating runs: per-query values over every qrels query, means, and p-values against a
baseline (steps 1–5 of :mod:`clir_toolkit.evaluate`), gathered in an :class:`EvalResult`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clir_toolkit.errors import ClirError, UsageError
from clir_toolkit.evaluate.measures import parse_measures, split_measure_names
from clir_toolkit.evaluate.significance import CORRECTIONS, TESTS, correct, paired_test


@dataclass
class EvalResult:
    """Everything :func:`format_result` prints: per-query values, means and p-values."""

    measures: list[str]
    runs: list[str]
    qids: list[str]
    per_query: dict[str, dict[str, dict[str, float]]]
    means: dict[str, dict[str, float]]
    baseline: str | None = None
    test: str = "ttest"
    correction: str = "holm"
    p_values: dict[str, dict[str, float]] = field(default_factory=dict)
    alpha: float = 0.05
    answered: dict[str, set[str]] = field(default_factory=dict)
    """run → the qrels queries it retrieved at least one document for (the others score 0)."""
    unjudged: dict[str, set[str]] = field(default_factory=dict)
    """run → the queries it answers that the qrels do not judge (ignored, as trec_eval does)."""

    def coverage_warnings(self, qrels: str | Path) -> list[str]:
        """One line per run that answers queries ``qrels`` does not judge, with the counts:
        part of such a run is not evaluated, which is worth knowing (a run of the wrong
        split or collection shares few or no queries with the qrels)."""
        lines = []
        for run in self.runs:
            unjudged, answered = self.unjudged.get(run, set()), self.answered.get(run, set())
            if unjudged:
                total = len(unjudged) + len(answered)
                lines.append(
                    f"{run}: {len(unjudged)} of its {total} queries are not judged in {qrels} "
                    f"and are ignored; it answers {len(answered)} of the {len(self.qids)} "
                    "queries judged there (the others score 0)"
                )
        return lines

    def to_dataframe(self, per_query: bool = False) -> Any:
        """The means as a pandas DataFrame (one row per run, one column per measure, and a
        ``p <measure>`` column per measure when there is a baseline); with ``per_query``,
        one row per (run, query) instead."""
        import pandas as pd

        if per_query:
            rows = [
                {"run": run, "qid": qid, **{m: self.per_query[run][m][qid] for m in self.measures}}
                for run in self.runs
                for qid in self.qids
            ]
            return pd.DataFrame(rows, columns=["run", "qid", *self.measures])
        table = pd.DataFrame(
            [[self.means[run][m] for m in self.measures] for run in self.runs],
            index=pd.Index(self.runs, name="run"),
            columns=self.measures,
        )
        if self.p_values:
            for measure in self.measures:
                table[f"p {measure}"] = [
                    self.p_values.get(run, {}).get(measure) for run in self.runs
                ]
        return table


def _display_names(paths: Sequence[Path]) -> list[str]:
    """Run names for tables: the file's stem; ``parent/stem`` or ``stem-2`` where stems clash."""
    stems = [path.stem for path in paths]
    names = [
        f"{path.parent.name}/{path.stem}"
        if stems.count(path.stem) > 1 and path.parent.name
        else path.stem
        for path in paths
    ]
    unique: list[str] = []
    for name in names:
        candidate, n = name, 1
        while candidate in unique:
            n += 1
            candidate = f"{name}-{n}"
        unique.append(candidate)
    return unique


def _qid_order(qid: str) -> tuple[int, int, str]:
    """Sort key for query ids: numeric ids by value (2 before 10), the others after, by name."""
    return (0, int(qid), qid) if qid.isdigit() else (1, 0, qid)


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def _read_judged_run(
    run_path: Path, qrels_path: str | Path, qids: Sequence[str]
) -> tuple[list[Any], set[str]]:
    """The run's documents for the queries the qrels judge, and the queries it answers that
    they do not judge (ignored, as trec_eval ignores them).

    A run that answers none of the judged queries is refused: it is almost always a run of
    another split or collection, and would only print zeros.
    """
    import ir_measures

    from clir_toolkit.formats import read_run

    judged = set(qids)
    rows = read_run(run_path)
    run = [
        ir_measures.ScoredDoc(row.qid, row.docid, float(row.score))
        for row in rows
        if row.qid in judged
    ]
    unjudged = {row.qid for row in rows} - judged
    if not run:  # read_run refuses an empty file: the run's queries are all unjudged
        raise ClirError(
            f"{run_path}: answers none of the {len(qids)} queries of {qrels_path} (its "
            f"{len(unjudged)} queries are all unjudged there; evaluate runs of the split and "
            "collection the qrels judge)"
        )
    return run, unjudged


def _per_query_values(
    measures: Sequence[Any], names: Sequence[str], qrels: list, run: list, qids: Sequence[str]
) -> tuple[dict[str, dict[str, float]], set[str]]:
    """measure name → qid → value for one run, 0.0 where the run has no answer; and the
    qrels queries the run answers."""
    import ir_measures

    judged = set(qids)
    values = {name: dict.fromkeys(qids, 0.0) for name in names}
    answered = {doc.query_id for doc in run}
    name_of = dict(zip(measures, names, strict=True))
    for metric in ir_measures.iter_calc(list(measures), qrels, run):
        name = name_of.get(metric.measure)
        if name is not None and metric.query_id in judged:
            values[name][metric.query_id] = float(metric.value)
    return values, answered


def evaluate_runs(
    qrels_path: str | Path,
    run_paths: Sequence[str | Path],
    measures: str | Sequence[str] | None = None,
    baseline: str | None = None,
    test: str = "ttest",
    correction: str = "holm",
    alpha: float = 0.05,
) -> EvalResult:
    """Evaluate runs against qrels and test each against ``baseline`` (see the module doc).

    ``baseline`` is one of ``run_paths``, a run's display name, or the path of another run,
    which is then evaluated too and listed first. Without a baseline no test is made.
    """
    import ir_measures

    from clir_toolkit.formats import read_qrels

    if test not in TESTS:
        raise UsageError(f"unknown test {test!r} (choose one of {', '.join(TESTS)})")
    if correction not in CORRECTIONS:
        raise UsageError(
            f"unknown correction {correction!r} (choose one of {', '.join(CORRECTIONS)})"
        )
    if not 0.0 < alpha < 1.0:
        raise UsageError(f"alpha must lie between 0 and 1, not {alpha}")
    # Two spellings of one measure (RR and RR(rel=1)) are computed once, under the first.
    first: dict[Any, str] = {}
    for measure, name in zip(parse_measures(measures), split_measure_names(measures), strict=True):
        first.setdefault(measure, name)
    parsed, names = list(first), list(first.values())
    paths = [Path(p) for p in run_paths]
    if not paths and baseline is None:
        raise UsageError("no run files given (pass one or more TREC run files)")

    baseline_index: int | None = None
    if baseline is not None:
        candidates = [i for i, p in enumerate(paths) if _same_file(p, Path(baseline))]
        if not candidates:
            candidates = [i for i, n in enumerate(_display_names(paths)) if n == baseline]
        if candidates:
            baseline_index = candidates[0]
        elif Path(baseline).is_file():
            paths.insert(0, Path(baseline))
            baseline_index = 0
        else:
            raise UsageError(
                f"baseline {baseline!r} is neither one of the runs "
                f"({', '.join(_display_names(paths))}) nor a run file"
            )
    run_names = _display_names(paths)

    records = read_qrels(qrels_path)
    qrels = [ir_measures.Qrel(q.qid, q.docid, int(q.relevance)) for q in records]
    qids = sorted({q.qid for q in records}, key=_qid_order)
    if not qids:
        raise ClirError(f"{qrels_path}: the qrels judge no query (is it the right file?)")

    # One run in memory at a time: each is read, checked against the qrels and evaluated
    # before the next is read. Holding them all (ddtp's 22 runs of 3.8 million rows) took
    # 22 GB, and the kernel killed the process.
    unjudged: dict[str, set[str]] = {}
    evaluated = {}
    for name, path in zip(run_names, paths, strict=True):
        docs, unjudged[name] = _read_judged_run(path, qrels_path, qids)
        evaluated[name] = _per_query_values(parsed, names, qrels, docs, qids)
        del docs
    per_query = {name: values for name, (values, _) in evaluated.items()}
    answered = {name: queries for name, (_, queries) in evaluated.items()}
    means = {
        run: {m: sum(values[m].values()) / len(qids) for m in names}
        for run, values in per_query.items()
    }

    base_name = run_names[baseline_index] if baseline_index is not None else None
    p_values: dict[str, dict[str, float]] = {}
    if base_name is not None:
        others = [run for run in run_names if run != base_name]
        p_values = {run: {} for run in others}
        for m in names:
            base_values = [per_query[base_name][m][q] for q in qids]
            raw = [
                paired_test([per_query[run][m][q] for q in qids], base_values, test)
                for run in others
            ]
            for run, p in zip(others, correct(raw, correction), strict=True):
                p_values[run][m] = p

    return EvalResult(
        measures=names,
        runs=run_names,
        qids=qids,
        per_query=per_query,
        means=means,
        baseline=base_name,
        test=test,
        correction=correction,
        p_values=p_values,
        alpha=alpha,
        answered=answered,
        unjudged=unjudged,
    )
