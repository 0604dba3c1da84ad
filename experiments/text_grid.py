"""The seed's question on real text (issue 47): every reconstruction term of the discrete CVAE (plain, the example-level
term at eps 0.1, 1 and 10, the distribution- and token-level terms, at matched beta) on the real-text probe's corpora
(experiments/probe_real_text.py: WordNet glosses, Debian synopses; the same 8 000 pairs, base model and `text` preset with 16
codes, 300 steps), each on seeds 0-2. `inverse_surprisal.grid` runs it: each finished run's per-pair rows (b, l, l0, K,
the closed form K* under the seed's plain model, the weight, the code, the pair) and record are files in
experiments/real_text/grid/CORPUS/results/, skipped on the next start; runs/ (checkpoints) is not in git. The pairs'
categories, which no run reads, are written beside the grid (experiments/real_text/grid/CORPUS_categories.json).
Usage: python experiments/text_grid.py CORPUS [--seeds 0 1 2] [--jobs 2]
       python experiments/text_grid.py planted --quick --out DIR --seeds 0 --eps 1   (make test's tiny version)"""
import argparse, json
from pathlib import Path
import probe_real_text as P
from inverse_surprisal.files import atomic_write_bytes
from inverse_surprisal.grid import real_text_grid, run_grid
from inverse_surprisal.run_dir import RunDirectoryError

PRESET = 'text'

def overrides(pairs_path, base_dir, quick=False) -> dict:
    """The probe's settings (16 codes, batch 32, 300 steps; make test's: 6), a quarter held out, evaluated every 100;
    the decoder a fresh one, as the grid was run (the text preset's copy of the base came after it)."""
    steps, every = (6, 3) if quick else (300, 100)
    return dict(steps=steps, eval_every=every, log_every=every, batch_size=32, model=dict(P.FRESH, code_sizes=(P.K,)),
                data=dict(path=str(pairs_path), base_model=str(base_dir), too_long='drop',
                          eval_fraction=P.EVAL_FRACTION))

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('corpus', choices=sorted(P.CORPORA))
    ap.add_argument('--seeds', type=int, nargs='+', default=[0, 1, 2])
    ap.add_argument('--eps', type=float, nargs='+', default=[0.1, 1.0, 10.0], help="the example term's eps values")
    ap.add_argument('--jobs', type=int, default=2, help='processes training at once, one torch thread each')
    ap.add_argument('--out', default=str(P.HERE), help='work/ (pairs, base) and grid/CORPUS/ go here')
    ap.add_argument('--quick', action='store_true', help="make test's sizes: not results")
    a = ap.parse_args(argv)
    P.S = P.SIZES['quick' if a.quick else 'full']
    pairs_path, base_dir = P.prepare(a.corpus, Path(a.out) / 'work')
    out, cats = Path(a.out) / 'grid' / a.corpus, Path(a.out) / 'grid' / f'{a.corpus}_categories.json'
    out.parent.mkdir(parents=True, exist_ok=True)
    if not cats.exists():        # each pair's category by its position in the data file
        atomic_write_bytes(cats, json.dumps([json.loads(line)['category'] for line in open(pairs_path)]).encode())
    runs = real_text_grid(tuple(a.seeds), tuple(a.eps))
    try: return run_grid(out, runs, PRESET, overrides(pairs_path, base_dir, a.quick), a.jobs)
    except (RunDirectoryError, ValueError, OSError) as e: ap.error(str(e))

if __name__ == '__main__': main()
