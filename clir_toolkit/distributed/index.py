"""Sharded indexing on Ray (``clir index --shards N --ray ...``): the shards built in parallel.

``clir index`` validates the corpus once in the driver and writes each shard's normalised
documents (document i to shard i mod N, :func:`clir_toolkit.index.write_normalised_corpus`);
here each shard becomes one Ray task that runs Anserini's indexer in its worker's JVM, as
Patapsco's map step does. The shards are kept as they are, one Lucene index each, and read
as one by :func:`clir_toolkit.index.open_reader` (statistics of the whole collection), so
the sharded index searches exactly as the index one process builds.

The tasks write into the temporary directory of the index being built, so the workers must
see the driver's file system: any worker of a cluster on one machine, or a cluster whose
machines share the index's directory (NFS, say). A task whose worker dies is run again
(``max_retries``) after its half-written shard is removed; the index appears only once
every shard is complete, as without Ray.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from typing import Any

from clir_toolkit.analysis import AnalyzerSpec
from clir_toolkit.distributed.cluster import RETRIES, ClusterSpec, connected, gather
from clir_toolkit.index import ShardBuilder, ShardJob, build_shard


def _build_shard_task(spec: AnalyzerSpec, job: ShardJob) -> int:
    """What one worker does: build one shard from scratch (a retried task first removes
    what its dead predecessor left) and return the shard's documents."""
    from clir_toolkit import jvm
    from clir_toolkit.index import count_documents

    shutil.rmtree(job.target, ignore_errors=True)
    jvm.set_log_level("ERROR")
    build_shard(spec, job, progress=False)
    return count_documents(job.target)


def build_shards_on(
    ray: Any, spec: AnalyzerSpec, jobs: Sequence[ShardJob], progress: bool = True
) -> list[int]:
    """Every shard built by its own task on the connected cluster (one CPU per indexing
    thread), a progress bar counting finished shards; the documents of each, in order."""
    from clir_toolkit.progress import progress_bar

    task = ray.remote(max_retries=RETRIES, retry_exceptions=False)(_build_shard_task)
    pending = [task.options(num_cpus=job.threads).remote(spec, job) for job in jobs]
    waiting = list(pending)
    with progress_bar(total=len(jobs), desc="indexing shards", unit=" shards",
                      show=progress) as bar:  # fmt: skip
        while waiting:
            done, waiting = ray.wait(waiting, num_returns=1)
            bar.update(len(done))
    return gather(ray, pending)


def shard_builder_on_ray(cluster: ClusterSpec, env: dict[str, str] | None = None) -> ShardBuilder:
    """A :data:`clir_toolkit.index.ShardBuilder` for ``build_index`` that builds the shards
    in parallel on ``cluster`` (``env``: set in every worker, the JVM's heap say)."""

    def build(spec: AnalyzerSpec, jobs: Sequence[ShardJob], progress: bool) -> None:
        with connected(cluster, env) as ray:
            build_shards_on(ray, spec, jobs, progress)

    return build
