# SPDX-License-Identifier: BSD-3-Clause
"""
manpages.py -- what the man page checks share: reading the public header,
the symbol map, the Meson list of pages, and the text of a roff page.
"""

import os
import re


def read(path):
    with open(path, encoding='utf-8') as f:
        return f.read()


def _header_code(header_path):
    """The header without comments and preprocessor lines."""
    text = re.sub(r'/\*.*?\*/', ' ', read(header_path), flags=re.S)
    text = re.sub(r'//[^\n]*', ' ', text)
    lines = [line for line in text.splitlines() if not line.lstrip().startswith('#')]
    return '\n'.join(lines)


def normalize(decl):
    """Whitespace-insensitive form of a declaration: runs of blanks become
    one space, and no space is kept next to punctuation."""
    decl = ' '.join(decl.split())
    return re.sub(r'\s*([(),*\[\];])\s*', r'\1', decl)


def header_functions(header_path):
    """{name: prototype} of every function the header declares."""
    code = _header_code(header_path)
    code = code.replace('extern "C" {', ' ')
    protos = {}
    for decl in code.split(';'):
        decl = ' '.join(decl.split())
        decl = decl.rsplit('}', 1)[-1].strip()
        if decl.startswith('typedef') or '{' in decl:
            continue
        m = re.match(r'^([A-Za-z_][\w\s\*]*?)\b([A-Za-z_]\w*)\s*\((.*)\)$', decl)
        if m:
            protos[m.group(2)] = decl + ';'
    return protos


def header_types(header_path):
    """Names of the types the header defines (not merely declares): structs
    and enums with a body, and typedefs."""
    return header_records_and_callbacks(header_path) | header_enums(header_path)


def header_records_and_callbacks(header_path):
    """Names of the structs the header defines with members, and of its
    typedefs (the types of the callbacks a program passes): each is a type
    a program fills in or writes, and has a page of its own."""
    code = _header_code(header_path)
    names = set(re.findall(r'\bstruct\s+(\w+)\s*\{', code))
    names |= set(re.findall(r'\btypedef\b[^;(]*?\b(\w+)\s*\(', code))
    names |= set(re.findall(r'\btypedef\b[^;(]*?\b(\w+)\s*;', code))
    return names


def header_enums(header_path):
    """Names of the enums the header defines."""
    return set(re.findall(r'\benum\s+(\w+)\s*\{', _header_code(header_path)))


def type_bodies(code):
    """{('struct' or 'enum', name): [members]} of the definitions in C code,
    each member (a field or an enumerator) in the form of normalize()."""
    found = {}
    for m in re.finditer(r'\b(struct|enum)\s+(\w+)\s*\{(.*?)\}\s*;', code, flags=re.S):
        members = [normalize(x) for x in re.split(r'[;,]', m.group(3)) if x.strip()]
        found[(m.group(1), m.group(2))] = members
    return found


def header_type_bodies(header_path):
    return type_bodies(_header_code(header_path))


def header_error_codes(header_path):
    return set(re.findall(r'#define\s+(RPMA_E_\w+)\s', read(header_path)))


def map_symbols(map_path):
    """{version node: [symbols]} of a GNU ld version script."""
    text = re.sub(r'/\*.*?\*/', ' ', read(map_path), flags=re.S)
    nodes = {}
    for m in re.finditer(r'([A-Za-z_][\w.]*)\s*\{(.*?)\}\s*[\w.]*\s*;', text, flags=re.S):
        body = m.group(2)
        body = body.split('local:')[0]
        body = body.replace('global:', ' ')
        nodes[m.group(1)] = [s.strip() for s in body.split(';') if s.strip()]
    return nodes


def meson_pages(meson_path):
    """Pages listed in man/meson.build, as paths relative to man/."""
    return re.findall(r"'(man[137]/[^']+\.[137])'", read(meson_path))


def sections(page_text):
    """{section name: [lines]} of a man(7) page."""
    out = {}
    current = None
    for line in page_text.splitlines():
        m = re.match(r'^\.SH\s+"?([^"]*)"?\s*$', line)
        if m:
            current = m.group(1).strip()
            out[current] = []
        elif current is not None:
            out[current].append(line)
    return out


def _macro_args(rest):
    """Arguments of a macro line, as roff splits them."""
    args = []
    i = 0
    while i < len(rest):
        if rest[i] in ' \t':
            i += 1
        elif rest[i] == '"':
            j = i + 1
            arg = ''
            while j < len(rest):
                if rest[j] == '"':
                    if j + 1 < len(rest) and rest[j + 1] == '"':
                        arg += '"'
                        j += 2
                        continue
                    break
                arg += rest[j]
                j += 1
            args.append(arg)
            i = j + 1
        else:
            j = i
            while j < len(rest) and rest[j] not in ' \t':
                j += 1
            args.append(rest[i:j])
            i = j
    return args


def _unescape(text):
    text = re.sub(r'\\f(\[[^\]]*\]|\(..|.)', '', text)
    text = text.replace('\\&', '').replace('\\%', '').replace('\\-', '-')
    text = text.replace('\\e', '\\').replace('\\(aq', "'").replace('\\ ', ' ')
    return text


FONT_MACROS = ('B', 'I', 'BI', 'IB', 'BR', 'RB', 'IR', 'RI', 'SM', 'SB')


def roff_to_text(lines):
    """Plain text of roff lines: font macros joined as they are printed,
    requests and other macros dropped."""
    out = []
    for line in lines:
        if line.startswith('.\\"') or line.startswith("'\\\""):
            continue
        if line.startswith('.') or line.startswith("'"):
            m = re.match(r'^[.\']\s*(\w+)\s*(.*)$', line)
            if not m:
                continue
            name, rest = m.group(1), m.group(2)
            if name in FONT_MACROS:
                joiner = ' ' if name in ('B', 'I', 'SM', 'SB') else ''
                out.append(_unescape(joiner.join(_macro_args(rest))))
            else:
                out.append('')
            continue
        out.append(_unescape(line))
    return '\n'.join(out)


def page_path(root, name, section='3'):
    return os.path.join(root, 'man', 'man' + section, name + '.' + section)
