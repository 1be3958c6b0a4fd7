"""`python -m mb_sim.viewer`: see `mb_sim.viewer.cli`."""

import sys

from mb_sim.viewer.cli import main

sys.exit(main())
