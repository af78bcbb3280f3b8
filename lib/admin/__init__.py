"""The admin CLI: python -m lib.admin (lib/admin/cli.py). Run by an operator from a clone of the
repository; never part of a deployed function (vercel.json excludes lib/admin/ from every bundle)."""
