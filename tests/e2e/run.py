"""Runs every tests/e2e/test_*.py against the binaries in --build (default build/)."""
import argparse
import os
import sys
import unittest

here = os.path.dirname(os.path.abspath(__file__))
parser = argparse.ArgumentParser()
parser.add_argument("--build", default="build")
parser.add_argument("pattern", nargs="?", default="test_*.py")
args = parser.parse_args()
os.environ["BREACHD_BUILD"] = args.build
sys.path.insert(0, here)
suite = unittest.defaultTestLoader.discover(here, pattern=args.pattern, top_level_dir=here)
import timed_runner  # noqa: E402

result = timed_runner.run(suite)
sys.exit(0 if result.wasSuccessful() else 1)
