"""The inbound e-mail webhook function (api/webhooks/resend.py): endpoint.py verifies, parses and records."""
