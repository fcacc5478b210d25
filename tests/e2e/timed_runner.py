"""A unittest runner that also reports where the time went: the slowest tests and the
total per test file, so a slow suite shows its cost in every run's log (the whole CI run
has a time budget; docs/internals/TESTING.md)."""
import collections
import sys
import time
import unittest


class _TimedResult(unittest.TextTestResult):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.durations = []
        self.spans = []  # (seconds since the previous test ended, test id): set-ups included
        self._started = {}
        self._last_stop = time.monotonic()

    def startTest(self, test):
        self._started[test.id()] = time.monotonic()
        super().startTest(test)

    def stopTest(self, test):
        super().stopTest(test)
        now = time.monotonic()
        began = self._started.pop(test.id(), None)
        if began is not None:
            self.durations.append((now - began, test.id()))
        self.spans.append((now - self._last_stop, test.id()))
        self._last_stop = now


def run(suite, verbosity=1, slowest=12):
    """Runs suite; prints the slowest tests and each file's total, its classes' set-up
    included (the time since the previous test ended is counted to the next one).
    Returns the unittest result."""
    began = time.monotonic()
    runner = unittest.TextTestRunner(verbosity=verbosity, resultclass=_TimedResult)
    result = runner.run(suite)
    per_module = collections.defaultdict(float)
    for seconds, test_id in result.spans:
        per_module[test_id.split(".")[0]] += seconds
    out = sys.stderr
    out.write("\nslowest tests:\n")
    for seconds, test_id in sorted(result.durations, reverse=True)[:slowest]:
        out.write("  %6.1f s  %s\n" % (seconds, test_id))
    out.write("per file, set-up included, %.0f s in all:\n"
              % (time.monotonic() - began))
    for name, seconds in sorted(per_module.items(), key=lambda kv: -kv[1]):
        out.write("  %6.1f s  %s\n" % (seconds, name))
    return result
