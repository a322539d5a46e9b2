"""The package's training step re-written in JAX, to time its arithmetic on a GPU.

The GPU machines lent to this project carry PyTorch and JAX but no TensorFlow, and cannot
fetch it (``benchmarks/logs/gpu-standin.md``). This script is therefore *not* the package: it is a
stand-in that performs the same computation as ``dkm.training.Trainer`` in its stacked layout,
so that the speed of that computation on a GPU can be measured rather than projected:

* the ``d-500-500-2000-p`` autoencoder of ``dkm.autoencoder`` (ReLU hidden layers, linear
  embedding and output), its weights stacked over ``S`` replicas and evaluated with batched
  matrix products;
* pretraining's loss, the summed squared reconstruction error, and Deep k-Means' loss
  ``g + λ Σ_k f(h, r_k) G_k(h, α)`` with the min-shifted softmax of ``dkm.losses``;
* Adam with TensorFlow 1's update rule (``dkm.training.Adam``), the replicas' losses averaged
  over the batch and summed over replicas before the gradient;
* a whole epoch compiled as one computation (``lax.scan`` over its minibatches, gathered on
  the device from the whole dataset).

``--check REFERENCE`` first compares it with the package: ``benchmarks/standin_reference.py``
(run where TensorFlow is) writes, for a small network, the package's loss and gradients at
given weights and its weights after one compiled epoch of ``Trainer``; this script recomputes
them and prints the relative errors ``‖ours − package‖ / ‖package‖`` in each matmul
precision; in float32 an error above ``FLOAT32_TOLERANCE`` stops the script.

Then it prints one JSON object per line:

* ``{"kind": "device", ...}``: the device and JAX version;
* ``{"kind": "check", ...}``: the comparison with the package;
* ``{"kind": "matmul", ...}``: matrix-product throughput in each precision, for scale;
* ``{"kind": "phase", ...}``: seconds per epoch window and samples/s (a sample of every replica
  counts) of pretraining and of DKM at α = 1000, for each dataset shape, ``S`` and precision;
* ``{"kind": "replica_ratio", ...}``: samples/s at the largest ``S`` over ``S = 1``;
* ``{"kind": "run", ...}``: with ``--full-run``, the wall time of the whole training
  arithmetic of DKM^p (50 pretraining epochs, then 100 at α = 1000) for each ``S``, the
  ``S`` replicas at once, minibatches drawn on the host each epoch as the package does. The k-means
  initialisation and the evaluation, which the package runs on the CPU, are not included;
* ``{"kind": "quality_run", ...}``: with ``--quality DATA.npz``, DKM^p trained on real data
  (``standin_quality.py pack``) for the largest ``S`` in each precision, k-means++ on the
  pretrained embedding included; its clusters are saved to ``--out`` as
  ``<data>-<precision>.npy`` for ``standin_quality.py score``;
* ``{"kind": "alpha_run", ...}``: with ``--alpha A ... --alpha-data DATA.npz``, DKM^p at each
  constant α from one pretrained start (float32), with per-epoch curves of the embedding's mean
  norm and of the softmax's mean largest weight; clusters to ``<data>-alpha-<α>.npy``.
* ``{"kind": "tradeoff_run", ...}``: with ``--tradeoff L ... --tradeoff-data DATA.npz ...``,
  DKM^p at each λ (α = 1000) from one pretrained start per dataset, with the same curves;
  clusters to ``<data>-tradeoff-<λ>.npy``.

    python benchmarks/gpu_standin.py [--check standin-reference.npz] [--shape usps mnist 20news]
        [--replicas 1 10] [--steps 100] [--precision float32 tensorfloat32 bfloat16]
        [--full-run mnist usps] [--quality .device/quality-mnist.npz --out DIR]
        [--alpha 1 10 100 1000 --alpha-data .device/quality-20news.npz --out DIR]
        [--tradeoff 0.0001 0.01 1 100 --tradeoff-data .device/quality-usps.npz --out DIR]

Needs JAX and NumPy only.
"""
from __future__ import annotations

import argparse
import json
import platform
import time
from functools import partial
from pathlib import Path
from typing import Callable, Iterator

import jax
import jax.numpy as jnp
import numpy as np

BATCH = 256
HIDDEN_SIZES = (500, 500, 2000)
#: (input dimension, number of clusters = embedding size, number of samples), as in the paper.
SHAPES = {"usps": (256, 10, 9298), "mnist": (784, 10, 70000), "20news": (2000, 20, 18846)}
PRECISIONS = ("float32", "tensorfloat32", "bfloat16")
PRETRAIN_EPOCHS, DKM_EPOCHS, DKM_ALPHA = 50, 100, 1000.0
#: Largest relative error against the package accepted in float32 (rounding gives ~1e-7).
FLOAT32_TOLERANCE = 1e-4
LEARNING_RATE, BETA_1, BETA_2, EPSILON = 1e-3, 0.9, 0.999, 1e-8


def layer_shapes(input_dim: int, embedding_dim: int,
                 hidden_sizes: tuple[int, ...] = HIDDEN_SIZES) -> list[tuple[int, int]]:
    """``(fan_in, fan_out)`` of every dense layer, encoder then its mirror decoder."""
    encoder = (input_dim, *hidden_sizes, embedding_dim)
    decoder = encoder[::-1]
    return list(zip(encoder[:-1], encoder[1:])) + list(zip(decoder[:-1], decoder[1:]))


def glorot_weights(rng: np.random.Generator, replicas: int,
                   shapes: list[tuple[int, int]]) -> list[np.ndarray]:
    """``[W_1, b_1, ...]`` stacked over replicas: Glorot-uniform kernels, zero biases."""
    arrays = []
    for fan_in, fan_out in shapes:
        limit = np.sqrt(6.0 / (fan_in + fan_out))
        arrays.append(rng.uniform(-limit, limit, (replicas, fan_in, fan_out)).astype(np.float32))
        arrays.append(np.zeros((replicas, 1, fan_out), np.float32))
    return arrays


def _dense_stack(h: jax.Array, params: list[jax.Array]) -> jax.Array:
    n_layers = len(params) // 2
    for layer in range(n_layers):
        h = jnp.matmul(h, params[2 * layer]) + params[2 * layer + 1]
        if layer < n_layers - 1:
            h = jax.nn.relu(h)
    return h


def per_replica_loss(trainable: dict, x: jax.Array, lam: jax.Array,
                     alpha: float | jax.Array) -> jax.Array:
    """Mean loss over the batch of each replica, ``(S,)``; ``x`` is ``(S, B, d)``; ``alpha`` is
    one number, or one per replica ``(S,)``."""
    params = trainable["params"]
    half = len(params) // 2
    h = _dense_stack(x, params[:half])
    x_hat = _dense_stack(h, params[half:])
    loss = jnp.sum(jnp.square(x - x_hat), axis=-1)
    if "representatives" in trainable:
        diff = h[:, :, None, :] - trainable["representatives"][:, None, :, :]
        distances = jnp.sum(jnp.square(diff), axis=-1)
        shifted = distances - jnp.min(distances, axis=-1, keepdims=True)
        weights = jnp.exp(-(alpha if isinstance(alpha, float)
                            else jnp.reshape(alpha, (-1, 1, 1))) * shifted)
        weights = weights / jnp.sum(weights, axis=-1, keepdims=True)
        loss = loss + lam[:, None] * jnp.sum(distances * weights, axis=-1)
    return jnp.mean(loss, axis=1)


def loss_and_gradients(trainable: dict, x: jax.Array, lam: jax.Array, alpha: float):
    """The summed replica losses' gradient, with the per-replica losses."""
    def total(t):
        losses = per_replica_loss(t, x, lam, alpha)
        return jnp.sum(losses), losses
    (_, losses), grads = jax.value_and_grad(total, has_aux=True)(trainable)
    return losses, grads


def adam_state(trainable: dict) -> dict:
    """A fresh Adam over ``trainable``: zero moments, step count 0."""
    zeros = partial(jax.tree_util.tree_map, jnp.zeros_like, trainable)  # m and v: two buffers
    return {"trainable": trainable, "m": zeros(), "v": zeros(), "t": jnp.zeros((), jnp.float32)}


def with_representatives(state: dict, representatives: jax.Array) -> dict:
    """Fine-tuning's state: the network and Adam's moments carried over, new representatives."""
    return {"trainable": dict(state["trainable"], representatives=representatives),
            "m": dict(state["m"], representatives=jnp.zeros_like(representatives)),
            "v": dict(state["v"], representatives=jnp.zeros_like(representatives)),
            "t": state["t"]}


def _step(state: dict, indices: jax.Array, data: jax.Array, lam: jax.Array, alpha: float):
    losses, grads = loss_and_gradients(state["trainable"], data[indices], lam, alpha)
    t = state["t"] + 1.0
    scale = LEARNING_RATE * jnp.sqrt(1.0 - BETA_2 ** t) / (1.0 - BETA_1 ** t)
    m = jax.tree_util.tree_map(lambda m, g: BETA_1 * m + (1.0 - BETA_1) * g, state["m"], grads)
    v = jax.tree_util.tree_map(lambda v, g: BETA_2 * v + (1.0 - BETA_2) * g * g, state["v"], grads)
    trainable = jax.tree_util.tree_map(
        lambda p, m, v: p - scale * m / (jnp.sqrt(v) + EPSILON), state["trainable"], m, v)
    return {"trainable": trainable, "m": m, "v": v, "t": t}, losses


def epoch_function(alpha: float | None, precision: str) -> Callable:
    """A compiled epoch: ``(state, data, batches (S, steps, B), lam) -> (state, mean losses)``.

    With ``alpha`` None, α is a fifth argument instead, one value per replica ``(S,)``, which
    may change from call to call without a new compilation.
    """
    def epoch(state, data, batches, lam, alphas=None):
        with jax.default_matmul_precision(precision):
            state, losses = jax.lax.scan(
                partial(_step, data=data, lam=lam, alpha=alphas if alpha is None else alpha),
                state,
                jnp.swapaxes(batches, 0, 1))
        return state, jnp.mean(losses, axis=0)
    return jax.jit(epoch, donate_argnums=0)


def relative_error(ours, reference) -> float:
    ours = np.concatenate([np.ravel(np.asarray(a, np.float64)) for a in ours])
    reference = np.concatenate([np.ravel(np.asarray(a, np.float64)) for a in reference])
    return float(np.linalg.norm(ours - reference) / np.linalg.norm(reference))


def check_against_package(path: str, precision: str) -> list[dict]:
    """Relative errors against the package's values in ``path`` (``standin_reference.py``)."""
    ref = np.load(path)
    data = jnp.asarray(ref["data"])
    lam = jnp.asarray(ref["lam"])
    n_arrays = int(ref["n_arrays"])
    params = [jnp.asarray(ref[f"param_{i}"]) for i in range(n_arrays)]
    rows = []
    phases = [("pretraining", 0.0)] + [(f"dkm_alpha_{a:g}", float(a)) for a in ref["alphas"]]
    for phase, alpha in phases:
        trainable = {"params": params}
        if phase != "pretraining":
            trainable["representatives"] = jnp.asarray(ref["representatives"])
        with jax.default_matmul_precision(precision):
            losses, grads = jax.jit(loss_and_gradients, static_argnums=3)(
                trainable, data[ref["batch"]], lam, alpha)
        state, epoch_losses = epoch_function(alpha, precision)(
            adam_state(jax.tree_util.tree_map(jnp.copy, trainable)),  # the epoch donates it
            data, jnp.asarray(ref["epoch_batches"]), lam)
        # Leaves in key order: the network's arrays, then the representatives.
        grads = jax.tree_util.tree_leaves(grads)
        after = jax.tree_util.tree_leaves(state["trainable"])
        rows.append({
            "kind": "check", "phase": phase, "precision": precision,
            "loss": relative_error([losses], [ref[f"{phase}/loss"]]),
            "gradients": relative_error(
                grads, [ref[f"{phase}/grad_{i}"] for i in range(len(grads))]),
            "epoch_loss": relative_error([epoch_losses], [ref[f"{phase}/epoch_loss"]]),
            "weights_after_epoch": relative_error(
                after, [ref[f"{phase}/after_{i}"] for i in range(len(after))]),
        })
    return rows


def matmul_tflops(precision: str, size: int = 8192, repeats: int = 10) -> float:
    key_a, key_b = jax.random.split(jax.random.PRNGKey(0))
    a = jax.random.normal(key_a, (size, size), jnp.float32)
    b = jax.random.normal(key_b, (size, size), jnp.float32)

    @jax.jit
    def product(a, b):
        with jax.default_matmul_precision(precision):
            return a @ b
    product(a, b).block_until_ready()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        product(a, b).block_until_ready()
        times.append(time.perf_counter() - start)
    return 2 * size ** 3 / float(np.median(times)) / 1e12


def training_setup(shape: str, replicas: int, phase: str, seed: int = 0):
    """Random data of the shape's size on the device, initial state, λ and α of ``phase``."""
    input_dim, n_clusters, n_samples = SHAPES[shape]
    rng = np.random.default_rng(seed)
    data = jax.device_put(rng.random((n_samples, input_dim), dtype=np.float32))
    trainable = {"params": [jnp.asarray(a) for a in glorot_weights(
        rng, replicas, layer_shapes(input_dim, n_clusters))]}
    alpha = 0.0
    if phase == "dkm":
        trainable["representatives"] = jnp.asarray(
            rng.uniform(-1, 1, (replicas, n_clusters, n_clusters)).astype(np.float32))
        alpha = DKM_ALPHA
    return data, adam_state(trainable), jnp.ones((replicas,), jnp.float32), alpha


def permutation_batches(rng: np.random.Generator, replicas: int, n_samples: int) -> np.ndarray:
    """``ceil(N / B)`` batches of one shuffled epoch per replica (the package's sampler,
    the last batch completed with other points)."""
    steps = -(-n_samples // BATCH)
    orders = []
    for _ in range(replicas):
        order = rng.permutation(n_samples)
        missing = steps * BATCH - n_samples
        filler = rng.choice(order[: n_samples - (BATCH - missing)], missing, replace=False)
        orders.append(np.concatenate([order, filler]).reshape(steps, BATCH))
    return np.stack(orders).astype(np.int32)


def time_phase(shape: str, phase: str, replicas: int, steps: int, precision: str,
               repeats: int) -> dict:
    n_params = sum(i * o + o for i, o in layer_shapes(*SHAPES[shape][:2]))
    data, state, lam, alpha = training_setup(shape, replicas, phase)
    epoch = epoch_function(alpha, precision)
    rng = np.random.default_rng(1)
    windows = [jnp.asarray(permutation_batches(rng, replicas, SHAPES[shape][2])[:, :steps])
               for _ in range(2)]
    start = time.perf_counter()
    state, losses = epoch(state, data, windows[0], lam)
    losses.block_until_ready()
    compile_s = time.perf_counter() - start
    times = []
    for k in range(repeats):
        start = time.perf_counter()
        state, losses = epoch(state, data, windows[k % 2], lam)
        losses.block_until_ready()
        times.append(time.perf_counter() - start)
    if not np.all(np.isfinite(np.asarray(losses))):
        raise FloatingPointError(f"{shape} {phase} S={replicas} {precision}: loss not finite")
    seconds = float(np.median(times))
    samples_per_s = replicas * steps * BATCH / seconds
    return {"kind": "phase", "shape": shape, "phase": phase, "replicas": replicas,
            "precision": precision, "steps": steps, "repeats": repeats,
            "window_s_median": seconds, "window_s_min": float(np.min(times)),
            "first_call_s": compile_s, "samples_per_s": samples_per_s,
            "ms_per_step": 1e3 * seconds / steps,
            "nominal_tflops": 6 * n_params * samples_per_s / 1e12}


def _timed_epochs(epoch: Callable, state: dict, data: jax.Array, lam: jax.Array,
                  n_epochs: int, rng: np.random.Generator) -> tuple[dict, float, float]:
    """Train ``n_epochs``; the first epoch's seconds (compilation included) and the total."""
    replicas, n_samples = lam.shape[0], data.shape[0]
    start = time.perf_counter()
    for k in range(n_epochs):
        state, losses = epoch(state, data, permutation_batches(rng, replicas, n_samples), lam)
        if k == 0:
            losses.block_until_ready()
            first_s = time.perf_counter() - start
    losses.block_until_ready()
    if not np.all(np.isfinite(np.asarray(losses))):
        raise FloatingPointError(f"loss not finite after {n_epochs} epochs")
    return state, first_s, time.perf_counter() - start


def full_run(shape: str, replicas: int, precision: str) -> dict:
    """Wall time of DKM^p's whole training arithmetic for ``replicas`` seeds at once."""
    rng = np.random.default_rng(2)
    data, state, lam, _ = training_setup(shape, replicas, "pretraining")
    state, pretrain_first_s, pretrain_s = _timed_epochs(
        epoch_function(0.0, precision), state, data, lam, PRETRAIN_EPOCHS, rng)
    n_clusters = SHAPES[shape][1]
    representatives = rng.uniform(-1, 1, (replicas, n_clusters, n_clusters)).astype(np.float32)
    state = with_representatives(state, jnp.asarray(representatives))
    _, dkm_first_s, dkm_s = _timed_epochs(
        epoch_function(DKM_ALPHA, precision), state, data, lam, DKM_EPOCHS, rng)
    return {"kind": "run", "shape": shape, "replicas": replicas, "precision": precision,
            "pretrain_epochs": PRETRAIN_EPOCHS, "dkm_epochs": DKM_EPOCHS,
            "pretraining_s": pretrain_s, "pretraining_first_epoch_s": pretrain_first_s,
            "dkm_s": dkm_s, "dkm_first_epoch_s": dkm_first_s, "total_s": pretrain_s + dkm_s}


def kmeans(points: np.ndarray, n_clusters: int, rng: np.random.Generator, n_init: int = 10,
           max_iter: int = 300, tol: float = 1e-4) -> np.ndarray:
    """Centres of the best of ``n_init`` k-means++ restarts of Lloyd's algorithm (NumPy).

    The package calls scikit-learn's ``KMeans`` with the same settings; its own
    random stream makes its centres differ from these.
    """
    points = points.astype(np.float64)
    squared = np.sum(points ** 2, axis=1)
    tolerance = tol * np.mean(np.var(points, axis=0))

    def distances_to(centres):
        return np.maximum(squared[:, None] - 2 * points @ centres.T + np.sum(centres ** 2, 1), 0)

    best, best_inertia = None, np.inf
    for _ in range(n_init):
        centres = points[[rng.integers(len(points))]]
        nearest = distances_to(centres)[:, 0]
        for _ in range(1, n_clusters):
            chosen = rng.choice(len(points), p=nearest / nearest.sum())
            centres = np.vstack([centres, points[chosen]])
            nearest = np.minimum(nearest, distances_to(centres[-1:])[:, 0])
        for _ in range(max_iter):
            members = np.eye(n_clusters)[np.argmin(distances_to(centres), axis=1)]
            counts = members.sum(axis=0)[:, None]
            moved = np.where(counts > 0, members.T @ points / np.maximum(counts, 1), centres)
            shift = np.sum((moved - centres) ** 2)
            centres = moved
            if shift <= tolerance:
                break
        inertia = np.sum(np.min(distances_to(centres), axis=1))
        if inertia < best_inertia:
            best, best_inertia = centres, inertia
    return best.astype(np.float32)


def load_real_data(path: str) -> tuple[jax.Array, int, float]:
    """The data of ``standin_quality.py pack`` on the device, its number of clusters and λ.

    ``X`` is dense (``uint8`` pixels are divided by 255 here) or, for sparse data, stored
    as CSR arrays ``X_data``, ``X_indices``, ``X_indptr`` and ``X_shape``.
    """
    stored = np.load(path)
    if "X" in stored:
        features = stored["X"]
        features = features.astype(np.float32) / 255 if features.dtype == np.uint8 else features
    else:
        features = np.zeros(tuple(stored["X_shape"]), np.float32)
        rows = np.repeat(np.arange(features.shape[0]), np.diff(stored["X_indptr"]))
        features[rows, stored["X_indices"]] = stored["X_data"]
    return jnp.asarray(features), int(stored["n_clusters"]), float(stored["lam"])


def _embedder(data: jax.Array, replicas: int, precision: str) -> Callable[[dict], np.ndarray]:
    """``trainable -> (replicas, N, p)``: every point's embedding by each replica."""
    encode = jax.jit(_dense_stack)

    def embed(trainable):
        params = trainable["params"]
        with jax.default_matmul_precision(precision):
            return np.asarray(encode(jnp.broadcast_to(data, (replicas, *data.shape)),
                                     params[:len(params) // 2]))
    return embed


def pretrained_start(data: jax.Array, n_clusters: int, lam: jax.Array, precision: str,
                     rng: np.random.Generator) -> tuple[dict, np.ndarray, float, float]:
    """DKM^p's starting point: 50 pretraining epochs, then k-means++ on each embedding.

    Returns the pretrained state, the centres ``(S, K, K)``, and the seconds of the
    pretraining and of the k-means.
    """
    replicas = lam.shape[0]
    state = adam_state({"params": [jnp.asarray(a) for a in glorot_weights(
        rng, replicas, layer_shapes(data.shape[1], n_clusters))]})
    state, _, pretrain_s = _timed_epochs(epoch_function(0.0, precision), state, data, lam,
                                         PRETRAIN_EPOCHS, rng)
    start = time.perf_counter()
    centres = np.stack([kmeans(h, n_clusters, rng)
                        for h in _embedder(data, replicas, precision)(state["trainable"])])
    return state, centres, pretrain_s, time.perf_counter() - start


def nearest_representative(embedding: np.ndarray, representatives: np.ndarray) -> np.ndarray:
    """Each point's cluster ``(S, N)``: its nearest representative, by replica."""
    distances = np.sum((embedding[:, :, None, :] - representatives[:, None]) ** 2, axis=-1)
    return np.argmin(distances, axis=-1).astype(np.int16)


def quality_run(path: str, replicas: int, precision: str) -> tuple[dict, np.ndarray]:
    """DKM^p on the real data of ``path`` for ``replicas`` seeds: its clusters, and its times.

    The seeds are 0, ..., replicas − 1 of this script (not the package's):
    :func:`pretrained_start`, then 100 epochs at α = 1000, as the package's DKM^p.
    Returns the run's row and the clusters (:func:`nearest_representative`).
    """
    data, n_clusters, lam_value = load_real_data(path)
    lam = jnp.full((replicas,), lam_value, jnp.float32)
    rng = np.random.default_rng(3)
    start = time.perf_counter()
    state, centres, pretrain_s, kmeans_s = pretrained_start(data, n_clusters, lam, precision,
                                                            rng)
    state = with_representatives(state, jnp.asarray(centres))
    state, _, dkm_s = _timed_epochs(epoch_function(DKM_ALPHA, precision), state, data, lam,
                                    DKM_EPOCHS, rng)
    clusters = nearest_representative(_embedder(data, replicas, precision)(state["trainable"]),
                                      np.asarray(state["trainable"]["representatives"]))
    return ({"kind": "quality_run", "data": path, "n_samples": int(data.shape[0]),
             "replicas": replicas, "precision": precision, "pretraining_s": pretrain_s,
             "kmeans_s": kmeans_s, "dkm_s": dkm_s, "total_s": time.perf_counter() - start},
            clusters)


def constant_runs(path: str, replicas: int, settings: list[tuple[float, float]],
                  rescaled: bool = False) -> Iterator[tuple[dict, np.ndarray]]:
    """DKM^p at each constant ``(α, λ)`` from one pretrained start, with per-epoch curves (float32).

    Every setting starts from the same pretrained network and k-means++ centres and sees the
    same minibatches, so that the runs of a replica differ by the setting alone. After each of
    the 100 epochs, the curves read every point's embedding: its mean norm ``‖h(x)‖`` and the
    mean largest weight ``max_k G_k(h, α)`` of the paper's softmax at the run's α and current
    representatives (1: hard; 1/K: uniform).

    With ``rescaled``, each replica's α is multiplied before each epoch by ``(n₀ / n)²``,
    ``n₀`` the mean norm of its pretrained embedding and ``n`` the one after the previous
    epoch: the squared distances shrink with the embedding, and the rescaled α keeps their
    product, hence the assignment's hardness, as it was when the training started.
    Yields, per setting as it ends, its row (α, λ, curves ``(S, 100)`` with the α used in
    each epoch) and its clusters.
    """
    data, n_clusters, paper_lam = load_real_data(path)
    state, centres, pretrain_s, kmeans_s = pretrained_start(
        data, n_clusters, jnp.full((replicas,), paper_lam, jnp.float32), "float32",
        np.random.default_rng(3))
    embed = _embedder(data, replicas, "float32")
    start_norm = np.linalg.norm(embed(state["trainable"]), axis=-1).mean(axis=1)
    for alpha, lam_value in settings:
        start = time.perf_counter()
        lam = jnp.full((replicas,), lam_value, jnp.float32)
        run = with_representatives(jax.tree_util.tree_map(jnp.copy, state), jnp.asarray(centres))
        epoch, rng = epoch_function(None, "float32"), np.random.default_rng(4)
        def alpha_at(norm):
            """Each replica's α for the embedding's current mean norm."""
            return alpha * (start_norm / norm) ** 2 if rescaled else np.full(replicas, alpha)

        norm = start_norm
        norms, largest, used = [], [], []
        for _ in range(DKM_EPOCHS):
            epoch_alpha = alpha_at(norm)
            run, _ = epoch(run, data, permutation_batches(rng, replicas, data.shape[0]), lam,
                           jnp.asarray(epoch_alpha, jnp.float32))
            embedding = embed(run["trainable"])
            norm = np.linalg.norm(embedding, axis=-1).mean(axis=1)
            now = alpha_at(norm)
            representatives = np.asarray(run["trainable"]["representatives"])
            distances = np.maximum(
                np.sum(embedding ** 2, -1)[..., None] + np.sum(representatives ** 2, -1)[:, None]
                - 2 * np.einsum("snp,skp->snk", embedding, representatives), 0)
            weights = np.exp(-now[:, None, None]
                             * (distances - distances.min(axis=-1, keepdims=True)))
            norms.append(norm)
            largest.append((weights.max(axis=-1) / weights.sum(axis=-1)).mean(axis=1))
            used.append(epoch_alpha)
        yield (
            {"data": path, "alpha": alpha, "tradeoff": lam_value, "rescaled": rescaled,
             "replicas": replicas, "precision": "float32", "pretraining_s": pretrain_s,
             "kmeans_s": kmeans_s, "dkm_s": time.perf_counter() - start,
             "embedding_norm": np.stack(norms, axis=1).tolist(),
             "largest_weight": np.stack(largest, axis=1).tolist(),
             "alpha_used": np.stack(used, axis=1).tolist()},
            nearest_representative(embedding, representatives))


def alpha_runs(path: str, replicas: int, alphas: list[float],
               rescaled: bool = False) -> Iterator[tuple[dict, np.ndarray]]:
    """:func:`constant_runs` at each α and the data's λ (the paper's for DKM^p): rows
    ``alpha_run``."""
    paper_lam = float(np.load(path)["lam"])
    for row, clusters in constant_runs(path, replicas, [(a, paper_lam) for a in alphas],
                                       rescaled):
        del row["tradeoff"]
        yield {"kind": "alpha_run", **row}, clusters


def tradeoff_runs(path: str, replicas: int,
                  tradeoffs: list[float]) -> Iterator[tuple[dict, np.ndarray]]:
    """:func:`constant_runs` at each λ and DKM^p's α = 1000: rows ``tradeoff_run``.

    The pretraining does not depend on λ, so the runs share their start as the package's
    line search shares its cached pretraining.
    """
    for row, clusters in constant_runs(path, replicas, [(DKM_ALPHA, t) for t in tradeoffs]):
        del row["rescaled"]
        yield {"kind": "tradeoff_run", **row}, clusters


def emit(row: dict) -> None:
    print(json.dumps(row), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", help="reference file of standin_reference.py")
    parser.add_argument("--shape", nargs="*", default=["usps", "mnist"], choices=list(SHAPES),
                        help="dataset shapes whose phases are timed on random data (none: skip)")
    parser.add_argument("--replicas", nargs="+", type=int, default=[1, 10])
    parser.add_argument("--steps", type=int, default=100, help="minibatches per timed window")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--precision", nargs="+", default=["float32"], choices=PRECISIONS)
    parser.add_argument("--full-run", nargs="*", default=[], choices=list(SHAPES),
                        help="datasets whose whole DKM^p training is timed (float32, each S)")
    parser.add_argument("--quality", nargs="*", default=[], metavar="DATA.npz",
                        help="real data (standin_quality.py pack) on which DKM^p is trained in "
                             "each precision for the largest S; the clusters go to --out")
    parser.add_argument("--alpha", nargs="*", type=float, default=[], metavar="α",
                        help="with --alpha-data: DKM^p at these constant α (float32, largest S)")
    parser.add_argument("--alpha-data", help="real data (standin_quality.py pack) for --alpha")
    parser.add_argument("--rescale-alpha", action="store_true",
                        help="with --alpha: rescale each α as the embedding shrinks (alpha_runs)")
    parser.add_argument("--tradeoff", nargs="*", type=float, default=[], metavar="λ",
                        help="with --tradeoff-data: DKM^p at these λ (α = 1000, float32, largest S)")
    parser.add_argument("--tradeoff-data", nargs="*", default=[], metavar="DATA.npz",
                        help="real data (standin_quality.py pack) for --tradeoff, one run each")
    parser.add_argument("--out", default=".",
                        help="folder of the clusters of --quality, --alpha, --tradeoff")
    args = parser.parse_args()

    device = jax.devices()[0]
    emit({"kind": "device", "device": device.device_kind, "platform": device.platform,
          "jax": jax.__version__, "python": platform.python_version(),
          "host": platform.node()})
    if args.check:
        for precision in args.precision:
            for row in check_against_package(args.check, precision):
                emit(row)
                errors = [v for k, v in row.items() if k not in ("kind", "phase", "precision")]
                if precision == "float32" and not max(errors) < FLOAT32_TOLERANCE:
                    raise SystemExit(f"the stand-in departs from the package in float32: {row}")
    for precision in args.precision if args.shape else ():
        emit({"kind": "matmul", "precision": precision, "tflops": matmul_tflops(precision)})
    for shape in args.shape:
        for phase in ("pretraining", "dkm"):
            for precision in args.precision:
                rows = [time_phase(shape, phase, s, args.steps, precision, args.repeats)
                        for s in args.replicas]
                for row in rows:
                    emit(row)
                emit({"kind": "replica_ratio", "shape": shape, "phase": phase,
                      "precision": precision, "replicas": rows[-1]["replicas"],
                      "ratio": rows[-1]["samples_per_s"] / rows[0]["samples_per_s"]})
    for shape in args.full_run:
        for replicas in args.replicas:
            emit(full_run(shape, replicas, "float32"))
    for path in args.quality:
        for precision in args.precision:
            row, clusters = quality_run(path, max(args.replicas), precision)
            name = f"{Path(path).stem}-{precision}.npy"
            np.save(Path(args.out) / name, clusters)
            emit({**row, "clusters": name})
    if args.alpha:
        for row, clusters in alpha_runs(args.alpha_data, max(args.replicas), args.alpha,
                                        args.rescale_alpha):
            name = (f"{Path(args.alpha_data).stem}-alpha-{row['alpha']:g}"
                    f"{'-rescaled' * args.rescale_alpha}.npy")
            np.save(Path(args.out) / name, clusters)
            emit({**row, "clusters": name})
    for path in args.tradeoff_data:
        for row, clusters in tradeoff_runs(path, max(args.replicas), args.tradeoff):
            name = f"{Path(path).stem}-tradeoff-{row['tradeoff']:g}.npy"
            np.save(Path(args.out) / name, clusters)
            emit({**row, "clusters": name})


if __name__ == "__main__":
    main()
