"""Tests of the database's API on the local stack: the queue, grants, migrations, the cron and the kick."""
