#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""
run-suites.py -- the main build, the test VMs' set-up and every suite of
tests/budgets, run side by side on the cores of this machine (./test.sh).

A job is the main build, a set-up of the test VM (Debian 12, Debian 13),
one `meson test` run of a suite, or one run per test of a VM suite; the
sanitizer suites (asan, tsan, fuzz) configure and build their own build
directories in a job of their own (SUITE-build), a set-up like the main
build, and their tests in another. A job starts once what it needs is done and
while the cores it keeps busy (tests/budgets) are free: the longest first,
the set-ups and the build before the suites that wait for them, and a
shorter job in a core that a longer one cannot use yet; a job whose cores
are fractional (the cluster) beside one whole job, and then beside it one
more at a lower priority. Two
guests may run side by side (RPMA_VM_SLOTS, tests/vm/lib.sh). Each job's
output goes to BUILDDIR/meson-logs/run/JOB.log and its meson test log to
meson-logs/JOB.json of its build directory; BUILDDIR/meson-logs/run/jobs.json
lists them all, for tests/summary.py.

usage: run-suites.py BUILDDIR [--cores N] [--no-vm] [--no-trixie]
                     [--only SUITE[,SUITE...]]

--no-vm leaves out the set-up of the test VM (a host with an RDMA device of
its own runs the VM suites on its device), --no-trixie the Debian 13 one
(the build has no suite that needs it). --only runs those suites (and what
they need). Exit status: 0 when every job succeeded, 1 otherwise.
"""

import argparse
import json
import os
import shlex
import subprocess
import sys
import time

TESTS = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(TESTS)

# The builds of their own: the options they are configured with and what
# they run. asan reruns the device-free suites under AddressSanitizer and
# UndefinedBehaviorSanitizer; tsan the unit and C++ tests under
# ThreadSanitizer; fuzz the decoders of network bytes under libFuzzer
# (clang). asan and tsan build at -O0 with debug information: the
# instrumented -O2 build costs about 2.5 times the processor time to
# compile (244 s against 98 s for asan on 2 cores), its tests run short
# either way (11 s against 15 s), and -O0 leaves every access in place
# for the sanitizers to check.
OWN_BUILDS = {
    'asan': {
        'suffix': '-sanitize',
        # -Dexamples=false: meson test builds every target first, and the
        # examples and benchmarks, a third of the objects, run in no suite
        # of this build
        'options': ['-Dwerror=true', '-Dbuildtype=debug', '-Db_sanitize=address,undefined',
                    '-Db_lundef=false', '-Drdma_tests=disabled', '-Dman_checks=disabled',
                    '-Dexamples=false'],
        'env': {'UBSAN_OPTIONS': 'halt_on_error=1:print_stacktrace=1'},
        'suites': ['unit', 'cxx', 'abi'],
        'targets': None,  # every target: what the suites run
    },
    'tsan': {
        'suffix': '-tsan',
        'options': ['-Dwerror=true', '-Dbuildtype=debug', '-Db_sanitize=thread',
                    '-Db_lundef=false', '-Drdma_tests=disabled', '-Dman_checks=disabled',
                    '-Dpmem2=disabled'],
        'env': {'TSAN_OPTIONS': 'halt_on_error=1:second_deadlock_stack=1'},
        'suites': ['tsan'],
        'targets': 'tsan-targets',
    },
    'fuzz': {
        'suffix': '-fuzz',
        # -Dpmem2=auto, said: libsodium, which disabled turns off, is what the
        # targets of the pre-shared key handshake take (tests/fuzz/meson.build),
        # and a build configured before with it disabled keeps what it was
        # told until told otherwise
        'options': ['-Dwerror=true', '-Dfuzzer=true', '-Drdma_tests=disabled',
                    '-Dman_checks=disabled', '-Dpmem2=auto'],
        'env': {'CC': 'clang', 'CXX': 'clang++'},
        'suites': ['fuzz'],
        'targets': 'fuzz-targets',
    },
}

# Estimates of the set-ups, for the order only: on a fresh machine the
# VMs' set-ups take minutes (downloads, kernel modules built), cached a
# second.
SETUP_SECONDS = {'build': 90, 'vm': 240, 'vm-trixie': 240}
# the cores a VM's set-up keeps busy, for its own start only (beside)
SETUP_CORES = 0.25
# A command run at a lower priority than the others: nice, and, where the
# kernel groups the processes of a session (each job is one) and shares
# the cores among the groups, the same for its group.
LOWER = ['sh', '-c', 'echo 10 >/proc/self/autogroup 2>/dev/null; exec nice -n 10 "$@"', 'lower']


def read_budgets(path):
    """The rows of tests/budgets: dicts of suite, seconds, cores, runs, needs."""
    rows = []
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            line = line.split('#', 1)[0].split()
            if not line:
                continue
            if len(line) < 5 or line[3] not in ('suite', 'tests'):
                sys.exit(f'{path}:{lineno}: expected "suite seconds cores suite|tests needs..."')
            needs = [n for n in line[4:] if n != '-']
            rows.append({'suite': line[0], 'seconds': int(line[1]), 'cores': float(line[2]),
                         'runs': line[3], 'needs': needs})
    return rows


class Job:
    def __init__(self, name, cmd, cores, seconds, needs=(), suite=None, cwd=TOP, env=None,
                 testlog=None, label=None, beside=False):
        self.name = name
        self.cmd = cmd
        self.cores = cores
        self.seconds = seconds
        self.needs = list(needs)
        self.suite = suite
        self.cwd = cwd
        self.env = env or {}
        self.testlog = testlog
        self.label = label
        # runs beside the others, niced: its cores are not counted for theirs
        self.beside = beside
        # started beside a job of fractional cores, at the lower priority
        self.companion = False
        self.proc = None
        self.log = None
        self.start = self.end = None
        self.status = None  # 'passed', 'failed', 'not run'
        self.why = ''
        self.cpu = 0.0  # user and system seconds of the job and its descendants
        self.priority = 0.0


def meson_tests(build):
    """name -> first suite of every test of a configured build"""
    out = subprocess.run(['meson', 'introspect', build, '--tests'], stdout=subprocess.PIPE,
                         check=True, text=True).stdout
    tests = {}
    for t in json.loads(out):
        suites = [s.split(':')[-1] for s in t['suite']]
        tests[t['name']] = suites
    return tests


def meson_test_cmd(build, logbase, cores, selection):
    return ['meson', 'test', '-C', build, '--no-rebuild', '--print-errorlogs',
            '--num-processes', str(max(1, int(cores))), '--logbase', logbase] + selection


def plan(args, budgets):
    build = os.path.abspath(args.build)
    logdir = os.path.join(build, 'meson-logs', 'run')
    tests = meson_tests(build)
    jobs = []
    # The VMs' set-ups run beside the rest, at a lower priority, and hold no
    # cores: on a fresh machine they mostly wait for downloads and
    # debootstrap, and the Debian 13 one, which builds the tree in its root,
    # is needed only by the suites that start last. Counted at a quarter of
    # a core each, they kept a second guest from starting for minutes while
    # a core idled.
    jobs.append(Job('build', ['ninja', '-C', build, f'-j{args.cores}'], args.cores,
                    SETUP_SECONDS['build']))
    setups = {'build'}
    if not args.no_vm:
        jobs.append(Job('vm-setup', LOWER + [os.path.join(TESTS, 'vm', 'setup.sh'), build],
                        SETUP_CORES, SETUP_SECONDS['vm'], beside=True))
        setups.add('vm')
        if not args.no_trixie:
            jobs.append(Job('vm-setup-trixie', LOWER + [os.path.join(TESTS, 'vm', 'setup.sh'),
                                                        build, '--flavor', 'trixie'],
                            SETUP_CORES, SETUP_SECONDS['vm-trixie'], beside=True))
            setups.add('vm-trixie')
    setup_job = {'build': 'build', 'vm': 'vm-setup', 'vm-trixie': 'vm-setup-trixie'}
    absent = []
    for row in budgets:
        suite = row['suite']
        if args.only and suite not in args.only:
            continue
        needs = [setup_job[n] for n in row['needs'] if n in setups]
        if suite in OWN_BUILDS:
            # Its build is a set-up of its own, like the main build's: the
            # suite's budget is for its tests. meson test would build every
            # target first; with the build done it is told not to.
            own = OWN_BUILDS[suite]
            bdir = build + own['suffix']
            script = [os.path.join(TESTS, 'configure.sh'), bdir] + own['options']
            steps = [' '.join(shlex.quote(a) for a in script),
                     f'ninja -C {shlex.quote(bdir)} -j{int(row["cores"])} {own["targets"] or ""}']
            jobs.append(Job(suite + '-build', ['sh', '-c', ' && '.join(steps)], row['cores'],
                            SETUP_SECONDS['build'], needs, env=own['env']))
            sel = [a for s in own['suites'] for a in ('--suite', s)]
            jobs.append(Job(suite, meson_test_cmd(bdir, suite, row['cores'], sel),
                            row['cores'], row['seconds'],
                            needs + [suite + '-build'], suite=suite, env=own['env'],
                            testlog=os.path.join(bdir, 'meson-logs', suite + '.json'),
                            label=suite))
            continue
        names = [n for n, s in tests.items() if s[0] == suite]
        if not names:
            absent.append(suite)
            continue
        if row['runs'] == 'suite':
            jobs.append(Job(suite, meson_test_cmd(build, suite, row['cores'], ['--suite', suite]),
                            row['cores'], row['seconds'], needs + ['build'], suite=suite,
                            testlog=os.path.join(build, 'meson-logs', suite + '.json')))
        else:
            # each test its share of the suite's budget, for the order; a
            # guest gets as many vCPUs as the cores its run may keep busy
            for n in names:
                jobs.append(Job(n, meson_test_cmd(build, n, row['cores'], [n]), row['cores'],
                                row['seconds'] / len(names), needs + ['build'], suite=suite,
                                env={'RPMA_VM_CPUS': str(max(1, int(row['cores'])))},
                                testlog=os.path.join(build, 'meson-logs', n + '.json')))
    # a test of a suite that tests/budgets does not name would never run
    named = {r['suite'] for r in budgets}
    unnamed = sorted({s[0] for s in tests.values()} - named)
    if unnamed and not args.only:
        sys.exit('run-suites: tests/budgets names no budget for the suite(s) '
                 + ', '.join(unnamed))
    for j in jobs:
        j.needs = sorted(set(j.needs) - {j.name})
        j.log = os.path.join(logdir, j.name + '.log')
    return jobs, absent, logdir


def prioritize(jobs):
    """Each job's priority: the longest chain of work that waits for it
    (its own time and that of what needs it, on and on)."""
    by_name = {j.name: j for j in jobs}
    users = {j.name: [] for j in jobs}
    for j in jobs:
        for n in j.needs:
            users.setdefault(n, []).append(j)
    memo = {}

    def chain(j):
        if j.name not in memo:
            memo[j.name] = j.seconds + max((chain(u) for u in users.get(j.name, ())),
                                           default=0)
        return memo[j.name]

    for j in by_name.values():
        j.priority = chain(j)


def clock(t0):
    s = int(time.monotonic() - t0)
    return f'{s // 60:3d}:{s % 60:02d}'


def run(jobs, cores, logdir, t0):
    os.makedirs(logdir, exist_ok=True)
    pending = sorted(jobs, key=lambda j: -j.priority)
    running = []
    done = {}
    base_env = dict(os.environ)
    # a guest keeps a core busy: as many side by side as there are cores
    base_env.setdefault('RPMA_VM_SLOTS', str(max(1, int(cores))))
    while pending or running:
        used = sum(j.cores for j in running if not j.beside)
        # A job whose cores are an average (the cluster's two guests, 1.5)
        # leaves part of a core that no whole job fits in. One job that
        # waits for a core may take it, at the lower priority (LOWER), so
        # that it takes only what the other leaves idle; it holds its cores
        # as any job does.
        fraction_running = any(r.cores % 1 for r in running if not r.beside)
        companion_running = any(r.companion for r in running)
        for j in list(pending):
            if any(n not in done for n in j.needs):
                continue
            failed_need = [n for n in j.needs
                           if done[n] == 'failed' and (n == 'build' or n.endswith('-build'))]
            if failed_need:
                pending.remove(j)
                j.status, j.why = 'not run', 'the build failed'
                j.start = j.end = time.monotonic()
                done[j.name] = 'failed'
                print(f'{clock(t0)}  {j.name}: not run, the build failed', flush=True)
                continue
            companion = False
            if running and not j.beside and used + j.cores > cores + 1e-9:
                # the job of fractional cores beside one whole job: else the
                # whole jobs that keep coming take each core it frees, and
                # it runs last, alone, with part of a core idle throughout
                fractional_fits = (j.cores % 1 and not fraction_running and
                                   used + j.cores <= cores + 0.5 + 1e-9)
                companion_fits = (fraction_running and not companion_running and
                                  j.cores % 1 == 0 and used + j.cores <= cores + 0.5 + 1e-9)
                if not (fractional_fits or companion_fits):
                    continue
                companion = companion_running = bool(companion_fits)
            if j.cores % 1 and not j.beside:
                fraction_running = True
            j.companion = companion
            env = dict(base_env)
            env.update(j.env)
            # what a suite's own runner may size itself by (tests/mutation)
            env['RPMA_TEST_CORES'] = str(max(1, int(j.cores)))
            with open(j.log, 'wb') as log:
                j.proc = subprocess.Popen((LOWER if companion else []) + j.cmd, cwd=j.cwd,
                                          env=env, stdout=log,
                                          stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                          start_new_session=True)
            j.start = time.monotonic()
            pending.remove(j)
            running.append(j)
            if not j.beside:
                used += j.cores
        time.sleep(0.2)
        for j in list(running):
            # wait4, not poll: the processor time of the job and of every
            # descendant it waited for (compilers, QEMU), which the summary
            # prints beside the wall-clock time
            pid, status, usage = os.wait4(j.proc.pid, os.WNOHANG)
            if pid == 0:
                continue
            rc = j.proc.returncode = os.waitstatus_to_exitcode(status)
            j.cpu = usage.ru_utime + usage.ru_stime
            j.end = time.monotonic()
            running.remove(j)
            j.status = 'passed' if rc == 0 else 'failed'
            if rc != 0:
                j.why = f'exit status {rc}'
            done[j.name] = j.status
            took = j.end - j.start
            print(f'{clock(t0)}  {j.name}{" (" + j.suite + ")" if j.suite and j.suite != j.name else ""}: '
                  f'{j.status} in {took:.0f} s{", at the lower priority" if j.companion else ""}',
                  flush=True)


def main():
    ap = argparse.ArgumentParser(prog='tests/run-suites.py',
                                 description='the build, the VMs\' set-up and the suites, '
                                 'side by side')
    ap.add_argument('build')
    ap.add_argument('--cores', type=int, default=os.cpu_count() or 1)
    ap.add_argument('--no-vm', action='store_true')
    ap.add_argument('--no-trixie', action='store_true')
    ap.add_argument('--only', type=lambda s: [x for x in s.split(',') if x])
    ap.add_argument('--budgets', default=os.path.join(TESTS, 'budgets'))
    args = ap.parse_args()

    budgets = read_budgets(args.budgets)
    jobs, absent, logdir = plan(args, budgets)
    prioritize(jobs)
    # the logs of an earlier run are not this run's
    for j in jobs:
        for f in (j.log, j.testlog):
            if f and os.path.exists(f):
                os.remove(f)
    t0 = time.monotonic()
    print(f'run-suites: {len(jobs)} jobs on {args.cores} cores; each job\'s output in {logdir}/',
          flush=True)
    try:
        run(jobs, args.cores, logdir, t0)
    except KeyboardInterrupt:
        for j in jobs:
            if j.proc and j.proc.poll() is None:
                os.killpg(j.proc.pid, 15)
        raise
    manifest = {
        'cores': args.cores,
        'wall': time.monotonic() - t0,
        'budgets': {r['suite']: r['seconds'] for r in budgets},
        'absent': absent,
        'jobs': [{'name': j.name, 'suite': j.suite, 'label': j.label, 'status': j.status,
                  'why': j.why, 'seconds': round((j.end or 0) - (j.start or 0), 1),
                  'cores': j.cores, 'cpu': round(j.cpu, 1),
                  'started': round((j.start or t0) - t0, 1), 'log': j.log,
                  'testlog': j.testlog} for j in jobs],
    }
    with open(os.path.join(logdir, 'jobs.json'), 'w') as f:
        json.dump(manifest, f, indent=1)
    # what a job that is not a meson test run printed, when it failed: the
    # tests' own reasons are in the summary
    for j in jobs:
        if j.status == 'failed' and not j.suite:
            print(f'run-suites: {j.name} failed ({j.why}); the end of {j.log}:')
            with open(j.log, errors='replace') as f:
                for line in f.readlines()[-40:]:
                    print('    ' + line.rstrip())
    return 0 if all(j.status == 'passed' for j in jobs) else 1


if __name__ == '__main__':
    sys.exit(main())
