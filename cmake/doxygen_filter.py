#!/usr/bin/env python3
"""Doxygen INPUT_FILTER for ranklab's headers (docs/Doxyfile.in, target `docs`).

The headers are commented in plain `//` lines, written for readers of the header. This
filter hands Doxygen the same text as documentation, without changing the headers:
  * the comment block that opens the file becomes the file's description (\\file);
  * a run of `//` lines directly above a declaration becomes that declaration's `///` doc;
  * `code;  // text` becomes `code;  ///< text`, and `//` lines aligned under such a text
    continue it;
  * section rulers (`// ---- name ----`) and comments not followed by a declaration stay
    plain comments.
Characters Doxygen would read as commands or markup (\\ @ < > & # %) are escaped outside
`code spans`, so that a comment is shown as written and triggers no warning. Line numbers
are kept but for the one line `\\file` adds at the top.
"""
import re
import sys

ESCAPE = re.compile(r'([\\@<>&#%$])')


def escape(text):
    parts = text.split('`')
    for i in range(0, len(parts), 2):  # outside `...` only
        parts[i] = ESCAPE.sub(r'\\\1', parts[i])
    if len(parts) % 2 == 0:  # an unpaired backtick: leave it visible, escaped
        return ESCAPE.sub(r'\\\1', text).replace('`', "'")
    return '`'.join(parts)


def trailing_comment(line):
    """Index of a `//` comment after code on the line, or -1 (strings and chars skipped)."""
    quote = None
    i = 0
    while i < len(line) - 1:
        c = line[i]
        if quote:
            if c == '\\':
                i += 2
                continue
            if c == quote:
                quote = None
        elif c in '"\'':
            # a digit separator (1'000) is not a character literal
            if c == "'" and i > 0 and line[i - 1].isalnum() and i + 1 < len(line) and line[i + 1].isalnum():
                pass
            else:
                quote = c
        elif line.startswith('//', i):
            return i if line[:i].strip() else -1
        elif line.startswith('/*', i):
            return -1
        i += 1
    return -1


def main(path):
    with open(path, encoding='utf-8') as f:
        lines = f.read().split('\n')
    out = list(lines)
    n = len(lines)
    is_comment = [l.lstrip().startswith('//') for l in lines]

    # The opening comment block: the file's description.
    i = 0
    while i < n and is_comment[i]:
        i += 1
    if i > 0:
        for k in range(i):
            text = lines[k].lstrip()[2:]
            out[k] = ('/// \\file\n' if k == 0 else '') + '///' + escape(text)
    start = i

    trail_col = -1  # column of the previous line's trailing comment, for continuations
    k = start
    while k < n:
        line = lines[k]
        if is_comment[k]:
            col = len(line) - len(line.lstrip())
            if trail_col >= 0 and col == trail_col:
                out[k] = line[:col] + '///<' + escape(line[col + 2:])
                k += 1
                continue
            trail_col = -1
            # a run of whole-line comments
            j = k
            while j < n and is_comment[j] and not lines[j].lstrip()[2:].lstrip().startswith('---'):
                j += 1
            nxt = lines[j].strip() if j < n else ''
            documents = (j > k and nxt and not nxt.startswith(('#', '}', '//', 'namespace', 'public:',
                                                              'private:', 'protected:')))
            if documents:
                for m in range(k, j):
                    c = len(lines[m]) - len(lines[m].lstrip())
                    out[m] = lines[m][:c] + '///' + escape(lines[m][c + 2:])
            k = max(j, k + 1)
            continue
        at = trailing_comment(line)
        if at >= 0 and not line[:at].rstrip().endswith(('{', '(')):
            out[k] = line[:at] + '///<' + escape(line[at + 2:])
            trail_col = at
        else:
            trail_col = -1 if at < 0 else at
            if at >= 0:
                out[k] = line[:at] + '//' + line[at + 2:]
        k += 1
    sys.stdout.write('\n'.join(out))


if __name__ == '__main__':
    main(sys.argv[1])
