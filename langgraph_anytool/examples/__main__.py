"""`python -m langgraph_anytool.examples [DEST]`: copy the docs' example files into DEST/examples/."""

import sys

from . import main

sys.exit(main())
