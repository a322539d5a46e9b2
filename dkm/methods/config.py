"""How a method's configuration is recorded: the fields that make a run's identity, declared
by each configuration class with a version (:class:`RunIdentity`), the switches kept out of
records while they hold their defaults, and the fields as JSON. No TensorFlow needed."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping, Sequence

import numpy as np

#: Metadata of a configuration field that a record holds (and hashes) only when
#: it differs from its default: a switch added after records were written
#: leaves their configuration hashes, hence their resumption, unchanged.
RECORDED_WHEN_SET = MappingProxyType({"recorded_when_set": True})


@dataclass(frozen=True)
class RunIdentity:
    """Which fields of a configuration class make a run's record (and its hash).

    A configuration class declares it as its class attribute ``IDENTITY``. Every field of
    the class is either named here or a study's switch (:data:`RECORDED_WHEN_SET`, held
    only when it differs from its default): a field that is neither stops the record
    (:func:`identity_params`), since adding it silently would change the hash of every
    run of the method, and a results store would no longer find its runs.

    Attributes
    ----------
    version : int
        The declaration's version: a change that moves the hashes of committed records
        (a field added to ``fields``) bumps it and says so in its commit.
    fields : tuple of str
        The fields recorded under their own names.
    renamed : mapping
        Fields recorded under another name (the trade-off: ``lam`` as ``"lambda"``).
    fixed : mapping
        Entries every record of the method holds whatever its configuration (the
        clustering distance of a method that has no other).
    """

    version: int
    fields: tuple[str, ...]
    renamed: Mapping[str, str] = field(default_factory=dict)
    fixed: Mapping[str, Any] = field(default_factory=dict)


def switches(config: Any) -> list[dataclasses.Field]:
    """The fields of a configuration (or its class) that are a study's switches
    (:data:`RECORDED_WHEN_SET`)."""
    return [f for f in dataclasses.fields(config) if f.metadata.get("recorded_when_set")]


def identity_params(config: Any, default: RunIdentity | None = None) -> dict[str, Any]:
    """The fields of ``config`` that a run's record holds, as JSON values, by its class's
    declared :class:`RunIdentity` (``default`` for a class that declares none: a plugin's).

    Raises
    ------
    ValueError
        For a field that the declaration neither names nor marks as a study's switch.
    """
    identity = getattr(type(config), "IDENTITY", None) or default
    switched = switches(config)
    named = {*identity.fields, *identity.renamed}
    undeclared = [f.name for f in dataclasses.fields(config)
                  if f.name not in named and f not in switched]
    if undeclared:
        raise ValueError(
            f"{type(config).__name__} has the field(s) {', '.join(undeclared)}, which its "
            f"IDENTITY (version {identity.version}) does not declare: name each in IDENTITY "
            "(the hash of every run of the method then changes: bump the version and say so) "
            "or give it metadata=RECORDED_WHEN_SET (a switch held only when set)")
    params = {name: jsonable(getattr(config, name)) for name in identity.fields}
    params.update({recorded: jsonable(getattr(config, name))
                   for name, recorded in identity.renamed.items()})
    params.update({f.name: jsonable(getattr(config, f.name)) for f in switched
                   if getattr(config, f.name) != f.default})
    return {**identity.fixed, **params}


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
