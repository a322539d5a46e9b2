"""How a method's configuration is recorded: its fields as JSON, and the switches kept out of
records while they hold their defaults. No TensorFlow needed."""
from __future__ import annotations

import dataclasses
from types import MappingProxyType
from typing import Any, Sequence

import numpy as np

#: Metadata of a configuration field that a record holds (and hashes) only when
#: it differs from its default: a switch added after records were written
#: leaves their configuration hashes, hence their resumption, unchanged.
RECORDED_WHEN_SET = MappingProxyType({"recorded_when_set": True})


def unrecorded_defaults(config: Any) -> set[str]:
    """Names of the :data:`RECORDED_WHEN_SET` fields of a dataclass that hold their default."""
    return {f.name for f in dataclasses.fields(config)
            if f.metadata.get("recorded_when_set") and getattr(config, f.name) == f.default}


def with_overrides(config: Any, overrides: dict[str, Any],
                   extensions: Sequence[type] = ()) -> Any:
    """``config`` with the fields named in ``overrides`` changed.

    A field that ``config``'s class lacks is a switch of a study: the result is
    then of the first class of ``extensions`` (subclasses of ``config``'s class, named
    by whoever asks: the protocol's declared models,
    :func:`dkm.protocol.registry.extending_models`) that declares every field named, its
    other fields taken from ``config``.

    Raises
    ------
    ValueError
        When no class of ``extensions`` declares the fields.
    """
    names = {f.name for f in dataclasses.fields(config)}
    if set(overrides) <= names:
        return dataclasses.replace(config, **overrides)
    for extension in extensions:
        if set(overrides) <= {f.name for f in dataclasses.fields(extension)}:
            fields = {name: getattr(config, name) for name in names}
            return extension(**{**fields, **overrides})
    unknown = ", ".join(sorted(set(overrides) - names))
    known = ", ".join(extension.__name__ for extension in extensions) or "none"
    raise ValueError(f"{type(config).__name__} has no field {unknown}, nor has any of the "
                     f"classes that extend it here ({known})")


def jsonable(value: Any) -> Any:
    """``value`` (a configuration, a schedule, nested in dicts and sequences) as JSON types.

    Dataclasses become dicts, tuples lists and NumPy scalars Python numbers.
    """
    if dataclasses.is_dataclass(value):
        return {k: jsonable(v) for k, v in dataclasses.asdict(value).items()}
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value
