"""Regenerate README.md from nbs/index.ipynb without Quarto: markdown cells as they are, code cells with their outputs."""
import json, os, re, sys, tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_directive = re.compile(r'^\s*#\s*\|\s*(.*)$')

def _directives(src):
    "The `#| key: value` lines at the top of a cell, as a set of their texts."
    out = set()
    for line in src.splitlines():
        m = _directive.match(line)
        if not m: break
        out.add(m.group(1).strip())
    return out

def _strip_directives(src): return '\n'.join(l for l in src.splitlines() if not _directive.match(l)).strip()

def _text_outputs(outputs):
    "The plain-text parts of a code cell's outputs."
    parts = []
    for o in outputs:
        if o.get('output_type') == 'stream': parts.append(''.join(o['text']))
        elif 'data' in o and 'text/plain' in o['data'] and 'image/png' not in o['data']:
            parts.append(''.join(o['data']['text/plain']))
    return '\n'.join(p.rstrip('\n') for p in parts if p.strip())

def render(nb):
    "Markdown for the README from the notebook dict `nb`."
    chunks = []
    for cell in nb['cells']:
        src = ''.join(cell['source'])
        d = _directives(src)
        if cell['cell_type'] == 'raw' or 'hide' in d or 'include: false' in d: continue
        if cell['cell_type'] == 'markdown': chunks.append(src.strip())
        elif cell['cell_type'] == 'code':
            code = _strip_directives(src)
            if code and 'echo: false' not in d: chunks.append(f'```python\n{code}\n```')
            out = _text_outputs(cell.get('outputs', []))
            if out and 'output: false' not in d: chunks.append(f'```\n{out}\n```')
    return '\n\n'.join(c for c in chunks if c) + '\n'

def main(src=ROOT/'nbs'/'index.ipynb', dest=ROOT/'README.md'):
    src, dest = Path(src), Path(dest)
    txt = render(json.loads(Path(src).read_text(encoding='utf-8')))
    if dest.exists() and dest.read_text(encoding='utf-8') == txt: return
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix='.README.', suffix='.tmp')
    with os.fdopen(fd, 'w', encoding='utf-8') as f: f.write(txt)
    os.replace(tmp, dest)

if __name__ == '__main__': main(*sys.argv[1:])
