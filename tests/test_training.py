"""The shared training loop: samplers, Adam, compiled epochs, determinism."""
from __future__ import annotations

import keras
import numpy as np
import pytest
import tensorflow as tf

from dkm.autoencoder import Architecture, Autoencoder, glorot_uniform_weights
from dkm.data import from_arrays
from dkm.training import Adam, BatchSampler, Reconstruction, Trainer, data_tensor, embed

SMALL = Architecture(input_dim=8, embedding_dim=3, hidden_sizes=(16, 16, 32))


@pytest.mark.parametrize("n_samples", [1000, 1024, 7])
def test_permutation_sampler_covers_every_point_each_epoch(n_samples):
    sampler = BatchSampler(n_samples, 256, seeds=[1, 2], stream="finetune")
    for _ in range(3):
        batches = sampler.next_epoch()
        assert batches.shape == (2, -(-n_samples // min(256, n_samples)), min(256, n_samples))
        for replica in batches:
            assert set(replica.ravel()) == set(range(n_samples))
            assert all(len(set(batch)) == len(batch) for batch in replica)


def test_independent_sampler_draws_distinct_indices_per_batch():
    batches = BatchSampler(1000, 256, [3], "finetune", kind="independent").next_epoch()
    assert batches.shape == (1, 4, 256)
    assert all(len(set(b)) == 256 for b in batches[0])
    assert batches.min() >= 0 and batches.max() < 1000


def test_sequential_sampler_walks_the_data_in_order_every_epoch():
    sampler = BatchSampler(10, 4, [1, 2], "finetune", kind="sequential")
    first, second = sampler.next_epoch(), sampler.next_epoch()
    expected = [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 0, 1]]
    for replica in (*first, *second):
        np.testing.assert_array_equal(replica, expected)


def test_sampler_streams_are_seeded_and_replicas_independent():
    pair = BatchSampler(500, 64, [5, 6], "finetune").next_epoch()
    alone = BatchSampler(500, 64, [6], "finetune").next_epoch()
    np.testing.assert_array_equal(pair[1], alone[0])
    other_phase = BatchSampler(500, 64, [6], "pretrain").next_epoch()
    assert not np.array_equal(alone, other_phase)


def test_unknown_sampler_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown sampler"):
        BatchSampler(10, 2, [0], "x", kind="shuffled")


def test_glorot_weights_are_seeded_per_replica():
    pair = glorot_uniform_weights(SMALL, [1, 2])
    alone = glorot_uniform_weights(SMALL, [2])
    for a, b in zip(pair, alone):
        np.testing.assert_array_equal(a[1], b[0])
    limit = np.sqrt(6 / (8 + 16))
    assert np.abs(pair[0]).max() <= limit and not pair[1].any()


def test_adam_matches_keras_adam():
    rng = np.random.default_rng(0)
    start = rng.normal(size=(1, 4, 3)).astype(np.float32)
    grads = [rng.normal(size=(1, 4, 3)).astype(np.float32) for _ in range(5)]
    ours, theirs = tf.Variable(start), tf.Variable(start)
    adam = Adam(1e-3)
    reference = keras.optimizers.Adam(1e-3, beta_1=0.9, beta_2=0.999, epsilon=1e-8)
    for g in grads:
        adam.apply([tf.constant(g)], [ours])
        reference.apply_gradients([(tf.constant(g), theirs)])
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-7)


def test_adams_fused_kernel_applies_the_same_rule():
    rng = np.random.default_rng(1)
    start = rng.normal(size=(2, 4, 3)).astype(np.float32)
    grads = [tf.constant(rng.normal(size=(2, 4, 3)).astype(np.float32)) for _ in range(5)]
    composed, fused = tf.Variable(start), tf.Variable(start)
    first, second = Adam(1e-3), Adam(1e-3)
    for g in grads:
        first.apply([g], [composed])
        second.apply([g], [fused], fused=True)
    np.testing.assert_allclose(fused.numpy(), composed.numpy(), rtol=1e-6, atol=1e-7)
    for slot, other in zip(second.slots(fused), first.slots(composed)):
        np.testing.assert_allclose(slot.numpy(), other.numpy(), rtol=1e-4)  # m += (g - m)(1 - β)
    with pytest.raises(ValueError, match="cannot freeze replicas"):
        second.apply(grads[:1], [fused], active=tf.constant([True, False]), fused=True)


def _pretraining_run(seeds, epochs=3, learning_rate=1e-3):
    rng = np.random.default_rng(0)  # rank-3 data: a 3-d embedding can reconstruct it
    x = (rng.normal(size=(200, 3)) @ rng.normal(size=(3, 8))).astype(np.float32)
    autoencoder = Autoencoder(SMALL, seeds)
    trainer = Trainer(autoencoder, Reconstruction(), tf.constant(x), Adam(learning_rate))
    sampler = BatchSampler(200, 32, seeds, "pretrain")
    losses = [trainer.run_epoch(sampler.next_epoch()).loss for _ in range(epochs)]
    return np.stack(losses, axis=1), autoencoder, x


def test_compiled_epochs_reduce_the_reconstruction_loss():
    losses, _, _ = _pretraining_run([0, 1], epochs=20, learning_rate=1e-2)
    assert (losses[:, -1] < 0.5 * losses[:, 0]).all()


def test_training_is_deterministic():
    first, ae1, x = _pretraining_run([4])
    second, ae2, _ = _pretraining_run([4])
    np.testing.assert_array_equal(first, second)
    for a, b in zip(ae1.get_weights(), ae2.get_weights()):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(embed(ae1, tf.constant(x)), embed(ae2, tf.constant(x)))


def test_the_data_tensor_holds_a_datasets_features_without_a_copy():
    features = from_arrays(np.random.default_rng(0).normal(size=(64, 8)), n_clusters=2).X
    assert np.shares_memory(np.asarray(data_tensor(features)), features)
    for other in (features[:, :4], features.astype(np.float64), features[1:]):
        tensor = data_tensor(other)  # a slice, another dtype, another boundary: copied
        assert tensor.dtype == tf.float32
        assert not np.shares_memory(np.asarray(tensor), features)
        np.testing.assert_array_equal(tensor, other.astype(np.float32))


@pytest.mark.parametrize("jit_compile", [True, False])
def test_weights_read_out_keep_their_values_while_the_network_trains_on(jit_compile):
    x = np.random.default_rng(1).uniform(-1, 1, (64, 8)).astype(np.float32)
    autoencoder = Autoencoder(SMALL, [0])
    trainer = Trainer(autoencoder, Reconstruction(), tf.constant(x), Adam(),
                      jit_compile=jit_compile)
    sampler = BatchSampler(64, 16, [0], "pretrain")
    trainer.run_epoch(sampler.next_epoch())
    read = autoencoder.get_weights()
    values = [array.copy() for array in read]
    assert not any(array.flags.writeable for array in read)
    trainer.run_epoch(sampler.next_epoch())
    for array, value in zip(read, values):
        np.testing.assert_array_equal(array, value)
    assert any(not np.array_equal(p.numpy(), v) for p, v in zip(autoencoder.params, values))


def test_adam_state_carries_over():
    _, autoencoder, _ = _pretraining_run([0], epochs=1)
    adam = Adam()
    adam.apply([tf.ones_like(p) for p in autoencoder.params], autoencoder.params)
    restored = Adam()
    restored.load_state(adam.state(autoencoder.params), autoencoder.params)
    assert restored.iterations.numpy() == 1.0
    np.testing.assert_array_equal(restored.slots(autoencoder.params[0])[1].numpy(),
                                  adam.slots(autoencoder.params[0])[1].numpy())


def test_every_epoch_records_the_mean_embedding_norm():
    from dkm.training import EMBEDDING_NORM

    data = np.random.default_rng(0).normal(size=(64, 8)).astype(np.float32)
    architecture = Architecture(8, 3, (16,))
    autoencoder = Autoencoder(architecture, [0, 1])
    trainer = Trainer(autoencoder, Reconstruction(), tf.constant(data), Adam(), jit_compile=False)
    before = np.linalg.norm(autoencoder.encode(tf.constant(np.stack([data, data]))).numpy(), axis=-1)
    result = trainer.run_epoch(np.arange(64, dtype=np.int32).reshape(1, 1, 64).repeat(2, axis=0))
    # one full-batch step: the norm is measured in the forward pass, before the update
    np.testing.assert_allclose(result.terms[EMBEDDING_NORM], before.mean(axis=1), rtol=1e-5)


def test_an_epoch_runs_without_tf32_and_restores_it():
    # TensorFlow's default on Ampere-and-later GPUs is TF32 products; the package's are float32,
    # during each epoch only: the process's setting is restored after it
    import dkm.training as training

    seen, runner = [], training._epoch_runner

    def spying(traced):
        inner = traced if runner is None else runner(traced)

        def run(*arguments):
            seen.append(tf.config.experimental.tensor_float_32_execution_enabled())
            return inner(*arguments)
        return run

    before = tf.config.experimental.tensor_float_32_execution_enabled()
    tf.config.experimental.enable_tensor_float_32_execution(True)
    training.set_epoch_runner(spying)
    try:
        trainer = Trainer(Autoencoder(SMALL, [0]), Reconstruction(), tf.zeros((10, 8)), Adam())
        trainer.run_epoch(BatchSampler(10, 5, [0], "pretrain").next_epoch())
        assert seen == [False] and tf.config.experimental.tensor_float_32_execution_enabled()
    finally:
        training.set_epoch_runner(runner)
        tf.config.experimental.enable_tensor_float_32_execution(before)


@pytest.mark.parametrize("products", ["float32", "bfloat16"])
def test_a_points_embedding_depends_on_its_chunk_only_by_rounding(products):
    architecture = Architecture(64, 10, (32, 32, 64))
    data = tf.constant(np.random.default_rng(2).uniform(0, 1, (300, 64)), tf.float32)
    autoencoder = Autoencoder(architecture, [1, 2], products=products)
    whole = embed(autoencoder, data)
    # the same chunks give the same bits; other chunks the same values to float32 rounding (on
    # an AVX2-only CPU, products of 7 rows sum in another order than products of 300)
    np.testing.assert_array_equal(embed(autoencoder, data), whole)
    np.testing.assert_allclose(embed(autoencoder, data, chunk_size=7), whole, rtol=1e-5, atol=1e-6)
    assert whole.shape == (2, 300, 10)


def test_embedding_with_many_networks_does_not_retrace(caplog):
    # A session that builds network after network (a grid, a chapter) embeds with one compiled
    # function: TensorFlow warns of "retracing" when one function traces five times in a row.
    architecture = Architecture(16, 4, (8, 8, 16))
    data = tf.constant(np.random.default_rng(3).uniform(0, 1, (50, 16)), tf.float32)
    with caplog.at_level("WARNING", logger="tensorflow"):
        for seed in range(8):
            embed(Autoencoder(architecture, [seed]), data, chunk_size=32)  # chunks of 32 and 18
    assert not [r for r in caplog.records if "retracing" in r.getMessage()]


def test_the_shared_embedding_function_uses_each_networks_own_weights():
    # One compiled function embeds for every network of the process: whatever networks came
    # before (other replica counts, shapes, chunk sizes), a network gets its own embedding.
    rng = np.random.default_rng(4)
    for step in range(24):
        architecture = Architecture(int(rng.choice([16, 64])), int(rng.choice([5, 10])),
                                    (32, 32, 64))
        autoencoder = Autoencoder(architecture, list(range(int(rng.integers(1, 3)))))
        data = tf.constant(rng.uniform(0, 1, (int(rng.choice([50, 300])), architecture.input_dim)),
                           tf.float32)
        chunk = int(rng.choice([7, 128, 1024]))
        stacked = tf.broadcast_to(data[None], [autoencoder.n_replicas, *data.shape])
        # another network's weights would be far off; float32 rounding is not (see above)
        np.testing.assert_allclose(embed(autoencoder, data, chunk_size=chunk),
                                   autoencoder.encode(stacked).numpy(), rtol=1e-5, atol=1e-6,
                                   err_msg=f"step {step}")
