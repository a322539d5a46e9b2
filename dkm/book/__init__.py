"""What the book is built from, on the protocol's records: statistics, tables, the paper's
claims tested, the ablation studies, snapshots and figures.

It imports the core and :mod:`dkm.protocol`; nothing but the command line imports it, and
the registry reads the methods it declares (:mod:`dkm.book.declarations`) through this
package's entry point, as any installed package's. The package map of :mod:`dkm` lists its
modules.
"""
