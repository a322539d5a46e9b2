"""Run records, the JSON Lines stores that keep them, and the results folder that holds the
stores, one private module per job, all re-exported here:

``dkm.protocol.results._record``  a record: its schema, its configuration hash, its
                                  validation, its flat form and its scale.
``dkm.protocol.results._store``   the store: appended under a lock, read back with broken
                                  lines skipped, one arithmetic per store.
``dkm.protocol.results._folder``  the results folder: its layout (the stores the tables read,
                                  every store, each dataset's), the runs it holds, and its
                                  full-scale records.
``dkm.protocol.results._layout``  which of its stores the book reads, by dataset (:data:`READ`).
"""
from __future__ import annotations

from dkm.protocol.results._folder import (AUDITS, STORE_FOLDERS, arithmetic_by_dataset,
                                          dataset_stores, duplicate_runs, every_store,
                                          full_scale_records, full_scale_records_by_store,
                                          held_runs, protocol_stores, results_folder,
                                          single_arithmetic, store_path, store_records,
                                          table_stores)
from dkm.protocol.results._layout import (READ, SUPERSEDED, ReadStores, declared_stores,
                                          protocol_store, read_stores, search_store, study_store)
from dkm.protocol.results._record import (COLUMNS, DISTANCE_NAMES, METRICS, SCHEMA_VERSION,
                                          SPLITS, config_hash, is_full_scale, new_record,
                                          record_arithmetic, record_label, record_scale,
                                          records_to_dataframe, score_column, validate_record)
from dkm.protocol.results._store import ResultsStore, check_store_arithmetic

__all__ = [
    "SCHEMA_VERSION", "SPLITS", "METRICS", "DISTANCE_NAMES", "COLUMNS", "config_hash",
    "new_record", "record_arithmetic", "validate_record", "records_to_dataframe",
    "record_label", "record_scale", "score_column", "is_full_scale",
    "ResultsStore", "check_store_arithmetic",
    "AUDITS", "STORE_FOLDERS", "results_folder", "table_stores", "every_store",
    "dataset_stores", "protocol_stores", "held_runs", "duplicate_runs", "store_path", "store_records",
    "single_arithmetic", "arithmetic_by_dataset", "full_scale_records",
    "full_scale_records_by_store",
    "READ", "SUPERSEDED", "ReadStores", "read_stores", "protocol_store", "search_store",
    "study_store", "declared_stores",
]
