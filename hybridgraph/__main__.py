"""`python -m hybridgraph ...`: the command line (hybridgraph/cli.py)."""
import sys

from hybridgraph.cli import main

sys.exit(main())
