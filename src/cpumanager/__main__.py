"""`python -m cpumanager`."""

from cpumanager.cli.main import main

main()
