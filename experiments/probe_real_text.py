"""Real-text probe (issue 45): does the discrete code find a real corpus's own categories, and how does it compare with
classical clusterings of the same texts? Two corpora reachable offline, each with categories that training never reads:
- wordnet: WordNet 3.0 glosses (Debian's wordnet-base, /usr/share/wordnet/data.*): x = the part of speech, y = the
  definition (examples cut), category = the lexicographer file (45);
- debian: Debian bookworm's package index (the main Packages file that `apt-get update` fetches): x = whether the
  package is architecture-independent ('all') or built per architecture, y = its one-line synopsis, category = its
  section (libs, python, games, science, ...);
- debian_long, fortunes and ecosystems (issue 81's hunt for a corpus where the words know more than the embedding):
  the first 30 words of a package's long description by section, Debian's `fortunes` by file (`fortune_rows`), and
  Debian's synopses by the ecosystem the package's name places it in (`ecosystem_rows`); then Debian's French and
  German synopses and French long descriptions by section (`debian_long_rows(lang=...)`), the code and the docstrings
  of 16 Python libraries by library (`code_rows`), Debian's Depends lists by section (`depends_rows`), and the files
  Debian's packages install by section (`contents_rows`).
Per corpus: n_pairs pairs (a quarter held out by the trainer's own split), a byte-level BPE tokenizer and a 2-layer GPT-2
base trained here on n_pairs *other* pairs. Per arm and seed: the `text` preset with 16 codes and the arm's settings;
printed every eval: KL, l0 - l (the code), b - l0 (the decoder), then codes used, the code's NMI with the categories
beyond x (less its chance level), AMI, and each code's most characteristic y words; beside it the clusterings a
researcher would try (TF-IDF k-means, a mixture of unigrams, LDA, k-means on all-MiniLM-L6-v2 sentence embeddings), 16
clusters each, fitted on the same training pairs and judged on the same held-out pairs.
A curve's codes_used is the trainer's (joint codes holding >= 1% of the held-out posterior); records made before it
was carry codes_argmax_used (codes that are the argmax for >= 1% of the held-out pairs, the code's `used` below).
Resumable: each finished piece is a JSON file in experiments/real_text/results/ (skipped on the next start; refused when its
settings changed); work files (pairs, base, runs) live in experiments/real_text/work/ (not in git).
Usage: python experiments/probe_real_text.py CORPUS ARM[,ARM...] SEED[,SEED...] [--steps N] [--out DIR] [--encoder DIR]
                                           [--base plateau]   (the base trained to its held-out plateau)
       python experiments/probe_real_text.py CORPUS baselines SEED[,SEED...]   (the clusterings alone: no base model)
       python experiments/probe_real_text.py planted ARM SEED --quick --out DIR   (make test's tiny version)"""
import argparse
import ast, gzip, importlib.util, json, re, subprocess, time
from pathlib import Path
import torch, tokenizers, transformers
from inverse_surprisal.clustering import (CLUSTERINGS, MINILM_WHEEL, category_scores, characteristic_words,
                                          classical_clusterings, minilm_folder, sentence_embeddings, word_counts)
from inverse_surprisal.config import make_config
from inverse_surprisal.config_files import config_diff, stored_config
from inverse_surprisal.text import TextPairs, collate, held_out_split, read_pairs
from inverse_surprisal.train import Trainer
from inverse_surprisal.text import batch_rows

HERE = Path(__file__).parent / 'real_text'
K, EVAL_FRACTION = 16, 0.25
# pairs for the CVAE (a quarter held out) and as many others for the base; the base's steps; the CVAE's eval interval
SIZES = dict(full=dict(n_pairs=8000, base_steps=800, eval_every=50),
             quick=dict(n_pairs=96, base_steps=20, eval_every=3))
# the base at its plateau (--base plateau): held-out nats per pair on PLATEAU['held'] of the base's own pairs (the rest
# train it) every `every` steps; it stops once `patience` checks in a row have not lowered the best by `min_gain`
# nats a pair (or at `most` steps) and keeps the best check's weights
PLATEAU = dict(full=dict(held=800, every=200, patience=3, min_gain=0.1, most=8000),
               quick=dict(held=16, every=5, patience=2, min_gain=0.1, most=30))
S, P = SIZES['full'], PLATEAU['full']

def use_sizes(quick: bool):
    "This process's sizes and plateau schedule (S, P): make test's with `quick`, else the full ones."
    global S, P
    S, P = (d['quick' if quick else 'full'] for d in (SIZES, PLATEAU))
transformers.utils.logging.disable_progress_bar()

# the arms compared side by side: the text preset with 16 codes plus these settings
ARMS = {
    'none': {},                                                         # the package before this issue
    'random': dict(start=dict(codes='random', steps=100)),
    'mixture': dict(start=dict(codes='mixture', steps=100)),
    'balanced': dict(start=dict(balance_steps=150)),
    'mixture-balanced': dict(start=dict(codes='mixture', steps=100, balance_steps=150)),
    'mixture-base': dict(start=dict(codes='mixture', steps=100), model=dict(decoder_init='base_model')),
    # the bag-of-words head's share in the E-step's cost (and its own training), with the decoder copied from the base
    'mixture-base-aux0.1': dict(start=dict(codes='mixture', steps=100), model=dict(decoder_init='base_model'),
                                objective=dict(aux_weight=0.1)),
    'mixture-base-aux3': dict(start=dict(codes='mixture', steps=100), model=dict(decoder_init='base_model'),
                              objective=dict(aux_weight=3.0)),
    # the encoder refitted to the model's exact posterior over the training pairs after the last step
    'mixture-refit': dict(start=dict(codes='mixture', steps=100), encoder_refit_epochs=3),
    # EM's own posterior q* as q off training (the held-out figures and codes), no encoder in between
    'mixture-model': dict(start=dict(codes='mixture', steps=100), model=dict(eval_posterior='model')),
    'kmeans-model': dict(start=dict(codes='kmeans', steps=100), model=dict(eval_posterior='model')),
    'mixture-base-model': dict(start=dict(codes='mixture', steps=100),
                               model=dict(eval_posterior='model', decoder_init='base_model')),
    'kmeans-base-model': dict(start=dict(codes='kmeans', steps=100),
                              model=dict(eval_posterior='model', decoder_init='base_model')),
    # the k-means codes held for two thirds of the run before EM takes over
    'kmeans-hold-model': dict(start=dict(codes='kmeans', steps=200), model=dict(eval_posterior='model')),
    # the embedding view (issue 61): y's all-MiniLM-L6-v2 embedding as a second thing the code explains, beside its
    # words (model.view_kappa weighs it), started from the mixture of unigrams or from k-means on the embeddings
    'view-model': dict(start=dict(codes='mixture', steps=100), model=dict(eval_posterior='model'),
                       data=dict(view_encoder='minilm')),
    'view-kmeans-model': dict(start=dict(codes='view_kmeans', steps=100), model=dict(eval_posterior='model'),
                              data=dict(view_encoder='minilm')),
    # the embedding weighed 0.4x and 4x (view_kappa 20 and 200 instead of 50) against the words and their order
    'view-kmeans-k20-model': dict(start=dict(codes='view_kmeans', steps=100),
                                  model=dict(eval_posterior='model', view_kappa=20.0), data=dict(view_encoder='minilm')),
    'view-kmeans-k200-model': dict(start=dict(codes='view_kmeans', steps=100),
                                   model=dict(eval_posterior='model', view_kappa=200.0), data=dict(view_encoder='minilm')),
    # the view's means as running averages of their examples' embeddings under EM's posterior (view_decay), not
    # learned by Adam: does the code then survive a stronger view?
    **{f'view-avg-k{k}-model': dict(start=dict(codes='view_kmeans', steps=100),
                                    model=dict(eval_posterior='model', view_kappa=float(k), view_decay=0.98),
                                    data=dict(view_encoder='minilm')) for k in (200, 500)},
    # the sequence's share (item 4): the bag-of-words head weighed 0.3x in the E-step and its own training
    'mixture-aux0.3-model': dict(start=dict(codes='mixture', steps=100), model=dict(eval_posterior='model'),
                                 objective=dict(aux_weight=0.3)),
    # ... or annealed from 1 to 0.1 after the start's release (step 100) to the last step
    'mixture-anneal0.1-model': dict(start=dict(codes='mixture', steps=100), model=dict(eval_posterior='model'),
                                    objective=dict(aux_anneal_start=100, aux_anneal_steps=200, aux_final=0.1)),
    # the base's own decoder with z in every block (issue 62): the copy trained at decoder_lr, or frozen with the
    # entries of z as its adapters; beside mixture-base-model (z at the embeddings alone) and mixture-model (fresh)
    'mixture-every-model': dict(start=dict(codes='mixture', steps=100),
                                model=dict(eval_posterior='model', decoder_init='base_model', decoder_z='every')),
    'mixture-every-frozen-model': dict(start=dict(codes='mixture', steps=100),
                                       model=dict(eval_posterior='model', decoder_init='base_model', decoder_z='every',
                                                  decoder_layers=0)),
    # ... with the decoder's gradient on the classes holding 1 - 1e-3 of q* only (issue 79: every class's value
    # computed without gradient, the support's with)
    'mixture-every-model-support': dict(start=dict(codes='mixture', steps=100),
                                        model=dict(eval_posterior='model', decoder_init='base_model',
                                                   decoder_z='every', support_delta=1e-3)),
    # ... and only the classes holding 1 - 1e-3 of the encoder's q run forward at all, q* normalised over them (the
    # mass of q* they miss audited every eval_every steps)
    'mixture-every-model-encoder': dict(start=dict(codes='mixture', steps=100),
                                        model=dict(eval_posterior='model', decoder_init='base_model',
                                                   decoder_z='every', support_delta=1e-3, encoder_delta=1e-3)),
    # ... the support's, with z in the copy's top block only (model.decoder_z_layers=1): its lower block runs once
    # per pair
    'mixture-every-model-support-top1': dict(start=dict(codes='mixture', steps=100),
                                             model=dict(eval_posterior='model', decoder_init='base_model',
                                                        decoder_z='every', decoder_z_layers=1, support_delta=1e-3)),
    # ... each batch drawn from one of 8 buckets of the training pairs by length (data.length_buckets): a batch pads
    # little, and every pair is drawn as often as without
    'mixture-every-model-support-top1-buckets': dict(start=dict(codes='mixture', steps=100),
                                                     model=dict(eval_posterior='model', decoder_init='base_model',
                                                                decoder_z='every', decoder_z_layers=1,
                                                                support_delta=1e-3), data=dict(length_buckets=8)),
    # ... with the embedding view of text-view: the code's categories from the view, its nats through the copy
    'view-avg-k200-every-model': dict(start=dict(codes='view_kmeans', steps=100),
                                      model=dict(eval_posterior='model', view_kappa=200.0, view_decay=0.98,
                                                 decoder_init='base_model', decoder_z='every'),
                                      data=dict(view_encoder='minilm')),
    # ... on the text preset's step (issue 79: the support's gradient, z in the copy's top block, batches by length):
    # the arm issue 81 asks for, as train --data would run it; and with the view weighed half (kappa 100)
    **{f'view-avg-k{k}-every-model-step': dict(start=dict(codes='view_kmeans', steps=100),
                                               model=dict(eval_posterior='model', view_kappa=float(k), view_decay=0.98,
                                                          decoder_init='base_model', decoder_z='every',
                                                          decoder_z_layers=1, support_delta=1e-3),
                                               data=dict(view_encoder='minilm', length_buckets=8)) for k in (100, 200)},
    # ... kappa 100 with the copy trained three times faster (decoder_lr 3e-4): does the code then add more nats?
    'view-avg-k100-every-model-step-lr3': dict(start=dict(codes='view_kmeans', steps=100),
                                               model=dict(eval_posterior='model', view_kappa=100.0, view_decay=0.98,
                                                          decoder_init='base_model', decoder_z='every',
                                                          decoder_z_layers=1, support_delta=1e-3, decoder_lr=3e-4),
                                               data=dict(view_encoder='minilm', length_buckets=8)),
    # the text preset's step and the lr3 arm's with the decoder's gradient on one code per pair drawn from q*'s support
    # (model.support_sample=1, issue 79): the support's gradient in expectation, at one code's backward
    'mixture-every-model-support-top1-buckets-sample1': dict(start=dict(codes='mixture', steps=100),
                                                             model=dict(eval_posterior='model', decoder_init='base_model',
                                                                        decoder_z='every', decoder_z_layers=1,
                                                                        support_delta=1e-3, support_sample=1),
                                                             data=dict(length_buckets=8)),
    'view-avg-k100-every-model-step-lr3-sample1': dict(start=dict(codes='view_kmeans', steps=100),
                                                       model=dict(eval_posterior='model', view_kappa=100.0,
                                                                  view_decay=0.98, decoder_init='base_model',
                                                                  decoder_z='every', decoder_z_layers=1,
                                                                  support_delta=1e-3, decoder_lr=3e-4, support_sample=1),
                                                       data=dict(view_encoder='minilm', length_buckets=8)),
    # ... the decoder run only on the classes holding 1 - 1e-4 of q* without the decoder's terms (model.view_delta)
    'view-avg-k100-every-model-step-lr3-sample1-screen': dict(start=dict(codes='view_kmeans', steps=100),
                                                              model=dict(eval_posterior='model', view_kappa=100.0,
                                                                         view_decay=0.98, decoder_init='base_model',
                                                                         decoder_z='every', decoder_z_layers=1,
                                                                         support_delta=1e-3, decoder_lr=3e-4,
                                                                         support_sample=1, view_delta=1e-4),
                                                              data=dict(view_encoder='minilm', length_buckets=8)),
}
# issue 81: the preset's arm with one setting changed. The view weighed more (kappa 150 and 200, the copy still at 3e-4),
# and the codes started from EM over both views, y's tokens and its embedding (start.codes='views')
_PRESET_ARM = ARMS['view-avg-k100-every-model-step-lr3-sample1-screen']
ARMS.update({f'view-avg-k{k}-every-model-step-lr3-sample1-screen':
             dict(_PRESET_ARM, model=dict(_PRESET_ARM['model'], view_kappa=float(k))) for k in (150, 200)})
ARMS['views-avg-k100-every-model-step-lr3-sample1-screen'] = dict(_PRESET_ARM,
                                                                  start=dict(_PRESET_ARM['start'], codes='views'))

# the decoder the arms were measured with, unless they name another: a fresh one (the text preset's was, before issue 62)
FRESH = dict(decoder_init='random', decoder_z='input')
# the step the arms were measured with, unless they name another: every code forward and backward, z in every block it
# enters (before issue 79)
EXACT_STEP = dict(support_delta=0.0, decoder_z_layers=0)
# ... and their batches drawn from every pair, each evaluation on every held-out pair (before data.length_buckets and
# data.eval_subset)
DATA_BEFORE = dict(eval_subset=0, length_buckets=0)
# ... and the text preset as it was before the embedding view joined it (issue 81): no view unless the arm names one,
# the view's, the copy's and the continuous family's settings at their defaults
DATA_BEFORE_VIEW = dict(view_encoder='')
MODEL_BEFORE_VIEW = dict(view_kappa=50.0, view_decay=0.0, decoder_lr=1e-4, latent_dim=8, mean_bn=0.0)

def wordnet_rows():
    "(x, y, category) of every WordNet synset: part of speech, definition, lexicographer file."
    rows = []
    for pos in ('noun', 'verb', 'adj', 'adv'):
        for line in open(f'/usr/share/wordnet/data.{pos}', encoding='utf-8'):
            if line.startswith('  '): continue                          # the licence header
            head, gloss = line.split(' | ', 1)
            definition = gloss.split(';')[0].strip().strip('"').strip()
            if definition: rows.append((pos, definition, int(head.split()[1])))
    return rows

DEBIAN_INDEX = '/var/lib/apt/lists/deb.debian.org_debian_dists_bookworm_main_binary-amd64_Packages.lz4'

def debian_index() -> list:
    "The fields of every package block of Debian bookworm's main index (`apt-get update` fetches it), in its order."
    text = subprocess.run(['/usr/lib/apt/apt-helper', 'cat-file', DEBIAN_INDEX], capture_output=True, text=True,
                          check=True).stdout
    return [dict(line.split(': ', 1) for line in block.splitlines() if ': ' in line and not line.startswith(' '))
            for block in text.split('\n\n')]

def synopsis_rows(category, field=None) -> list:
    """(x, y, category) of the index's packages: 'all' or 'arch', the synopsis (or `field(fields)`, for a package that
    has it), `category(fields)`; a package whose category is None is left out; one pair per distinct y."""
    rows, seen = [], set()
    needs = {'Architecture', 'Depends' if field else 'Description'}
    for f in debian_index():
        if not needs <= set(f) or (c := category(f)) is None: continue
        y = field(f) if field else f['Description'].strip()
        if y in seen: continue                                          # one pair per distinct synopsis
        seen.add(y)
        rows.append(('all' if f['Architecture'] == 'all' else 'arch', y, c))
    return rows

def debian_rows():
    "(x, y, category) of every package in Debian bookworm's main index: 'all' or 'arch', synopsis, section."
    return synopsis_rows(lambda f: f['Section'].split('/')[-1] if 'Section' in f else None)

DEBIAN_TRANSLATIONS = '/var/lib/apt/lists/deb.debian.org_debian_dists_bookworm_main_i18n_Translation-{}.lz4'

def debian_descriptions(lang: str='en') -> list:
    """(package, synopsis, first paragraph of its long description) of every entry of Debian bookworm's
    Translation-`lang`, in its order (`apt-get update -o Acquire::Languages=en,fr` fetches English and French)."""
    text = subprocess.run(['/usr/lib/apt/apt-helper', 'cat-file', DEBIAN_TRANSLATIONS.format(lang)],
                          capture_output=True, text=True, check=True).stdout
    out, field = [], f'Description-{lang}: '
    for block in text.split('\n\n'):
        lines = block.splitlines()
        k = next((i for i, l in enumerate(lines) if l.startswith(field)), None)
        if k is None or not lines[0].startswith('Package: '): continue
        para = []
        for line in lines[k + 1:]:
            if not line.startswith(' ') or line.strip() == '.': break
            para.append(line.strip())
        out.append((lines[0][len('Package: '):], lines[k][len(field):].strip(), ' '.join(para)))
    return out

def debian_long_rows(words: int=30, lang: str='en', synopsis: bool=False):
    """(x, y, category) of Debian bookworm's packages by their long description in `lang`: 'all' or 'arch', the first
    `words` words of the description's first paragraph (or, with `synopsis`, the translated synopsis), the section;
    one pair per distinct synopsis or paragraph."""
    index = {}
    for f in debian_index():
        if {'Package', 'Section', 'Architecture'} <= set(f): index.setdefault(f['Package'], f)
    rows, seen = [], set()
    for package, short, para in debian_descriptions(lang):
        key = short if synopsis else para
        if not key or key in seen or package not in index: continue
        seen.add(key)
        y = short if synopsis else ' '.join(para.split()[:words])
        f = index[package]
        rows.append(('all' if f['Architecture'] == 'all' else 'arch', y, f['Section'].split('/')[-1]))
    return rows

FORTUNES = Path('/usr/share/games/fortunes')

def fortune_rows(words: int=30):
    """(x, y, category) of every fortune of Debian bookworm's `fortunes` package (`apt-get install fortunes`): whether it
    ends in an attribution line ('-- Someone'), its first `words` words without that line, its file (art, computers,
    food, linux, startrek, ...); one pair per distinct text."""
    rows, seen = [], set()
    for f in sorted(p for p in FORTUNES.iterdir() if p.is_file() and not p.suffix):
        for text in f.read_text(encoding='utf-8', errors='replace').split('\n%\n'):
            lines = [l for l in text.strip().splitlines() if l.strip()]
            said = bool(lines) and lines[-1].strip().startswith('--')
            y = ' '.join(' '.join(lines[:-1] if said else lines).split()[:words])
            if not y or y in seen: continue
            seen.add(y)
            rows.append(('attributed' if said else 'plain', y, f.name))
    return rows

# a package's ecosystem by its name (Debian's naming policies for language bindings), the first rule that matches
ECOSYSTEMS = (('python', r'^python3?-'), ('perl', r'^lib.*-perl$'), ('go', r'^golang-'), ('rust', r'^librust-'),
              ('haskell', r'^libghc-'), ('node', r'^node-'), ('r', r'^r-(cran|bioc|other)-'), ('ruby', r'^ruby-'),
              ('php', r'^php-'), ('java', r'^lib.*-java$'), ('ocaml', r'^lib.*-ocaml'), ('emacs', r'^elpa-'),
              ('fonts', r'^fonts-'), ('texlive', r'^texlive-'), ('javascript', r'^libjs-'), ('gir', r'^gir1\.2-'))

def ecosystem_rows():
    """(x, y, category) of Debian bookworm's packages whose name places them in a language's or a format's ecosystem
    (`ECOSYSTEMS`: python3-*, lib*-perl, golang-*, librust-*, ...): 'all' or 'arch', the synopsis, the ecosystem; one
    pair per distinct synopsis. The synopses often name the ecosystem's language, so the words might know more of the
    categories than a sentence embedding; measured, they do not (k-means on MiniLM embeddings first, seeds 0-2)."""
    return synopsis_rows(lambda f: next((name for name, rule in ECOSYSTEMS if re.search(rule, f.get('Package', ''))),
                                        None))

def depends_rows(words: int=10):
    """(x, y, category) of Debian bookworm's packages by what they depend on: 'all' or 'arch', the first `words`
    packages of the Depends field (versions and architecture qualifiers cut, alternatives kept), the section; one pair
    per distinct list."""
    def deps(f):
        return ' '.join(re.sub(r'\s*\([^)]*\)|:any|:native', '', f['Depends']).replace(',', ' ').split()[:words])
    return synopsis_rows(lambda f: f['Section'].split('/')[-1] if 'Section' in f else None, field=deps)

# sixteen Python libraries of the dev extras, at constraints.txt's versions: their functions' code by library
LIBRARIES = ('numpy', 'scipy', 'sklearn', 'torch', 'transformers', 'pandas', 'matplotlib', 'sympy', 'networkx',
             'IPython', 'sphinx', 'docutils', 'pygments', 'datasets', 'hypothesis', '_pytest')

def code_rows(part: str='body', words: int=30):
    """(x, y, category) of every function of `LIBRARIES` outside their test folders: 'method' or 'function', the first
    `words` words of its body after the docstring (`part='body'`) or its docstring's first line (`part='doc'`), the
    library; one pair per distinct text (none that spells the probe tokenizer's '<pad>' or '<eos>'), files in sorted
    order."""
    rows, seen = [], set()
    for lib in LIBRARIES:
        root = Path(importlib.util.find_spec(lib).submodule_search_locations[0])
        for path in sorted(root.rglob('*.py')):
            if {'tests', 'testing'} & set(path.relative_to(root).parts[:-1]): continue
            text = path.read_text(encoding='utf-8', errors='replace')
            lines = text.splitlines()
            try: tree = ast.parse(text)
            except (SyntaxError, ValueError): continue
            methods = {id(f) for c in ast.walk(tree) if isinstance(c, ast.ClassDef) for f in c.body}
            for f in ast.walk(tree):
                if not isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)): continue
                doc = ast.get_docstring(f)
                if part == 'doc': y = doc.strip().splitlines()[0].strip() if doc and doc.strip() else ''
                else:
                    body = f.body[1:] if doc is not None else f.body
                    text_of = ' '.join(lines[body[0].lineno - 1:body[-1].end_lineno]) if body else ''
                    y = ' '.join(text_of.split()[:words])
                if not y or y in seen or '<pad>' in y or '<eos>' in y: continue     # the tokenizer's specials
                seen.add(y)
                rows.append(('method' if id(f) in methods else 'function', y, lib))
    return rows

CONTENTS = 'http://deb.debian.org/debian/dists/bookworm/main/Contents-{}.gz'

def contents_rows(words: int=12, folder: Path=HERE / 'work' / 'contents_lists'):
    """(x, y, category) of Debian bookworm's packages by the files they install (the archive's Contents-amd64 and
    Contents-all, fetched once into `folder` with apt-helper): 'all' or 'arch', the first `words` distinct path
    components of its files in the index's order (usr/share/doc and usr/share/lintian left out: every package has
    them), its section; one pair per distinct list."""
    files, section, arch = {}, {}, {}
    for kind in ('amd64', 'all'):
        path = folder / f'Contents-{kind}.gz'
        if not path.exists():
            folder.mkdir(parents=True, exist_ok=True)
            subprocess.run(['/usr/lib/apt/apt-helper', 'download-file', CONTENTS.format(kind), str(path)], check=True)
        with gzip.open(path, 'rt', encoding='utf-8', errors='replace') as fh:
            for line in fh:
                name, _, where = line.rstrip('\n').rpartition(' ')
                name = name.strip()
                if not name or name.startswith(('usr/share/doc/', 'usr/share/lintian/')): continue
                for w in where.split(','):
                    sec, _, pkg = w.rpartition('/')
                    parts = files.setdefault(pkg, {})
                    if len(parts) < words: parts.update(dict.fromkeys(name.split('/')))
                    section[pkg], arch[pkg] = sec.split('/')[-1], kind
    rows, seen = [], set()
    for pkg in sorted(files):
        y = ' '.join(list(files[pkg])[:words])
        if y in seen: continue
        seen.add(y)
        rows.append(('all' if arch[pkg] == 'all' else 'arch', y, section[pkg]))
    return rows

def planted_rows():
    "A tiny corpus with planted categories for make test: y's words from its category's set, x one of two words."
    g, sets = torch.Generator().manual_seed(0), [['red', 'green', 'blue', 'pink'], ['car', 'bus', 'train', 'boat'],
                                                 ['cat', 'dog', 'cow', 'hen']]
    return [(('a', 'b')[i % 2], ' '.join(sets[i % 3][j] for j in torch.randint(0, 4, (5,), generator=g)), i % 3)
            for i in range(2 * SIZES['quick']['n_pairs'])]

CORPORA = dict(wordnet=wordnet_rows, debian=debian_rows, debian_long=debian_long_rows, fortunes=fortune_rows,
               ecosystems=ecosystem_rows, planted=planted_rows,
               debian_fr=lambda: debian_long_rows(lang='fr', synopsis=True),
               debian_fr_long=lambda: debian_long_rows(lang='fr'),
               debian_de=lambda: debian_long_rows(lang='de', synopsis=True),
               debian_de_long=lambda: debian_long_rows(lang='de'),
               code=code_rows, depends=depends_rows, contents=contents_rows, docstrings=lambda: code_rows('doc'))

def train_tokenizer(texts: list, # (x, y) the byte-level BPE is trained on
                    vocab: int=2000, min_frequency: int=1):
    "The corpus's byte-level BPE tokenizer (the same texts give the same tokenizer)."
    bpe = tokenizers.ByteLevelBPETokenizer()
    bpe.train_from_iterator([x + ' ' + y for x, y in texts], vocab_size=vocab, min_frequency=min_frequency,
                            special_tokens=['<pad>', '<eos>'])
    return transformers.PreTrainedTokenizerFast(tokenizer_object=bpe._tokenizer, pad_token='<pad>', eos_token='<eos>')

def held_out_nats(lm, data) -> float:
    "The mean NLL of y a pair (nats) of a GPT-2 over a `TextPairs`, in batches of 200."
    lm.eval(); total = 0.0
    with torch.no_grad():
        for i in range(0, len(data), 200):
            b = collate([data[j] for j in range(i, min(i + 200, len(data)))], lm.config.pad_token_id)
            logits = lm(input_ids=b['input_ids'], attention_mask=b['attention_mask']).logits[:, :-1]
            nll = torch.nn.functional.cross_entropy(logits.transpose(1, 2), b['input_ids'][:, 1:], reduction='none')
            total += (nll * b['y_mask'][:, 1:]).sum().item()
    lm.train(); return total / len(data)

def train_base(pairs: list, # (x, y) the GPT-2 is trained on
               tok, # `train_tokenizer`'s
               folder: Path, positions: int, width: int, layers: int, steps: int, every: int, label: str='',
               plateau: dict=None, # PLATEAU's: train to the held-out plateau (`steps` unused), the curve in plateau.json
              ):
    "A GPT-2 trained on p(y|x) (AdamW, batch 64, seed 0), saved to `folder` with its tokenizer."
    held = None
    if plateau:             # the last `held` of the pairs judge the plateau, the rest train
        pairs, held = pairs[:-plateau['held']], TextPairs(pairs[-plateau['held']:], tok, max_len=positions, too_long='drop')
        steps, every = plateau['most'], plateau['every']
    data = TextPairs(pairs, tok, max_len=positions, too_long='drop')
    torch.manual_seed(0)
    lm = transformers.GPT2LMHeadModel(transformers.GPT2Config(
        vocab_size=len(tok), n_positions=positions, n_embd=width, n_layer=layers, n_head=4,
        bos_token_id=tok.eos_token_id, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id))
    lm.loss_type = 'ForCausalLM'        # the loss `labels=` computes, named: transformers warns when it guesses it
    opt, gen = torch.optim.AdamW(lm.parameters(), lr=3e-3), torch.Generator().manual_seed(0)
    curve, best, ref = [], (float('inf'), 0, None), (float('inf'), 0)   # the lowest check; the last that gained
    for step in range(steps):
        batch = collate([data[i] for i in torch.randint(0, len(data), (64,), generator=gen).tolist()],
                        tok.pad_token_id)
        loss = lm(input_ids=batch['input_ids'], attention_mask=batch['attention_mask'],
                  labels=batch['input_ids'].masked_fill(~batch['y_mask'], -100)).loss
        opt.zero_grad(); loss.backward(); opt.step()
        if step % every == every - 1: print(f'{label}base step {step + 1}: {loss.item():.3f} nats per y token', flush=True)
        if held is not None and step % every == every - 1:
            curve.append(dict(step=step + 1, held_out=round(held_out_nats(lm, held), 4)))
            print(f"{label}base step {step + 1}: held out {curve[-1]['held_out']:.2f} nats a pair", flush=True)
            h = curve[-1]['held_out']
            if h < best[0]: best = (h, step + 1, {k: v.clone() for k, v in lm.state_dict().items()})
            if h < ref[0] - plateau['min_gain']: ref = (h, step + 1)
            elif step + 1 - ref[1] >= plateau['patience'] * every: break
    if held is not None:
        lm.load_state_dict(best[2])
        folder.mkdir(parents=True, exist_ok=True)
        (folder / 'plateau.json').write_text(json.dumps(dict(plateau, kept_step=best[1], held_out=best[0], curve=curve),
                                                        indent=1))
    tok.save_pretrained(folder); lm.save_pretrained(folder)

def prepare(corpus, work_dir, base: bool=True, plateau: bool=False):
    """The pairs file (with its categories), and the tokenizer and base model trained on other pairs of the corpus
    (without `base`, the tokenizer alone: enough for the split and the baselines; with `plateau`, the base trained to
    its held-out plateau, in its own folder)."""
    work = work_dir / corpus; work.mkdir(parents=True, exist_ok=True)
    pairs_path, base_dir = work / 'pairs.jsonl', work / ('base_plateau' if plateau and base else 'base')
    if not pairs_path.exists():
        rows = CORPORA[corpus]()
        order = torch.randperm(len(rows), generator=torch.Generator().manual_seed(0)).tolist()
        cats = sorted({r[2] for r in rows}, key=str)
        recs = [dict(x=rows[i][0], y=rows[i][1], category=cats.index(rows[i][2])) for i in order[:2 * S['n_pairs']]]
        (work / 'base_pairs.jsonl').write_text(''.join(json.dumps(r) + '\n' for r in recs[S['n_pairs']:]))
        pairs_path.write_text(''.join(json.dumps(r) + '\n' for r in recs[:S['n_pairs']]))
        print(f'{corpus}: {len(rows)} rows, {len(cats)} categories', flush=True)
    if not (base_dir / 'tokenizer.json').exists() or (base and not (base_dir / 'config.json').exists()):
        t0, pairs = time.perf_counter(), read_pairs(work / 'base_pairs.jsonl')
        tok = train_tokenizer(pairs + read_pairs(pairs_path))
        if not base: tok.save_pretrained(base_dir)
        else:
            train_base(pairs, tok, base_dir, positions=64, width=64, layers=2, steps=S['base_steps'], every=200,
                       label=f'{corpus} ', plateau=P if plateau else None)
            print(f'{corpus} base: {time.perf_counter() - t0:.0f} s', flush=True)
    return pairs_path, base_dir

def split(pairs_path, base_dir, seed):
    "The trainer's own held-out split of the pairs file: (train rows, held-out rows), each (x, y, category)."
    recs = [json.loads(l) for l in open(pairs_path)]
    tok = transformers.AutoTokenizer.from_pretrained(base_dir)
    data = TextPairs([(r['x'], r['y']) for r in recs], tok, 64, 'drop')
    ev, tr, _ = held_out_split(data.items, EVAL_FRACTION, seed)
    return [recs[data.kept[i]] for i in tr], [recs[data.kept[i]] for i in ev]

def judged(code, held):
    "A clustering of the held-out pairs against their categories (`category_scores`: the package's judge of a run)."
    return category_scores(code, [r['category'] for r in held], [r['x'] for r in held])

def embeddings_of(texts: list, encoder: Path, cache: Path) -> dict:
    "{text: sentence embedding} of `encoder`, computed once per corpus and kept in `cache` (texts and rows)."
    if cache.exists():
        kept = torch.load(cache)
        if kept['encoder'] == encoder.name and set(texts) <= set(kept['texts']):
            return dict(zip(kept['texts'], kept['embeddings']))
    uniq = sorted(set(texts))
    t0, emb = time.perf_counter(), sentence_embeddings(uniq, encoder)
    print(f'{len(uniq)} texts embedded with {encoder.name}: {time.perf_counter() - t0:.0f} s', flush=True)
    torch.save(dict(encoder=encoder.name, texts=uniq, embeddings=emb), cache)
    return dict(zip(uniq, emb))

def baselines(corpus, seed, train, held, results, encoder: Path=None, cache: Path=None):
    """The clusterings a researcher would try (`CLUSTERINGS`, 16 clusters each) fitted on the training pairs' y, judged
    on the held-out pairs; a record that lacks some gets them (train None: the record as it is; embedding k-means
    needs `encoder`, its embeddings kept in `cache`)."""
    out = results / f'{corpus}_baselines_s{seed}.json'
    rec = json.loads(out.read_text()) if out.exists() else {}
    todo = [n for n in CLUSTERINGS if n not in rec and (n != 'embedding_kmeans' or encoder is not None)]
    if train is None or not todo: return rec
    ty, hy = [r['y'] for r in train], [r['y'] for r in held]
    embed = None                                            # no embedding k-means, or the corpus's cached embeddings
    if encoder is not None and 'embedding_kmeans' in todo:
        kept = embeddings_of(ty + hy, encoder, cache)
        embed = lambda texts: torch.stack([kept[t] for t in texts])
    for name, code in classical_clusterings(ty, hy, K, seed, embed, todo).items(): rec[name] = judged(code, held)
    out.write_text(json.dumps(rec, indent=1))
    return rec

def arm_config(arm: dict, seed: int, steps: int, pairs_path, base_dir):
    "The text preset with 16 codes, batch 32, a quarter held out, and the arm's settings over them."
    return make_config('text', {**arm, 'seed': seed, 'steps': steps, 'eval_every': S['eval_every'],
                                'log_every': S['eval_every'], 'batch_size': 32,
                                # the decoder a fresh one unless the arm says otherwise, as the arms were measured
                                'model': dict(FRESH, **EXACT_STEP, **MODEL_BEFORE_VIEW) | arm.get('model', {})
                                         | dict(code_sizes=(K,)),
                                'data': dict(DATA_BEFORE, **DATA_BEFORE_VIEW) | arm.get('data', {})
                                        | dict(path=str(pairs_path), base_model=str(base_dir), too_long='drop',
                                               eval_fraction=EVAL_FRACTION)})

STEP_FIGURES = ('support_size', 'left_out_mass', 'forward_classes', 'candidate_miss')

def step_figures(run: Path, start: int) -> dict:
    """The training log's figures of the decoder's support (issue 79) after the start's steps: each one's mean over the
    logged steps and its largest (the left-out mass and the candidates' miss at their batch maxima); {} without them."""
    lines = [r for r in map(json.loads, (run / 'metrics.jsonl').read_text().splitlines())
             if r['phase'] == 'cvae' and r['step'] >= start]
    out = {}
    for k in STEP_FIGURES:
        vals = [r[k] for r in lines if k in r]
        if vals: out[k] = round(sum(vals) / len(vals), 6)
        tops = [r.get(k + '_max', r.get(k)) for r in lines if k in r]
        if vals: out[k + '_max'] = round(max(tops), 6)
    return out

def run_arm(corpus, arm, seed, steps, pairs_path, base_dir, held, work_dir, results, tag: str=''):
    "One arm on one seed: train, then judge its held-out codes; the record is written once and reused."
    out = results / f'{corpus}_{arm}_s{seed}_{steps}{tag}.json'
    cfg = arm_config(ARMS[arm], seed, steps, pairs_path, base_dir)
    if out.exists():
        rec = json.loads(out.read_text())
        diff = config_diff(stored_config(rec['config']), cfg)
        if diff: raise SystemExit(f'{out}: its settings differ from the arm today ({diff}): remove it to rerun')
        run = work_dir / corpus / 'runs' / f'{arm}_s{seed}_{steps}{tag}'
        if 'steps_log' not in rec and (run / 'metrics.jsonl').exists():    # a record from before it kept them
            rec['steps_log'] = step_figures(run, cfg.start.steps); out.write_text(json.dumps(rec, indent=1))
        if 'model_posterior' in rec: return rec
        earlier = rec          # a record from before q* was judged: its run is opened again
    else: earlier = None
    run = work_dir / corpus / 'runs' / f'{arm}_s{seed}_{steps}{tag}'
    t0 = time.perf_counter()
    tr = Trainer(cfg, run, progress=False)
    tr.fit(resume=(run / 'metrics.jsonl').exists())
    wall = time.perf_counter() - t0
    curve = [{k: round(r[k], 4) for k in ('step', 'kl', 'code_contribution', 'decoder_vs_base', 'codes_used') if k in r}
             for r in map(json.loads, (run / 'metrics.jsonl').read_text().splitlines()) if r['phase'] == 'eval']
    ev, ex = tr.data.tensors(tr.eval_set, tr.b['eval']), {}
    model, exact, star = tr.model.eval(), [], []
    tr.data.held_out(model, tr.b['eval'], tr.b['base_mean'], steps, ex)     # the run's own q: encoder or q*
    code = model.joint_log_prob(ex['log_q']).argmax(1).cpu()
    with torch.no_grad():
        for i in torch.arange(len(code)).split(256):       # the generative model's own MAP codes, no encoder
            rows = batch_rows(ev, i)
            exact.append(model.exact_posterior(rows['input_ids'], rows['y_mask'], rows['attention_mask']).argmax(1))
            star.append(model.model_posterior(rows['input_ids'], rows['y_mask'], rows['base_surprisal'],
                                              rows['base_token_surprisal'], tr.b['base_mean'],
                                              rows['attention_mask'], y_view=rows.get('y_view')).argmax(1))
    final = json.loads((run / 'metrics.json').read_text())
    _, counts, words = word_counts([r['y'] for r in held], [r['y'] for r in held])
    rec = dict(corpus=corpus, arm=arm, seed=seed, steps=steps,
               wall_seconds=earlier['wall_seconds'] if earlier else round(wall, 1),
               kl=final['kl'], code_contribution=final['code_contribution'],
               decoder_vs_base=final['decoder_vs_base'], curve=curve, steps_log=step_figures(run, cfg.start.steps),
               code=judged(code, held), exact_posterior=judged(torch.cat(exact).cpu(), held),
               model_posterior=judged(torch.cat(star).cpu(), held),
               words={int(c): w for c, w in characteristic_words(counts, code, words, 6).items()},
               config=json.loads((run / 'config.json').read_text()))
    out.write_text(json.dumps(rec, indent=1))
    return rec

def show(rec):
    for c in rec['curve']: print('  ', c, flush=True)
    print(f"  {rec['corpus']} {rec['arm']} s{rec['seed']}: {rec['wall_seconds']:.0f} s, KL {rec['kl']:.3f}, "
          f"l0-l {rec['code_contribution']:.3f}, b-l0 {rec['decoder_vs_base']:.3f}, code {rec['code']}, "
          f"exact posterior {rec.get('exact_posterior')}, q* {rec.get('model_posterior')}", flush=True)
    for c, w in sorted(rec['words'].items(), key=lambda t: int(t[0])): print(f'    code {c}: {" ".join(w)}')

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('corpus', choices=sorted(CORPORA))
    ap.add_argument('arms', help="arms, comma-separated; 'baselines': the classical clusterings alone (no base model)")
    ap.add_argument('seeds')
    ap.add_argument('--steps', type=int, default=300); ap.add_argument('--out', default=str(HERE))
    ap.add_argument('--encoder', help='the sentence encoder folder of the embedding k-means (default: all-MiniLM-L6-v2 '
                                      f'from the PyPI wheel {MINILM_WHEEL}, when installed)')
    ap.add_argument('--quick', action='store_true', help="make test's sizes")
    ap.add_argument('--base', choices=('steps', 'plateau'), default='steps',
                    help="the base model: trained for a fixed number of steps (800), or to its held-out plateau "
                         "(records named ..._plateau.json)")
    a = ap.parse_args(argv)
    use_sizes(a.quick)
    work, results = Path(a.out) / 'work', Path(a.out) / 'results'
    results.mkdir(parents=True, exist_ok=True)
    arms = [] if a.arms == 'baselines' else a.arms.split(',')
    pairs_path, base_dir = prepare(a.corpus, work, base=bool(arms), plateau=a.base == 'plateau')
    if arms and a.base == 'plateau':              # how the plateau was judged, beside the records that use the base
        (results / f'{a.corpus}_base_plateau.json').write_text((base_dir / 'plateau.json').read_text())
    try: encoder = Path(a.encoder) if a.encoder else minilm_folder()
    except ImportError as e: encoder = None; print(f'embedding k-means left out: {e}', flush=True)
    records = []
    for seed in (int(s) for s in a.seeds.split(',')):
        train, held = split(pairs_path, base_dir, seed)
        b = baselines(a.corpus, seed, train, held, results, encoder, work / a.corpus / 'embeddings.pt')
        print(f'{a.corpus} s{seed}: {len(train)} training pairs, {len(held)} held out; baselines {b}', flush=True)
        for arm in arms:
            records.append(run_arm(a.corpus, arm, seed, a.steps, pairs_path, base_dir, held, work, results,
                                   '_plateau' if a.base == 'plateau' else ''))
            show(records[-1])
    return records

if __name__ == '__main__': main()
