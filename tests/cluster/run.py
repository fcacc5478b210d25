"""Runs tests/cluster/test_*.py against the binaries in --build (default build/), on the
primary and standby that scripts/pg-cluster.sh run-standby started (make test-cluster).
-k PATTERN runs only the tests whose name matches, e.g. -k SharedLimits."""
import argparse
import os
import sys
import unittest

here = os.path.dirname(os.path.abspath(__file__))
parser = argparse.ArgumentParser()
parser.add_argument("--build", default="build")
parser.add_argument("-k", dest="patterns", action="append", default=None)
args = parser.parse_args()
for name in ("BREACHD_PG_URI", "BREACHD_PG_STANDBY_URI", "BREACHD_PG_STANDBY_DIR"):
    if not os.environ.get(name):
        sys.exit("run.py: %s is not set; run me as "
                 "scripts/pg-cluster.sh run-standby python3 tests/cluster/run.py" % name)
os.environ["BREACHD_BUILD"] = args.build
os.environ["BREACHD_STORE"] = "pg"
sys.path.insert(0, here)
sys.path.insert(1, os.path.join(os.path.dirname(here), "e2e"))
import timed_runner  # noqa: E402

loader = unittest.TestLoader()
# as unittest's own -k: a pattern without wildcards matches anywhere in the name
loader.testNamePatterns = [p if "*" in p else "*%s*" % p for p in args.patterns or []] or None
suite = loader.discover(here, pattern="test_*.py", top_level_dir=here)
result = timed_runner.run(suite, verbosity=2)
sys.exit(0 if result.wasSuccessful() else 1)
