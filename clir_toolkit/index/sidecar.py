"""The sidecar ``clir-index.json`` of an index: what it records (:class:`IndexInfo`), reading
it back with every field checked (:func:`read_index_info`), writing it
(:func:`write_sidecar`), and whether an index is that of a collection as it is now
(:func:`is_index_of`).

The sidecar is what makes a directory an index built by ``clir index``: it names the
language and analyzer the documents were indexed with (so queries are analysed the same
way), the collection's fingerprint, the number of shards and the dense vectors stored
beside the Lucene files.
"""

from __future__ import annotations

import json
from dataclasses import MISSING, asdict, dataclass, fields
from pathlib import Path

from clir_toolkit.analysis import ANALYZER_KINDS, AnalyzerSpec, recorded_spec_problem
from clir_toolkit.collection import open_collection
from clir_toolkit.errors import ClirError, FormatError
from clir_toolkit.files import atomic_write, recover_directory
from clir_toolkit.formats import parse_json
from clir_toolkit.vectors import DenseRecord, record_from_json, record_to_json

SIDECAR = "clir-index.json"
SIDECAR_FORMAT = 2
"""The version of an index's layout: 1, the documents indexed as written; 2, their text in
Unicode's composed form (NFC), the form queries are analysed in. A format-1 index is still
searched, but :func:`is_index_of` no longer counts it as the index of its collection, so
that ``clir run`` rebuilds it."""


@dataclass(frozen=True)
class IndexInfo:
    """What ``clir-index.json`` records about an index."""

    language: str
    analyzer_kind: str
    analyzer_name: str
    documents: int
    collection: str
    collection_sha256: str
    store_raw: bool
    created_by: str
    seconds: float
    format: int = SIDECAR_FORMAT
    shards: int = 1
    """Lucene indexes the documents were split into (``shard-NN/`` beside the sidecar),
    searched as one by :func:`open_reader`; 1: the index directory is the Lucene index."""
    dense: DenseRecord | None = None
    """The documents' vectors stored with the index (``clir index --dense``), or None: those
    of the encoder added last, which ``clir search --dense`` and ``--hybrid`` use when no
    ``--encoder`` is named."""
    other_dense: tuple[DenseRecord, ...] = ()
    """The vectors of other encoders, added earlier and kept (one record an encoder): a search
    that names one of them (``--encoder``) uses them, and a first stage may fuse them all."""

    def vectors_of(self, encoder: str | None = None) -> DenseRecord | None:
        """The record of ``encoder``'s vectors (None: :attr:`dense`), or None if the index
        holds none of that encoder."""
        if encoder is None:
            return self.dense
        held = [record for record in (self.dense, *self.other_dense) if record is not None]
        return next((record for record in held if record.encoder == encoder), None)

    @property
    def encoders(self) -> list[str]:
        """The encoders whose vectors the index holds, :attr:`dense`'s first."""
        held = [record for record in (self.dense, *self.other_dense) if record is not None]
        return [record.encoder for record in held]

    @property
    def analyzer(self) -> AnalyzerSpec:
        kind = self.analyzer_kind
        if kind not in ANALYZER_KINDS:
            raise ClirError(
                f"unknown analyzer kind '{kind}' in the index sidecar "
                "(rebuild the index with: clir index --collection DIR --index IDX)"
            )
        return AnalyzerSpec(self.language, kind, self.analyzer_name)  # type: ignore[arg-type]


#: The JSON types each sidecar field admits, and their name for messages.
_STRING, _INTEGER = ((str,), "a string"), ((int,), "an integer")
_SIDECAR_TYPES: dict[str, tuple[tuple[type, ...], str]] = {
    "language": _STRING,
    "analyzer_kind": _STRING,
    "analyzer_name": _STRING,
    "documents": _INTEGER,
    "collection": _STRING,
    "collection_sha256": _STRING,
    "store_raw": ((bool,), "true or false"),
    "created_by": _STRING,
    "seconds": ((int, float), "a number"),
    "format": _INTEGER,
    "shards": _INTEGER,
    "dense": ((dict,), "a JSON object"),
    "other_dense": ((list,), "a JSON list"),
}


def read_index_info(index: str | Path) -> IndexInfo:
    """The sidecar of an index built by ``clir index``, with a clear error otherwise.

    An index whose replacement a crash interrupted is recovered first
    (:func:`clir_toolkit.files.recover_directory`).
    """
    index = Path(index)
    recover_directory(index)
    sidecar = index / SIDECAR
    if not sidecar.is_file():
        if not index.is_dir():
            raise ClirError(f"{index}: no such index (build one with: clir index ...)")
        raise ClirError(
            f"{index}: no {SIDECAR} sidecar; this index was not built by 'clir index' "
            "(rebuild it with: clir index --collection DIR --index IDX)"
        )
    rebuild = "rebuild the index with: clir index --collection DIR --index IDX"
    try:
        text = sidecar.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise FormatError(sidecar, None, "the index sidecar is not UTF-8", rebuild) from None
    values = parse_json(sidecar, None, text)
    if not isinstance(values, dict):
        raise FormatError(sidecar, None, "the index sidecar is not a JSON object", rebuild)
    for field in fields(IndexInfo):
        expected, expected_name = _SIDECAR_TYPES[field.name]
        if field.name not in values:
            if field.default is MISSING:
                raise FormatError(sidecar, None, f"the index sidecar lacks '{field.name}'", rebuild)
            continue
        value = values[field.name]
        if isinstance(value, bool) is not (bool in expected) or not isinstance(value, expected):
            raise FormatError(
                sidecar,
                None,
                f"'{field.name}' must be {expected_name}, found {json.dumps(value)[:40]}",
                rebuild,
            )
    version = values.setdefault("format", 1)  # sidecars without one predate formats
    if version > SIDECAR_FORMAT:
        raise FormatError(
            sidecar,
            None,
            f"the index was built by a newer clir_toolkit (format {version}; this one reads "
            f"formats up to {SIDECAR_FORMAT})",
            "rebuild the index with this version, or upgrade clir_toolkit",
        )
    for field_name in ("format", "shards"):
        if values.get(field_name, 1) < 1:
            problem = f"'{field_name}' must be at least 1, found {values[field_name]}"
            raise FormatError(sidecar, None, problem, rebuild)
    unknown = sorted(set(values) - {field.name for field in fields(IndexInfo)})
    if unknown:
        problem = f"unknown field '{unknown[0]}' in the index sidecar"
        raise FormatError(sidecar, None, problem, rebuild)
    if "dense" in values:
        values["dense"] = record_from_json(sidecar, values["dense"], rebuild)
        _check_encoder(sidecar, values["dense"].encoder)
    if "other_dense" in values:
        if "dense" not in values:
            raise FormatError(sidecar, None, "'other_dense' without 'dense'", rebuild)
        others = tuple(record_from_json(sidecar, value, rebuild) for value in values["other_dense"])
        encoders = [values["dense"].encoder, *(record.encoder for record in others)]
        if len(set(encoders)) != len(encoders):
            problem = f"two records of vectors of the same encoder ({', '.join(encoders)})"
            raise FormatError(sidecar, None, problem, rebuild)
        for record in others:
            _check_encoder(sidecar, record.encoder)
        values["other_dense"] = others
    info = IndexInfo(**values)
    info.analyzer  # noqa: B018  (validates the analyzer kind)
    language_problem = recorded_spec_problem(info.language, info.analyzer_kind)
    if language_problem is not None:
        raise FormatError(sidecar, None, f"the index's 'language': {language_problem}", rebuild)
    return info


def _check_encoder(sidecar: Path, encoder: str) -> None:
    """Refuse vectors recorded as made by an encoder that is not installed here: a damaged
    sidecar, or a plug-in removed since (the sidecar is named, not the user's options)."""
    from clir_toolkit.encoders import ENCODER_NAMES

    if encoder not in ENCODER_NAMES:
        raise FormatError(
            sidecar,
            None,
            f"'dense.encoder' {json.dumps(encoder)[:40]} is no encoder installed here",
            "add the vectors again: clir index --collection DIR --index IDX --dense NAME",
        )


def write_sidecar(index_dir: Path, info: IndexInfo) -> None:
    """Write (or replace, atomically) the sidecar ``clir-index.json`` of ``info``."""
    record = asdict(info)
    if info.shards == 1:  # the sidecar of an unsharded index, as before shards
        del record["shards"]
    if info.dense is None:  # the sidecar of an index without vectors, as before them
        del record["dense"]
    else:
        record["dense"] = record_to_json(info.dense)
    if info.other_dense:
        record["other_dense"] = [record_to_json(other) for other in info.other_dense]
    else:  # the sidecar of an index of one encoder's vectors, as before several
        del record["other_dense"]
    with atomic_write(index_dir / SIDECAR, own=True) as handle:
        json.dump(record, handle, indent=2, ensure_ascii=False)
        handle.write("\n")


def read_dense_record(
    index: str | Path, encoder: str | None = None
) -> tuple[IndexInfo, DenseRecord]:
    """The sidecar of ``index`` and the record of ``encoder``'s vectors (None: the vectors
    added last); an index without them is one line saying how to add them."""
    info = read_index_info(index)
    record = info.vectors_of(encoder)
    if record is None:
        add = f"clir index --collection {info.collection} --index {index} --dense"
        if not info.encoders:
            wanted = "" if encoder is None else f" {encoder}"
            raise ClirError(f"{index}: holds no dense vectors (add them with: {add}{wanted})")
        raise ClirError(
            f"{index}: holds the vectors of {', '.join(info.encoders)}, not {encoder}; search "
            f"with one of those, or add {encoder}'s vectors with: {add} {encoder}"
        )
    return info, record


def is_index_of(index: str | Path, collection: str | Path) -> bool:
    """Whether ``index`` is an index built by ``clir index`` from ``collection`` as it is
    now (its sidecar records the collection's fingerprint), in this toolkit's format."""
    try:
        info = read_index_info(index)
    except ClirError:
        return False
    if info.format != SIDECAR_FORMAT:
        return False
    return info.collection_sha256 == open_collection(collection).fingerprint()
