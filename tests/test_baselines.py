"""The baselines KM, AE-KM, DCN and IDEC, and the shared pretraining cache."""
from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf
from sklearn.base import clone
from sklearn.datasets import load_digits

from dkm import DCN, IDEC
from dkm.autoencoder import Architecture, Autoencoder
from dkm.losses import kl_divergence, squared_euclidean, student_t_assignment, target_distribution
from dkm.methods import pretraining
from dkm.methods.common import LoopConfig, kmeans_on_embedding
from dkm.book.ablations._studies import AUTHORS_DCN, TOWARDS_DKM
from dkm.book.ablations._switches import (
    DCNAblationConfig, DCNAblationObjective, DKMAblationConfig,
)
from dkm.methods.dcn import DCNConfig, DCNObjective, running_mean_update
from dkm.methods.idec import IDECConfig, IDECObjective
from dkm.methods.template import fit_deep_method
from dkm.methods.km import AEKMConfig, fit_aekm, fit_km
from dkm.methods.pretraining import load_or_pretrain
from dkm.training import Adam, BatchSampler, Trainer, embed

# Without XLA to keep the file fast; the estimators' tests and the IDEC in-graph tests
# use the default, compiled path.
LOOP = LoopConfig(hidden_sizes=(32, 32, 64), batch_size=128, progress=False, jit_compile=False)
K = 5
TINY = Architecture(input_dim=4, embedding_dim=2, hidden_sizes=(8, 8, 8))

METHODS = {  # each at 2 pretraining (if any) and 2 training epochs
    "km": (fit_km, None),
    "ae-km": (fit_aekm, AEKMConfig(pretrain_epochs=2)),
    "dcn-p": (fit_deep_method, DCNConfig(lam=0.1, epochs=2, pretrain_epochs=2)),
    "dcn-np": (fit_deep_method, DCNConfig(lam=0.1, epochs=2, pretrain_epochs=0)),
    "idec-p": (fit_deep_method, IDECConfig(epochs=2, pretrain_epochs=2, update_interval=2)),
    "idec-np": (fit_deep_method, IDECConfig(epochs=2, pretrain_epochs=0, update_interval=2)),
}


def _fit(method, X, seeds, pretrained=None):
    fit, config = METHODS[method]
    if config is None:
        return fit(X, K, seeds)
    return fit(X, K, seeds, config, LOOP, pretrained=pretrained)


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return (X[:400] / 16).astype(np.float32), y[:400]


@pytest.mark.parametrize("seeds", [[0], [3, 4]], ids=["S=1", "S=2"])
@pytest.mark.parametrize("method", METHODS)
def test_every_method_gives_valid_labels(digits, method, seeds):
    X, _ = digits
    result = _fit(method, X, seeds)
    S, N = len(seeds), X.shape[0]
    assert result.labels.shape == (S, N)
    assert np.issubdtype(result.labels.dtype, np.integer)
    assert result.labels.min() >= 0 and result.labels.max() < K
    if method == "km":
        assert result.embeddings is None and result.centers.shape == (S, K, X.shape[1])
        return
    assert result.embeddings.shape == (S, N, K) and result.centers.shape == (S, K, K)
    assert all(np.isfinite(v).all() for v in result.history.values())
    if method != "ae-km":
        assert result.history["loss"].shape[0] == S  # IDEC may stop before its 2 epochs
        friendly = kmeans_on_embedding(result, K, seeds, n_init=2)
        assert friendly.shape == (S, N) and friendly.max() < K


def test_kmeans_on_embedding_needs_an_embedding(digits):
    with pytest.raises(ValueError, match="no embedding"):
        kmeans_on_embedding(fit_km(digits[0], K, [0]), K, [0])


def _sequential_dcn_pass(centroids, counts, h, assignments):
    """Yang et al.'s per-sample centroid updates, one sample after the other."""
    centroids, counts = centroids.astype(np.float64), counts.astype(np.float64)
    for s in range(h.shape[0]):
        for i in range(h.shape[1]):
            k = assignments[s, i]
            counts[s, k] += 1
            centroids[s, k] -= (centroids[s, k] - h[s, i]) / counts[s, k]
    return centroids, counts


def test_dcn_running_mean_equals_the_sequential_pass():
    rng = np.random.default_rng(0)
    centroids = rng.normal(size=(2, 3, 4)).astype(np.float32)
    counts = np.array([[100.0, 103.0, 250.0], [101.0, 100.0, 100.0]], np.float32)
    h = rng.normal(size=(2, 7, 4)).astype(np.float32)
    assignments = rng.integers(0, 3, (2, 7)).astype(np.int32)
    assignments[1] = 2  # one cluster gets every sample of the batch
    expected_centroids, expected_counts = _sequential_dcn_pass(centroids, counts, h, assignments)
    new_centroids, new_counts = running_mean_update(
        tf.constant(centroids), tf.constant(counts), tf.constant(h), tf.constant(assignments)
    )
    np.testing.assert_allclose(new_centroids.numpy(), expected_centroids, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(new_counts.numpy(), expected_counts)


def test_dcn_step_reassigns_and_moves_with_every_sample_of_the_batch():
    rng = np.random.default_rng(1)
    data = rng.normal(size=(20, 4)).astype(np.float32)
    autoencoder = Autoencoder(TINY, [0, 1])
    centroids = rng.normal(size=(2, 3, 2)).astype(np.float32)
    stored = rng.integers(0, 3, (2, 20)).astype(np.int32)
    objective = DCNObjective(autoencoder, centroids, stored, lam=1.0)
    indices = np.array([[3, 7, 0, 19, 11, 5], [1, 2, 3, 4, 5, 6]], np.int32)
    x = tf.gather(tf.constant(data), indices)
    objective.after_step(x, tf.constant(indices))

    h = autoencoder.encode(x).numpy()
    nearest = np.argmin(((h[:, :, None] - centroids[:, None]) ** 2).sum(-1), axis=-1)
    expected_assignments = stored.copy()
    for s in range(2):
        expected_assignments[s, indices[s]] = nearest[s]
    np.testing.assert_array_equal(objective.assignments.numpy(), expected_assignments)
    expected_centroids, expected_counts = _sequential_dcn_pass(
        centroids, np.full((2, 3), 100.0), h, nearest
    )
    np.testing.assert_allclose(objective.centroids.numpy(), expected_centroids, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(objective.counts.numpy(), expected_counts)
    assert objective.variables == []  # the optimiser never trains the centroids


def test_authors_dcn_step_moves_only_the_last_sample_of_the_batch():
    # The DKM authors' DCN built one update op per sample of the batch in a Python loop and
    # ran only the last: one reassignment and one centroid move per batch, by hand here.
    rng = np.random.default_rng(1)
    data = rng.normal(size=(20, 4)).astype(np.float32)
    autoencoder = Autoencoder(TINY, [0, 1])
    centroids = rng.normal(size=(2, 3, 2)).astype(np.float32)
    stored = rng.integers(0, 3, (2, 20)).astype(np.int32)
    objective = DCNAblationObjective(autoencoder, centroids, stored, lam=1.0, update="last-sample")
    indices = np.array([[3, 7, 0, 19, 11, 5], [1, 2, 3, 4, 5, 6]], np.int32)
    x = tf.gather(tf.constant(data), indices)
    objective.after_step(x, tf.constant(indices))

    h_last = autoencoder.encode(x).numpy()[:, -1]
    expected_assignments = stored.copy()
    expected_centroids = centroids.copy()
    expected_counts = np.full((2, 3), 100.0)
    for s in range(2):
        k = int(np.argmin(((h_last[s] - centroids[s]) ** 2).sum(-1)))
        expected_assignments[s, indices[s, -1]] = k
        expected_counts[s, k] += 1
        expected_centroids[s, k] -= (centroids[s, k] - h_last[s]) / expected_counts[s, k]
    np.testing.assert_array_equal(objective.assignments.numpy(), expected_assignments)
    np.testing.assert_allclose(objective.centroids.numpy(), expected_centroids, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(objective.counts.numpy(), expected_counts)


def test_authors_dcn_loss_weighs_lambda_fully_and_trains_the_centroids():
    rng = np.random.default_rng(3)
    autoencoder = Autoencoder(TINY, [0])
    centroids = rng.normal(size=(1, 3, 2)).astype(np.float32)
    stored = np.array([[0, 2, 1, 2]], np.int32)
    x = tf.constant(rng.normal(size=(1, 4, 4)).astype(np.float32))
    indices = tf.constant([[0, 1, 2, 3]])
    h = autoencoder.encode(x)
    x_hat = autoencoder.decode(h)
    yang = DCNObjective(autoencoder, centroids, stored, lam=0.3)
    authors = DCNAblationObjective(autoencoder, centroids, stored, lam=0.3, train_centroids=True,
                                   clustering_weight=1.0)
    yang_loss, terms = yang.per_sample_loss(x, x_hat, h, indices)
    with tf.GradientTape() as tape:
        authors_loss, _ = authors.per_sample_loss(x, x_hat, h, indices)
        mean_loss = tf.reduce_mean(authors_loss)
    r = centroids[0, stored[0]]
    distances = ((h.numpy()[0] - r) ** 2).sum(-1)
    np.testing.assert_allclose(terms["clustering"].numpy()[0], distances, rtol=1e-5)
    np.testing.assert_allclose((authors_loss - yang_loss).numpy()[0], 0.15 * distances, rtol=1e-4)
    assert authors.variables == [authors.centroids] and yang.variables == []
    # d/dr_k of mean_i λ ‖h_i − r_{s_i}‖² = −(2λ / B) Σ_{i: s_i = k} (h_i − r_k)
    expected = np.zeros((3, 2))
    for i, k in enumerate(stored[0]):
        expected[k] -= 2 * 0.3 / 4 * (h.numpy()[0, i] - centroids[0, k])
    np.testing.assert_allclose(tape.gradient(mean_loss, authors.centroids).numpy()[0], expected,
                               rtol=1e-4, atol=1e-6)


def test_authors_dcn_trains_and_reports_its_stored_assignments():
    X = load_digits().data[:300].astype(np.float32) / 16.0
    config = DCNAblationConfig(lam=0.1, epochs=2, pretrain_epochs=0, **AUTHORS_DCN)
    result = fit_deep_method(X, K, [4, 5], config, LOOP)
    assert result.labels.shape == (2, 300)
    # with one update per batch, most points keep their random initial assignment, so the
    # stored labels differ from the nearest centroid of many points
    nearest = np.argmin(((result.embeddings[:, :, None] - result.centers[:, None]) ** 2).sum(-1), -1)
    assert (result.labels != nearest).mean() > 0.2


def test_dcn_switched_all_the_way_towards_dkm_is_hard_deep_kmeans():
    # The last step of TOWARDS_DKM, with DKM^p's λ and epochs, trains the same computation as
    # DKM^p with a hard assignment: same labels, centres and curves, bit for bit.
    from dkm.annealing import constant

    X = load_digits().data[:300].astype(np.float32) / 16.0
    _, switches = TOWARDS_DKM[-1]
    dcn = fit_deep_method(X, K, [4, 5], DCNAblationConfig(lam=0.7, epochs=3, pretrain_epochs=2,
                                                          **switches), LOOP)
    dkm = fit_deep_method(X, K, [4, 5], DKMAblationConfig(
        lam=0.7, schedule=constant(1000.0, 3), pretrain_epochs=2, assignment="hard"), LOOP)
    np.testing.assert_array_equal(dcn.labels, dkm.labels)
    np.testing.assert_array_equal(dcn.centers, dkm.centers)
    np.testing.assert_array_equal(dcn.history["loss"], dkm.history["loss"])


def test_dcn_without_updates_keeps_its_centroids_and_assignments():
    rng = np.random.default_rng(1)
    autoencoder = Autoencoder(TINY, [0])
    centroids = rng.normal(size=(1, 3, 2)).astype(np.float32)
    stored = rng.integers(0, 3, (1, 20)).astype(np.int32)
    objective = DCNAblationObjective(autoencoder, centroids, stored, lam=1.0, update="none")
    indices = tf.constant([[3, 7, 0]])
    objective.after_step(tf.gather(tf.constant(rng.normal(size=(20, 4)).astype(np.float32)),
                                   indices), indices)
    np.testing.assert_array_equal(objective.centroids.numpy(), centroids)
    np.testing.assert_array_equal(objective.assignments.numpy(), stored)


@pytest.mark.parametrize("field, value", [("update", "first-sample"), ("labels", "soft"),
                                          ("clustering_weight", 0.0), ("pull", "soft")])
def test_dcn_config_rejects_unknown_switches(field, value):
    with pytest.raises(ValueError, match=field):
        DCNAblationConfig(**{field: value})


def test_idec_soft_assignment_target_and_kl_match_their_formulas():
    rng = np.random.default_rng(2)
    h = rng.normal(size=(2, 30, 3))
    mu = rng.normal(size=(2, 4, 3))
    d = ((h[:, :, None] - mu[:, None]) ** 2).sum(-1)
    q = 1 / (1 + d)
    q /= q.sum(-1, keepdims=True)
    p = q**2 / q.sum(axis=1, keepdims=True)
    p /= p.sum(-1, keepdims=True)
    kl = (p * np.log(p / q)).sum(-1)
    q_tf = student_t_assignment(squared_euclidean(tf.constant(h), tf.constant(mu)))
    np.testing.assert_allclose(q_tf.numpy(), q, rtol=1e-10)
    np.testing.assert_allclose(target_distribution(q_tf).numpy(), p, rtol=1e-10)
    np.testing.assert_allclose(kl_divergence(tf.constant(p), tf.constant(q)).numpy(), kl, rtol=1e-9)


def _idec_setup(active=(True, True), update_interval=2):
    rng = np.random.default_rng(3)
    data = tf.constant(rng.normal(size=(100, 4)).astype(np.float32))
    autoencoder = Autoencoder(TINY, [0, 1])
    objective = IDECObjective(autoencoder, data, rng.normal(size=(2, 3, 2)).astype(np.float32),
                              gamma=0.5, update_interval=update_interval, tol=0.0)
    objective.active.assign(active)
    trainer = Trainer(autoencoder, objective, data, Adam(1e-2))
    return autoencoder, objective, trainer, BatchSampler(100, 25, [0, 1], "finetune")


def _target_in_numpy(autoencoder, objective):
    h = embed(autoencoder, objective.data).astype(np.float64)
    d = ((h[:, :, None] - objective.centers.numpy()[:, None]) ** 2).sum(-1)
    q = 1 / (1 + d)
    q /= q.sum(-1, keepdims=True)
    p = q**2 / q.sum(axis=1, keepdims=True)
    return p / p.sum(-1, keepdims=True), q.argmax(-1)


def test_idec_target_is_recomputed_on_the_whole_dataset_in_the_graph():
    autoencoder, objective, trainer, sampler = _idec_setup()
    p, labels = _target_in_numpy(autoencoder, objective)  # iteration 0
    np.testing.assert_allclose(objective.target.numpy(), p, rtol=1e-4, atol=1e-6)
    trainer.run_epoch(sampler.next_epoch())  # 4 steps: updates after steps 2 and 4
    p_after, labels_after = _target_in_numpy(autoencoder, objective)
    assert np.abs(p_after - p).max() > 1e-3  # the target did move
    np.testing.assert_allclose(objective.target.numpy(), p_after, rtol=1e-4, atol=1e-6)
    np.testing.assert_array_equal(objective.labels.numpy(), labels_after)


def test_a_stopped_idec_replica_stays_exactly_as_it_was():
    autoencoder, objective, trainer, sampler = _idec_setup(active=(False, True))
    before = [v.numpy().copy() for v in trainer.variables]
    moments = [trainer.optimizer.slots(v)[0].numpy().copy() for v in trainer.variables]
    target = objective.target.numpy().copy()
    result = trainer.run_epoch(sampler.next_epoch())
    for old, var, m in zip(before, trainer.variables, moments):
        np.testing.assert_array_equal(var.numpy()[0], old[0])
        np.testing.assert_array_equal(trainer.optimizer.slots(var)[0].numpy()[0], m[0])
        assert not np.array_equal(var.numpy()[1], old[1])
    np.testing.assert_array_equal(objective.target.numpy()[0], target[0])
    np.testing.assert_array_equal(result.terms["active"], [0.0, 1.0])


def test_idec_stops_when_few_labels_change(digits):
    X, _ = digits
    config = IDECConfig(epochs=5, pretrain_epochs=2, update_interval=1, tol=1.0)
    result = fit_deep_method(X, K, [0, 1], config, LOOP)
    # tol = 1 stops at the first update (after iteration 1): one epoch of 4 steps
    np.testing.assert_array_equal(result.history["active"], [[0.25], [0.25]])
    assert result.history["loss"].shape == (2, 1)


def test_pretraining_cache_round_trips_and_trains_only_missing_seeds(digits, tmp_path, monkeypatch):
    X, _ = digits
    architecture = LOOP.architecture(X.shape[1], K)
    trained_seeds = []
    original = pretraining.pretrain

    def recording_pretrain(data, arch, seeds, epochs, loop):
        trained_seeds.append(list(seeds))
        return original(data, arch, seeds, epochs, loop)

    monkeypatch.setattr(pretraining, "pretrain", recording_pretrain)
    alone = load_or_pretrain(X, architecture, [1], 2, LOOP, tmp_path)
    pair = load_or_pretrain(X, architecture, [0, 1], 2, LOOP, tmp_path)
    again = load_or_pretrain(X, architecture, [0, 1], 2, LOOP, tmp_path)
    assert trained_seeds == [[1], [0]]
    assert len(list(tmp_path.glob("*.npz"))) == 2 and not list(tmp_path.glob("*.tmp"))
    for a, p, b in zip(alone.weights, pair.weights, again.weights):
        np.testing.assert_array_equal(p[1], a[0])
        np.testing.assert_array_equal(p, b)
    for (m_a, v_a), (m_p, v_p) in zip(alone.optimizer_state["moments"], pair.optimizer_state["moments"]):
        np.testing.assert_array_equal(m_p[1], m_a[0])
        np.testing.assert_array_equal(v_p[1], v_a[0])
    assert pair.optimizer_state["iterations"] == alone.optimizer_state["iterations"] == 2 * 4
    np.testing.assert_array_equal(pair.history["loss"][1], alone.history["loss"][0])

    load_or_pretrain(X, architecture, [1], 3, LOOP, tmp_path)  # other epochs: another entry
    load_or_pretrain(X + 1e-3, architecture, [1], 2, LOOP, tmp_path)  # other data too
    assert trained_seeds == [[1], [0], [1], [1]]


def test_pretrained_methods_start_from_identical_weights(digits, tmp_path):
    X, _ = digits
    architecture = LOOP.architecture(X.shape[1], K)
    for_dcn = load_or_pretrain(X, architecture, [5], 2, LOOP, tmp_path)
    for_idec = load_or_pretrain(X, architecture, [5], 2, LOOP, tmp_path)
    # with no training epoch, a method's final weights are its starting weights
    dcn = fit_deep_method(X, K, [5], DCNConfig(epochs=0, pretrain_epochs=2), LOOP, pretrained=for_dcn)
    idec = fit_deep_method(X, K, [5], IDECConfig(epochs=0, pretrain_epochs=2), LOOP, pretrained=for_idec)
    aekm = fit_aekm(X, K, [5], AEKMConfig(pretrain_epochs=2), LOOP, pretrained=for_dcn)
    for d, i, a, p in zip(dcn.weights, idec.weights, aekm.weights, for_dcn.weights):
        np.testing.assert_array_equal(d, p)
        np.testing.assert_array_equal(i, p)
        np.testing.assert_array_equal(a, p)


@pytest.mark.parametrize("method", ["dcn-p", "dcn-np", "idec-p", "idec-np"])
def test_same_seed_gives_identical_results(digits, method):
    X, _ = digits
    pretrained = load_or_pretrain(X, LOOP.architecture(X.shape[1], K), [7], 2, LOOP)
    first, second = _fit(method, X, [7], pretrained), _fit(method, X, [7], pretrained)
    np.testing.assert_array_equal(first.labels, second.labels)
    np.testing.assert_array_equal(first.centers, second.centers)
    for a, b in zip(first.weights, second.weights):
        np.testing.assert_array_equal(a, b)
    if method.endswith("np"):
        assert not np.array_equal(_fit(method, X, [8]).centers, first.centers)


ESTIMATOR_TINY = dict(hidden_sizes=(32, 32, 64), pretrain_epochs=2, epochs=2, progress=False)


@pytest.mark.parametrize("estimator", [
    DCN(n_clusters=4, lam=0.1, random_state=0, **ESTIMATOR_TINY),
    IDEC(n_clusters=4, gamma=0.1, update_interval=2, random_state=0, **ESTIMATOR_TINY),
], ids=["DCN", "IDEC"])
def test_estimators_fit_and_predict_on_digits(digits, estimator):
    X = digits[0][:300]
    assert clone(estimator).get_params() == estimator.get_params()
    labels = estimator.fit_predict(X)
    assert labels.shape == (300,) and labels.min() >= 0 and labels.max() < 4
    np.testing.assert_array_equal(estimator.predict(X), labels)
    assert estimator.transform(X).shape == (300, 4)
    assert estimator.cluster_centers_.shape == (4, 4)
    assert estimator.history_["pretrain_loss"].shape == (2,)


@pytest.mark.parametrize("estimator, message", [
    (DCN(variant="x"), "'variant' parameter of DCN must be a str among"),
    (DCN(lam=-1.0), "'lam' parameter of DCN must be a float in the range"),
    (DCN(epochs=0), "'epochs' parameter of DCN must be an int in the range"),
    (IDEC(gamma=float("nan")), "'gamma' parameter of IDEC must be a float in the range"),
    (IDEC(update_interval=0), "'update_interval' parameter of IDEC must be an int in the range"),
    (IDEC(reconstruction="l1"), "'reconstruction' parameter of IDEC must be a str among"),
    (IDEC(variant="p", pretrain_epochs=0), "pretrain_epochs must be a positive integer"),
])
def test_bad_baseline_parameters_are_clear_value_errors(digits, estimator, message):
    with pytest.raises(ValueError, match=message):
        estimator.fit(digits[0][:50])
