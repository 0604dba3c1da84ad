"""The seed's question on real text (issues 47 and 63): every reconstruction term of a CVAE family at matched beta on
the real-text probe's corpora (experiments/probe_real_text.py: WordNet glosses, Debian synopses; the same 8 000 pairs,
300 steps), each on seeds 0-2 (the copy grid on 0-4).
- The discrete family (`--family discrete`, issue 47): the `text` preset with 16 codes and a fresh decoder on the
  probe's base of 800 steps; plain, the example-level term at eps 0.1, 1 and 10, the distribution- and token-level terms.
- The continuous family (`--family continuous`, issue 63): the continuous probe's winner
  (experiments/probe_continuous_text.py's `copy-bn0.6-viewhead200`, the `text-view` preset's continuous settings at 8
  dimensions, where the preset takes 32 since: q reads y's sentence embedding, a head on z predicts it, BN-VAE's means,
  the base's copy with z in every block) on the base trained to its held-out plateau, the base it was measured on; the
  same terms with the example term at eps 1 alone (on both corpora every b is 30 nats or more, and the discrete grid's
  three eps weigh alike). Its code is k-means (16) on the posterior means; it has no closed form.
- The discrete family with the `text` preset's own decoder (`--decoder copy`, issue 64): the base's copy with z in
  every block, on the base trained to its held-out plateau, so that l0 starts at b and b - l is the CVAE against its
  base, not a fresh decoder's drift; the plain term and the example term at eps 1 (the seed's claim), seeds 0-4, into
  experiments/real_text/grid/CORPUS-copy/.
`inverse_surprisal.grid` runs it: each finished run's per-pair rows (b, l, l0, K, the discrete family's closed form K*
under the seed's plain model, the weight, the code, the pair) and record are files in
experiments/real_text/grid/CORPUS/results/, skipped on the next start; runs/ (checkpoints) is not in git. The pairs'
categories, which no run reads, are written beside the grid (experiments/real_text/grid/CORPUS_categories.json).
Usage: python experiments/text_grid.py CORPUS [--family discrete|continuous] [--decoder fresh|copy] [--seeds 0 1 2]
                                             [--jobs 2]
       python experiments/text_grid.py planted --quick --out DIR --seeds 0 --eps 1   (make test's tiny version)"""
import argparse, json
from pathlib import Path
import probe_continuous_text as PC
import probe_real_text as P
from inverse_surprisal.files import atomic_write_bytes
from inverse_surprisal.grid import real_text_grid, run_grid
from inverse_surprisal.run_dir import RunDirectoryError

PRESET = 'text'
CONTINUOUS_ARM = 'copy-bn0.6-viewhead200' # the continuous family's settings: the probe's winner at 8 dimensions
CONTINUOUS_EPS = (1.0,) # the continuous family's example term

DECODERS = ('fresh', 'copy') # the discrete family's decoder: a fresh one (the grid as first run) or the base's copy
COPY_TERMS, COPY_EPS = ('plain', 'example'), (1.0,) # the copy grid's terms (the seed's claim) and eps
COPY_SEEDS = (0, 1, 2, 3, 4) # its seeds: the claim's paired interval over five

def overrides(pairs_path, base_dir, quick=False, decoder: str='fresh') -> dict:
    """The probe's settings (16 codes, batch 32, 300 steps; make test's: 6), a quarter held out, evaluated every 100;
    the discrete decoder a fresh one, as the grid was first run (the text preset's copy of the base came after it), or
    with `decoder='copy'` the text preset's own (the base's copy, z in every block); the text preset as it was
    before its embedding view (`probe_real_text.MODEL_BEFORE_VIEW`); the continuous runs with the
    winner's settings. `base_dir`: the family's base (where it lies is not a setting)."""
    if decoder not in DECODERS: raise ValueError(f"decoder must be one of {DECODERS}, got {decoder!r}")
    steps, every = (6, 3) if quick else (300, 100)
    return dict(steps=steps, eval_every=every, log_every=every, batch_size=32,
                model=dict(P.FRESH if decoder == 'fresh' else {}, **P.EXACT_STEP, **P.MODEL_BEFORE_VIEW,
                           code_sizes=(P.K,)),
                data=dict(P.DATA_BEFORE, **P.DATA_BEFORE_VIEW, path=str(pairs_path), base_model=str(base_dir),
                          too_long='drop', eval_fraction=P.EVAL_FRACTION),
                continuous=PC.ARMS[CONTINUOUS_ARM])

def grid_runs(family: str, seeds=None, eps=None, decoder: str='fresh') -> list:
    """The family's runs: every term on each seed (default 0-2), the example term at `eps` (default: the family's);
    with the base's copy as the discrete decoder, the plain and the example term alone (default eps 1, seeds 0-4)."""
    if decoder not in DECODERS: raise ValueError(f"decoder must be one of {DECODERS}, got {decoder!r}")
    if decoder == 'copy' and family != 'discrete': raise ValueError("decoder='copy' is the discrete family's")
    default = COPY_EPS if decoder == 'copy' else (0.1, 1.0, 10.0) if family == 'discrete' else CONTINUOUS_EPS
    seeds = seeds or (COPY_SEEDS if decoder == 'copy' else (0, 1, 2))
    runs = real_text_grid(tuple(seeds), tuple(eps or default), family)
    return [r for r in runs if decoder == 'fresh' or r.recon in COPY_TERMS]

def grid_folder(out, corpus: str, decoder: str='fresh') -> Path:
    "Where a corpus's grid lies under `out`: grid/CORPUS, or grid/CORPUS-copy for the discrete family on the base's copy."
    return Path(out) / 'grid' / (corpus if decoder == 'fresh' else f'{corpus}-copy')

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('corpus', choices=sorted(P.CORPORA))
    ap.add_argument('--family', choices=('discrete', 'continuous'), default='discrete')
    ap.add_argument('--seeds', type=int, nargs='+', help='default: 0-2, and 0-4 with --decoder copy')
    ap.add_argument('--decoder', choices=DECODERS, default='fresh',
                    help="the discrete family's decoder: a fresh one, or the base's copy (grid/CORPUS-copy/)")
    ap.add_argument('--eps', type=float, nargs='+', help="the example term's eps values (default: the family's)")
    ap.add_argument('--jobs', type=int, default=2, help='processes training at once, one torch thread each')
    ap.add_argument('--out', default=str(P.HERE), help='work/ (pairs, bases) and grid/CORPUS/ go here')
    ap.add_argument('--quick', action='store_true', help="make test's sizes: not results")
    a = ap.parse_args(argv)
    P.use_sizes(a.quick)
    if a.decoder == 'copy' and a.family != 'discrete': ap.error("--decoder copy is the discrete family's")
    # the probe's base of 800 steps for the fresh discrete decoder, else the one at its plateau
    pairs_path, base_dir = P.prepare(a.corpus, Path(a.out) / 'work',
                                     plateau=a.family == 'continuous' or a.decoder == 'copy')
    out, cats = grid_folder(a.out, a.corpus, a.decoder), Path(a.out) / 'grid' / f'{a.corpus}_categories.json'
    out.parent.mkdir(parents=True, exist_ok=True)
    if not cats.exists():        # each pair's category by its position in the data file
        atomic_write_bytes(cats, json.dumps([json.loads(line)['category'] for line in open(pairs_path)]).encode())
    runs = grid_runs(a.family, a.seeds, a.eps, a.decoder)
    try: return run_grid(out, runs, PRESET, overrides(pairs_path, base_dir, a.quick, a.decoder), a.jobs)
    except (RunDirectoryError, ValueError, OSError) as e: ap.error(str(e))

if __name__ == '__main__': main()
