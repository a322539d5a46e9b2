"""The one minibatch training loop that every deep method shares.

A method is an :class:`Objective`: the per-sample loss it adds to the
autoencoder's, the extra variables it trains, and (optionally) a
non-gradient update after each step (DCN's centroid moves). The
:class:`Trainer` owns the rest, one epoch at a time:

* the data live on the device as one tensor, and every minibatch is gathered
  inside the compiled graph;
* one epoch is one ``tf.function`` (XLA-compiled when ``jit_compile``): a
  ``tf.while_loop`` over the steps (:meth:`Trainer._steps`), each a forward pass,
  the objective's loss, the gradient and Adam's update (:meth:`Trainer._step`),
  with no Python work per step, run as :func:`set_epoch_runner` says (by default
  the trainer's own trace; the protocol shares one compiled function between
  trainers of the same graph, :mod:`dkm.reproducibility.shared_functions`);
* Adam (learning rate 1e-3, β = (0.9, 0.999), ε = 1e-8, the TensorFlow 1
  "ε-hat" form the authors used) is written out here so that its state can
  carry over from pretraining to fine-tuning, as one optimiser instance did in
  the authors' code;
* minibatch orders come from seeded :class:`BatchSampler` streams, so that for
  a given seed every method sees the same sequence;
* :func:`run_epochs` runs a phase's epochs (the objective's hook before each,
  its stopping rule after, checkpoints) and returns its curves.

Tensors have a leading axis ``S`` of independent networks, one per seed: 1 in a
fit. Seeds trained together as one computation run as
:mod:`dkm.replicas` says.
"""
from __future__ import annotations

import zlib
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Literal, Protocol, Sequence

import numpy as np
import tensorflow as tf

from dkm.autoencoder import Autoencoder
from dkm.checkpoints import PhaseState, RunCheckpoints
from dkm.losses import reconstruction_error
from dkm.progress import tqdm

SamplerKind = Literal["permutation", "independent", "sequential"]
SAMPLERS: tuple[str, ...] = ("permutation", "independent", "sequential")
DEFAULT_SAMPLER: SamplerKind = "permutation"

#: How a trainer runs the function it traced for an epoch: None runs the trace itself.
_epoch_runner: Callable[[Any], Callable[..., Any]] | None = None


def set_epoch_runner(runner: Callable[[Any], Callable[..., Any]] | None) -> None:
    """How every :class:`Trainer` runs an epoch's traced function from now on.

    Parameters
    ----------
    runner : callable or None
        Takes a traced epoch (a ``ConcreteFunction``) and returns what to call with its
        arguments in its place, computing what it computes; None runs the trace itself
        (the default). :func:`dkm.reproducibility.share_compiled_epochs` names one that
        runs the traces of one graph through one compiled function.
    """
    global _epoch_runner
    _epoch_runner = runner


@contextmanager
def float32_products() -> Iterator[None]:
    """Compute float32 matrix products in float32 meanwhile, on every device.

    TensorFlow otherwise runs them in TF32 (a 10-bit mantissa instead of 23) on NVIDIA
    GPUs from the Ampere generation on. Turned off, a GPU performs the arithmetic a CPU
    does. TensorFlow's setting is the process's: it is restored on leaving.
    """
    was_enabled = tf.config.experimental.tensor_float_32_execution_enabled()
    tf.config.experimental.enable_tensor_float_32_execution(False)
    try:
        yield
    finally:
        tf.config.experimental.enable_tensor_float_32_execution(was_enabled)


def has_gpu() -> bool:
    """Whether TensorFlow sees a GPU."""
    return bool(tf.config.list_physical_devices("GPU"))


def xla_pays(products: str) -> bool:
    """Whether epochs whose matrix products run in ``products`` compile with XLA.

    Always for float32. For bfloat16, on a GPU only: XLA's CPU backend does not
    hand bfloat16 products to oneDNN, TensorFlow's own CPU kernels, which have
    bfloat16 kernels for CPUs with bfloat16 instructions
    (``benchmarks/probe_bfloat16.py`` measures both ways, phase by phase).
    """
    return products == "float32" or has_gpu()


def data_tensor(X: np.ndarray) -> tf.Tensor:
    """The dataset ``X`` as the float32 tensor a :class:`Trainer` gathers its minibatches from.

    On a CPU, a writeable float32 C-contiguous array that starts on a 64-byte
    boundary (as the datasets of :mod:`dkm.data` do) becomes a tensor without a
    copy (through DLPack): the data are held once, not twice (220 MB saved for
    MNIST). Any other array, or any array where a GPU will read it, is copied,
    as ``tf.constant`` does. The values, and every number computed from them,
    are the same either way. The tensor keeps the array alive; the array must
    not be written to while a fit reads it.
    """
    if (not has_gpu() and X.dtype == np.float32 and X.ndim == 2 and X.flags.c_contiguous
            and X.flags.writeable and X.ctypes.data % 64 == 0):
        return tf.experimental.dlpack.from_dlpack(X.__dlpack__())
    return tf.constant(X, tf.float32)


class BatchSampler:
    """Seeded minibatch indices for ``S`` replicas, one epoch at a time.

    Parameters
    ----------
    n_samples : int
        Size of the dataset.
    batch_size : int
        Minibatch size (the paper: 256); capped at ``n_samples``.
    seeds : sequence of int
        One seed per replica.
    stream : str
        Name of the training phase (``"pretrain"``, ``"finetune"``...). The
        generator of replica ``s`` is seeded by ``(seeds[s], stream)``, so two
        methods trained with the same seed and phase see the same batches.
    kind : {"permutation", "independent", "sequential"}
        ``"permutation"`` (the default) shuffles the data once per epoch and
        cuts it into ``ceil(N / B)`` batches; the last, partial batch is
        completed with distinct points drawn from the rest of the data, so that
        every batch has ``B`` points and every point is seen each epoch.
        ``"independent"`` is the authors' code: each of the ``ceil(N / B)``
        batches is ``B`` distinct indices drawn afresh from the whole dataset.
        ``"sequential"`` is IDEC's Keras code: consecutive slices of the data
        in its stored order, the same batches every epoch (the last one
        completed with the first points); the seeds play no part.
    """

    def __init__(
        self,
        n_samples: int,
        batch_size: int,
        seeds: Sequence[int],
        stream: str,
        kind: SamplerKind = DEFAULT_SAMPLER,
    ) -> None:
        if kind not in SAMPLERS:
            raise ValueError(f"unknown sampler {kind!r}; choose one of {SAMPLERS}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
        self.n_samples = int(n_samples)
        self.batch_size = min(int(batch_size), self.n_samples)
        self.steps_per_epoch = -(-self.n_samples // self.batch_size)
        self.kind = kind
        tag = zlib.crc32(stream.encode())
        self._rngs = [np.random.default_rng([int(seed), tag]) for seed in seeds]

    def next_epoch(self) -> np.ndarray:
        """Indices of shape ``(S, steps_per_epoch, batch_size)``, int32."""
        if self.kind == "sequential":
            order = np.arange(self.steps_per_epoch * self.batch_size) % self.n_samples
            return np.broadcast_to(order.reshape(self.steps_per_epoch, self.batch_size),
                                   (len(self._rngs), self.steps_per_epoch, self.batch_size)
                                   ).astype(np.int32)
        draw = self._permutation_epoch if self.kind == "permutation" else self._independent_epoch
        return np.stack([draw(rng) for rng in self._rngs]).astype(np.int32)

    def state(self) -> list[dict]:
        """The state of each replica's generator (JSON-serialisable), to resume from."""
        return [rng.bit_generator.state for rng in self._rngs]

    def load_state(self, state: Sequence[dict]) -> None:
        """Set the generators to a :meth:`state`: the next epochs are those that followed it."""
        if len(state) != len(self._rngs):
            raise ValueError(f"the state has {len(state)} generators; this sampler has "
                             f"{len(self._rngs)} replicas")
        for rng, rng_state in zip(self._rngs, state):
            rng.bit_generator.state = rng_state

    def _permutation_epoch(self, rng: np.random.Generator) -> np.ndarray:
        n, b = self.n_samples, self.batch_size
        order = rng.permutation(n)
        missing = self.steps_per_epoch * b - n
        if missing:
            tail_start = n - (b - missing)
            filler = rng.choice(order[:tail_start], size=missing, replace=False)
            order = np.concatenate([order, filler])
        return order.reshape(self.steps_per_epoch, b)

    def _independent_epoch(self, rng: np.random.Generator) -> np.ndarray:
        return np.stack(
            [rng.choice(self.n_samples, self.batch_size, replace=False)
             for _ in range(self.steps_per_epoch)]
        )


def _assign(variable: tf.Variable, value: tf.Tensor, active: tf.Tensor | None) -> None:
    """``variable ← value`` on the replicas where ``active`` (all when None)."""
    if active is not None:
        mask = tf.reshape(active, [-1] + [1] * (variable.shape.rank - 1))
        value = tf.where(mask, value, variable)
    variable.assign(value)


class Adam(tf.Module):
    """Adam with the TensorFlow 1 update rule, for stacked replica variables.

    ``lr_t = lr · sqrt(1 − β2^t) / (1 − β1^t)`` and
    ``θ ← θ − lr_t · m / (sqrt(v) + ε)``. Adam acts element-wise, so one
    instance over stacked variables is exactly ``S`` independent optimisers.
    """

    def __init__(
        self,
        learning_rate: float = 1e-3,
        beta_1: float = 0.9,
        beta_2: float = 0.999,
        epsilon: float = 1e-8,
    ) -> None:
        super().__init__(name="adam")
        self.learning_rate = learning_rate
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon
        self.iterations = tf.Variable(0.0, trainable=False, name="t")
        self._slots: dict[int, tuple[tf.Variable, tf.Variable]] = {}

    def slots(self, variable: tf.Variable) -> tuple[tf.Variable, tf.Variable]:
        """The first and second moment estimates of ``variable``."""
        key = id(variable)
        if key not in self._slots:
            self._slots[key] = (
                tf.Variable(tf.zeros_like(variable), trainable=False),
                tf.Variable(tf.zeros_like(variable), trainable=False),
            )
        return self._slots[key]

    def apply(
        self,
        grads: Sequence[tf.Tensor],
        variables: Sequence[tf.Variable],
        active: tf.Tensor | None = None,
        fused: bool = False,
    ) -> None:
        """One update of every variable from its gradient (inside a graph).

        ``active``, a ``(S,)`` boolean tensor, freezes the replicas where it is
        False: their variables and moments keep their exact values. ``fused``
        updates each variable with TensorFlow's own Adam kernel
        (``ResourceApplyAdam``, TensorFlow 1's optimiser, the same rule in one
        pass over the variable) instead of the element-wise operations, which
        run one pass each where XLA does not fuse them; not with ``active``.
        """
        t = self.iterations.assign_add(1.0)
        if fused:
            if active is not None:
                raise ValueError("the fused update cannot freeze replicas: give active=None")
            for grad, var in zip(grads, variables):
                m, v = self.slots(var)
                tf.raw_ops.ResourceApplyAdam(
                    var=var.handle, m=m.handle, v=v.handle, beta1_power=self.beta_1**t,
                    beta2_power=self.beta_2**t, lr=self.learning_rate, beta1=self.beta_1,
                    beta2=self.beta_2, epsilon=self.epsilon, grad=grad)
            return
        scale = self.learning_rate * tf.sqrt(1.0 - self.beta_2**t) / (1.0 - self.beta_1**t)
        for grad, var in zip(grads, variables):
            m, v = self.slots(var)
            _assign(m, self.beta_1 * m + (1.0 - self.beta_1) * grad, active)
            _assign(v, self.beta_2 * v + (1.0 - self.beta_2) * tf.square(grad), active)
            _assign(var, var - scale * m / (tf.sqrt(v) + self.epsilon), active)

    def sharing_step_count(self) -> "Adam":
        """A new Adam with these settings and this step count (the same variable)."""
        twin = type(self)(self.learning_rate, self.beta_1, self.beta_2, self.epsilon)
        twin.iterations = self.iterations
        return twin

    def state_variables(self, variables: Sequence[tf.Variable]) -> list[tf.Variable]:
        """The step count, then the two moments of each of ``variables``, in their order."""
        return [self.iterations, *(slot for var in variables for slot in self.slots(var))]

    def state(self, variables: Sequence[tf.Variable]) -> dict[str, object]:
        """Step count and moments of ``variables`` (to carry over or cache)."""
        return {
            "iterations": float(self.iterations.numpy()),
            "moments": [[s.numpy() for s in self.slots(v)] for v in variables],
        }

    def load_state(self, state: dict[str, object], variables: Sequence[tf.Variable]) -> None:
        """Restore what :meth:`state` returned, for the matching variables."""
        self.iterations.assign(state["iterations"])
        for var, (m_value, v_value) in zip(variables, state["moments"]):
            m, v = self.slots(var)
            m.assign(m_value)
            v.assign(v_value)


class Objective(Protocol):
    """What a method adds to the shared autoencoder training.

    ``variables`` are trained by Adam together with the network.
    ``per_sample_loss`` returns the loss of each sample, ``(S, B)``, and a
    dict of named terms (``(S, B)`` each, named by ``term_names``) recorded
    in the history. ``after_step`` performs non-gradient updates after the
    network step (DCN's centroid moves); most methods do nothing there.
    An objective may also have ``active``, a ``(S,)`` boolean variable: the
    replicas where it is False are frozen, their network, variables and
    Adam moments left exactly as they are (IDEC's stopping rule).

    For the ``"sequential"`` layout of several seeds (:mod:`dkm.replicas`) an objective
    names its per-replica state:
    ``replicated`` lists the attributes (variables or constants) whose
    leading axis is the replica axis, and ``counters`` (optional) the scalar
    step-counting variables that every replica advances alike. An attribute that holds the
    trained :class:`Autoencoder` is recognised as such.
    """

    variables: list[tf.Variable]
    term_names: tuple[str, ...]
    replicated: tuple[str, ...]
    counters: tuple[str, ...]

    def per_sample_loss(
        self, x: tf.Tensor, x_hat: tf.Tensor, h: tf.Tensor, indices: tf.Tensor
    ) -> tuple[tf.Tensor, dict[str, tf.Tensor]]: ...

    def after_step(self, x: tf.Tensor, indices: tf.Tensor) -> None: ...


class Reconstruction:
    """The pretraining objective: the reconstruction error ``g`` alone."""

    variables: list[tf.Variable] = []
    term_names = ("reconstruction",)
    replicated: tuple[str, ...] = ()
    counters: tuple[str, ...] = ()

    def per_sample_loss(self, x, x_hat, h, indices):
        rec = reconstruction_error(x, x_hat)
        return rec, {"reconstruction": rec}

    def after_step(self, x, indices) -> None:
        return None


#: Name of the per-epoch curve every :class:`Trainer` records besides the
#: objective's terms: the mean Euclidean norm of the embeddings ``‖h(x)‖`` of
#: the epoch's minibatches (does a method shrink its representation?).
EMBEDDING_NORM = "embedding_norm"


@dataclass
class EpochResult:
    """Mean loss and mean of each named term over one epoch, per replica.

    ``terms`` holds the objective's named terms and :data:`EMBEDDING_NORM`.
    """

    loss: np.ndarray
    terms: dict[str, np.ndarray]


@dataclass
class StepState:
    """What a training step reads and writes: the network, the objective, Adam."""

    autoencoder: Autoencoder
    objective: Objective
    optimizer: Adam

    @property
    def variables(self) -> list[tf.Variable]:
        """The variables Adam trains: the network's, then the objective's."""
        return list(self.autoencoder.params) + list(self.objective.variables)


class Trainer:
    """Trains an :class:`Autoencoder` with an :class:`Objective`, epoch by epoch.

    Parameters
    ----------
    autoencoder : Autoencoder
        The (stacked) network to train.
    objective : Objective
        The method's loss and extra variables.
    data : tf.Tensor
        The whole dataset, ``(N, d)`` float32, already on the device.
    optimizer : Adam
        Shared with an earlier phase to carry its moments over.
    jit_compile : bool
        Compile the epoch with XLA (default). Without it, Adam runs TensorFlow's
        own fused kernel (:meth:`Adam.apply`).

    Notes
    -----
    Each epoch runs within :func:`float32_products`: on a GPU, too, the products are
    float32, not TensorFlow's default TF32.
    """

    def __init__(
        self,
        autoencoder: Autoencoder,
        objective: Objective,
        data: tf.Tensor,
        optimizer: Adam,
        jit_compile: bool = True,
    ) -> None:
        self.autoencoder = autoencoder
        self.objective = objective
        self.data = data
        self.optimizer = optimizer
        self.jit_compile = jit_compile
        self._state = StepState(autoencoder, objective, optimizer)
        self.variables = self._state.variables
        for var in self.variables:  # create Adam's slots outside the graph
            optimizer.slots(var)
        self.term_names = (*objective.term_names, EMBEDDING_NORM)
        # The epoch is written with TensorFlow's own control flow (tf.while_loop):
        # AutoGraph's rewriting of the Python source would add nothing but time.
        self._epoch = tf.function(self._epoch_graph, jit_compile=jit_compile, autograph=False)
        self._epoch_runners: dict[tuple[int, ...], Callable[[tf.Tensor], tuple]] = {}

    def _state_variables(self) -> list[tf.Variable]:
        """Every variable a later epoch reads: the network's, Adam's and the objective's."""
        objective = self.objective
        found = [*self.autoencoder.params, *self.optimizer.state_variables(self.variables),
                 *(value for value in vars(objective).values() if isinstance(value, tf.Variable)),
                 *objective.variables]
        unique = {id(var): var for var in found}
        return list(unique.values())

    def state(self) -> list[np.ndarray]:
        """The values of every variable that the next epochs read, to resume from.

        The network, Adam's moments and step count, and the objective's
        variables (its trained ones and its state, e.g. IDEC's target and
        stopping flags): with the minibatch order (:meth:`BatchSampler.state`),
        all that decides the epochs that follow.
        """
        return [var.numpy() for var in self._state_variables()]

    def load_state(self, state: Sequence[np.ndarray]) -> None:
        """Set every variable to a :meth:`state` of a trainer of the same model."""
        variables = self._state_variables()
        if len(state) != len(variables) or any(
                np.shape(value) != tuple(var.shape) for value, var in zip(state, variables)):
            raise ValueError("the saved state does not fit this trainer: it comes from another "
                             "model, objective or number of replicas")
        for var, value in zip(variables, state):
            var.assign(value)

    def _step(self, state: StepState, indices: tf.Tensor) -> tuple[tf.Tensor, list[tf.Tensor]]:
        x = tf.gather(self.data, indices)
        variables = state.variables
        with tf.GradientTape() as tape:
            h = state.autoencoder.encode(x)
            x_hat = state.autoencoder.decode(h)
            per_sample, terms = state.objective.per_sample_loss(x, x_hat, h, indices)
            replica_loss = tf.reduce_mean(per_sample, axis=1)
            total = tf.reduce_sum(replica_loss)
        grads = tape.gradient(total, variables)
        active = getattr(state.objective, "active", None)
        state.optimizer.apply(grads, variables, active,
                              fused=not self.jit_compile and active is None)
        state.objective.after_step(x, indices)
        terms = {**terms, EMBEDDING_NORM: tf.norm(h, axis=-1)}
        return replica_loss, [tf.reduce_mean(terms[n], axis=1) for n in self.term_names]

    def _steps(self, state: StepState, batches: tf.Tensor) -> tuple[tf.Tensor, list[tf.Tensor]]:
        """All the steps of ``batches`` ``(S, steps, B)``: mean loss and terms per replica."""
        n_steps = tf.shape(batches)[1]
        zeros = tf.zeros([tf.shape(batches)[0]])

        def body(k, loss_sum, term_sums):
            loss, terms = self._step(state, batches[:, k])
            return k + 1, loss_sum + loss, [a + t for a, t in zip(term_sums, terms)]

        _, loss_sum, term_sums = tf.while_loop(
            lambda k, *_: k < n_steps,
            body,
            (tf.constant(0), zeros, [zeros for _ in self.term_names]),
        )
        steps = tf.cast(n_steps, tf.float32)
        return loss_sum / steps, [t / steps for t in term_sums]

    def _epoch_graph(self, batches: tf.Tensor) -> tuple[tf.Tensor, list[tf.Tensor]]:
        """The traced epoch: every step of ``batches``."""
        return self._steps(self._state, batches)

    def run_epoch(self, batches: np.ndarray) -> EpochResult:
        """Train one epoch on ``batches`` of shape ``(S, steps, B)``."""
        batches = tf.constant(batches, tf.int32)
        shape = tuple(batches.shape)
        if shape not in self._epoch_runners:
            traced = self._epoch.get_concrete_function(batches)
            self._epoch_runners[shape] = traced if _epoch_runner is None else _epoch_runner(traced)
        with float32_products():
            loss, terms = self._epoch_runners[shape](batches)
        return EpochResult(
            loss=loss.numpy(),
            terms={n: t.numpy() for n, t in zip(self.term_names, terms)},
        )


EpochCallback = Callable[[int], "dict[str, np.ndarray] | None"]


def run_epochs(
    trainer: Trainer,
    sampler: BatchSampler,
    n_epochs: int,
    *,
    before_epoch: EpochCallback | None = None,
    stop_when: Callable[[], bool] | None = None,
    description: str = "training",
    progress: bool = True,
    checkpoints: RunCheckpoints | None = None,
) -> dict[str, np.ndarray]:
    """Run ``n_epochs`` of ``trainer`` and return the per-epoch history.

    ``before_epoch(e)`` runs in Python once per epoch (e.g. to set α); the
    ``(S,)`` values it returns by name (or None) join the history as curves.
    ``stop_when()`` is asked after each epoch; training ends early when it
    returns True (IDEC's stopping rule), so the history may be shorter.

    With ``checkpoints``, the phase (named by ``description``) starts from
    its checkpoint where one exists, and saves one every
    ``checkpoints.every_s`` seconds and at its end (:mod:`dkm.checkpoints`):
    a resumed phase ends as it would have without the interruption.
    """
    curves: dict[str, list[np.ndarray]] = {"loss": [], **{n: [] for n in trainer.term_names}}
    start, finished, seconds_before = 0, False, 0.0
    checkpoint = checkpoints.phase(description) if checkpoints is not None else None
    saved = checkpoint.load() if checkpoint is not None else None
    if saved is not None:
        try:
            trainer.load_state(saved.variables)
            sampler.load_state(saved.sampler)
        except ValueError as error:
            raise ValueError(f"{checkpoint.path}: {error}; delete it to train the phase "
                             "from its start") from error
        curves.update({name: list(values.T) for name, values in saved.history.items()})
        start, finished, seconds_before = saved.epochs_done, saved.finished, saved.seconds
        checkpoints.note_resume(description, saved)
    started = time.perf_counter()
    epochs = range(start, start if finished else n_epochs)
    for epoch in tqdm(epochs, desc=description, initial=start, total=n_epochs,
                      disable=not progress, leave=False):
        recorded = before_epoch(epoch) if before_epoch is not None else None
        result = trainer.run_epoch(sampler.next_epoch())
        curves["loss"].append(result.loss)
        for name, values in {**result.terms, **(recorded or {})}.items():
            curves.setdefault(name, []).append(values)
        finished = epoch + 1 == n_epochs or (stop_when is not None and stop_when())
        if checkpoint is not None and (finished or checkpoint.due()):
            seconds = seconds_before + time.perf_counter() - started
            checkpoint.save(PhaseState(epoch + 1, finished, trainer.state(), sampler.state(),
                                       _history(curves), seconds))
        if finished:
            break
    return _history(curves)


def _history(curves: dict[str, list[np.ndarray]]) -> dict[str, np.ndarray]:
    """Per-epoch values as ``(S, epochs)`` curves; ``loss`` is ``(0,)`` before any epoch."""
    losses = curves["loss"]
    history = {"loss": np.stack(losses, axis=1) if losses else np.zeros((0,))}
    history.update({name: np.stack(values, axis=1) for name, values in curves.items()
                    if name != "loss" and values})
    return history


def embed(autoencoder: Autoencoder, data: tf.Tensor, chunk_size: int = 1024,
          fixed_shape: bool = False) -> np.ndarray:
    """Embeddings of every point for every replica, ``(S, N, p)``, encoded in chunks of
    ``chunk_size`` points (a chunk's widest layer, 2000 wide: 8 MB per replica).

    The rounding of a point's products depends on their shape, so a chunk of another
    size may round it otherwise. With ``fixed_shape`` the last chunk is padded with zeros
    to ``chunk_size`` rows (dropped after), so that a point's embedding does not depend on
    the points embedded with it; the full chunks are those of ``fixed_shape=False``.
    """
    n, chunks = int(data.shape[0]), []
    for start in range(0, n, chunk_size):
        chunk, short = data[start:start + chunk_size], max(0, start + chunk_size - n)
        if fixed_shape and short:
            chunk = tf.concat([chunk, tf.zeros((short, chunk.shape[1]), chunk.dtype)], axis=0)
        with float32_products():
            chunks.append(autoencoder.encode_all(chunk).numpy()[:, :chunk_size - short])
    return np.concatenate(chunks, axis=1)
