import os
import sys

from lib.admin.cli import main

# A reader that closes the pipe early (`document-jobs-admin list | head -1`) is no error to report:
# as Python's documentation on SIGPIPE advises, flush inside the try, then point standard output at
# devnull so that the interpreter's own flush at exit cannot fail again, and exit as a command
# stopped by SIGPIPE does (128 + 13). --help ends in SystemExit: its output is flushed here too.
status: int | str | None
try:
    try:
        status = main()
    except SystemExit as exit:
        status = exit.code
    sys.stdout.flush()
except BrokenPipeError:
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    status = 141
sys.exit(status)
