#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""
check-docs.py -- what the documentation names exists, and what several
documents state agrees.

usage: check-docs.py SOURCE_ROOT [--only paths|facts|examples]
                     [-- COMPILER ARGUMENTS...]

The documents: README.md, CONTRIBUTING.md, NEWS.md, doc/*.md, the manual
pages (man/man*/*.[0-9]), examples/README.md, examples/*/README.md and
tools/**/README*. Three checks, all by default, one with --only:

paths: in each document, three kinds of reference are checked:

  - a repository path: a word that starts with one of the tree's top-level
    directories (ROOTS below) followed by "/", such as src/flush.cpp or
    tests/vm/README.md, must exist relative to SOURCE_ROOT; a word that
    starts with ./ or ../, and the target of a Markdown link, are taken
    relative to the document's own directory;
  - an example directory: NN-name (two digits, a hyphen, lower-case words)
    must be a directory under examples/;
  - a manual page of the project: rpma_*(N), librpma(N), rpma.hpp(N) and
    rpma-mirror(N) must have a page man/manN/NAME.N, or be a link that
    man/meson.build installs (install_symlink).

  Left alone, on purpose:

  - URLs (scheme://...), absolute paths (/usr, /dev, /tmp, /etc, ...),
    paths under ~ or $VARIABLE, and paths in build directories (build/,
    build-*/: they are made by the build, not kept in the tree);
  - placeholders: a word with <, >, *, {, }, $, @ or "..." in it, or with a
    component in capitals (NN-topic, PREFIX/..., LIBDIR/..., man3/NAME.3)
    other than the usual file names (README, LICENSE, NEWS, ...);
  - in code (``` blocks and `spans` in Markdown, .EX/.EE and .nf/.fi in
    roff), words that start with ./ or ../: there they are commands, and
    the output of a user's machine, run from wherever the user is (a build
    directory, the top of the tree), not paths of this tree; paths from
    the top of the tree are checked in code too;
  - NN-word where word is a unit (64-byte, 32-bit, 55-us, ...);
  - file names without a directory (report.md, server.c): too many of
    them are files that programs write or build.

facts: the version, librpma 1.x's functions and the extensions, and what
a flush gives on each platform of the target, wherever a document states
them, agree with doc/facts.json, and doc/facts.json with meson.build and
src/librpma.map (facts.py says how each is found).

examples: every ```c block of README.md is a complete program and
compiles on its own against include/librpma.h: C11 with GNU extensions
(the project's c_std), -O2 -Wall -Wextra -Werror, compiled to an object
and not linked, with the C compiler of $CC (default cc) and the COMPILER
ARGUMENTS (the build gives the -I of rdma-core's headers). README.md must
have one. A compiler that cannot be run, or rdma-core's headers
(<infiniband/verbs.h>) that it cannot find, fail the check with that
reason before any example is compiled. (The C++ example of README.md is
compiled by the cxx suite, tests/cxx/snippet.py.)

Roff is read after its escapes are taken out (\\fB, \\fI, \\fR, \\fP,
\\f[B], \\-, \\%, \\&, ...), and the arguments of .BR, .IR, .RB, .RI, .BI
and .IB are joined as the formatter joins them; comments (.\\") are
skipped.

Each problem is printed as FILE:LINE: what is wrong; each check ends with
a line of its own: "paths: N files checked, M references, K missing",
"facts: N files checked against doc/facts.json, K disagree", "examples: C
examples of README.md: N, compiled with CC: ok". Exit status 0 when nothing
is wrong, 1 otherwise, 2 on usage.
"""

import glob
import os
import re
import shlex
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import facts  # noqa: E402

CHECKS = ('paths', 'facts', 'examples')

# how README.md's C examples are compiled (with -I include/ and the arguments
# given after --)
C_ARGS = ['-x', 'c', '-std=gnu11', '-c', '-o', os.devnull, '-O2',
          '-Wall', '-Wextra', '-Werror']

# the top-level directories of the tree that documents name paths under
ROOTS = ('bench', 'doc', 'examples', 'include', 'man', 'src', 'tests', 'tools')

# NN-word that is a quantity, not an example
UNITS = {
    'bit', 'bits', 'byte', 'bytes', 'core', 'cores', 'kib', 'mib', 'gib',
    'kb', 'mb', 'gb', 'second', 'seconds', 'minute', 'minutes', 'thread',
    'threads', 'way', 'entry', 'entries', 'character', 'characters',
    'ns', 'us', 'ms', 's', 'min',
}

# names in capitals that are real files, not placeholders
FILE_NAMES_IN_CAPITALS = {'README', 'LICENSE', 'NEWS', 'CONTRIBUTING', 'COPYING', 'AUTHORS'}

URL = re.compile(r'\b[a-z][a-z0-9+.-]*://\S*', re.I)
MD_LINK = re.compile(r'\]\(([^)\s]+)(?:\s+"[^"]*")?\)')
MD_FENCE = re.compile(r'^\s*(```|~~~)')
# a word that may be a path: what paths and placeholders are made of
WORD = re.compile(r'[A-Za-z0-9_./<>*{}$@~+-]+')
EXAMPLE = re.compile(r'(?<![\w.-])(\d\d)-([a-z][a-z0-9]*(?:-[a-z0-9]+)*)(?![\w-])')
MAN_REF = re.compile(r'(?<![\w.-])(rpma_[a-z0-9_]+|librpma|rpma\.hpp|rpma-mirror)\((\d)\)')
CODE_SPAN = re.compile(r'(`+)(.+?)\1')

ROFF_JOIN = re.compile(r'^\.(BR|RB|IR|RI|BI|IB)\s+(.*)$')
ROFF_ESCAPES = [
    (re.compile(r'\\f\[[A-Za-z]*\]'), ''),
    (re.compile(r'\\f\([A-Za-z]{2}'), ''),
    (re.compile(r'\\f[A-Za-z0-9]'), ''),
    (re.compile(r'\\\[[^\]]*\]'), ' '),
    (re.compile(r'\\\([A-Za-z]{2}'), ' '),
    (re.compile(r'\\-'), '-'),
    (re.compile(r'\\[%&:]'), ''),
    (re.compile(r'\\ '), ' '),
    (re.compile(r'\\e'), '\\\\'),
]


def documents(root):
    """The documents to check, relative to root, sorted."""
    found = set()
    for pattern in ('README.md', 'CONTRIBUTING.md', 'NEWS.md', 'doc/*.md',
                    'man/man*/*.[0-9]', 'examples/README.md',
                    'examples/*/README.md', 'tools/**/README*'):
        for path in glob.glob(os.path.join(root, pattern), recursive=True):
            if os.path.isfile(path):
                found.add(os.path.relpath(path, root))
    return sorted(found)


def installed_man_links(root):
    """The page names man/meson.build installs as links: {'rpma_op.3', ...}."""
    try:
        with open(os.path.join(root, 'man', 'meson.build'), encoding='utf-8') as f:
            text = f.read()
    except OSError:
        return set()
    return set(re.findall(r"install_symlink\(\s*'([^']+)'", text))


def roff_args(rest):
    """The arguments of a roff macro line, quotes honoured."""
    args = []
    for m in re.finditer(r'"((?:[^"]|"")*)"|(\S+)', rest):
        args.append(m.group(1).replace('""', '"') if m.group(1) is not None else m.group(2))
    return args


def roff_lines(text):
    """(line number, plain text, in a code block) of a manual page."""
    in_code = False
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith('.\\"') or line.startswith("'\\\""):
            continue
        if re.match(r'^\.(EX|nf)\b', line):
            in_code = True
            continue
        if re.match(r'^\.(EE|fi)\b', line):
            in_code = False
            continue
        m = ROFF_JOIN.match(line)
        if m:
            line = ''.join(roff_args(m.group(2)))
        elif line.startswith('.'):
            # other macros: their arguments are text (.B, .I, .TP, .SH ...)
            line = re.sub(r'^\.[A-Za-z]+\s*', '', line)
        for pattern, repl in ROFF_ESCAPES:
            line = pattern.sub(repl, line)
        yield number, line, in_code


def markdown_lines(text):
    """(line number, text, in a code block) of a Markdown document."""
    in_code = False
    for number, line in enumerate(text.splitlines(), 1):
        if MD_FENCE.match(line):
            in_code = not in_code
            continue
        yield number, line, in_code


def is_placeholder(word):
    """word: a word of a document, its trailing punctuation taken off"""
    if any(c in word for c in '<>*{}$@') or word.startswith('~'):
        return True
    for part in word.split('/'):
        # NN-topic, PREFIX, LIBDIR, NAME.3: names to fill in
        m = re.fullmatch(r'([A-Z][A-Z0-9_]*)(-[a-z0-9-]+)?(\.[A-Za-z0-9]+)*', part)
        if m and m.group(1) not in FILE_NAMES_IN_CAPITALS:
            return True
    return False


def exists(root, path):
    return os.path.exists(os.path.normpath(os.path.join(root, path)))


class Checker:
    def __init__(self, root):
        self.root = root
        self.man_links = installed_man_links(root)
        self.references = 0
        self.missing = []

    def report(self, doc, number, what):
        self.missing.append('%s:%d: %s' % (doc, number, what))

    def check_path(self, doc, number, path, relative_to_doc):
        """One path: relative to the document's directory or to the top."""
        self.references += 1
        base = os.path.dirname(doc) if relative_to_doc else ''
        target = os.path.normpath(os.path.join(base, path))
        if target.startswith('..'):
            self.report(doc, number, 'path outside the tree: %s' % path)
        elif not exists(self.root, target):
            if relative_to_doc and base:
                self.report(doc, number, 'no such path: %s (%s)' % (path, target))
            else:
                self.report(doc, number, 'no such path: %s' % path)

    def check_line(self, doc, number, line, in_code, is_roff):
        line = URL.sub(' ', line)

        # Markdown link targets: relative to the document
        if not is_roff:
            def link(m):
                target = m.group(1).split('#', 1)[0]
                if target and not re.match(r'^[a-z][a-z0-9+.-]*:', target, re.I) \
                        and not target.startswith('/'):
                    self.check_path(doc, number, target, True)
                return '] '
            line = MD_LINK.sub(link, line)

        # inline code of Markdown: where ./ and ../ are commands
        spans = [] if is_roff else [m.span() for m in CODE_SPAN.finditer(line)]

        # paths, blanked once checked so that their parts are not taken again
        def path(m):
            word = m.group(0).rstrip('.,;:')
            start = m.start()
            before = line[start - 1] if start > 0 else ' '
            if '/' not in word or before in '/~$\\' or '...' in m.group(0) or \
                    is_placeholder(word):
                return m.group(0)
            if any(part == 'build' or part.startswith('build-') for part in word.split('/')):
                return m.group(0)
            if word.startswith('./') or word.startswith('../'):
                if in_code or any(a <= start < b for a, b in spans):
                    return m.group(0)
                self.check_path(doc, number, word, True)
                return ' ' * len(m.group(0))
            first = word.split('/', 1)[0]
            if first in ROOTS:
                self.check_path(doc, number, word, False)
                return ' ' * len(m.group(0))
            return m.group(0)
        line = WORD.sub(path, line)

        for m in EXAMPLE.finditer(line):
            if m.group(2).split('-', 1)[0] in UNITS:
                continue
            self.references += 1
            name = '%s-%s' % (m.group(1), m.group(2))
            if not os.path.isdir(os.path.join(self.root, 'examples', name)):
                self.report(doc, number, 'no such example: examples/%s' % name)

        for m in MAN_REF.finditer(line):
            self.references += 1
            name, section = m.group(1), m.group(2)
            page = '%s.%s' % (name, section)
            if not exists(self.root, os.path.join('man', 'man' + section, page)) and \
                    page not in self.man_links:
                self.report(doc, number, 'no such manual page: %s(%s)' % (name, section))

    def check(self, doc):
        for number, line, in_code in document_lines(self.root, doc):
            self.check_line(doc, number, line, in_code, is_roff(doc))


def is_roff(doc):
    """the manual pages are roff, everything else Markdown (or plain text)"""
    return bool(doc.startswith('man/') and re.search(r'\.[0-9]$', doc))


def read(root, doc):
    with open(os.path.join(root, doc), encoding='utf-8') as f:
        return f.read()


def document_lines(root, doc):
    """(line number, text, in a code block) of a document"""
    text = read(root, doc)
    return list(roff_lines(text) if is_roff(doc) else markdown_lines(text))


def check_paths(root, docs):
    checker = Checker(root)
    for doc in docs:
        checker.check(doc)
    for line in checker.missing:
        print(line)
    print('paths: %d files checked, %d references, %d missing'
          % (len(docs), checker.references, len(checker.missing)))
    return not checker.missing


def check_facts(root, docs):
    problems = facts.check(root, {doc: document_lines(root, doc) for doc in docs},
                           {doc: read(root, doc) for doc in docs})
    for line in problems:
        print(line)
    print('facts: %d files checked against %s, %d disagree'
          % (len(docs), facts.FACTS, len(problems)))
    return not problems


def c_blocks(text):
    """(line number of the opening fence, source) of each ```c block"""
    blocks = []
    current = None
    for number, line in enumerate(text.splitlines(), 1):
        if current is None:
            if line.strip() == '```c':
                current = (number, [])
        elif MD_FENCE.match(line):
            blocks.append((current[0], '\n'.join(current[1]) + '\n'))
            current = None
        else:
            current[1].append(line)
    return blocks


def compile_c(compiler, args, source):
    """(exit status, messages) of compiling source from standard input"""
    try:
        proc = subprocess.run(compiler + args + ['-'], input=source,
                              capture_output=True, text=True)
    except OSError as err:
        return 127, str(err)
    return proc.returncode, proc.stderr + proc.stdout


def check_examples(root, extra):
    doc = 'README.md'
    what = 'examples: C examples of %s: %d, compiled with %s: %s'
    compiler = shlex.split(os.environ.get('CC') or 'cc')
    name = ' '.join(compiler)
    blocks = c_blocks(read(root, doc))
    if not blocks:
        print('%s: no C example (a ```c block) to compile' % doc)
        print(what % (doc, 0, name, 'FAILED'))
        return False
    if not compiler or not shutil.which(compiler[0]):
        print('%s: the C compiler "%s" was not found: install gcc (or set CC)'
              % (doc, name))
        print(what % (doc, 0, name, 'FAILED'))
        return False
    includes = ['-I' + os.path.join(root, 'include')] + extra
    status, messages = compile_c(compiler, C_ARGS + includes,
                                 '#include <infiniband/verbs.h>\n')
    if status != 0:
        print('%s: rdma-core\'s headers cannot be found, so the examples cannot be '
              'compiled: install libibverbs-dev (or give -I after --):\n%s'
              % (doc, messages.rstrip()))
        print(what % (doc, 0, name, 'FAILED'))
        return False
    failed = 0
    for number, source in blocks:
        # the compiler's messages name the lines of README.md
        status, messages = compile_c(compiler, C_ARGS + includes,
                                     '#line %d "%s"\n' % (number + 1, doc) + source)
        if status != 0:
            failed += 1
            print('%s:%d: the C example does not compile:\n%s'
                  % (doc, number, messages.rstrip()))
    print(what % (doc, len(blocks), name,
                  'FAILED (%d do not compile)' % failed if failed else 'ok'))
    return not failed


def main(argv):
    args = argv[1:]
    extra = []
    if '--' in args:
        extra = args[args.index('--') + 1:]
        args = args[:args.index('--')]
    only = None
    if len(args) == 3 and args[1] == '--only' and args[2] in CHECKS:
        only = args[2]
        args = args[:1]
    if len(args) != 1 or args[0] in ('-h', '--help'):
        sys.stderr.write('usage: check-docs.py SOURCE_ROOT [--only %s] '
                         '[-- COMPILER ARGUMENTS...]\n' % '|'.join(CHECKS))
        return 2
    root = args[0]
    docs = documents(root)
    if not docs:
        sys.stderr.write('check-docs.py: no documents under %s\n' % root)
        return 2
    ok = True
    if only in (None, 'paths'):
        ok = check_paths(root, docs) and ok
    if only in (None, 'facts'):
        ok = check_facts(root, docs) and ok
    if only in (None, 'examples'):
        ok = check_examples(root, extra) and ok
    return 0 if ok else 1

if __name__ == '__main__':
    sys.exit(main(sys.argv))
