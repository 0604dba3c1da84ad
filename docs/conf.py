"Sphinx configuration for the offline documentation site built from nbdev's processed notebooks (see tools/make_docs.py)."
from configparser import ConfigParser
from pathlib import Path

_cfg = ConfigParser(delimiters=['=']); _cfg.read(Path(__file__).resolve().parent.parent / 'settings.ini')
project = _cfg['DEFAULT']['lib_name']
release = _cfg['DEFAULT']['version']
author = _cfg['DEFAULT']['author']
copyright = _cfg['DEFAULT']['copyright']

extensions = ['myst_nb', 'sphinx-mathjax-offline']   # the package's module name has dashes
myst_enable_extensions = ['dollarmath', 'amsmath']
myst_heading_anchors = 3                  # show_doc headings get anchors, so symbol links resolve
suppress_warnings = ['myst.header']       # show_doc entries are H3 under the page title
nb_execution_mode = 'off'                 # notebooks are committed executed; the docs never run them
nb_render_markdown_format = 'myst'        # show_doc output is markdown with math
nb_ipywidgets_js = {}                     # never load the widget manager from a CDN: live widgets are hidden in the docs
html_theme = 'sphinx_book_theme'
html_title = project
html_theme_options = {'home_page_in_toc': True, 'use_download_button': False, 'show_toc_level': 2}
html_last_updated_fmt = None
exclude_patterns = ['_build']
