# SPDX-License-Identifier: BSD-3-Clause
"""
facts.py -- the facts that several documents state agree with doc/facts.json,
and doc/facts.json with the sources of truth.

Used by check-docs.py (--only facts); each function returns a list of
problems, one line each, "FILE[:LINE]: what is wrong".

  - the version: doc/facts.json's is meson.build's project version, its
    major and minor numbers those of the librpma release it names; NEWS.md's
    first "## rpma-ng N" heading is it; "rpma-ng N.N.N" in any document is
    it, "librpma N.N" names that librpma release or the one the tests
    compare with (Debian 12's, compared_with); the manual pages write it
    too (.TH and librpma(7)'s COMPATIBILITY say "rpma-ng N.N.N", as a page
    read in the tree shows it), and no document writes @VERSION@, which
    nothing fills in; debian/changelog's first entry is it too;
  - the functions: the count of librpma 1.x's and the list of the extensions
    are those of the nodes of src/librpma.map; "N functions" in a document
    is the count ("N new functions" the number of extensions); the lists of
    NEWS.md (### New functions) and librpma(7) (EXTENSIONS) name exactly
    the extensions; a symbol version named anywhere is one of the two nodes;
  - the constants: each number of the code that documents state is the
    number in its source file, and each place listed that states it still
    says it, with that number;
  - the platforms: the tables of doc/persistence.md and librpma(7) say row
    by row what doc/facts.json says; every other mention of eADR or DDIO
    lies in a statement that doc/facts.json lists, and names the platforms
    that its claim says.
"""

import json
import os
import re

FACTS = 'doc/facts.json'

# the platforms, as the documents name them
ADR_DDIO_ON = 'ADR, DDIO on'
ADR_DDIO_OFF = 'ADR, DDIO off'
EADR = 'eADR'

MENTION = re.compile(r'\beADR\b|\bDDIO\b')
DDIO_STATE = re.compile(
    r'DDIO\s*(?:\([^)]*\)\s*)?,?\s*(?:(?:is|was|turned|is\s+turned)\s+)?'
    r'(on|off|enabled|disabled|active)\b')
STATES = {'on': ADR_DDIO_ON, 'enabled': ADR_DDIO_ON, 'active': ADR_DDIO_ON,
          'off': ADR_DDIO_OFF, 'disabled': ADR_DDIO_OFF}

VERSION_NUMBER = r'(\d+\.\d+(?:\.\d+)?)\b'
COUNT = re.compile(r'\b(\d+)\s+(?:(new|extension)\s+)?functions\b')
NODE = re.compile(r'\bLIBRPMA_(?:[A-Z]+_)*\d+\.\d+\b')
MAN3_REF = re.compile(r'\b(rpma_[a-z0-9_]+)\(3\)')


class Doc:
    """A document as its checks read it: plain lines (roff escapes and
    macros taken out), numbered from 1, and the whole text."""

    def __init__(self, name, numbered_lines, raw):
        self.name = name
        lines = {number: text for number, text, _ in numbered_lines}
        last = max(lines) if lines else 0
        self.plain = [lines.get(n, '') for n in range(1, last + 1)]
        # the sections of a manual page: .SH lines, by their line number
        self.headings = []
        if name.startswith('man/'):
            for n, line in enumerate(raw.splitlines(), 1):
                m = re.match(r'\.SH\s+"?([^"]*)"?\s*$', line)
                if m:
                    self.headings.append((n, m.group(1).strip()))

    def section(self, title):
        """(line number, text) of a manual page's section, its heading
        included; None if the page has none."""
        for i, (n, name) in enumerate(self.headings):
            if name == title:
                end = self.headings[i + 1][0] if i + 1 < len(self.headings) else \
                    len(self.plain) + 1
                return n, '\n'.join(self.plain[n - 1:end - 1])
        return None

    def text(self, blank=()):
        """The text, the lines of number in blank left empty."""
        return '\n'.join('' if n in blank else line
                         for n, line in enumerate(self.plain, 1))

    def line_of(self, text, offset):
        return text.count('\n', 0, offset) + 1


def words(phrase):
    """A pattern for phrase, its words separated by any white space."""
    return r'\s+'.join(re.escape(w) for w in phrase.split())


def platforms_named(text):
    """The platforms a piece of text names: eADR, and ADR with DDIO on or
    off by the word after DDIO; None for a DDIO without a state."""
    found = set()
    if re.search(r'\beADR\b', text):
        found.add(EADR)
    both = list(re.finditer(r'with\s+or\s+without\s+DDIO\b', text))
    for m in both:
        found.update((ADR_DDIO_ON, ADR_DDIO_OFF))
    for m in re.finditer(r'\bDDIO\b', text):
        if any(b.start() <= m.start() < b.end() for b in both):
            continue
        state = DDIO_STATE.match(text, m.start())
        if state:
            found.add(STATES[state.group(1)])
        else:
            found.add(None)
    return found


def load(root):
    with open(os.path.join(root, FACTS), encoding='utf-8') as f:
        return json.load(f)


def map_nodes(root):
    """{node: [symbols]} of src/librpma.map"""
    with open(os.path.join(root, 'src', 'librpma.map'), encoding='utf-8') as f:
        text = re.sub(r'/\*.*?\*/', '', f.read(), flags=re.S)
    nodes = {}
    for m in re.finditer(r'(\w+(?:\.\w+)*)\s*\{(.*?)\}', text, re.S):
        body = m.group(2).split('local:')[0]
        nodes[m.group(1)] = re.findall(r'\b(rpma_\w+)\s*;', body)
    return nodes


def meson_version(root):
    with open(os.path.join(root, 'meson.build'), encoding='utf-8') as f:
        text = f.read()
    m = re.search(r"\bproject\s*\((.*?)\)\s*$", text, re.S | re.M)
    v = m and re.search(r"\bversion\s*:\s*'([^']+)'", m.group(1))
    return v.group(1) if v else None


def check_version(root, facts, docs, raw):
    problems = []
    version = facts['version']['rpma_ng']
    release = facts['version']['librpma_release']
    compared = facts['version']['compared_with']
    meson = meson_version(root)
    if meson != version:
        problems.append("%s: version %s, but meson.build's project version is %s"
                        % (FACTS, version, meson))
    if version.split('.')[:2] != release.split('.')[:2]:
        problems.append('%s: version %s does not name librpma %s (its major and minor '
                        'numbers)' % (FACTS, version, release))

    changelog = os.path.join(root, 'debian', 'changelog')
    if os.path.exists(changelog):
        with open(changelog, encoding='utf-8') as f:
            m = re.match(r'rpma-ng \(([^)]+)\)', f.readline())
        if not m or m.group(1) != version:
            problems.append('debian/changelog: the first entry is %s, the version is %s'
                            % (m.group(1) if m else 'not "rpma-ng (VERSION)"', version))

    news = docs.get('NEWS.md')
    first = None
    if news:
        first = next(((n, m.group(1)) for n, line in enumerate(news.plain, 1)
                      for m in [re.match(r'##\s+rpma-ng\s+(\S+)', line)] if m), None)
        if not first:
            problems.append('NEWS.md: no "## rpma-ng %s" heading' % version)
        elif first[1] != version:
            problems.append('NEWS.md:%d: the latest release is %s, the version is %s'
                            % (first[0], first[1], version))

    for name, doc in sorted(docs.items()):
        for n, line in enumerate(doc.plain, 1):
            for m in re.finditer(r'\brpma-ng\s+' + VERSION_NUMBER, line):
                older = name == 'NEWS.md' and line.startswith('## ') and \
                    first is not None and n != first[0]
                if m.group(1) != version and not older:
                    problems.append('%s:%d: rpma-ng %s, the version is %s'
                                    % (name, n, m.group(1), version))
            for m in re.finditer(r'\blibrpma\s+' + VERSION_NUMBER, line):
                said = m.group(1).split('.')
                if said not in (release.split('.')[:len(said)],
                                compared.split('.')[:len(said)]):
                    problems.append('%s:%d: librpma %s, the release is librpma %s (and the '
                                    'tests compare with %s)'
                                    % (name, n, m.group(1), release, compared))
            if '@VERSION@' in line:
                problems.append('%s:%d: @VERSION@, which nothing fills in: write %s'
                                % (name, n, version))

    for name in sorted(raw):
        if not name.startswith('man/'):
            continue
        th = next((line for line in raw[name].splitlines() if line.startswith('.TH ')), '')
        if '"rpma-ng %s"' % version not in th:
            problems.append('%s: .TH does not name the version ("rpma-ng %s")'
                            % (name, version))
    librpma7 = docs.get('man/man7/librpma.7')
    if librpma7 and not re.search(words('This manual describes rpma-ng %s.' % version),
                                  librpma7.text()):
        problems.append('man/man7/librpma.7: COMPATIBILITY does not say '
                        '"This manual describes rpma-ng %s."' % version)
    return problems


def section(doc, start, is_end):
    """(first line number, text) of the lines after the first line matching
    start, up to the first line for which is_end holds; None if none."""
    begin = next((n for n, line in enumerate(doc.plain, 1) if re.match(start, line)), None)
    if begin is None:
        return None
    body = []
    for line in doc.plain[begin:]:
        if is_end(line):
            break
        body.append(line)
    return begin, doc.plain[begin - 1] + '\n' + '\n'.join(body)


def check_functions(root, facts, docs):
    problems = []
    f = facts['functions']
    nodes = map_nodes(root)
    base, ext = f['base_node'], f['extension_node']
    for node in (base, ext):
        if node not in nodes:
            problems.append('%s: src/librpma.map has no node %s' % (FACTS, node))
    for node in sorted(set(nodes) - {base, ext}):
        problems.append('%s: src/librpma.map has a node %s that the table does not name'
                        % (FACTS, node))
    if base in nodes and len(nodes[base]) != f['base_count']:
        problems.append('%s: %d functions under %s, src/librpma.map exports %d'
                        % (FACTS, f['base_count'], base, len(nodes[base])))
    listed = f['extensions']
    if len(set(listed)) != len(listed):
        problems.append('%s: an extension is listed twice' % FACTS)
    if ext in nodes:
        for name in sorted(set(nodes[ext]) - set(listed)):
            problems.append('%s: %s is exported under %s but not listed'
                            % (FACTS, name, ext))
        for name in sorted(set(listed) - set(nodes[ext])):
            problems.append('%s: %s is listed but not exported under %s'
                            % (FACTS, name, ext))
    extensions = set(listed)
    exported = {s for syms in nodes.values() for s in syms}

    for name, doc in sorted(docs.items()):
        for n, line in enumerate(doc.plain, 1):
            for m in COUNT.finditer(line):
                count, new = int(m.group(1)), m.group(2)
                expected = len(extensions) if new else f['base_count']
                if count != expected:
                    problems.append('%s:%d: "%s": %s %d' % (
                        name, n, m.group(0),
                        'the extensions are' if new else 'librpma 1.x has', expected))
            for m in NODE.finditer(line):
                if m.group(0) not in (base, ext):
                    problems.append('%s:%d: symbol version %s: the nodes are %s and %s'
                                    % (name, n, m.group(0), base, ext))

    lists = []
    news = docs.get('NEWS.md')
    if news:
        lists.append(('NEWS.md', section(news, r'###\s+New functions\b',
                                         lambda line: line.startswith('#')),
                      '"### New functions"'))
    librpma7 = docs.get('man/man7/librpma.7')
    if librpma7:
        lists.append(('man/man7/librpma.7', librpma7.section('EXTENSIONS'),
                      'EXTENSIONS section'))
    for name, found, what in lists:
        if found is None:
            problems.append('%s: no %s, the list of the new functions' % (name, what))
            continue
        begin, text = found
        if ext not in text:
            problems.append('%s:%d: the list of the new functions does not name %s'
                            % (name, begin, ext))
        named = {m.group(1) for m in MAN3_REF.finditer(text)} & (exported | extensions)
        for fn in sorted(named - extensions):
            problems.append('%s:%d: the new functions list %s, which is not an extension'
                            % (name, begin, fn))
        for fn in sorted(extensions - named):
            problems.append('%s:%d: the new functions leave out %s' % (name, begin, fn))
    return problems


def check_platforms(facts, docs):
    problems = []
    table = facts['platforms']['table']
    rows = {r['platform']: r for r in table}
    claims = {
        'placement_persistent': {p for p, r in rows.items()
                                 if r['read_after_write'] == 'persistence'},
        'placement_not_persistent': {p for p, r in rows.items()
                                     if r['read_after_write'] != 'persistence'},
        'all': set(rows),
        'context': None,
    }
    for r in table:
        if platforms_named(r['platform']) != {r['platform']}:
            problems.append('%s: platform "%s" is not one the check knows'
                            % (FACTS, r['platform']))
        best = 'read-after-write' if r['read_after_write'] == 'persistence' else 'GPSPM'
        if r['gpspm'] != 'persistence' or r['method'] != best:
            problems.append('%s: on %s the method for persistence is %s'
                            % (FACTS, r['platform'], best))

    def value(field, cell):
        """a cell as the table says it: "visibility only" and "persistent"
        are visibility and persistence; the other fields word for word"""
        cell = cell.strip()
        if field in ('read_after_write', 'gpspm'):
            for word in ('visibility', 'persistence'):
                if cell.lower().startswith(word[:-2]):
                    return word
        return cell

    def compare(name, number, platform, got):
        named = platforms_named(platform)
        key = next(iter(named)) if len(named) == 1 else None
        if key not in rows:
            problems.append('%s:%d: a platform the table does not have: %s'
                            % (name, number, platform.strip()))
            return None
        for field, said in got.items():
            expected = rows[key][field]
            if value(field, said) != expected:
                problems.append('%s:%d: %s: %s says "%s", %s says "%s"'
                                % (name, number, key, field, said.strip(), FACTS, expected))
        return key

    tables = {}  # document: the line numbers of its table, checked here

    # doc/persistence.md, "| target platform | where an RDMA write stops | ..."
    doc = docs.get('doc/persistence.md')
    if doc:
        header = next((n for n, line in enumerate(doc.plain, 1)
                       if re.match(r'\|\s*target platform\s*\|', line)), None)
        if header is None:
            problems.append('doc/persistence.md: no table of the platforms '
                            '("| target platform | ...")')
        else:
            columns = [c.strip() for c in doc.plain[header - 1].strip().strip('|').split('|')]
            fields = {'where an RDMA write stops': 'write_stops_in',
                      'read-after-write gives': 'read_after_write',
                      'GPSPM gives': 'gpspm', 'use': 'method'}
            seen = set()
            lines = {header, header + 1}
            n = header + 2
            while n <= len(doc.plain) and doc.plain[n - 1].startswith('|'):
                cells = [c.strip() for c in doc.plain[n - 1].strip().strip('|').split('|')]
                got = {fields[col]: cell for col, cell in zip(columns[1:], cells[1:])
                       if col in fields}
                seen.add(compare('doc/persistence.md', n, cells[0], got))
                lines.add(n)
                n += 1
            for p in sorted(set(rows) - seen):
                problems.append('doc/persistence.md:%d: the table has no row for %s'
                                % (header, p))
            tables['doc/persistence.md'] = lines

    # librpma(7), PERSISTENCE: "platform of the target   read-after-write ..."
    doc = docs.get('man/man7/librpma.7')
    if doc:
        header = next((n for n, line in enumerate(doc.plain, 1)
                       if line.startswith('platform of the target')), None)
        if header is None:
            problems.append('man/man7/librpma.7: no table of the platforms '
                            '("platform of the target ...")')
        else:
            columns = re.split(r'\s{2,}', doc.plain[header - 1].strip())
            fields = {'read-after-write': 'read_after_write', 'GPSPM': 'gpspm',
                      'best method': 'method'}
            seen = set()
            lines = {header}
            n = header + 1
            while n <= len(doc.plain) and doc.plain[n - 1].strip():
                cells = re.split(r'\s{2,}', doc.plain[n - 1].strip())
                got = {fields[col]: cell for col, cell in zip(columns[1:], cells[1:])
                       if col in fields}
                seen.add(compare('man/man7/librpma.7', n, cells[0], got))
                lines.add(n)
                n += 1
            for p in sorted(set(rows) - seen):
                problems.append('man/man7/librpma.7:%d: the table has no row for %s'
                                % (header, p))
            tables['man/man7/librpma.7'] = lines

    # the statements: found, naming what their claim says
    covered = {}
    for s in facts['platforms']['statements']:
        name, claim = s['file'], s.get('claim')
        doc = docs.get(name)
        if doc is None:
            problems.append('%s: a statement of %s, which is not a document checked'
                            % (FACTS, name))
            continue
        if claim not in claims:
            problems.append('%s: a statement of %s claims "%s": one of %s'
                            % (FACTS, name, claim, ', '.join(sorted(claims))))
            continue
        text = doc.text(tables.get(name, ()))
        if 'text' in s:
            pattern, label = words(s['text']), s['text']
        else:
            pattern = words(s['from']) + r'.*?' + words(s['to'])
            label = '%s ... %s' % (s['from'], s['to'])
        m = re.search(pattern, text, re.S)
        if not m:
            problems.append('%s: no longer says "%s" (%s): update its statement in %s'
                            % (name, label, claim, FACTS))
            continue
        covered.setdefault(name, []).append((m.start(), m.end()))
        expected = claims[claim]
        if expected is None:
            continue
        named = platforms_named(m.group(0))
        if named != expected:
            problems.append('%s:%d: "%s" names %s; %s says %s: %s'
                            % (name, doc.line_of(text, m.start()), label,
                               ', '.join(sorted(p or 'DDIO (no state)' for p in named)) or
                               'no platform', FACTS, claim, ', '.join(sorted(expected))))

    # every other mention of the platforms
    for name, doc in sorted(docs.items()):
        text = doc.text(tables.get(name, ()))
        spans = covered.get(name, [])
        for m in MENTION.finditer(text):
            if not any(a <= m.start() < b for a, b in spans):
                line = doc.plain[doc.line_of(text, m.start()) - 1].strip()
                problems.append('%s:%d: names %s outside the statements of %s, which say '
                                'what each platform gives: "%s"'
                                % (name, doc.line_of(text, m.start()), m.group(0), FACTS,
                                   line))
    return problems


def flat_text(root, name, docs):
    """A file's text for the constants: a document as its checks read it,
    any other file (a header, a source) with its comment leaders taken out;
    every run of white space one space."""
    if name in docs:
        text = docs[name].text()
    else:
        with open(os.path.join(root, name), encoding='utf-8') as f:
            text = f.read()
        text = re.sub(r'/\*|\*/|^\s*\*|//', ' ', text, flags=re.M)
    return ' '.join(text.split())


def check_constants(root, facts, docs):
    problems = []
    for c in facts['constants']['list']:
        value = str(c['value'])
        source, pattern = c['code']
        found = re.findall(pattern, flat_text(root, source, {}))
        if found != [value]:
            problems.append('%s: %s: %s says %s, %s says %s'
                            % (FACTS, c['name'], source, ', '.join(found) or 'nothing',
                               FACTS, value))
        for name, pattern in c['stated']:
            found = re.findall(pattern, flat_text(root, name, docs))
            if not found:
                problems.append('%s: no longer states %s ("%s", %s)'
                                % (name, c['name'], pattern, FACTS))
            for number in found:
                if number != value:
                    problems.append('%s: says %s where the code has %s: %s ("%s")'
                                    % (name, number, value, c['name'], pattern))
    return problems


def check(root, numbered, raw):
    """numbered: {document: [(line number, plain text, in code)]};
    raw: {document: its text as stored}. The problems found."""
    try:
        facts = load(root)
    except (OSError, ValueError) as err:
        return ['%s: %s' % (FACTS, err)]
    docs = {name: Doc(name, lines, raw.get(name, '')) for name, lines in numbered.items()}
    problems = []
    for part in (lambda: check_version(root, facts, docs, raw),
                 lambda: check_functions(root, facts, docs),
                 lambda: check_constants(root, facts, docs),
                 lambda: check_platforms(facts, docs)):
        try:
            problems += part()
        except (KeyError, TypeError) as err:
            problems.append('%s: a field is missing or of the wrong kind: %r' % (FACTS, err))
    return problems

