import sys

from lib.admin.cli import main

sys.exit(main())
