"""python -m devstack.chaos: see devstack/chaos/__init__.py."""

from devstack.chaos.run import main

main()
