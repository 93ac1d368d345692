#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The part of the host's dpkg database that installing and purging some
packages involves, as a tar of a dpkg/ directory, for the test VM.

In the emulated guest each run of dpkg spends about twenty seconds reading
the whole database (a development machine's thousand packages and their
hundred and sixty thousand files), whatever it installs. The packages of
this tree touch far fewer: what they depend on, what they replace and
what depends on that, and the packages whose triggers their files set
off. Those packages' entries of /var/lib/dpkg/status, with everything of
theirs under info/, and the rest of the database that is not per package
(triggers, diversions, overrides of ownership and modes, alternatives),
make a database on which dpkg checks and does the same as on the whole:
each dependency is there at its installed version, each replaced package
with its file list, each trigger's interest.

usage: dpkg-subset.py OUT.tar DEB...
"""
import io
import os
import re
import subprocess
import sys
import tarfile

ADMIN = '/var/lib/dpkg'


def stanzas(text):
    """The stanzas of a control file, each a dict with its 'raw' text."""
    out = []
    for raw in re.split(r'\n\s*\n', text.strip('\n')):
        fields, key = {}, None
        for line in raw.splitlines():
            if line[:1] in (' ', '\t') and key:
                fields[key] += '\n' + line
            elif ':' in line:
                key, _, value = line.partition(':')
                fields[key] = value.strip()
        fields['raw'] = raw
        out.append(fields)
    return out


def names(relation):
    """Every package name a relation field mentions, alternatives included."""
    return {re.split(r'[\s(:\[]', alt.strip())[0]
            for part in relation.split(',') for alt in part.split('|') if alt.strip()}


def main():
    out, debs = sys.argv[1], sys.argv[2:]
    status = [s for s in stanzas(open(os.path.join(ADMIN, 'status')).read())
              if s.get('Status', '').split()[-1:] != ['not-installed']]
    by_name = {}
    for s in status:
        by_name.setdefault(s['Package'], []).append(s)
        for p in names(s.get('Provides', '')):
            by_name.setdefault(p, []).append(s)

    wanted, replaced = set(), set()
    shipped = []
    activated = set()  # the triggers the packages, and those they replace, set off
    for deb in debs:
        triggers = subprocess.run(['dpkg-deb', '--info', deb, 'triggers'],
                                  capture_output=True, text=True).stdout
        activated |= {l.split()[1] for l in triggers.splitlines() if l.startswith('activate')}
        control = stanzas(subprocess.run(['dpkg-deb', '-f', deb], check=True,
                                         capture_output=True, text=True).stdout)[0]
        for f in ('Depends', 'Pre-Depends'):
            wanted |= names(control.get(f, ''))
        for f in ('Conflicts', 'Breaks', 'Replaces'):
            replaced |= names(control.get(f, ''))
        shipped += [line.split()[-1].lstrip('.') for line in subprocess.run(
            ['dpkg-deb', '-c', deb], check=True, capture_output=True, text=True).stdout.splitlines()]
    ours = {os.path.basename(deb).split('_')[0] for deb in debs}
    wanted = (wanted | replaced) - ours
    replaced -= ours
    for info in os.listdir(os.path.join(ADMIN, 'info')):
        if info.endswith('.triggers') and info.split(':')[0].split('.')[0] in replaced:
            activated |= {l.split()[1] for l in open(os.path.join(ADMIN, 'info', info))
                          if l.startswith('activate')}

    # the packages interested in a trigger: by name (ldconfig), or in a path
    # under which a file of the packages lies (the manual pages)
    trigger_file = os.path.join(ADMIN, 'triggers', 'File')
    if os.path.exists(trigger_file):
        for line in open(trigger_file):
            path, _, pkg = line.strip().partition(' ')
            if any(f == path or f.startswith(path.rstrip('/') + '/') for f in shipped):
                wanted.add(pkg.split(':')[0].split('/')[0])
    for info in os.listdir(os.path.join(ADMIN, 'info')):
        if info.endswith('.triggers'):
            for line in open(os.path.join(ADMIN, 'info', info)):
                words = line.split()
                if words[:1] and words[0].startswith('interest') and words[1:2] and \
                        words[1] in activated:
                    wanted.add(info[:-len('.triggers')].split(':')[0])

    # whatever depends on a package that is replaced must be asked about too
    for s in status:
        if names(s.get('Depends', '') + ',' + s.get('Pre-Depends', '')) & replaced:
            wanted.add(s['Package'])

    # and everything that those depend on, as installed
    keep, todo = set(), sorted(wanted)
    while todo:
        name = todo.pop()
        for s in by_name.get(name, []):
            key = (s['Package'], s.get('Architecture', ''))
            if key in keep:
                continue
            keep.add(key)
            todo += sorted(names(s.get('Depends', '') + ',' + s.get('Pre-Depends', '')))

    kept = [s for s in status if (s['Package'], s.get('Architecture', '')) in keep]
    prefixes = {s['Package'] for s in kept} | {
        '%s:%s' % (s['Package'], s['Architecture']) for s in kept if 'Architecture' in s}

    with tarfile.open(out, 'w') as tar:
        def add_bytes(name, data):
            ti = tarfile.TarInfo(name)
            ti.size, ti.mode = len(data), 0o644
            tar.addfile(ti, io.BytesIO(data))

        add_bytes('dpkg/status', ('\n\n'.join(s['raw'] for s in kept) + '\n').encode())
        for entry in sorted(os.listdir(ADMIN)):
            path = os.path.join(ADMIN, entry)
            if entry in ('status', 'info', 'available') or entry.startswith('lock') \
                    or entry.endswith('-old'):
                continue
            if entry == 'triggers':
                tar.add(path, 'dpkg/triggers', recursive=False)
                for t in sorted(os.listdir(path)):
                    if t == 'Lock':
                        continue
                    if t == 'File':
                        lines = [l for l in open(os.path.join(path, t))
                                 if l.split()[-1] in prefixes]
                        add_bytes('dpkg/triggers/File', ''.join(lines).encode())
                    else:
                        tar.add(os.path.join(path, t), 'dpkg/triggers/' + t)
                continue
            tar.add(path, 'dpkg/' + entry)
        tar.add(os.path.join(ADMIN, 'info'), 'dpkg/info', recursive=False)
        for info in sorted(os.listdir(os.path.join(ADMIN, 'info'))):
            if info.rsplit('.', 1)[0] in prefixes:
                tar.add(os.path.join(ADMIN, 'info', info), 'dpkg/info/' + info)
    print('the dpkg database of %d of the %d packages installed: %s'
          % (len(kept), len(status), ' '.join(sorted(s['Package'] for s in kept))))


if __name__ == '__main__':
    main()
