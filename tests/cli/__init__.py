"""The operator CLI (python -m lib.admin): its commands, output and exit statuses."""
