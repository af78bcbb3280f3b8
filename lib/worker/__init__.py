"""The worker function (api/internal/document_jobs.py): endpoint.py authenticates and wires one
invocation, loop.py runs it, fetch_email.py is its one kind of job, queue.py its calls to the queue."""
