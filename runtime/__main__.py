"""`python -m runtime`: the runtime process itself (what `lokal runtime` runs)."""

import sys

from runtime.server import main

sys.exit(main())
