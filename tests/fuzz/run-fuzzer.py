#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Runs a libFuzzer target, starting from its seed corpus, until it ran RUNS
inputs or SECONDS passed, and prints on a line of its own how many inputs
it executed:

  fuzz TARGET: N executions in S s, C crashes

A crash (an abort, a sanitizer report, a leak, a timeout) fails the test;
the input that caused it is saved in WORKDIR/artifacts/ and named in the
output. What the fuzzer found interesting goes to WORKDIR/corpus/, kept for
the next run (the seed corpus in the source tree is never written).

usage: run-fuzzer.py TARGET_EXE SEED_DIR WORKDIR SECONDS [RUNS]
"""
import os
import re
import subprocess
import sys
import time


def main():
    exe, seeds, work, seconds = sys.argv[1:5]
    runs_wanted = sys.argv[5] if len(sys.argv) > 5 else None
    name = os.path.basename(exe)
    if name.startswith('fuzz-'):
        name = name[len('fuzz-'):]
    corpus = os.path.join(work, 'corpus')
    artifacts = os.path.join(work, 'artifacts')
    os.makedirs(corpus, exist_ok=True)
    os.makedirs(artifacts, exist_ok=True)
    before = set(os.listdir(artifacts))
    cmd = [exe, '-max_total_time=' + seconds, '-print_final_stats=1', '-timeout=10',
           '-rss_limit_mb=2048', '-max_len=512', '-artifact_prefix=' + artifacts + '/']
    if runs_wanted:
        cmd.append('-runs=' + runs_wanted)
    cmd += [corpus, seeds]
    env = dict(os.environ)
    # a leak is a crash too; libFuzzer reports it itself
    env.setdefault('ASAN_OPTIONS', 'detect_leaks=1')
    env.setdefault('UBSAN_OPTIONS', 'halt_on_error=1:print_stacktrace=1')
    start = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    elapsed = time.monotonic() - start
    log = p.stdout + p.stderr
    runs = re.search(r'stat::number_of_executed_units:\s*(\d+)', log)
    secs = re.search(r'stat::average_exec_per_sec:\s*(\d+)', log)
    new = sorted(set(os.listdir(artifacts)) - before)
    crashes = len(new) + (0 if p.returncode == 0 or new else 1)
    n = runs.group(1) if runs else '?'
    print('fuzz %s: %s executions in %.0f s, %d crashes' % (name, n, elapsed, crashes))
    if p.returncode != 0 or new:
        # the fuzzer's own report, then where the input is
        sys.stdout.write(log[-8000:])
        for a in new:
            print('fuzz %s: crashing input saved as %s' % (name, os.path.join(artifacts, a)))
        return 1
    if not runs:
        sys.stdout.write(log[-4000:])
        print('fuzz %s: no statistics from the fuzzer' % name)
        return 1
    if secs:
        print('fuzz %s: %s executions per second' % (name, secs.group(1)))
    return 0


if __name__ == '__main__':
    sys.exit(main())
