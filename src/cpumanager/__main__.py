"""`python -m cpumanager`."""

import sys

from cpumanager.cli.main import main

sys.exit(main())
