"""Prints, as JSON, what ``import dkm`` and a small fit change in the process (the test of
``tests/test_process_state.py`` runs it in a fresh process, where nothing else has changed it).

The process's state: its environment variables, the modules it has loaded, and TensorFlow's
op determinism, TF32 and thread settings, before ``import dkm``, after it, and after a
``DeepKMeans`` fit (with ``transform`` and ``predict``) on a quarter of the digits.
"""
from __future__ import annotations

import json
import os
import sys


def tensorflow_settings() -> dict:
    import tensorflow as tf
    from tensorflow.python.framework import config  # the only reader of op determinism

    return {"op_determinism": config.is_op_determinism_enabled(),
            "tf32": tf.config.experimental.tensor_float_32_execution_enabled(),
            "intra_op_threads": tf.config.threading.get_intra_op_parallelism_threads(),
            "inter_op_threads": tf.config.threading.get_inter_op_parallelism_threads()}


def changed(before: dict, after: dict) -> list[str]:
    """The names of the variables set, removed or changed between two environments."""
    return sorted(name for name in before.keys() | after.keys()
                  if before.get(name) != after.get(name))


def main() -> None:
    before = dict(os.environ)
    import dkm  # noqa: F401

    state = {"changed_by_import": changed(before, dict(os.environ)),
             "modules_after_import": sorted(name for name in sys.modules
                                            if name.startswith(("dkm.", "tensorflow")))}
    from sklearn.datasets import load_digits

    settings = tensorflow_settings()
    before = dict(os.environ)  # after TensorFlow's own import, which is not the package's
    X = (load_digits().data[:450] / 16).astype("float32")
    model = dkm.DeepKMeans(n_clusters=10, variant="p", pretrain_epochs=2, schedule=[1000.0] * 2,
                           hidden_sizes=(32, 32, 64), random_state=0, progress=False).fit(X)
    model.transform(X[:10]), model.predict(X[:10])
    state.update(changed_by_fit=changed(before, dict(os.environ)),
                 settings_before_fit=settings, settings_after_fit=tensorflow_settings())
    print(json.dumps(state))


if __name__ == "__main__":
    main()
