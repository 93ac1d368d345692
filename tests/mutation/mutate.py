#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""
mutate.py -- the mutation runner behind tests/mutation/run.sh

A scratch copy of the tree (the files git knows of, as they are in the
working tree, plus the untracked files git does not ignore) is configured
once with Meson, built once and tested once (the baseline). Then, for each
mutant of the catalogue, one text fragment of one file of the copy is
replaced, the unit test targets are rebuilt (only what the file feeds
recompiles), the killing suites run until the first failure, and the file
gets its original bytes back. The tree the script was started from is
only read.
"""

import argparse
import contextlib
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TREE = os.path.dirname(os.path.dirname(HERE))
MARKER = '.rpma-mutation-scratch'
# the suites that must kill a mutant; crashmodel only where it exists
KILLING_SUITES = ('unit', 'crashmodel')
# what the killing suites need and nothing else: no VM, no man pages (pmem2
# stays auto: the crashmodel suite needs libpmem2's header; only the test
# targets are built anyway). -O1 without debug information (assertions
# kept) recompiles and relinks about twice as fast as the default
# debugoptimized; the same for the baseline and every mutant.
MESON_OPTIONS = [
    '-Doptimization=1',
    '-Ddebug=false',
    '-Db_ndebug=false',
    '-Dwerror=false',
    '-Dtests=true',
    '-Dfuzzer=false',
    '-Drdma_tests=disabled',
    '-Dvm_trixie=disabled',
    '-Dman_checks=disabled',
]
# The copy for the mutants of memory ordering (sanitize: thread): a release
# made relaxed changes nothing a strongly ordered machine (x86) shows, and
# the fake rdma-core's own locks order the threads of most tests besides;
# ThreadSanitizer sees the race it opens. Its tests run as the tsan suite's
# do: the first report ends them.
TSAN_MESON_OPTIONS = MESON_OPTIONS + ['-Db_sanitize=thread', '-Db_lundef=false',
                                      '-Dpmem2=disabled']
TSAN_ENV = {'TSAN_OPTIONS': 'halt_on_error=1:second_deadlock_stack=1'}
# the compiler cache's directory in the scratch directory
CACHE = 'ccache'


def use_ccache(scratch):
    """
    With ccache installed, the copies compile through it (meson finds it),
    into a cache of the scratch directory that the next run keeps. Each
    mutant compiles the objects of its file twice, mutated and then restored
    for the next mutant: the restored ones, and the second copy's baseline,
    are found in the cache instead. True when it is used.
    """
    if not shutil.which('ccache'):
        return False
    os.environ['CCACHE_DIR'] = os.path.join(scratch, CACHE)
    # the copies' paths differ (w0/, w1/): compile commands relative to the
    # scratch directory are the same for both
    os.environ['CCACHE_BASEDIR'] = scratch
    os.environ['CCACHE_NOHASHDIR'] = '1'
    os.environ.setdefault('CCACHE_MAXSIZE', '1G')
    return True


class CatalogueError(Exception):
    pass


def unescape(text, where):
    """The escapes of a catalogue value: \\n, \\t, \\s (a space) and \\\\."""
    out = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == '\\':
            if i + 1 >= len(text):
                raise CatalogueError(f'{where}: a lone backslash at the end of the value')
            n = text[i + 1]
            if n == 'n':
                out.append('\n')
            elif n == 't':
                out.append('\t')
            elif n == '\\':
                out.append('\\')
            elif n == 's':
                out.append(' ')
            else:
                raise CatalogueError(f'{where}: unknown escape \\{n}')
            i += 2
        else:
            out.append(c)
            i += 1
    return ''.join(out)


def parse_catalogue(path):
    """The mutants of the catalogue, in its order: dicts of id, file, desc, from, to."""
    mutants = []
    current = None
    with open(path, encoding='utf-8') as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.rstrip('\n')
            where = f'{path}:{lineno}'
            if not line.strip() or line.lstrip().startswith('#'):
                continue
            if line.startswith('[') and line.rstrip().endswith(']'):
                ident = line.strip()[1:-1].strip()
                if not ident or any(c.isspace() for c in ident) or ',' in ident:
                    raise CatalogueError(f'{where}: bad mutant id {ident!r}')
                current = {'id': ident, 'line': lineno}
                mutants.append(current)
                continue
            if current is None:
                raise CatalogueError(f'{where}: a field before the first [id]')
            key, sep, value = line.partition(':')
            key = key.strip()
            if not sep or key not in ('file', 'desc', 'from', 'to', 'tests', 'equivalent',
                                      'sanitize'):
                raise CatalogueError(f'{where}: expected "file:", "desc:", "from:", "to:", '
                                     f'"tests:", "equivalent:" or "sanitize:"')
            if key in current:
                raise CatalogueError(f'{where}: {key} given twice for {current["id"]}')
            # one space after the colon belongs to the syntax; \s keeps others
            if value.startswith(' '):
                value = value[1:]
            if key in ('from', 'to'):
                current[key] = unescape(value, where)
            elif key == 'tests':
                current[key] = [t for t in value.replace(',', ' ').split() if t]
            else:
                current[key] = value.strip()
                if key == 'equivalent' and not current[key]:
                    raise CatalogueError(f'{where}: "equivalent:" without the reason why '
                                         f'no test can tell the mutant apart')
                if key == 'sanitize' and current[key] != 'thread':
                    raise CatalogueError(f'{where}: "sanitize:" takes "thread" only')
    seen = set()
    for m in mutants:
        for key in ('file', 'desc', 'from', 'to'):
            if key not in m:
                raise CatalogueError(f'{path}:{m["line"]}: mutant {m["id"]} has no {key}')
        if m['from'] == m['to']:
            raise CatalogueError(f'{path}:{m["line"]}: mutant {m["id"]} changes nothing')
        if not m['from']:
            raise CatalogueError(f'{path}:{m["line"]}: mutant {m["id"]} has an empty fragment')
        if m['id'] in seen:
            raise CatalogueError(f'{path}:{m["line"]}: mutant id {m["id"]} used twice')
        if 'sanitize' in m and not m.get('tests'):
            raise CatalogueError(f'{path}:{m["line"]}: mutant {m["id"]} is tried under '
                                 f'ThreadSanitizer only: it needs "tests:"')
        seen.add(m['id'])
    return mutants


def say(text=''):
    print(text, flush=True)


def run_logged(cmd, log_path, cwd=None, timeout=None):
    """Runs cmd with its output in log_path; its exit status (None: timed out)."""
    with open(log_path, 'wb') as log:
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            return proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            kill_group(proc)
            return None


def kill_group(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def prepare_scratch(scratch):
    """
    An empty scratch directory of ours (never anyone else's directory); a
    reason why not, or None.
    """
    if os.path.exists(scratch):
        if not os.path.isdir(scratch):
            return f'{scratch} is not a directory'
        if os.listdir(scratch) and not os.path.exists(os.path.join(scratch, MARKER)):
            return (f'{scratch} is not empty and not a scratch directory of this runner '
                    f'({MARKER} missing): refusing to wipe it')
        if os.path.realpath(TREE).startswith(os.path.realpath(scratch) + os.sep) or \
                os.path.realpath(TREE) == os.path.realpath(scratch):
            return f'{scratch} holds the tree itself'
        for entry in os.listdir(scratch):
            if entry == CACHE:
                continue  # the compiler cache outlives a run (use_ccache)
            path = os.path.join(scratch, entry)
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path)
            else:
                os.remove(path)
    os.makedirs(scratch, exist_ok=True)
    with open(os.path.join(scratch, MARKER), 'w') as f:
        f.write('made by tests/mutation/run.sh; wiped by its next run\n')
    return None


def copy_tree(dest):
    """The files git knows of (and untracked ones it does not ignore), as they are now."""
    out = subprocess.run(['git', '-C', TREE, 'ls-files', '-z', '--cached', '--others',
                          '--exclude-standard'], check=True, stdout=subprocess.PIPE).stdout
    count = 0
    for rel in sorted(set(p for p in out.decode().split('\0') if p)):
        src = os.path.join(TREE, rel)
        if not os.path.lexists(src):
            continue  # deleted in the working tree, not yet in the index
        dst = os.path.join(dest, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if os.path.islink(src):
            os.symlink(os.readlink(src), dst)
        elif os.path.isfile(src):
            shutil.copy2(src, dst)
        else:
            continue
        count += 1
    return count


class Suite:
    """The killing tests of a configured build: what to build and how to run them."""

    def __init__(self, build, parallel=2, learned=None, jobs=2):
        self.build = build
        self.parallel = parallel  # tests run at once
        self.jobs = jobs  # ninja's jobs: a worker whose mutant recompiles many
        # objects may use the cores another leaves idle
        info = os.path.join(build, 'meson-info')
        with open(os.path.join(info, 'intro-tests.json')) as f:
            tests = json.load(f)
        with open(os.path.join(info, 'intro-targets.json')) as f:
            targets = {t['id']: t for t in json.load(f)}
        self.tests = []
        self.suites = set()
        self.outputs = {}  # test name -> what must be built to run it
        for t in tests:
            names = set(s.split(':')[-1] for s in t['suite'])
            if not names & set(KILLING_SUITES):
                continue
            self.suites |= names & set(KILLING_SUITES)
            # one name per test: it names its log file too
            base, n = t['name'], 1
            while t['name'] in self.outputs:
                n += 1
                t['name'] = f'{base}#{n}'
            self.tests.append(t)
            self.outputs[t['name']] = set(
                os.path.relpath(fn, build) for dep in t.get('depends', [])
                for fn in targets.get(dep, {}).get('filename', []))
        self.duration = {t['name']: 0.0 for t in self.tests}
        self.fast = FastLink(build)
        # test name -> mutants it killed, shared by the workers
        self.kills = learned if learned is not None else {}

    def limit(self, test):
        """
        How long a test may run before it counts as hung: its meson timeout
        for the baseline; for a mutant, ten times what it took in the
        baseline on this machine, and at least 10 s (a test that waits for
        a completion that never comes waits until its own timeout, and
        every mutant that makes one hang would cost that much)
        """
        meson_limit = test.get('timeout') or 0
        base = self.duration.get(test['name'], 0.0)
        if base <= 0:
            return meson_limit
        mine = max(10.0, 10 * base)
        return min(mine, meson_limit) if meson_limit > 0 else mine

    def build_cmd(self, tests=None):
        """ninja for what the tests (all of them by default) need."""
        outputs = set()
        for t in self.tests if tests is None else tests:
            outputs |= self.outputs[t['name']]
        return ['ninja', '-C', self.build, f'-j{self.jobs}'] + sorted(outputs)

    def fast_tests(self, tests, log_path):
        """
        The tests, each running its executable's fast copy (FastLink) built
        now; None when one of them cannot have one.
        """
        runnable = []
        for t in tests:
            outputs = self.outputs[t['name']]
            if len(outputs) != 1:
                return None
            exe = next(iter(outputs))
            exe_path = os.path.join(self.build, exe)
            if exe_path not in t['cmd']:
                return None
            copy = self.fast.make(exe, log_path, self.jobs)
            if copy is None:
                return None
            runnable.append(dict(t, cmd=[copy if c == exe_path else c for c in t['cmd']]))
        return runnable

    def order(self, first=()):
        """
        The tests in the order a mutant's run starts them: those named in
        first, then those that killed the most mutants so far, then the
        shortest (in the baseline) first.
        """
        rank = {name: i for i, name in enumerate(first)}
        return sorted(self.tests,
                      key=lambda t: (rank.get(t['name'], len(rank)),
                                     -self.kills.get(t['name'], 0),
                                     self.duration[t['name']]))

    def likely_killers(self, order, hinted, first=()):
        """
        The tests to build and run alone first: those the catalogue names
        for the mutant, or else the first two of order if they are known
        to kill mutants at all.
        """
        if hinted:
            return [t for t in order if t['name'] in hinted]
        head = order[:2]
        if all(t['name'] in first or self.kills.get(t['name']) for t in head):
            return head
        return []

    def run(self, tests, log_dir, deadline=None, stop_early=True, record=False):
        """
        Runs tests, in their order, parallel at a time. Returns (verdict, test
        name): verdict 'pass', 'fail' or 'timeout'; with stop_early the
        first failure ends the run. record: keep their durations.
        """
        pending = list(tests)
        running = []  # (test, proc, start, log path)
        failed = None
        try:
            while pending or running:
                while pending and len(running) < self.parallel:
                    t = pending.pop(0)
                    env = dict(os.environ)
                    env.update(t.get('env') or {})
                    log_path = os.path.join(log_dir, t['name'] + '.log')
                    with open(log_path, 'wb') as log:
                        proc = subprocess.Popen(t['cmd'], cwd=t.get('workdir') or self.build,
                                                env=env, stdout=log, stderr=subprocess.STDOUT,
                                                stdin=subprocess.DEVNULL,
                                                start_new_session=True)
                    running.append((t, proc, time.monotonic(), log_path))
                time.sleep(0.005)
                now = time.monotonic()
                for entry in list(running):
                    t, proc, started, log_path = entry
                    rc = proc.poll()
                    if rc is None:
                        limit = self.limit(t)
                        if (limit > 0 and now - started > limit) or \
                                (deadline is not None and now > deadline):
                            kill_group(proc)
                            return 'timeout', t['name']
                        continue
                    running.remove(entry)
                    if record:
                        self.duration[t['name']] = now - started
                    if not passed(t, rc, log_path):
                        failed = failed or t['name']
                        if stop_early:
                            return 'fail', failed
        finally:
            for _, proc, _, _ in running:
                if proc.poll() is None:
                    kill_group(proc)
        if failed:
            return 'fail', failed
        return 'pass', None


class FastLink:
    """
    A test's executable linked from only the library objects it uses.

    A header that most of src/ includes makes ninja recompile every object
    of the library before it relinks any test, though a small test (of the
    log, of a decoder) links two or three of them. Where a test is to run
    alone first (test_mutant), its executable is linked beside the real one
    instead: the objects it takes from each static library (ld -t -t on its
    unmutated link) are rebuilt by ninja, archived apart, and linked by the
    test's own command. The unit tests' copy of the library with its
    allocations renamed (tests/unit/alloc_hooks) is made the same way, by
    its own command, from an archive of just those objects. Whatever does
    not fit (no such link, a member that cannot be told, a link that fails)
    falls back to ninja's own build of the test: the verdict is never the
    fast link's alone.
    """

    def __init__(self, build):
        self.build = build
        self.dir = os.path.join(build, 'mutation-fast')
        self.plans = {}  # executable -> plan, or None when it cannot be linked so

    def ninja_command(self, target):
        out = subprocess.run(['ninja', '-C', self.build, '-t', 'commands', '-s', target],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        lines = out.stdout.strip().splitlines()
        return shlex.split(lines[-1]) if out.returncode == 0 and lines else None

    def thin_members(self, archive):
        path = os.path.join(self.build, archive)
        try:
            with open(path, 'rb') as f:
                if f.read(8) != b'!<thin>\n':
                    return None
        except OSError:
            return None
        # from the build directory, ar names a thin archive's members as
        # ninja does: paths from there
        out = subprocess.run(['ar', 't', archive], cwd=self.build, stdout=subprocess.PIPE,
                             text=True)
        return [os.path.normpath(m) for m in out.stdout.split()] if out.returncode == 0 else None

    def plan(self, exe):
        """
        How to link exe from the objects it uses: its link command, and for
        each static library of the build that it links, the objects it
        takes and, for a copy made from another library, the command that
        makes it. None when it cannot be linked so.
        """
        if exe in self.plans:
            return self.plans[exe]
        self.plans[exe] = None
        cmd = self.ninja_command(exe)
        if not cmd or '-o' not in cmd or cmd[cmd.index('-o') + 1] != exe:
            return None
        if any(a.startswith('@') for a in cmd):
            return None  # a response file: not read here
        local = [a for a in cmd if a.endswith('.a') and not os.path.isabs(a) and
                 os.path.exists(os.path.join(self.build, a))]
        if not local:
            return None
        # the members the unmutated link takes: "(ARCHIVE)MEMBER" lines
        probe = os.path.join(self.dir, 'probe')
        os.makedirs(self.dir, exist_ok=True)
        traced = subprocess.run(self.link(cmd, exe, probe, {}) + ['-Wl,-t,-t'],
                                cwd=self.build, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
        if traced.returncode != 0:
            del self.plans[exe]  # perhaps objects left by a mutant: tried again next time
            return None
        # ld names a member of a thin archive by its path, another one as
        # "(ARCHIVE)MEMBER"
        lines = set(traced.stdout.splitlines())
        taken = {a: [] for a in local}
        for line in lines:
            if line.startswith('(') and ')' in line:
                archive, member = line[1:].split(')', 1)
                if archive in taken:
                    taken[archive].append(member)
        archives = {}
        for a in local:
            members = self.thin_members(a)
            if members is not None:
                # a library of its own objects: the members are the objects
                archives[a] = {'objects': [m for m in members if m in lines], 'made': None}
                continue
            # a copy made from one thin library by a command of its own
            made = self.ninja_command(a)
            sources = [x for x in (made or []) if x.endswith('.a') and x != a and
                       self.thin_members(x) is not None]
            if not made or len(sources) != 1:
                return None
            by_name = {os.path.basename(m): m for m in self.thin_members(sources[0])}
            objects = []
            for member in taken[a]:
                # the copy's members are named NNN-OBJECT (alloc_rename.py)
                name = member.split('-', 1)[1] if member[:3].isdigit() else member
                if name not in by_name:
                    return None
                objects.append(by_name[name])
            archives[a] = {'objects': objects, 'made': made, 'source': sources[0]}
        others = [a for a in cmd[1:] if a.endswith('.o') and not os.path.isabs(a)]
        self.plans[exe] = {'cmd': cmd, 'archives': archives, 'objects': others}
        return self.plans[exe]

    @staticmethod
    def link(cmd, exe, out, replace):
        argv = [out if a == exe else replace.get(a, a) for a in cmd]
        return [a for a in argv if a is not None]

    def make(self, exe, log_path, jobs):
        """
        Builds exe's fast copy from the current sources: its path, or None
        (then ninja builds the real one).
        """
        plan = self.plan(exe)
        if plan is None:
            return None
        targets = set(plan['objects'])
        for entry in plan['archives'].values():
            targets.update(entry['objects'])
        with open(log_path, 'ab') as log:
            def step(argv):
                log.write(('$ ' + ' '.join(argv) + '\n').encode())
                log.flush()
                return subprocess.run(argv, cwd=self.build, stdout=log,
                                      stderr=subprocess.STDOUT).returncode == 0

            if not step(['ninja', '-C', self.build, f'-j{jobs}'] + sorted(targets)):
                return None
            replace = {}
            for i, (archive, entry) in enumerate(sorted(plan['archives'].items())):
                if not entry['objects']:
                    replace[archive] = None  # nothing of it is linked
                    continue
                part = os.path.join(self.dir, f'{i}-{os.path.basename(archive)}')
                if os.path.exists(part):
                    os.remove(part)
                # a thin archive names its members from where it is
                if not step(['ar', 'rcsT', part] +
                            [os.path.join(self.build, o) for o in entry['objects']]):
                    return None
                if entry['made']:
                    copy = part[:-2] + '-copy.a'
                    argv = [part if a == entry['source'] else copy if a == archive else a
                            for a in entry['made']]
                    if not step(argv):
                        return None
                    part = copy
                replace[archive] = part
            out = os.path.join(self.dir, os.path.basename(exe))
            if not step(self.link(plan['cmd'], exe, out, replace)):
                return None
        return out


def test_mutant(suite, mlogs, timeout, first, hinted):
    """
    Builds the mutated copy and runs the tests: (status, detail, test name).
    The tests most likely to kill the mutant (hinted, or the two first in
    first and then those that killed most) are built and run first, alone:
    when one of them kills it, the other tests are not even linked. The
    tests may run timeout seconds in all, their builds not counted.
    """
    order = suite.order(list(hinted) + [f for f in first if f not in hinted])
    head = suite.likely_killers(order, hinted, first)
    phases = [head, order[len(head):]] if head else [order]
    suite.last_build_secs = 0.0
    left = timeout
    for i, tests in enumerate(phases):
        build_started = time.monotonic()
        build_log = os.path.join(mlogs, f'build{i + 1}.log')
        # the likely killers from the objects they use; the rest (and the
        # likely killers, when that cannot be done) as ninja builds them
        runnable = suite.fast_tests(tests, build_log) if head and i == 0 else None
        if runnable is None:
            rc = run_logged(suite.build_cmd(tests), build_log, timeout=600)
            if rc != 0:
                suite.last_build_secs += time.monotonic() - build_started
                return 'killed', 'does not compile', None
            runnable = tests
        suite.last_build_secs += time.monotonic() - build_started
        run_started = time.monotonic()
        verdict, name = suite.run(runnable, mlogs, deadline=run_started + left)
        left -= time.monotonic() - run_started
        if verdict == 'fail':
            return 'killed', f'by {name}', name
        if verdict == 'timeout':
            return 'TIMEOUT', f'in {name}', name
    return 'SURVIVED', '', None


def test_sanitized(suite, mlogs, timeout, hinted):
    """
    Builds the ThreadSanitizer copy's tests named by hinted and runs them:
    (status, detail, test name), as test_mutant() gives them.
    """
    tests = [t for t in suite.order(hinted) if t['name'] in hinted]
    build_started = time.monotonic()
    rc = run_logged(suite.build_cmd(tests), os.path.join(mlogs, 'build1.log'), timeout=600)
    suite.last_build_secs = time.monotonic() - build_started
    if rc != 0:
        return 'killed', 'does not compile', None
    verdict, name = suite.run(tests, mlogs, deadline=time.monotonic() + timeout)
    if verdict == 'fail':
        return 'killed', f'by {name} under ThreadSanitizer', name
    if verdict == 'timeout':
        return 'TIMEOUT', f'in {name} under ThreadSanitizer', name
    return 'SURVIVED', '', None


def passed(test, rc, log_path):
    """
    Whether a test passed: exit status 0 and, for TAP, no "not ok" and no
    bail-out. A skip (77, as meson counts it) is no failure: a test that
    could not tell (flush_claim, whose threads overlapped too little on a
    busy machine) neither fails the baseline nor kills a mutant.
    """
    if rc == 77:
        return True
    if rc != 0:
        return False
    if test.get('protocol') == 'tap':
        with open(log_path, 'rb') as f:
            for line in f:
                if line.startswith(b'not ok') or line.startswith(b'Bail out!'):
                    return False
    return True


def fragment_problem(path, m):
    """Why the mutant's fragment cannot be applied to path, or None."""
    try:
        with open(path, 'rb') as f:
            text = f.read().decode('utf-8')
    except OSError as e:
        return f'cannot read {m["file"]}: {e.strerror}'
    count = text.count(m['from'])
    if count == 0:
        return f'fragment not found in {m["file"]}'
    if count > 1:
        return f'fragment found {count} times in {m["file"]}'
    return None


def main():
    ap = argparse.ArgumentParser(prog='tests/mutation/run.sh',
                                 description='mutation testing of the library against its '
                                 'unit tests')
    ap.add_argument('scratch', nargs='?', default=os.path.join(TREE, 'build-mutation'),
                    help='scratch directory (default: build-mutation/ at the top of the tree); '
                    'wiped at the start')
    ap.add_argument('--only', metavar='ID[,ID]', help='run these mutants only')
    ap.add_argument('--list', action='store_true', help='list the mutants and exit')
    ap.add_argument('--check', action='store_true',
                    help='check that every fragment occurs exactly once in the tree, build '
                    'nothing, and exit (1 when one does not)')
    ap.add_argument('--timeout', type=float, default=None, metavar='S',
                    help='the longest the tests of one mutant may run in all, builds not '
                    'counted (default: ten times what the unmutated copy took, at least '
                    '30 s); a mutant that makes them run longer is a TIMEOUT')
    ap.add_argument('--jobs', type=int, metavar='N',
                    default=int(os.environ.get('RPMA_TEST_CORES') or os.cpu_count() or 1),
                    help='the cores to keep busy (default: RPMA_TEST_CORES, else every core): '
                    'twice as many copies of the tree, each trying its own mutants')
    ap.add_argument('--catalogue', default=os.path.join(HERE, 'mutants.txt'),
                    help='the catalogue (default: tests/mutation/mutants.txt)')
    args = ap.parse_args()
    # run.sh --list | head: a closed pipe ends the listing quietly
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)

    try:
        mutants = parse_catalogue(args.catalogue)
    except (OSError, CatalogueError) as e:
        say(f'mutation: cannot read the catalogue: {e}')
        return 2

    if args.only:
        wanted = [w for w in args.only.split(',') if w]
        known = {m['id'] for m in mutants}
        unknown = [w for w in wanted if w not in known]
        if unknown:
            say(f'mutation: no such mutant: {", ".join(unknown)}')
            return 2
        mutants = [m for m in mutants if m['id'] in wanted]

    if args.list:
        width = max(len(m['id']) for m in mutants) if mutants else 0
        for m in mutants:
            say(f'{m["id"]:<{width}}  {m["file"]:<16}  {m["desc"]}')
        return 0

    if args.check:
        bad = 0
        for m in mutants:
            problem = fragment_problem(os.path.join(TREE, m['file']), m)
            if problem:
                bad += 1
                say(f'ERROR    {m["id"]}: {problem}')
        say(f'mutation: {len(mutants) - bad} of {len(mutants)} fragments found exactly once')
        return 1 if bad else 0

    t0 = time.monotonic()
    scratch = os.path.abspath(args.scratch)
    problem = prepare_scratch(scratch)
    if problem:
        say(f'mutation: {problem}')
        return 2
    logs = os.path.join(scratch, 'logs')
    os.makedirs(logs)
    # Two workers per core: a mutant's tests mostly sleep (the sweeps' and
    # the dead peers' timeouts), so that one worker per core kept each core
    # busy about half the time. Each builds and runs its tests one at a time.
    workers = max(1, min(2 * args.jobs, len(mutants)))
    parallel = 1
    learned = {}
    prepared = [None] * workers

    cached = use_ccache(scratch)
    # with the cache, the other copies build once the first has filled it
    first_built = threading.Event()
    if not cached:
        first_built.set()

    def prepare(i):
        try:
            # a build of many objects (the first, a header's mutant) takes
            # two cores, as the other worker mostly sleeps
            prepared[i] = prepare_worker(scratch, i, workers, parallel, learned, logs,
                                         max(2, args.jobs), first_built)
        finally:
            first_built.set()

    # the ThreadSanitizer copy, beside the workers' (it shares no compiled object)
    tsan_names = sorted({t for m in mutants if 'sanitize' in m for t in m['tests']})
    tsan_box = [None]

    def prepare_tsan_copy():
        tsan_box[0] = prepare_tsan(scratch, logs, max(2, args.jobs), tsan_names)

    threads = [threading.Thread(target=prepare, args=(i,)) for i in range(workers)]
    if tsan_names:
        threads.append(threading.Thread(target=prepare_tsan_copy))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for result in prepared + tsan_box:
        if isinstance(result, str):
            say(f'mutation: {result}')
            return 2
    tsan = tsan_box[0]
    first = prepared[0]
    for w in prepared[1:]:
        w['suite'].duration = first['suite'].duration
    names = {t['name'] for t in first['suite'].tests}
    for m in mutants:
        if 'sanitize' in m:
            continue  # prepare_tsan() found its tests, or the run stopped
        unknown = [t for t in m.get('tests', ()) if t not in names]
        if unknown:
            # only an ordering hint: a renamed test costs time, not a verdict
            say(f'mutation: warning: {m["id"]}: no test {", ".join(unknown)} in the '
                f'killing suites')
            m['tests'] = [t for t in m['tests'] if t in names]
    say(f'mutation: baseline: {len(first["suite"].tests)} tests of suite(s) '
        f'{", ".join(sorted(first["suite"].suites))} pass in {first["secs"]:.1f} s; setup and '
        f'build {time.monotonic() - t0 - first["secs"]:.0f} s; {workers} worker(s), '
        f'{parallel} core(s) each{", compiling through ccache" if cached else ""}')
    if tsan:
        say(f'mutation: ThreadSanitizer copy, for the mutants of memory ordering: '
            f'{tsan["tests"]} tests pass unmutated')

    # a deadline from this machine's own unmutated run: a slow machine is no hang
    timeout = args.timeout if args.timeout is not None else max(30.0, 10 * first['secs'])
    say(f'mutation: a mutant whose tests run longer than {timeout:.0f} s in all, or one '
        f'test ten times as long as unmutated, is a TIMEOUT')

    width = max(len(m['id']) for m in mutants) if mutants else 0
    lock = threading.Lock()
    queue = list(enumerate(mutants))
    outcome = [None] * len(mutants)
    killers = {}  # file -> the tests that killed its mutants, the latest first

    def work(w):
        suite = w['suite']
        while True:
            with lock:
                if not queue:
                    return
                index, m = queue.pop(0)
                first_tests = tuple(killers.get(m['file'], ()))
            status, detail, name, secs, build_secs = try_mutant(w, m, timeout, first_tests,
                                                                logs, tsan)
            with lock:
                if status == 'killed' and detail.startswith('by '):
                    suite.kills[name] = suite.kills.get(name, 0) + 1
                    lst = killers.setdefault(m['file'], [])
                    if name in lst:
                        lst.remove(name)
                    lst.insert(0, name)
                if 'equivalent' in m:
                    if status == 'SURVIVED':
                        status, detail = 'equivalent', m['equivalent']
                    elif status in ('killed', 'TIMEOUT'):
                        detail += '; but listed as equivalent'
                outcome[index] = (status, detail, secs, build_secs)
                tail = f' ({detail})' if detail else ''
                say(f'{status:<10} {m["id"]:<{width}}  {m["desc"]}{tail}')

    threads = [threading.Thread(target=work, args=(w,)) for w in prepared]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    killed = not_compiling = 0
    timeouts, survived, equivalent, not_equivalent, errors = [], [], [], [], []
    results = []
    for m, (status, detail, secs, build_secs) in zip(mutants, outcome):
        if status == 'killed':
            killed += 1
            not_compiling += detail == 'does not compile'
        elif status == 'TIMEOUT':
            timeouts.append(m['id'])
        elif status == 'SURVIVED':
            survived.append(m['id'])
        elif status == 'equivalent':
            equivalent.append(m['id'])
        else:
            errors.append(m['id'])
        if 'equivalent' in m and status in ('killed', 'TIMEOUT'):
            # the catalogue says no test can tell it apart, and one did
            not_equivalent.append(m['id'])
        results.append(f'{status}\t{m["id"]}\t{m["file"]}\t{secs:.1f}\t{build_secs:.1f}\t'
                       f'{detail}')

    total = len(mutants)
    with open(os.path.join(scratch, 'results.tsv'), 'w') as f:
        f.write('status\tid\tfile\tseconds\tbuild seconds\tdetail\n')
        f.write('\n'.join(results) + '\n')
    elapsed = time.monotonic() - t0

    def listed(what, ids):
        return f'{len(ids)} {what}{": " + ", ".join(ids) if ids else ""}'

    say(f'mutation: {not_compiling} killed by not compiling; {listed("timed out", timeouts)}; '
        f'{listed("survived", survived)}; {listed("equivalent as listed", equivalent)}; '
        f'{listed("listed as equivalent but told apart", not_equivalent)}; '
        f'{listed("in error", errors)}; {elapsed:.0f} s; logs in {logs}')
    say(f'mutation: {killed} of {total} killed, {len(timeouts)} timed out, '
        f'{len(equivalent)} equivalent, {len(survived)} survived')
    # every mutant is told apart by a test or listed with the reason it cannot be
    ok = total > 0 and not survived and not errors and not not_equivalent
    return 0 if ok else 1


def prepare_worker(scratch, i, workers, parallel, learned, logs, jobs, first_built):
    """
    Worker i's copy of the tree, configured, built and (the first worker's)
    tested unmutated: a dict of tree, suite and the baseline's seconds, or
    why it could not be made.
    """
    base = os.path.join(scratch, f'w{i}') if workers > 1 else scratch
    tree = os.path.join(base, 'tree')
    build = os.path.join(base, 'build')
    os.makedirs(tree)
    copy_tree(tree)
    wlogs = os.path.join(logs, f'w{i}') if workers > 1 else logs
    os.makedirs(wlogs, exist_ok=True)
    rc = run_logged(['meson', 'setup', build, tree] + MESON_OPTIONS,
                    os.path.join(wlogs, 'setup.log'))
    if rc != 0:
        return f'meson setup of the copy failed: see {wlogs}/setup.log'
    suite = Suite(build, parallel, learned, jobs)
    if not suite.tests:
        return 'the build has no test in the unit suite'
    if i > 0:
        first_built.wait()
    rc = run_logged(suite.build_cmd(), os.path.join(wlogs, 'baseline-build.log'))
    if i == 0:
        first_built.set()
    if rc != 0:
        return f'the unmutated copy does not build: see {wlogs}/baseline-build.log'
    base_logs = os.path.join(wlogs, 'baseline')
    os.makedirs(base_logs)
    started = time.monotonic()
    # the first worker's baseline: every test passes, and how long each takes
    # orders the runs of the mutants
    secs = 0.0
    if i == 0:
        verdict, name = suite.run(suite.order(), base_logs, stop_early=False, record=True)
        secs = time.monotonic() - started
        if verdict != 'pass':
            return (f'the unmutated copy fails its tests ({verdict}: {name}): '
                    f'see {base_logs}/')
    return {'tree': tree, 'suite': suite, 'secs': secs}


def prepare_tsan(scratch, logs, jobs, names):
    """
    The copy of the tree for the mutants of memory ordering, configured for
    ThreadSanitizer, with the tests names (those the mutants name) built and
    passing unmutated: a dict of tree, suite and lock, or why it could not
    be made.
    """
    base = os.path.join(scratch, 'tsan')
    tree = os.path.join(base, 'tree')
    build = os.path.join(base, 'build')
    os.makedirs(tree)
    copy_tree(tree)
    tlogs = os.path.join(logs, 'tsan')
    os.makedirs(tlogs, exist_ok=True)
    rc = run_logged(['meson', 'setup', build, tree] + TSAN_MESON_OPTIONS,
                    os.path.join(tlogs, 'setup.log'))
    if rc != 0:
        return f'meson setup of the ThreadSanitizer copy failed: see {tlogs}/setup.log'
    suite = Suite(build, 1, None, jobs)
    for t in suite.tests:
        t['env'] = dict(t.get('env') or {}, **TSAN_ENV)
    tests = [t for t in suite.tests if t['name'] in names]
    missing = set(names) - {t['name'] for t in tests}
    if missing:
        return f'the ThreadSanitizer copy has no test {", ".join(sorted(missing))}'
    rc = run_logged(suite.build_cmd(tests), os.path.join(tlogs, 'baseline-build.log'))
    if rc != 0:
        return f'the ThreadSanitizer copy does not build: see {tlogs}/baseline-build.log'
    base_logs = os.path.join(tlogs, 'baseline')
    os.makedirs(base_logs)
    verdict, name = suite.run(tests, base_logs, stop_early=False, record=True)
    if verdict != 'pass':
        return (f'the ThreadSanitizer copy fails its tests unmutated ({verdict}: {name}): '
                f'see {base_logs}/')
    return {'tree': tree, 'suite': suite, 'lock': threading.Lock(), 'tests': len(tests)}


def try_mutant(w, m, timeout, first, logs, tsan=None):
    """Applies m in worker w's tree (a mutant of memory ordering: in the
    ThreadSanitizer copy tsan), builds and tests it, and restores the
    file: (status, detail, killing test, seconds, build seconds)."""
    sanitized = 'sanitize' in m
    copy = tsan if sanitized else w
    suite = copy['suite']
    path = os.path.join(copy['tree'], m['file'])
    status, detail, name = None, '', None
    started = time.monotonic()
    build_secs = 0.0
    mlogs = os.path.join(logs, m['id'])
    os.makedirs(mlogs)
    # the ThreadSanitizer copy is one, for whichever worker takes such a mutant
    with copy.get('lock') or contextlib.nullcontext():
        problem = fragment_problem(path, m)
        if problem:
            return 'ERROR', problem, None, 0.0, 0.0
        with open(path, 'rb') as f:
            original = f.read()
        text = original.decode('utf-8')
        try:
            with open(path, 'wb') as f:
                f.write(text.replace(m['from'], m['to'], 1).encode('utf-8'))
            if sanitized:
                status, detail, name = test_sanitized(suite, mlogs, timeout, m['tests'])
            else:
                status, detail, name = test_mutant(suite, mlogs, timeout, first,
                                                   m.get('tests', ()))
            build_secs = suite.last_build_secs
        finally:
            with open(path, 'wb') as f:
                f.write(original)
    if status in ('killed', 'TIMEOUT'):
        # only what killed it is worth keeping
        keep = {'build1.log', 'build2.log'} if detail == 'does not compile' else set()
        if name:
            keep.add(name + '.log')
        for fn in os.listdir(mlogs):
            if fn not in keep:
                os.remove(os.path.join(mlogs, fn))
    return status, detail, name, time.monotonic() - started, build_secs


if __name__ == '__main__':
    sys.exit(main())
