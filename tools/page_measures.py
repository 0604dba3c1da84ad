"""How the pages read and how the package is built, measured (issue 82): per page the median sentence length in words,
its prose words, its sentences that carry four figures or more and its longest prose paragraph in lines; the longest
module in lines, the median exported cell in lines, and the cell of the losses page that first states l/(b+eps).
A sentence ends at . ! or ? (bold or not), a blank line, a list item or a heading; a formula counts as one word;
sentences of fewer than three words are left out. Prints a table; with --check, exits 1 when a limit in LIMITS is
broken.
Usage: python tools/page_measures.py [--check]"""
import json, re, statistics, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NBS, PACKAGE = ROOT / 'nbs', ROOT / 'inverse_surprisal'
# issue 82's limits, enforced by --check
LIMITS = dict(module_lines=500, losses_cell=15, export_cell_lines=12, median_sentence_words=20, paragraph_lines=6)
LONG_PAGES = ('10_experiments', '12_own_data')                   # where paragraphs are held to LIMITS['paragraph_lines']

FORMULA = re.compile(r'\$\$.*?\$\$|\$[^$\n]+\$', re.S)
FIGURE = re.compile(r'(?<![\w.])[-+]?\d[\d,]*(\.\d+)?%?(?![\w])')

def cells(page: Path) -> list: return json.loads(page.read_text())['cells']

def units(markdown: str) -> list:
    "The text's sentences, each a list of words (a formula one word; code blocks, tables and images left out)."
    text = FORMULA.sub(' FORMULA ', re.sub(r'```.*?```', ' ', markdown, flags=re.S))
    out, current = [], []
    def close():
        if current: out.extend(re.split(r'(?:(?<=[.!?])|(?<=[.!?]\*\*))\s+', ' '.join(current)))
        current.clear()
    for line in text.splitlines():
        s = line.strip()
        if not s or s.startswith('|') or s.startswith('!['): close(); continue
        if s.startswith('#') or re.match(r'([-*+]|\d+\.)\s', s): close()
        current.append(re.sub(r'^(#+|[-*+]|\d+\.)\s+', '', s))
    close()
    return [w for w in (u.split() for u in out) if len(w) >= 3]

def paragraphs(markdown: str) -> list:
    "Line counts of the prose paragraphs (not lists, tables, headings, formulas or code)."
    lens, n = [], 0
    for line in re.sub(r'```.*?```', '', markdown, flags=re.S).splitlines() + ['']:
        s = line.strip()
        prose = s and not re.match(r'([-*+|#>]|\d+\.|\$\$|!\[)', s)
        if prose: n += 1
        elif n: lens.append(n); n = 0
    return lens

def page_row(page: Path) -> dict:
    md = [''.join(c['source']) for c in cells(page) if c['cell_type'] == 'markdown']
    sentences = [s for m in md for s in units(m)]
    paras = [n for m in md for n in paragraphs(m)]
    return dict(page=page.stem, sentences=len(sentences),
                median_sentence_words=statistics.median(map(len, sentences)) if sentences else 0,
                prose_words=sum(map(len, sentences)),
                four_figure_sentences=sum(len(FIGURE.findall(' '.join(s))) >= 4 for s in sentences),
                paragraph_lines=max(paras, default=0))

def house() -> dict:
    "The longest module's lines, the median exported cell's lines, the losses page's first cell stating l/(b+eps)."
    modules = {p.name: len(p.read_text().splitlines()) for p in PACKAGE.glob('*.py') if p.name != '_modidx.py'}
    exports = [len(''.join(c['source']).splitlines()) - 1 for p in sorted(NBS.glob('[0-9]*.ipynb')) for c in cells(p)
               if c['cell_type'] == 'code' and ''.join(c['source']).startswith('#| export')
               and 'import' not in ''.join(c['source']).splitlines()[1]]
    losses = cells(NBS / '01_losses.ipynb')
    states = next((i for i, c in enumerate(losses) if c['cell_type'] == 'markdown'
                   and re.search(r'\\frac\{l(\(x,y\))?\}\{b(\(x,y\))?\s*\+\s*\\epsilon\}', ''.join(c['source']))), None)
    longest = max(modules, key=modules.get)
    return dict(module_lines=modules[longest], longest_module=longest, export_cell_lines=statistics.median(exports),
                losses_cell=states if states is not None else len(losses))

def main(check: bool=False) -> int:
    rows = [page_row(p) for p in sorted(NBS.glob('*.ipynb')) if not p.name.startswith('_')]
    print(f"{'page':26} {'sentences':>9} {'median words':>12} {'prose words':>11} {'4+ figures':>10} {'longest para':>12}")
    for r in rows:
        print(f"{r['page']:26} {r['sentences']:9d} {r['median_sentence_words']:12.1f} {r['prose_words']:11d} "
              f"{r['four_figure_sentences']:10d} {r['paragraph_lines']:12d}")
    over = [r['page'] for r in rows if r['median_sentence_words'] > LIMITS['median_sentence_words']]
    long = [r['page'] for r in rows if r['page'] in LONG_PAGES and r['paragraph_lines'] > LIMITS['paragraph_lines']]
    print(f"\npages whose median sentence is over {LIMITS['median_sentence_words']} words: {len(over)} of {len(rows)}"
          f"\nlong pages with a paragraph over {LIMITS['paragraph_lines']} lines: {', '.join(long) or 'none'}")
    h = house()
    print(f"longest module: {h['longest_module']} {h['module_lines']} lines (limit {LIMITS['module_lines']}); median "
          f"exported cell {h['export_cell_lines']} lines (limit {LIMITS['export_cell_lines']}); the losses page states "
          f"l/(b+eps) in cell {h['losses_cell']} (limit {LIMITS['losses_cell']})")
    broken = [k for k in ('module_lines', 'losses_cell', 'export_cell_lines') if h[k] > LIMITS[k]] + \
             [f'{p}: median sentence' for p in over] + [f'{p}: paragraph' for p in long]
    if check and broken: print(f"FAIL: {', '.join(broken)} past the limit"); return 1
    return 0

if __name__ == '__main__': sys.exit(main('--check' in sys.argv[1:]))
