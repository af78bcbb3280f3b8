"""What the tests share: database helpers, Vault, e-mails and their jobs, alerts, loopback servers.
The fixtures built on them live in tests/conftest.py; no test module imports another."""
