#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""
check-coverage.py -- every public function has its page, every page has a
reason to exist, and the pages hang together.

  - each function declared in include/librpma.h and each symbol exported by
    src/librpma.map has man/man3/<name>.3;
  - each struct the header defines with its members and each typedef (the
    types of callbacks) has man/man3/<name>.3, or is installed as a link to
    the page that describes it (LINKS); each enum the header defines is
    spelled out, with its members, in the SYNOPSIS of a man3 page (which
    check-synopsis.py compares with the header);
  - each man3 page names an exported function or a type that the header
    defines;
  - each page has the sections a reader expects, its .TH and NAME agree with
    its file name, its .TH names the project's version ("rpma-ng VERSION",
    meson.build's, so that a page read in the tree says what the installed
    one says; no "@VERSION@" is left for a build to fill in), and its
    ERRORS name only codes the header defines;
  - extension pages (symbols of a node other than LIBRPMA_1.0) say so,
    1.x pages do not;
  - references to the library's own pages, NAME(3) or NAME(7), resolve;
  - rpma.hpp(7) names every class and struct that include/rpma/*.hpp gives
    a program (those of namespace rpma, not rpma::detail) as rpma::NAME,
    and no function there takes a time as an int, since the page says
    that times are std::chrono::milliseconds;
  - each man1 page (the installed programs) has the sections a user reads;
  - man/meson.build installs exactly the pages that exist.

Usage: check-coverage.py SOURCE_ROOT
Exit status 0 when everything holds, 1 otherwise.
"""

import glob
import os
import re
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import manpages  # noqa: E402

BASE_NODE = 'LIBRPMA_1.0'
FUNCTION_SECTIONS = ['NAME', 'SYNOPSIS', 'DESCRIPTION', 'RETURN VALUE', 'ERRORS',
                     'VERSIONS', 'SEE ALSO']
TYPE_SECTIONS = ['NAME', 'SYNOPSIS', 'DESCRIPTION', 'SEE ALSO']
PROGRAM_SECTIONS = ['NAME', 'SYNOPSIS', 'DESCRIPTION', 'OPTIONS', 'EXIT STATUS', 'SEE ALSO']
# pages installed as links to another page (see man/meson.build)
LINKS = {'rpma_op': 'rpma_completion', 'rpma_persist_ctx_fn': 'rpma_persist_fn'}


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-2], file=sys.stderr)
        return 2
    root = sys.argv[1]
    header = os.path.join(root, 'include', 'librpma.h')
    symmap = os.path.join(root, 'src', 'librpma.map')
    meson = os.path.join(root, 'man', 'meson.build')
    version = re.search(r"\bproject\s*\(.*?\bversion\s*:\s*'([^']+)'",
                        manpages.read(os.path.join(root, 'meson.build')), re.S).group(1)

    errors = []

    functions = manpages.header_functions(header)
    types = manpages.header_types(header)
    codes = manpages.header_error_codes(header)
    nodes = manpages.map_symbols(symmap)
    exported = {sym: node for node, syms in nodes.items() for sym in syms}

    if not functions:
        errors.append('%s: no function declarations found' % header)
    if BASE_NODE not in nodes:
        errors.append('%s: no %s node found' % (symmap, BASE_NODE))

    pages3 = {os.path.basename(p)[:-2]: p
              for p in glob.glob(os.path.join(root, 'man', 'man3', '*.3'))}
    pages7 = {os.path.basename(p)[:-2]: p
              for p in glob.glob(os.path.join(root, 'man', 'man7', '*.7'))}
    pages1 = {os.path.basename(p)[:-2]: p
              for p in glob.glob(os.path.join(root, 'man', 'man1', '*.1'))}

    # every public function has a page
    for name in sorted(set(functions) | set(exported)):
        if name not in pages3:
            where = 'declared in include/librpma.h' if name in functions else ''
            if name in exported:
                where = (where + ' and ' if where else '') + 'exported under ' + exported[name]
            errors.append('man3/%s.3: missing (%s)' % (name, where))

    # every type a program fills in, and every callback, has a page
    for name in sorted(manpages.header_records_and_callbacks(header)):
        if name not in pages3 and LINKS.get(name) not in pages3:
            errors.append('man3/%s.3: missing (a type that include/librpma.h defines)' % name)
    for name, target in sorted(LINKS.items()):
        if not re.search(r"install_symlink\('%s\.3',\s*pointing_to: '%s\.3'"
                         % (name, target), manpages.read(meson)):
            errors.append('man/meson.build: does not install %s.3 as a link to %s.3'
                          % (name, target))
        if target not in pages3:
            errors.append('man3/%s.3: a link to %s.3, which does not exist' % (name, target))
        elif name not in manpages.roff_to_text(
                manpages.sections(manpages.read(pages3[target])).get('NAME', [])):
            errors.append('man3/%s.3: a link to %s.3, whose NAME does not list it'
                          % (name, target))
    spelled_out = set()
    for path in pages3.values():
        synopsis = manpages.sections(manpages.read(path)).get('SYNOPSIS', [])
        spelled_out |= {n for kind, n in manpages.type_bodies(manpages.roff_to_text(synopsis))
                        if kind == 'enum'}
    for name in sorted(manpages.header_enums(header) - spelled_out):
        errors.append('enum %s: include/librpma.h defines it, no SYNOPSIS spells it out' % name)

    errors += check_cxx_page(root, pages7.get('rpma.hpp'))

    # every page has a reason to exist
    for name in sorted(pages3):
        if name not in functions and name not in exported and name not in types:
            errors.append('man3/%s.3: names neither an exported function nor a type '
                          'defined in include/librpma.h' % name)
    if 'librpma' not in pages7:
        errors.append('man7/librpma.7: missing')

    known = set(pages3) | set(LINKS)
    for name, path in sorted(list(pages1.items()) + list(pages3.items()) +
                             list(pages7.items())):
        section = path[-1]
        rel = 'man%s/%s.%s' % (section, name, section)
        text = manpages.read(path)
        errors += check_page(rel, name, section, text, name in functions, exported.get(name),
                             codes, known, version)

    # meson.build installs exactly what exists
    listed = set(manpages.meson_pages(meson))
    present = ({'man1/%s.1' % n for n in pages1} | {'man3/%s.3' % n for n in pages3}
               | {'man7/%s.7' % n for n in pages7})
    for rel in sorted(present - listed):
        errors.append('man/meson.build: %s is not installed' % rel)
    for rel in sorted(listed - present):
        errors.append('man/meson.build: lists %s, which does not exist' % rel)

    for e in errors:
        print(e)
    print('%d man1 pages, %d man3 pages, %d man7 pages, %d functions, %d exported symbols: %s'
          % (len(pages1), len(pages3), len(pages7), len(functions), len(exported),
             'FAILED (%d problems)' % len(errors) if errors else 'ok'))
    return 1 if errors else 0


def check_cxx_page(root, page):
    """rpma.hpp(7) against the headers of include/rpma/."""
    if page is None:
        return ['man7/rpma.hpp.7: missing']
    text = manpages.roff_to_text(manpages.read(page).splitlines())
    errors = []
    for header in sorted(glob.glob(os.path.join(root, 'include', 'rpma', '*.hpp'))):
        rel = os.path.relpath(header, root)
        namespaces = []
        for number, line in enumerate(manpages.read(header).splitlines(), 1):
            m = re.match(r'^namespace (\w+)', line)
            if m:
                namespaces.append(m.group(1))
            elif re.match(r'^} /\* namespace', line) and namespaces:
                namespaces.pop()
            m = re.match(r'^(?:class|struct)\s+(?:\[\[\w+\]\]\s+)?(\w+)\b(?!\s*;)', line)
            if m and namespaces == ['rpma'] and 'rpma::' + m.group(1) not in text:
                errors.append('man7/rpma.hpp.7: does not name rpma::%s (%s:%d)'
                              % (m.group(1), rel, number))
            for p in re.findall(r'[(,]\s*int\s+(\w*(?:timeout|_ms)\w*)\s*[,)=]', line):
                errors.append('%s:%d: takes the time %s as an int; rpma.hpp(7) says times are '
                              'std::chrono::milliseconds' % (rel, number, p))
    return errors


def check_page(rel, name, section, text, is_function, node, codes, known, version):
    errors = []
    lines = text.splitlines()
    th = [line for line in lines if line.startswith('.TH ')]
    if not th:
        return ['%s: no .TH line' % rel]
    th_args = th[0].split()
    # the version is the project's, written in the page itself
    if '"rpma-ng %s"' % version not in th[0]:
        errors.append('%s: .TH does not name the source as "rpma-ng %s", the version of '
                      'meson.build' % (rel, version))
    for number, line in enumerate(lines, 1):
        if '@VERSION@' in line:
            errors.append('%s:%d: @VERSION@, which nothing fills in: the pages are installed '
                          'as they are' % (rel, number))
    if len(th_args) < 3 or th_args[1] != name or th_args[2] != section:
        errors.append('%s: .TH names "%s(%s)", expected "%s(%s)"'
                      % (rel, th_args[1] if len(th_args) > 1 else '',
                         th_args[2] if len(th_args) > 2 else '', name, section))

    secs = manpages.sections(text)
    required = TYPE_SECTIONS if section == '7' or not (is_function or node) else FUNCTION_SECTIONS
    if section == '7':
        required = ['NAME', 'DESCRIPTION', 'SEE ALSO']
    if section == '1':
        required = PROGRAM_SECTIONS
    for sec in required:
        if sec not in secs:
            errors.append('%s: no %s section' % (rel, sec))
        elif not ''.join(secs[sec]).strip():
            errors.append('%s: empty %s section' % (rel, sec))

    if 'NAME' in secs:
        name_line = manpages.roff_to_text(secs['NAME']).strip()
        listed = [n.strip() for n in name_line.split(' - ')[0].split(',')]
        if ' - ' not in name_line:
            errors.append('%s: NAME has no "name \\- summary" line' % rel)
        elif name not in listed:
            errors.append('%s: NAME lists %s, not %s' % (rel, ', '.join(listed), name))

    if 'ERRORS' in secs:
        for code in re.findall(r'\bRPMA_E_\w+', '\n'.join(secs['ERRORS'])):
            if code not in codes:
                errors.append('%s: ERRORS names %s, which the header does not define'
                              % (rel, code))

    if is_function or node:
        body = manpages.roff_to_text(lines)
        is_extension = node is not None and node != BASE_NODE
        says_extension = re.search(r'rpma-ng\s+extension', body) is not None
        if is_extension:
            if not says_extension:
                errors.append('%s: an extension (%s) whose page does not say '
                              '"rpma-ng extension"' % (rel, node))
            if node not in body:
                errors.append('%s: does not name its symbol version %s' % (rel, node))
        else:
            if says_extension:
                errors.append('%s: a librpma 1.x function whose page calls it an extension'
                              % rel)
            if node == BASE_NODE and BASE_NODE not in body:
                errors.append('%s: does not name its symbol version %s' % (rel, BASE_NODE))

    # references to the library's own pages, anywhere in the page
    refs = re.findall(r'\b((?:rpma_|librpma)\w*)\s*\((\d)\)', manpages.roff_to_text(lines))
    for ref, sec in sorted(set(refs)):
        if (sec == '3' and ref not in known) or (sec == '7' and ref != 'librpma') \
                or sec not in '37':
            errors.append('%s: refers to %s(%s), which has no page' % (rel, ref, sec))
    return errors


if __name__ == '__main__':
    sys.exit(main())
