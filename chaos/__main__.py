"""python -m chaos: see chaos/__init__.py."""

from chaos.run import main

main()
