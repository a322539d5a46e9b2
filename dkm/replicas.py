"""Several seeds trained as one computation: how their replicas run.

A network of :mod:`dkm.autoencoder` holds ``S`` replicas, one per seed, as stacked
variables. A fit trains one (``S = 1``); the protocol may train several seeds together
(``--seeds-per-batch``). How the ``S`` replicas run is the trainer's *layout*:

* ``"stacked"``, the plain :class:`dkm.training.Trainer`: every step evaluates the
  replicas together with batched matrix products, the large products that fill a GPU
  (``benchmarks/gpu_standin.py``, the training step in JAX on an H200: ten seeds stacked
  train 2.0 to 2.2 times the samples per second of one);
* ``"sequential"``, :class:`SequentialTrainer`: each replica's whole epoch in turn inside
  the same compiled call, on a one-replica copy of the state, for a CPU, where a single
  network already keeps the cores busy (``benchmarks/bench_speed.py`` times both).

Both give every replica what a run of its own gives. :func:`make_trainer` builds the
trainer of a layout; :func:`default_layout` and :func:`default_seeds_per_batch` are the
choices by device.
"""
from __future__ import annotations

import copy
from typing import Literal, Sequence

import tensorflow as tf

from dkm.autoencoder import Autoencoder
from dkm.training import Adam, Objective, Trainer, has_gpu, StepState

Layout = Literal["stacked", "sequential"]
LAYOUTS: tuple[str, ...] = ("stacked", "sequential")


def default_layout() -> Layout:
    """How a trainer runs its replicas by default: ``"stacked"`` (batched products
    over the seeds) on a GPU, ``"sequential"`` (each replica's epoch in turn) on a CPU; the
    speed of each is measured in ``benchmarks/``."""
    return "stacked" if has_gpu() else "sequential"


def default_seeds_per_batch(n_seeds: int) -> int:
    """How many seeds the protocol trains as one computation by default: all of them on a
    GPU (stacked, :func:`default_layout`), one on a CPU, where each seed's record is then
    written as soon as it is done. Either way every seed gets the same result (to float32
    round-off) as a run of its own."""
    if n_seeds < 1:
        raise ValueError(f"n_seeds must be at least 1, got {n_seeds}")
    return n_seeds if has_gpu() else 1


class _ReplicaLane:
    """A one-replica copy of a stacked training state, for the sequential layout.

    ``load(s)`` copies replica ``s`` of the stacked state (network, Adam's
    moments, the objective's ``replicated`` attributes) into the copy and
    rewinds the shared step counters; ``store(s)`` writes the copy back. The
    copy shares everything that is not per replica (the data, the counters).
    """

    def __init__(self, stacked: StepState) -> None:
        if not hasattr(stacked.objective, "replicated"):
            raise TypeError(f"{type(stacked.objective).__name__} does not name its per-replica "
                            "state (`replicated`), which the sequential layout "
                            "needs; add them, or train with layout='stacked'")
        autoencoder = stacked.autoencoder
        lane_autoencoder = autoencoder.one_replica()
        objective = copy.copy(stacked.objective)
        pairs = list(zip(autoencoder.params, lane_autoencoder.params))
        for name, value in vars(stacked.objective).items():
            if value is autoencoder:
                setattr(objective, name, lane_autoencoder)
        for name in stacked.objective.replicated:
            value = getattr(stacked.objective, name)
            lane_value = tf.Variable(tf.zeros([1, *value.shape[1:]], value.dtype),
                                     trainable=getattr(value, "trainable", False),
                                     name=f"lane_{name}")
            setattr(objective, name, lane_value)
            pairs.append((value, lane_value))
        lane_of = {id(value): lane for value, lane in pairs}
        unnamed = [v.name for v in stacked.objective.variables if id(v) not in lane_of]
        if unnamed:
            raise ValueError(f"{type(stacked.objective).__name__} trains {unnamed} but does not "
                             "list them in `replicated`")
        objective.variables = [lane_of[id(v)] for v in stacked.objective.variables]
        optimizer = stacked.optimizer.sharing_step_count()
        self.state = StepState(lane_autoencoder, objective, optimizer)
        for value, lane in zip(stacked.variables, self.state.variables):
            pairs.extend(zip(stacked.optimizer.slots(value), optimizer.slots(lane)))
        self._pairs = pairs
        self.counters = [stacked.optimizer.iterations] + [
            getattr(stacked.objective, name) for name in getattr(stacked.objective, "counters", ())]

    def load(self, replica: tf.Tensor, counter_values: Sequence[tf.Tensor]) -> None:
        """Copy replica ``replica`` into the lane and set the counters (in a graph)."""
        for counter, value in zip(self.counters, counter_values):
            counter.assign(value)
        for value, lane in self._pairs:
            lane.assign(tf.gather(value, [replica]))

    def store(self, replica: tf.Tensor) -> None:
        """Write the lane back into replica ``replica`` of the stacked variables."""
        for value, lane in self._pairs:
            if isinstance(value, tf.Variable):
                value.assign(tf.tensor_scatter_nd_update(value, [[replica]], lane))


class SequentialTrainer(Trainer):
    """A :class:`dkm.training.Trainer` of ``S > 1`` replicas that runs each replica's whole
    epoch in turn, inside the same compiled call, on a one-replica copy of the state
    (:class:`_ReplicaLane`): every replica computes what a run of its own computes."""

    def __init__(self, autoencoder: Autoencoder, objective: Objective, data: tf.Tensor,
                 optimizer: Adam, jit_compile: bool = True) -> None:
        super().__init__(autoencoder, objective, data, optimizer, jit_compile)
        self._lane = _ReplicaLane(self._state)

    def _epoch_graph(self, batches: tf.Tensor) -> tuple[tf.Tensor, list[tf.Tensor]]:
        lane = self._lane
        counters_at_start = [counter.read_value() for counter in lane.counters]
        zeros = tf.zeros([self.autoencoder.n_replicas])

        def body(replica, losses, term_means):
            lane.load(replica, counters_at_start)
            loss, terms = self._steps(lane.state, tf.gather(batches, [replica]))
            lane.store(replica)
            at = [[replica]]
            return (replica + 1, tf.tensor_scatter_nd_update(losses, at, loss),
                    [tf.tensor_scatter_nd_update(a, at, t) for a, t in zip(term_means, terms)])

        _, losses, term_means = tf.while_loop(
            lambda replica, *_: replica < self.autoencoder.n_replicas,
            body,
            (tf.constant(0), zeros, [zeros for _ in self.term_names]),
        )
        return losses, term_means


def make_trainer(
    autoencoder: Autoencoder,
    objective: Objective,
    data: tf.Tensor,
    optimizer: Adam,
    jit_compile: bool = True,
    layout: Layout | None = None,
) -> Trainer:
    """The trainer of ``autoencoder``'s replicas in ``layout``.

    Parameters
    ----------
    autoencoder, objective, data, optimizer, jit_compile
        As for :class:`dkm.training.Trainer`.
    layout : {"stacked", "sequential"}, optional
        How the replicas run (see the module's docstring); by default
        :func:`default_layout`, by device. With one replica both are the plain
        :class:`dkm.training.Trainer`.
    """
    layout = layout or default_layout()
    if layout not in LAYOUTS:
        raise ValueError(f"unknown layout {layout!r}; choose one of {LAYOUTS}")
    if layout == "sequential" and autoencoder.n_replicas > 1:
        return SequentialTrainer(autoencoder, objective, data, optimizer, jit_compile)
    return Trainer(autoencoder, objective, data, optimizer, jit_compile)
