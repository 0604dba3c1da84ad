"""Build the documentation site and the README offline from the notebooks: nbdev's own processing (its Python API,
no Quarto), a small mapping of its Quarto cell directives to myst-nb cell tags, then Sphinx for the site (_docs/,
index.html at its root) or plain markdown for README.md (from nbs/index.ipynb).

    python tools/make_docs.py [site|readme]
"""
import json, os, re, shutil, subprocess, sys, tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / '_docs_src'
_directive = re.compile(r'^\s*#\s*\|\s*([\w-]+)\s*:\s*(.*?)\s*$')
_attrs = re.compile(r'\{(?:target|style|\.)[^}]*\}')     # Quarto/pandoc attribute blocks after links
_num = re.compile(r'^\d+[a-z]*_')

def page_name(nb_name: str) -> str:
    "nbdev's page name: the notebook's name without its number prefix."
    return _num.sub('', nb_name)

def directives(src: str) -> tuple:
    "({key: value} of the leading `#| key: value` lines, the source without them)."
    d, lines = {}, src.splitlines()
    while lines and _directive.match(lines[0]):
        k, v = _directive.match(lines[0]).groups(); d[k] = v.strip('"\''); lines.pop(0)
    return d, '\n'.join(lines)

def fix_links(md: str, doc_url: str) -> str:
    "Links to the published site become relative page links; notebook links become page links; anchors follow Sphinx."
    def anchor(m): return m.group(1) + m.group(2).lower()
    md = md.replace(doc_url, '')
    md = re.sub(r'\]\((\d+[a-z]*_)?([\w-]+)\.ipynb', lambda m: f']({m.group(2)}.ipynb', md)
    md = re.sub(r'(\]\([\w-]*\.(?:html|ipynb)#)([\w.-]+)', anchor, md)
    md = re.sub(r'\]\(([\w-]+)\.html', r'](\1.ipynb', md)
    return _attrs.sub('', md)

def to_myst(nb: dict, doc_url: str) -> dict:
    "Map one nbdev-processed notebook to myst-nb: front matter to a title, directives to tags, asis output to markdown."
    cells = []
    for cell in nb['cells']:
        src = ''.join(cell['source'])
        if cell['cell_type'] == 'raw' and src.startswith('---'):
            fm = yaml.safe_load(src.strip().strip('-')) or {}
            head = f"# {fm.get('title', '')}\n\n" + (f"> {fm['description']}\n" if fm.get('description') else '')
            cells.append(dict(cell_type='markdown', metadata={}, source=head)); continue
        if cell['cell_type'] == 'markdown':
            cells.append(dict(cell, source=fix_links(src, doc_url))); continue
        if cell['cell_type'] != 'code': continue
        d, code = directives(src)
        if d.get('include') == 'false' or d.get('output') == 'false' and d.get('echo') == 'false': continue
        if d.get('output') == 'asis':
            md = ''.join(''.join(o.get('data', {}).get('text/markdown', [])) for o in cell.get('outputs', []))
            md = re.sub(r'^\s*---\s*\n', '', md)            # show_doc opens with a rule: not at a section start
            if md: cells.append(dict(cell_type='markdown', metadata={}, source=fix_links(md, doc_url)))
            continue
        tags = (['remove-input'] if d.get('echo') == 'false' else []) + (['remove-output'] if d.get('output') == 'false' else [])
        cells.append(dict(cell, source=code, metadata=dict(cell.get('metadata', {}), tags=tags)))
    for i, c in enumerate(cells): c.setdefault('id', f'doc-{i}')
    meta = {k: v for k, v in nb.get('metadata', {}).items() if k != 'widgets'}   # live widgets' state: their cells are hidden
    return dict(nb, cells=cells, metadata=meta)

def toctree(pages: list) -> dict:
    body = '\n'.join(pages)
    return dict(cell_type='markdown', id='toctree', metadata={}, source=f"```{{toctree}}\n:hidden:\n:maxdepth: 1\n\n{body}\n```\n")

def process(src: Path) -> dict:
    "One notebook through nbdev's documentation processors (exactly what `proc_nbs` runs), as a dict."
    from nbdev.processors import FilterDefaults
    from nbdev.serve_drv import exec_nb
    with tempfile.TemporaryDirectory() as d:
        exec_nb(src, Path(d) / src.name, FilterDefaults)
        return json.loads((Path(d) / src.name).read_text())

def readme_markdown(nb: dict) -> str:
    "README markdown from the myst form of the processed index notebook: prose, code, and text outputs."
    chunks = []
    for c in nb['cells']:
        src, tags = ''.join(c['source']).strip(), c.get('metadata', {}).get('tags', [])
        if c['cell_type'] == 'markdown':
            if not src.startswith('```{toctree}'): chunks.append(src)
            continue
        if 'remove-input' not in tags and src: chunks.append(f'```python\n{src}\n```')
        outs = [''.join(o.get('text', '')) if o['output_type'] == 'stream' else ''.join(o.get('data', {}).get('text/plain', ''))
                for o in c.get('outputs', []) if 'image/png' not in o.get('data', {})]
        out = '\n'.join(o.rstrip('\n') for o in outs if o.strip())
        if out and 'remove-output' not in tags: chunks.append(f'```\n{out}\n```')
    return '\n\n'.join(chunks) + '\n'

def write_readme(doc_url: str):
    "Regenerate README.md from nbs/index.ipynb (written only when it changes, atomically)."
    text = readme_markdown(to_myst(process(ROOT / 'nbs' / 'index.ipynb'), doc_url))
    files = {page_name(p.stem): p.name for p in (ROOT / 'nbs').glob('*.ipynb')}
    text = re.sub(r'\]\(([\w-]+)\.ipynb', lambda m: f"](nbs/{files.get(m.group(1), m.group(1) + '.ipynb')}", text)   # on GitHub: the notebooks
    dest = ROOT / 'README.md'
    if dest.exists() and dest.read_text() == text: return
    fd, tmp = tempfile.mkstemp(dir=ROOT, prefix='.README.', suffix='.tmp')
    with os.fdopen(fd, 'w') as f: f.write(text)
    os.replace(tmp, dest)

def main(what='site'):
    sys.path.insert(0, str(ROOT))
    from nbdev.config import get_config
    from nbdev.serve import proc_nbs
    cfg = get_config()
    doc_url = f"{cfg.doc_host}{cfg.doc_baseurl}".rstrip('/') + '/'
    if what == 'readme': return write_readme(doc_url)
    if what != 'site': sys.exit(f"usage: make_docs.py [site|readme], got {what!r}")
    write_readme(doc_url)
    proc = proc_nbs(n_workers=1, force=True)
    if SRC.exists(): shutil.rmtree(SRC)
    SRC.mkdir()
    shutil.copy(ROOT / 'docs' / 'conf.py', SRC / 'conf.py')
    nbs = sorted(p for p in Path(proc).glob('*.ipynb') if not p.name.startswith('_'))
    pages = [page_name(p.stem) for p in nbs if p.stem != 'index']
    bench = ROOT / 'bench' / 'results.md'
    if bench.exists():                                        # the figures of `make bench`, as a page of their own
        presets = ROOT / 'bench' / 'presets.md'
        (SRC / 'benchmarks.md').write_text('# Benchmarks\n\n## What the presets reach\n\n' + presets.read_text()
                                           + '\n## Every figure\n\nMeasured by `make bench` (`bench/`): each figure is a median over '
                                           'repeated runs after warm-up, ratios taken side by side in one process.\n\n' + bench.read_text())
        pages.append('benchmarks')
    for p in nbs:
        nb = to_myst(json.loads(p.read_text()), doc_url)
        if p.stem == 'index': nb['cells'].append(toctree(pages))
        (SRC / f'{page_name(p.stem)}.ipynb').write_text(json.dumps(nb))
    out = ROOT / '_docs'
    if out.exists(): shutil.rmtree(out)
    subprocess.run([sys.executable, '-m', 'sphinx', '-b', 'html', '-q', '-j', '1', str(SRC), str(out)], check=True)
    print(f"site written to {out}/index.html ({len(nbs)} pages)")

if __name__ == '__main__': main(*sys.argv[1:])
