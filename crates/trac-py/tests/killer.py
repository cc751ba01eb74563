"""A session whose events kill the worker process reading them, the first time only.

Pickled by value to the Dask workers (test_distributed registers this module with cloudpickle),
so the workers need not import the tests.
"""

import os
import signal


class KillOnce:
    """Iterates `events`; the first iteration anywhere (marked by creating `marker`, which
    records the killed process id) kills the current process with SIGKILL instead."""

    def __init__(self, events, marker):
        self.events = list(events)
        self.marker = str(marker)

    def __iter__(self):
        try:
            fd = os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return iter(self.events)
        os.write(fd, str(os.getpid()).encode())
        os.close(fd)
        os.kill(os.getpid(), signal.SIGKILL)
        raise AssertionError("unreachable: the process was killed")
