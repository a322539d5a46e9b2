"""One compiled function per distinct graph: trainers of the same network share a compilation.

Every :class:`dkm.training.Trainer` traces its epoch into a TensorFlow graph,
which XLA compiles on the first call; for a small network on a small dataset, tracing and
compiling take longer than the epochs (``benchmarks/bench_shared_compilation.py``).
Two networks of the same shapes trained by the same method would compile the
same epoch twice: TensorFlow keys a compiled function by its name, and it names
every trace afresh (a trace's name counts the traces before it). So a process
that trains many such networks (a λ grid, seed after seed, a test suite, a
chapter of the book) would spend most of its time compiling.

:class:`SharedFunctions` keeps, per distinct graph, the first function traced
with it, and runs a later trace of the same graph through that function, with
the later trace's own captured inputs (its network's and Adam's variables and
its data). Two traces are the same graph when their function definitions, and
those of the functions they call (the loops' bodies), are equal once the
arguments are named by position and the generated function names replaced by
their order of creation, and their captured inputs have the same types and
shapes (:func:`graph_fingerprint`). Everything a graph computes besides its
arguments and captured inputs is written in its definitions (the operations,
their attributes, every constant, λ included), so two traces with one
fingerprint compute the same function of their inputs, and the compiled code
that runs is the code the later trace would have compiled: the numbers do not
change (``tests/test_shared_functions.py`` checks a shared epoch against an
unshared one, bit for bit, and ``benchmarks/bench_shared_compilation.py`` whole
fits).

A kept function holds the tensors it captured (the first trainer's data; it
refers to that trainer's variables weakly) until it is let go:
:class:`SharedFunctions` keeps the graphs it was asked for most recently, at
most ``capacity`` of them holding at most ``max_bytes`` in all (a graph whose
tensors alone exceed it is not kept). So a process of many networks on small
data shares their compilations, and one that trains on a large dataset keeps
nothing beyond its fit: by default 64 MiB, which holds the USPS data (9.5 MB)
several times and neither MNIST's (220 MB) nor 20NEWS's (151 MB), whose epochs
take long enough for a compilation not to matter.

Running a function with another trace's captured inputs uses
``ConcreteFunction._call_flat``, which TensorFlow does not document: it is used only
with the TensorFlow it was checked against
(:data:`dkm.reproducibility.kernel_settings.CHECKED_TENSORFLOW`, the lock's);
with another, every trace runs its own function (and compiles it), as without sharing.
A shared function is run eagerly, outside any gradient tape (as the trainer runs its
epochs). :func:`share_compiled_epochs` makes every trainer of the process run its
epochs through :data:`shared_epochs`; without it, each trainer runs its own.
"""
from __future__ import annotations

import hashlib
import re
import threading
from collections import OrderedDict
from typing import Any, Callable

import tensorflow as tf

from dkm import training
from dkm.reproducibility.kernel_settings import checked_tensorflow

__all__ = ["SharedFunctions", "graph_fingerprint", "held_bytes", "share_compiled_epochs",
           "shared_epochs"]

_TRAILING_NUMBER = re.compile(r"(\d+)$")


def _private_call_checked(function: Any) -> bool:
    """Whether ``function`` can be run with another trace's inputs: a checked TensorFlow
    (:func:`dkm.reproducibility.kernel_settings.checked_tensorflow`) whose traces have
    ``_call_flat`` (``tests/test_shared_functions.py``)."""
    return checked_tensorflow() and hasattr(function, "_call_flat")


def _creation_order(name: str) -> int:
    """The counter TensorFlow appended to a generated function name."""
    found = _TRAILING_NUMBER.search(name)
    if found is None:
        raise ValueError(f"{name!r} is not a generated function name (no trailing counter)")
    return int(found.group(1))


def _captured(function: Any) -> list[Any]:
    """A traced function's captured inputs: each variable (for a handle) or tensor."""
    variables = {id(v.handle): v for v in function.variables}
    return [variables.get(id(value), value) for value in function.captured_inputs]


def _without_argument_names(definition: Any) -> Any:
    """A copy of a ``FunctionDef`` whose arguments are named by position.

    TensorFlow names an argument after what it captures (an eager tensor's
    counter, a generated function's name) and keeps that name as an attribute;
    within the function the name only refers to the argument.
    """
    renamed = type(definition)()
    renamed.CopyFrom(definition)
    names = {arg.name: f"<a{i}>" for i, arg in enumerate(renamed.signature.input_arg)}

    def rename(reference: str) -> str:
        control = reference.startswith("^")
        name = names.get(reference.lstrip("^"))
        return reference if name is None else "^" * control + name

    for arg in renamed.signature.input_arg:
        arg.name = names[arg.name]
    for node in renamed.node_def:
        node.input[:] = [rename(reference) for reference in node.input]
    for output in list(renamed.ret):
        renamed.ret[output] = rename(renamed.ret[output])
    for attributes in renamed.arg_attr.values():
        attributes.attr.pop("_user_specified_name", None)
    return renamed


def graph_fingerprint(function: Any) -> str:
    """A SHA-256 digest of what a traced function computes, without its generated names.

    Parameters
    ----------
    function : tf.types.experimental.ConcreteFunction
        A traced function (``tf.function(...).get_concrete_function(...)``)
        whose variables are alive.

    Returns
    -------
    str
        Equal for two traces of the same computation: the function's definition
        and those of the functions it calls, with their arguments named by
        position and each generated function name (``while_body_1234``, also
        inside the names derived from it) replaced by its rank in order of
        creation; then the signature of its arguments and the dtype and shape
        of each captured input (a variable's own shape, not its handle's).
    """
    definitions = [_without_argument_names(d) for d in
                   (function.function_def, *function.graph.as_graph_def().library.function)]
    names = sorted({d.signature.name for d in definitions}, key=_creation_order)
    rank = {name: f"<f{i}>" for i, name in enumerate(names)}
    generated = re.compile("|".join(
        rf"{re.escape(name)}(?!\d)" for name in sorted(names, key=len, reverse=True)))
    texts = sorted(generated.sub(lambda m: rank[m.group(0)], str(d)) for d in definitions)
    captured = [f"{held.dtype.name}{list(held.shape)}" for held in _captured(function)]
    digest = hashlib.sha256()
    for part in (*texts, repr(function.structured_input_signature), *captured):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()


def held_bytes(function: Any) -> int:
    """The bytes of the tensors a traced function holds: its captured inputs but variables.

    A traced function refers to the variables it captured weakly (they live as
    long as their network), and to the tensors it captured (a trainer's data)
    strongly.
    """
    return sum(value.shape.num_elements() * value.dtype.size
               for value in function.captured_inputs if value.dtype != tf.resource)


class SharedFunctions:
    """The first function traced of each graph, run for the later traces of it.

    Parameters
    ----------
    capacity : int
        How many graphs are kept at most, the most recently asked for.
    max_bytes : int
        How many bytes of captured tensors (:func:`held_bytes`) the kept functions
        may hold in all; the least recently asked for are let go first.
    """

    def __init__(self, capacity: int = 16, max_bytes: int = 64 * 2**20) -> None:
        if capacity < 1:
            raise ValueError(f"capacity must be at least 1, got {capacity}")
        if max_bytes < 0:
            raise ValueError(f"max_bytes must not be negative, got {max_bytes}")
        self.capacity = int(capacity)
        self.max_bytes = int(max_bytes)
        self.hits = 0  # traces run through a function kept from an earlier trace
        self._kept: OrderedDict[str, tuple[Any, int]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._kept)

    def clear(self) -> None:
        """Let every kept function go (and the data it captured)."""
        with self._lock:
            self._kept.clear()

    def runner(self, function: Any) -> Callable[..., Any]:
        """How to run ``function``: through the kept trace of its graph, or itself.

        Parameters
        ----------
        function : tf.types.experimental.ConcreteFunction
            A new trace, whose arguments are tensors.

        Returns
        -------
        callable
            Takes ``function``'s tensor arguments and returns its outputs,
            computed with ``function``'s own captured inputs.
        """
        if not _private_call_checked(function):
            return function
        key = graph_fingerprint(function)
        with self._lock:
            if key in self._kept:
                kept = self._kept[key][0]
                self._kept.move_to_end(key)
                self.hits += 1
            else:
                kept = function
                size = held_bytes(function)
                if size <= self.max_bytes:
                    self._kept[key] = (function, size)
                self._let_go_beyond_limits()
        if kept is function:
            return function

        def run(*arguments: tf.Tensor) -> Any:
            return kept._call_flat(list(arguments), function.captured_inputs)
        return run

    def _let_go_beyond_limits(self) -> None:
        while (len(self._kept) > self.capacity
               or sum(size for _, size in self._kept.values()) > self.max_bytes):
            self._kept.popitem(last=False)


#: The process's kept epochs, shared by every :class:`dkm.training.Trainer` once
#: :func:`share_compiled_epochs` has been called.
shared_epochs = SharedFunctions()


def share_compiled_epochs(shared: bool = True) -> None:
    """Run every trainer's epochs through :data:`shared_epochs` (``shared``), or each through
    its own trace again (``shared=False``); for the whole process, as the kept functions are.

    The numbers do not change either way; a process that trains many networks of one graph
    (a grid, a test suite, a chapter) compiles each graph once instead of once per network.
    """
    training.set_epoch_runner(shared_epochs.runner if shared else None)
