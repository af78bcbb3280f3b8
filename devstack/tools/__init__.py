"""Tools run against the local stack: the demo, sample faxes, the schema generator."""
