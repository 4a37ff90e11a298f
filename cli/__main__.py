"""`python -m cli`: the `wikimem` command."""

import sys

from cli.main import main

sys.exit(main())
