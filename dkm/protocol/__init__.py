"""The paper's protocol, on the core: the method registry, runs and their records, grids.

It imports the core (the models, the data, the metrics) and nothing of :mod:`dkm.book`; the
package map of :mod:`dkm` lists its modules.
"""
