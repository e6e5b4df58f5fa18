import sys

from .walkthrough import main

sys.exit(main())
