"""Running the toolkit's steps on a Ray cluster: the same runs as one process, spread out.

`Ray <https://docs.ray.io>`_ starts fresh worker processes (no fork), so every worker
starts its own JVM for Lucene — the fork-and-JVM problems pyserini users meet with
multiprocessing do not arise — and it schedules CPUs and GPUs in one engine. It is an
optional extra (``pip install 'clir_toolkit[ray]'``; ``make setup`` installs it).

* :mod:`.cluster` — which cluster: ``--ray auto`` (the one ``ray start --head`` started on
  this machine), ``--ray ADDRESS`` (``ray://HOST:10001`` or ``HOST:6379``), or
  ``--ray local:N`` (a cluster of N CPUs in this process, stopped at the end);
* :mod:`.index` — sharded indexing: the shards of ``clir index --shards N`` built by
  parallel tasks, one JVM each (the sharded index is searched as one,
  :func:`clir_toolkit.index.open_reader`);
* :mod:`.encode` — the documents of ``clir index --dense --ray`` encoded by Ray tasks, in
  one process's batches, into the collection's vector cache;
* :mod:`.search` — query-parallel search: the topics split across workers, one JVM each,
  rows gathered and written by the driver exactly as one process writes them;
* :mod:`.dense` — dense and hybrid search: the driver encodes the queries, tasks search
  chunks of their vectors against the index's vectors (put in Ray's object store once),
  and the hybrid's BM25 half is :mod:`.search`'s; the same run as one process;
* :mod:`.rerank` — neural reranking: the (query, document) pairs scored in the batches one
  process forms, by actors that load the model once; the run reranked and written by the
  driver exactly as one process does;
* :mod:`.train` — data-parallel training of the word-level rerankers (``clir rerank train
  --ddp N``): PyTorch DDP through Ray Train, each worker a slice of every batch, the model
  one process's up to float rounding.
"""
