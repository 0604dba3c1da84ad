"The documentation site, built offline and loaded page by page in headless Chromium with every outside host blocked."
import functools, http.server, os, re, shutil, subprocess, sys, tempfile, threading
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = shutil.which('chromium') or shutil.which('chromium-browser')
if not CHROMIUM:
    if os.environ.get('CI'): raise RuntimeError("chromium is missing: .ci/run installs Debian's chromium before the tests")
    pytest.skip('chromium is not installed (apt-get install -y chromium)', allow_module_level=True)

class _Handler(http.server.SimpleHTTPRequestHandler):
    log: list = None
    def log_message(self, *a): pass
    def send_response(self, code, message=None):
        self.log.append((unquote(urlparse(self.path).path), code)); super().send_response(code, message)

@pytest.fixture(scope='module')
def site():
    res = subprocess.run([sys.executable, str(ROOT / 'tools' / 'make_docs.py'), 'site'], capture_output=True, text=True)
    assert res.returncode == 0, f"make_docs.py site failed:\n{res.stdout[-2000:]}\n{res.stderr[-6000:]}"
    out = ROOT / '_docs'
    log = []
    handler = functools.partial(type('H', (_Handler,), {'log': log}), directory=str(out))
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield out, f'http://127.0.0.1:{server.server_address[1]}', log
    server.shutdown()

def dom(url: str) -> str:
    "The page's DOM after its scripts ran, in headless Chromium that can reach 127.0.0.1 only."
    with tempfile.TemporaryDirectory() as profile:
        res = subprocess.run([CHROMIUM, '--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
                              '--disable-component-update', '--disable-sync', '--no-first-run', f'--user-data-dir={profile}',
                              '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1', '--virtual-time-budget=15000',
                              '--dump-dom', url], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    return res.stdout

PAGES = ['index', 'derivation', 'losses', 'reference', 'synthetic', 'metrics', 'nn', 'objective', 'continuous_cvae',
         'shared_discrete_cvae', 'train', 'experiments', 'explorer', 'benchmarks']

def test_every_page_renders_math_and_figures(site):
    out, base, log = site
    for page in PAGES:
        html = dom(f'{base}/{page}.html')
        assert '<title>' in html and 'Traceback' not in html, page
        n_math = len(re.findall(r'class="math notranslate', html))
        if n_math: assert html.count('<mjx-container') >= n_math, f'{page}: math not typeset ({n_math} blocks)'
        assert '$$' not in re.sub(r'<script.*?</script>', '', html, flags=re.S), f'{page}: raw $$ left'
        for src in re.findall(r'<img[^>]+src="([^"]+)"', html):
            assert not src.startswith('http'), f'{page}: image from outside: {src}'
            path = '/' + src.lstrip('./')
            assert (path, 200) in log, f'{page}: image {src} was not loaded'
        external = [u for u in re.findall(r'<(?:script|link)[^>]+(?:src|href)="(https?://[^"]+)"', html) if '127.0.0.1' not in u]
        assert not external, f'{page}: loads from outside hosts: {external}'
    assert any(p.startswith('/_images/') for p, c in log if c == 200)

def test_every_page_is_in_the_sidebar(site):
    _, base, _ = site
    html = dom(f'{base}/index.html')
    nav = re.search(r'<nav class="[^"]*bd-docs-nav.*?</nav>', html, re.S).group(0)
    for page in PAGES[1:]: assert f'href="{page}.html"' in nav, page

def test_search_finds_an_exported_symbol(site):
    _, base, _ = site
    html = dom(f'{base}/search.html?q=example_inverse_surprisal_weighted_reconstruction_loss')
    results = re.search(r'<ul[^>]*class="search"[^>]*>(.*?)</ul>', html, re.S)
    assert results and 'losses.html' in results.group(1), 'no search result on the losses page'
