"""`python -m langgraph_anytool.cli`: the `anytool` command."""

import sys

from langgraph_anytool.cli.app import main

sys.exit(main())
