import sys

from .walkthrough import main

if __name__ == "__main__":  # not when imported (the architecture tests import every module)
    sys.exit(main())
