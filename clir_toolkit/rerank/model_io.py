"""Model files, whatever the family: written atomically, read with weights only, checked.

Both families of rerankers (:mod:`clir_toolkit.rerank.contract`) save one file with
``torch.save`` (:func:`save_torch`, atomically) and read it back with ``weights_only=True``
(:func:`read_model_file`). Reading it back is where a damaged or foreign file must become one
clear line instead of a traceback: every key is checked for its kind (:func:`check_record`)
and every tensor against the model it is to fill, before anything is allocated
(:func:`check_state_dict`). What each family's file holds is its own
(:mod:`clir_toolkit.rerank.word.model_file`,
:mod:`clir_toolkit.rerank.sentence.tuned_model`); the family a file belongs to is in its
``format`` key.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from clir_toolkit.errors import ClirError, FormatError
from clir_toolkit.files import atomic_write

T = TypeVar("T")


def save_torch(path: Path, obj: Any) -> None:
    """``torch.save`` to ``path`` atomically (a model file or a checkpoint).

    The object is serialised in memory first and written in one call: a Ctrl-C that arrives
    while torch's C++ writer calls back into Python would come out as a RuntimeError (or
    worse), not as the interruption it is; in memory, torch writes without running Python.
    """
    import io

    import torch

    buffer = io.BytesIO()
    torch.save(obj, buffer)
    with atomic_write(path, "wb", encoding=None) as handle:
        handle.write(buffer.getbuffer())


def read_model_file(path: Path) -> Any:
    """The object saved in a model file (read with weights only; any kind of model)."""
    if not path.is_file():
        raise ClirError(f"{path}: no such model file (train one with: clir rerank train)")
    return torch_load(path, "not a reranker model file")


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


def kind_of(value: Any, kind: str) -> bool:
    """Whether ``value`` is of ``kind`` (a key of :data:`KIND_NAMES`; ``?``: or None)."""
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
        if not kind_of(data[key], kind):
            expected = KIND_NAMES[kind.rstrip("?")] + (" or None" if kind.endswith("?") else "")
            raise FormatError(
                path,
                None,
                f"not {what}: key {key!r} holds {type(data[key]).__name__}, expected {expected}",
                fix,
            )
    return data


SHAPE_CHANGING = frozenset(
    {"resize_", "resize_as_", "unsqueeze_", "squeeze_", "t_", "transpose_", "as_strided_",
     "swapdims_", "swapaxes_", "set_"}
)  # fmt: skip
"""In-place tensor methods that change a shape, not only values: run even on the meta device."""


def meta_skeleton(build: Callable[[], T]) -> T:
    """``build()`` run on the meta device with its in-place initialisations skipped: a module
    whose weights have names and shapes and no memory (what :func:`check_state_dict` checks a
    file against before anything is allocated).

    A meta tensor holds no values, so an in-place method that changes values (a weight's
    random initialisation, ``normal_``; ``clamp_``) does nothing there and is skipped. This is
    for speed: torch has no C++ meta kernel for some of them (``normal_``, ``erfinv_``,
    ``clamp_``), and its Python reference imports ``torch._dynamo`` on first use. That cost
    1.3 s of a 5.4 s ``clir rerank score`` on the CPU here, and more on a GPU host, whose
    ``torch._dynamo`` imports Triton's wrappers too: 13 s for 19,207 pairs on an H100, of
    which 0.7 s was scoring.
    """
    import torch
    from torch.overrides import TorchFunctionMode

    class ValuesSkipped(TorchFunctionMode):
        def __torch_function__(
            self, func: Any, types: Any, args: Any = (), kwargs: Any = None
        ) -> Any:
            kwargs = kwargs or {}
            name = getattr(func, "__name__", "")
            if name.endswith("_") and not name.startswith("_") and name not in SHAPE_CHANGING:
                # tensor.normal_(...), or torch.nn.init.normal_(tensor=...) with its tensor
                # passed by name
                target = args[0] if args else kwargs.get("tensor")
                if isinstance(target, torch.Tensor) and target.is_meta:
                    return target
            return func(*args, **kwargs)

    with torch.device("meta"), ValuesSkipped():
        return build()


def weight_bytes(module: Any) -> int:
    """The bytes of ``module``'s weights and buffers (a tensor shared by two layers once),
    computed from their shapes: on the meta device, nothing is allocated to know it."""
    tensors = [*module.parameters(), *module.buffers()]
    return sum(tensor.numel() * tensor.element_size() for tensor in tensors)


def check_state_dict(
    path: Path, state: Mapping[str, Any], module: Any, what: str, fix: str = ""
) -> None:
    """The named tensors ``state`` fit ``module``: same names, same shapes, floating types,
    finite values, and sizes that the file ``path`` can hold.

    So that ``load_state_dict`` cannot fail: a mismatch is one FormatError naming the tensor.
    And so that a small file cannot make the toolkit allocate gigabytes: ``module`` (built
    on the meta device from the file's configuration) must not need more bytes of weights
    than the file has, and each stored tensor must have the storage its shape claims (a
    tensor expanded with zero strides has the right shape and almost no data).
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
    needed, held = weight_bytes(module), path.stat().st_size
    if needed > held:
        raise FormatError(
            path,
            None,
            f"not {what}: its configuration makes a model of {needed:,} bytes of weights, "
            f"more than the file's {held:,} bytes",
            fix,
        )
    for name, tensor in state.items():
        claimed = tensor.numel() * tensor.element_size()
        stored = tensor.untyped_storage().nbytes()
        if claimed > stored:
            raise FormatError(
                path,
                None,
                f"tensor {name!r} of shape {tuple(tensor.shape)} claims {claimed:,} bytes but "
                f"stores {stored:,} (not {what})",
                fix,
            )
        if tensor.is_floating_point() and not bool(tensor.isfinite().all()):
            raise FormatError(
                path, None, f"tensor {name!r} holds NaN or infinite values (not {what})", fix
            )


def one_line(exc: BaseException) -> str:
    """An exception's message on one line (its type's name when it has none)."""
    return " ".join(str(exc).split()) or type(exc).__name__
