"""Trainers whose epochs trace to the same graph share one compiled function
(dkm.reproducibility.shared_functions), once the process opts in, and get the numbers their
own compilation gives."""
from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from dkm.autoencoder import Architecture, Autoencoder
import dkm.reproducibility.kernel_settings as kernel_settings
from dkm.reproducibility.shared_functions import (SharedFunctions, graph_fingerprint,
                                                  held_bytes, share_compiled_epochs,
                                                  shared_epochs)
from dkm.training import Adam, BatchSampler, Reconstruction, Trainer

SMALL = Architecture(input_dim=8, embedding_dim=3, hidden_sizes=(16, 16, 32))


def _data(seed: int) -> tf.Tensor:
    rng = np.random.default_rng(seed)
    return tf.constant((rng.normal(size=(96, 3)) @ rng.normal(size=(3, 8))).astype(np.float32))


def _trainer(seeds, data_seed=0, architecture=SMALL, learning_rate=1e-3) -> Trainer:
    return Trainer(Autoencoder(architecture, seeds), Reconstruction(), _data(data_seed),
                   Adam(learning_rate))


def _fit(seeds, data_seed):
    """Three epochs: the losses and the final weights."""
    trainer = _trainer(seeds, data_seed)
    sampler = BatchSampler(96, 32, seeds, "pretrain")
    losses = [trainer.run_epoch(sampler.next_epoch()).loss for _ in range(3)]
    return np.stack(losses), trainer.autoencoder.get_weights()


def _traced(trainer: Trainer):
    batches = BatchSampler(96, 32, [0] * trainer.autoencoder.n_replicas, "pretrain").next_epoch()
    return trainer._epoch.get_concrete_function(tf.constant(batches))


def test_a_later_trainer_of_the_same_graph_runs_the_kept_function_to_its_own_bits():
    shared_epochs.clear()
    hits = shared_epochs.hits
    first = _fit([1, 2], data_seed=0)
    later = _fit([3, 4], data_seed=1)  # other weights, other data: the same graph
    assert len(shared_epochs) == 1 and shared_epochs.hits == hits + 1
    shared_epochs.clear()
    alone = _fit([3, 4], data_seed=1)  # the same trainer, compiling its own epoch
    assert shared_epochs.hits == hits + 1
    np.testing.assert_array_equal(later[0], alone[0])
    for a, b in zip(later[1], alone[1]):
        np.testing.assert_array_equal(a, b)
    # the kept function ran on the later trainer's network and data, not on the first's
    assert not np.array_equal(later[0], first[0])


def test_the_fingerprint_ignores_generated_names_and_values_but_not_shapes_or_constants():
    trainers = [_trainer([1]), _trainer([5], data_seed=3),
                _trainer([1], learning_rate=1e-2),  # a constant
                _trainer([1], architecture=Architecture(8, 3, (16, 16, 64))),
                _trainer([1, 2])]  # two replicas
    plain, same, *others = (graph_fingerprint(_traced(trainer)) for trainer in trainers)
    assert same == plain
    assert len({plain, *others}) == 4


def test_the_kept_graphs_are_the_most_recent_ones_up_to_the_capacity():
    trainers = [_trainer([1]), _trainer([1], learning_rate=1e-2),
                _trainer([2], learning_rate=1e-2), _trainer([2])]
    one, other, again, late = (_traced(trainer) for trainer in trainers)
    kept = SharedFunctions(capacity=1)
    assert kept.runner(one) is one and kept.runner(other) is other
    assert len(kept) == 1
    assert kept.runner(again) is not again and kept.hits == 1  # `other` is kept: shared
    assert kept.runner(late) is late and kept.hits == 1  # `one` had been let go
    kept.clear()
    assert len(kept) == 0
    with pytest.raises(ValueError, match="capacity must be at least 1"):
        SharedFunctions(capacity=0)


def test_the_kept_graphs_hold_at_most_max_bytes_of_captured_tensors():
    trainers = [_trainer([1]), _trainer([1, 2], data_seed=1), _trainer([3, 4], data_seed=2)]
    one, two, again = (_traced(trainer) for trainer in trainers)
    assert held_bytes(one) == 96 * 8 * 4  # the data: the variables are held weakly
    kept = SharedFunctions(max_bytes=held_bytes(one))
    assert kept.runner(one) is one and len(kept) == 1
    kept.runner(two)  # both do not fit: the older is let go
    assert len(kept) == 1
    assert kept.runner(again) is not again and kept.hits == 1
    small = SharedFunctions(max_bytes=held_bytes(one) - 1)
    assert small.runner(one) is one and len(small) == 0  # too large to keep at all


def test_without_opting_in_each_trainer_runs_its_own_trace():
    share_compiled_epochs(False)
    try:
        shared_epochs.clear()
        hits = shared_epochs.hits
        _fit([1, 2], data_seed=0), _fit([3, 4], data_seed=1)
        assert len(shared_epochs) == 0 and shared_epochs.hits == hits
    finally:
        share_compiled_epochs()  # as the suite runs (conftest)


def test_another_tensorflow_runs_every_trace_itself(monkeypatch):
    # _call_flat is TensorFlow's private interface: used only with the release it was checked on
    monkeypatch.setattr(kernel_settings, "CHECKED_TENSORFLOW", ("0.0.",))
    traced = _traced(_trainer([1]))
    assert SharedFunctions().runner(traced) is traced
