import sys

from .walkthrough import main

if __name__ == "__main__":
    sys.exit(main())
