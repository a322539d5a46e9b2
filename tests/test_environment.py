"""dkm.protocol.environment: the installed packages against the lock and a record's versions."""
from __future__ import annotations

import hashlib

from dkm.protocol.environment import (deciding_versions, lock_pins, lock_state,
                                      version_differences)


def test_a_lock_names_its_pins_by_normalized_name(tmp_path):
    lock = tmp_path / "requirements.lock"
    lock.write_text("# made by make lock\nScikit_Learn==1.9.1 \\\n    --hash=sha256:ab\n"
                    "numpy==2.4.6 ; python_version >= '3.10'\n    # via scipy\n")
    assert lock_pins(lock) == {"scikit-learn": "1.9.1", "numpy": "2.4.6"}


def test_the_lock_state_gives_the_digest_and_each_package_installed_otherwise(tmp_path):
    here = deciding_versions()
    lock = tmp_path / "requirements.lock"
    lock.write_text(f"numpy=={here['numpy']}\ntensorflow==0.0.1\nno-such-package==1.0\n")
    state = lock_state(lock)
    assert state == {"digest": hashlib.sha256(lock.read_bytes()).hexdigest(),
                     "differs": ["no-such-package not installed, 1.0 locked",
                                 f"tensorflow {here['tensorflow']} installed, 0.0.1 locked"]}
    assert lock_state(tmp_path / "absent.lock") is None


def test_version_differences_name_each_package_here_and_in_the_record():
    here = {"tensorflow": "2.22.0", "numpy": "2.4.6", "scipy": "1.17.1",
            "scikit_learn": "1.9.1", "python": "3.12.1"}
    recorded = {"tensorflow": "2.21.0", "numpy": "2.4.6", "scikit_learn": "1.9.1",
                "python": "3.11.7"}  # an older record that names no SciPy
    assert version_differences(recorded, here) == [
        "TensorFlow 2.22.0 here, 2.21.0 in the record", "Python 3.12.1 here, 3.11.7 in the record"]
    assert version_differences(here, here) == []
