"""An estimator's parameter declared once: its default, its constraint and its documentation.

A setting of the shared training loop is a field of :class:`dkm.methods.common.LoopConfig`
declared with :func:`parameter`; every deep estimator takes it as a keyword argument
(:func:`loop_parameters`), with its constraint (scikit-learn's parameter validation), its
entry in the docstring's Parameters section, and its way into the loop's settings and back
(``_loop``, ``from_config``), all read from that one declaration.
"""
from __future__ import annotations

import dataclasses
from numbers import Integral, Real
from typing import Any, Callable, Iterable, Mapping

from sklearn.utils._param_validation import Interval

__all__ = ["NON_NEGATIVE", "NON_NEGATIVE_INT", "POSITIVE", "POSITIVE_INT", "converted",
           "declared", "documentation", "fill_docstring", "flagged_values", "loop_parameters",
           "parameter"]

POSITIVE_INT = Interval(Integral, 1, None, closed="left")
NON_NEGATIVE_INT = Interval(Integral, 0, None, closed="left")
NON_NEGATIVE = Interval(Real, 0, None, closed="left")  # also excludes inf and nan
POSITIVE = Interval(Real, 0, None, closed="neither")

#: The placeholder of an estimator's docstring where the loop's parameters are documented.
PLACEHOLDER = "    {loop_parameters}\n"


def parameter(default: Any, constraint: list, doc: str, *, convert: Callable | None = None,
              identity: bool = True, recorded: bool = False) -> Any:
    """A dataclass field that declares an estimator parameter.

    Parameters
    ----------
    default : object
        Its default value (immutable).
    constraint : list
        What scikit-learn's parameter validation accepts (``_parameter_constraints``).
    doc : str
        Its docstring entry without the name: the type and default on the first line
        (``"int, default=256"``), then the description.
    convert : callable, optional
        How the estimator's value becomes the loop's (``int``, ``tuple``, ...).
    identity : bool
        Whether it decides what a fit computes, so that an interrupted fit resumes only
        with the same value (the checkpoints' key); a progress bar does not.
    recorded : bool
        Whether a protocol run's record holds it among its parameters (and hashes it).
    """
    return dataclasses.field(default=default, metadata={
        "constraint": constraint, "doc": doc, "convert": convert, "identity": identity,
        "recorded": recorded})


def declared(cls: type) -> tuple[dataclasses.Field, ...]:
    """The fields of the dataclass ``cls`` declared with :func:`parameter`, in order."""
    return tuple(f for f in dataclasses.fields(cls) if "doc" in f.metadata)


def flagged_values(settings: Any, flag: str) -> dict[str, Any]:
    """The values, as JSON, of the parameters that the dataclass instance ``settings``
    declares with ``flag`` set (``"identity"`` or ``"recorded"``, :func:`parameter`)."""
    from dkm.methods.config import jsonable

    return {f.name: jsonable(getattr(settings, f.name))
            for f in declared(type(settings)) if f.metadata[flag]}


def converted(loop_class: type, values: Mapping[str, Any]) -> dict[str, Any]:
    """``values`` of parameters that ``loop_class`` declares, each converted as declared
    (``convert``): the keyword arguments of the loop's settings."""
    fields = {f.name: f for f in declared(loop_class)}
    return {name: value if fields[name].metadata["convert"] is None
            else fields[name].metadata["convert"](value) for name, value in values.items()}


def documentation(entries: Iterable[tuple[str, str]]) -> str:
    """Numpydoc entries, indented for a class docstring, of ``(name, doc)`` pairs (a
    :func:`parameter`'s ``doc``)."""
    text = []
    for name, doc in entries:
        first, *rest = doc.strip("\n").split("\n")
        text.append(f"    {name} : {first}\n" + "".join(f"        {line.strip()}\n"
                                                      for line in rest))
    return "".join(text)


def loop_parameters(loop_class: type) -> Callable[[type], type]:
    """A class decorator, applied before ``@dataclass``, that gives an estimator its shared
    parameters: every parameter ``loop_class`` declares becomes a field of the estimator
    with its default; with the parameters the class body declares with :func:`parameter`,
    they join ``_parameter_constraints`` and the docstring (at ``{loop_parameters}``, in
    this class and its subclasses), and ``_loop_class`` is the class of its loop's
    settings."""
    def add(cls: type) -> type:
        annotations = cls.__dict__.get("__annotations__", {})
        loop = declared(loop_class)
        for f in loop:
            annotations[f.name] = f.type
            setattr(cls, f.name, f.default)
        cls.__annotations__ = annotations
        own = tuple((name, value) for name, value in vars(cls).items()
                    if isinstance(value, dataclasses.Field) and "doc" in value.metadata)
        cls._own_parameters = (*getattr(cls, "_own_parameters", ()), *own)
        cls._loop_class = loop_class
        cls._parameter_constraints = {
            **getattr(cls, "_parameter_constraints", {}),
            **{f.name: f.metadata["constraint"] for f in loop},
            **{name: f.metadata["constraint"] for name, f in cls._own_parameters}}
        cls._parameters_doc = documentation(
            [(f.name, f.metadata["doc"]) for f in loop]
            + [(name, f.metadata["doc"]) for name, f in cls._own_parameters])
        fill_docstring(cls)
        return cls
    return add


def fill_docstring(cls: type) -> None:
    """Put ``cls._parameters_doc`` at the ``{loop_parameters}`` of its docstring (kept as
    ``_doc_template``, so that a subclass's decorator fills it again)."""
    template = cls.__dict__.get("_doc_template") or cls.__doc__
    if template and PLACEHOLDER in template:
        cls._doc_template = template
        cls.__doc__ = template.replace(PLACEHOLDER, cls._parameters_doc)
