#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""
count.py -- the library's own instructions per operation, against budgets.

usage: count.py [--check] [--detail] [--only NAME[,NAME...]] PROGRAM SOURCE_ROOT

PROGRAM is bench/instructions (instructions.c linked with the library's
objects and the loopback provider). Each figure runs one case of it under
callgrind, collecting only inside the case's measured functions
(--toggle-collect), and counts the instructions of the functions defined
under SOURCE_ROOT/src/ -- their own, with what the compiler inlined into
them, not what they call elsewhere (libc, the loopback provider) -- divided
by the operations the case ran. Instruction counts are deterministic for a
given binary: this is a budget, not a timing.

--not-applicable REASON prints REASON and exits 77 (a skip): the budgets
are figures of the project's default optimisation, -O2, without
sanitizers.

Prints one line per figure:
    figure instr-NAME ours=X budget=Y
and with --check exits 1 when any figure is over its budget (2 when
valgrind is missing or a case fails to run). --detail adds, under each
figure, the functions of src/ that make it up.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

# the operations each measured loop runs: 10 to warm up, then 1000
ROUNDS = 1010

# name: (case of the program, measured functions, operations per round, budget)
# Budgets are today's figures and a margin of 2 %, but never above a goal
# that is met (the 1.x persistent write and its native flush: 180; the
# template's write with its completion: 120; GPSPM's initiator: 500), so
# that no change takes a met goal back: a change that raises one says why,
# and one that lowers it lowers the budget. doc/performance.md gives the
# goals beside them.
FIGURES = [
    ('write_flush_1x', 'write_flush_1x', ['measure_write_flush_1x'], 1, 181),
    ('write_flush_completion', 'write_flush_completion',
     ['measure_write_flush_completion'], 1, 182),
    ('native_write_flush_1x', 'native_write_flush_1x', ['measure_write_flush_1x'], 1, 181),
    ('batch_16_writes', 'batch_16_writes', ['measure_batch_16'], 16, 72),
    ('batch_write_flush', 'batch_write_flush', ['measure_batch_1'], 1, 245),
    ('template_16_writes', 'template_16_writes', ['measure_template_16'], 16, 38),
    ('template_write_flush', 'template_write_flush', ['measure_template_1'], 1, 120),
    ('gpspm_initiator', 'gpspm_initiator',
     ['gpspm_initiator_post', 'gpspm_initiator_complete'], 1, 499),
    ('gpspm_target', 'gpspm_target', ['gpspm_target_serve'], 1, 370),
    ('send', 'send', ['send_side'], 1, 138),
    ('recv', 'recv', ['recv_side'], 1, 123),
]
SYSCALL_BUDGET = {'cq_wait': 2}


def names():
    """Resolves callgrind's compressed names: '(3) name' defines, '(3)' refers."""
    table = {}

    def resolve(kind, value):
        m = re.match(r'\((\d+)\)(?: (.*))?$', value)
        if not m:
            return value
        key = (kind, m.group(1))
        if m.group(2) is not None:
            table[key] = m.group(2)
        return table.get(key, value)
    return resolve


def own_instructions(path, src_dir, by_function=None):
    """Instructions of the functions defined in files under src_dir, exclusive."""
    resolve = names()
    total = 0
    in_src = False
    skip_next = False
    fl = ''
    fn = ''
    for line in open(path, encoding='utf-8', errors='replace'):
        line = line.rstrip('\n')
        if skip_next:
            skip_next = False  # the inclusive cost of a call: the callee's
            continue
        if line.startswith('fl='):
            fl = resolve('fl', line[3:])
        elif line.startswith(('fi=', 'fe=')):
            resolve('fl', line[3:])  # inlined code: the function's own
        elif line.startswith('fn='):
            fn = resolve('fn', line[3:])
            in_src = os.path.realpath(fl).startswith(src_dir + os.sep)
        elif line.startswith(('cfn=', 'cfl=', 'cfi=')):
            resolve('fn' if line.startswith('cfn=') else 'fl', line[4:])
        elif line.startswith('calls='):
            skip_next = True
        elif line and (line[0].isdigit() or line[0] in '+-*') and in_src:
            fields = line.split()
            if len(fields) >= 2:
                total += int(fields[1])
                if by_function is not None:
                    by_function[fn] = by_function.get(fn, 0) + int(fields[1])
    return total


def run_case(program, case, functions, workdir):
    out = os.path.join(workdir, f'callgrind.{case}.' + '_'.join(functions))
    cmd = ['valgrind', '--tool=callgrind', f'--callgrind-out-file={out}',
           '--collect-atstart=no'] + [f'--toggle-collect={f}' for f in functions] + \
          [program, case]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr[-2000:])
        raise RuntimeError(f'{case}: the program failed ({proc.returncode})')
    return out


def main():
    args = sys.argv[1:]
    check = '--check' in args
    detail = '--detail' in args
    args = [a for a in args if a not in ('--check', '--detail')]
    only = None
    if '--only' in args:
        i = args.index('--only')
        only = set(args[i + 1].split(','))
        del args[i:i + 2]
    if '--not-applicable' in args:
        i = args.index('--not-applicable')
        print('not counted: ' + args[i + 1])
        return 77
    if len(args) != 2:
        print(__doc__.strip().splitlines()[2])
        return 2
    program, root = args
    src_dir = os.path.realpath(os.path.join(root, 'src'))
    if shutil.which('valgrind') is None:
        print('valgrind (package valgrind) is not installed: no instruction can be counted')
        return 2

    over = []
    with tempfile.TemporaryDirectory(prefix='rpma-instr-') as workdir:
        for name, case, functions, per_round, budget in FIGURES:
            if only and name not in only:
                continue
            try:
                out = run_case(program, case, functions, workdir)
            except RuntimeError as err:
                print(err)
                return 2
            parts = {}
            ours = own_instructions(out, src_dir, parts) / (ROUNDS * per_round)
            print(f'figure instr-{name} ours={ours:.0f} budget={budget}')
            if detail:
                for fn, n in sorted(parts.items(), key=lambda kv: -kv[1]):
                    print(f'    {n / (ROUNDS * per_round):8.1f}  {fn}')
            if ours > budget:
                over.append(name)
        if not only:
            proc = subprocess.run([program, '--syscalls'], capture_output=True, text=True)
            for line in proc.stdout.splitlines():
                what, count = line.split()
                budget = SYSCALL_BUDGET[what]
                print(f'figure syscalls-{what} ours={count} budget={budget} librpma=2')
                if int(count) > budget:
                    over.append(what)
    if over:
        print('over budget: ' + ', '.join(over))
    return 1 if check and over else 0


if __name__ == '__main__':
    sys.exit(main())
