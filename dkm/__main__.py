"""`python -m dkm`: see :mod:`dkm.cli`."""
from dkm.cli import main

raise SystemExit(main())
