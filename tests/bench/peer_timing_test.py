#!/usr/bin/env python3
"""The torch peers' timer (scripts/peers/peer_common.py time_it) against a fake torch whose CUDA
events read a fake clock: one primed call and a synchronize before anything is timed, the batch
chosen so a sample lasts >= 1 ms, each sample a batch of back-to-back calls between two events,
the per-call time the batch time / batch. Usage: peer_timing_test.py SOURCE_DIR"""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(sys.argv[1] if len(sys.argv) > 1 else ".", "scripts", "peers"))
from peer_common import time_it  # noqa: E402


class FakeTorch:
    """Every fn() call costs `per_call` seconds of fake GPU time; events read the fake clock."""

    def __init__(self, per_call):
        self.now = 0.0
        self.per_call = per_call
        self.log = []
        torch = self

        class Event:
            def __init__(self, enable_timing=False):
                self.t = None

            def record(self):
                torch.log.append("record")
                self.t = torch.now

            def synchronize(self):
                pass

            def elapsed_time(self, other):  # milliseconds, as torch.cuda.Event reports
                return (other.t - self.t) * 1e3

        class Cuda:
            @staticmethod
            def synchronize():
                torch.log.append("sync")

        Cuda.Event = Event
        self.cuda = Cuda

    def fn(self):
        self.log.append("call")
        self.now += self.per_call


class TimeIt(unittest.TestCase):
    def test_batches_back_to_back_calls_between_two_events(self):
        t = FakeTorch(per_call=10e-6)
        median, batch = time_it(t, t.fn, warmup=2, reps=3)
        self.assertEqual(batch, 100)  # 1 ms / 10 us
        self.assertAlmostEqual(median, 10e-6, delta=1e-12)
        # prime + sync, the calibrating call, 2 warm-ups, then 3 samples of 100 calls each.
        self.assertEqual(t.log[:2], ["call", "sync"])
        self.assertEqual(t.log[2:5], ["record", "call", "record"])
        rest = t.log[5:]
        self.assertEqual(rest[:2], ["call", "call"])
        samples = rest[2:]
        self.assertEqual(len(samples), 3 * 102)
        for s in range(3):
            one = samples[s * 102:(s + 1) * 102]
            self.assertEqual(one[0], "record")
            self.assertEqual(one[-1], "record")
            self.assertEqual(one[1:-1], ["call"] * 100)

    def test_long_calls_are_timed_one_per_sample(self):
        t = FakeTorch(per_call=5e-3)
        median, batch = time_it(t, t.fn, warmup=0, reps=2)
        self.assertEqual(batch, 1)
        self.assertAlmostEqual(median, 5e-3, delta=1e-12)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
