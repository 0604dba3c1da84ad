"""The seed's claim at matched rate (issue 64, item 1): each term of the experiments page's grid (experiments/grid.py:
the demo task, b = b* and the learned base, the grid's own settings) with beta searched per seed until its held-out KL
is within 2% of the plain run's of the same seed (`inverse_surprisal.fractional.matched_rate`), so that the fractional
gain of every term is compared at the same rate. The first trial, beta 1, is the grid's own run: its record is taken
from the grid's results (same settings, checked: `grid_trial`) rather than trained again. Trial records:
experiments/grid/matched_rate/*.json (committed); runs: experiments/grid/matched_rate/runs/ (ignored). Resumable: a
second start trains only the trials it lacks. A learned-base trial takes the grid run's base model where it is on this
machine (else it trains the same one).
Usage: python experiments/matched_rate.py [--families continuous discrete] [--bases oracle learned] [--seeds 0 1 2]
                                          [--jobs 2]
       python experiments/matched_rate.py --quick --out DIR   (make test's tiny version: not results)"""
import argparse
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
import multiprocessing

import torch

from inverse_surprisal.fractional import NoMatchingBeta, grid_trial, matched_rate
from inverse_surprisal.grid import GRID_OVERRIDES, GRID_PRESET, QUICK, GridRun, experiment_grid, run_grid
from inverse_surprisal.run_dir import BASE_CKPT

HERE = Path(__file__).resolve().parent
TERMS = (('example', 1.0), ('example', 0.1), ('example', 10.0), ('distribution', None), ('token', None))

def search(run: GridRun, grid: str, out: str, overrides: dict, preset=GRID_PRESET, tables: bool=False) -> dict:
    """One run's search on one torch thread (the same numbers in any process); None when it stopped short of the
    target (the KL jumps past it, or the runs ran out). `preset`, `tables`: `matched_rate`'s (text_matched_rate.py's:
    the text preset, each trial's held-out rows kept)."""
    torch.set_num_threads(1)
    target = grid_trial(grid, out, run, preset, overrides, tables)
    base = Path(grid) / 'runs' / run.name          # a learned base: the grid run's, where it is on this machine
    base = base if run.base == 'learned' and (base / BASE_CKPT).exists() else None
    try: found = matched_rate(out, run, target, preset, overrides, tables=tables, base_from=base)
    except NoMatchingBeta as e:      # no beta reached the target: its trials are kept, the other searches go on
        print(f"{run.name}: stopped: {e}", flush=True)
        return None
    print(f"{run.name}: beta {found['beta']:.4g} gives KL {found['kl']:.3f} against the plain run's {target:.3f} "
          f"after {len(found['trials'])} runs; (b-l)/b {found['record']['fractional']:.4f}", flush=True)
    return found

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--families', nargs='+', default=['continuous', 'discrete'], choices=['continuous', 'discrete'])
    ap.add_argument('--seeds', type=int, nargs='+', default=[0, 1, 2])
    ap.add_argument('--bases', nargs='+', default=['oracle', 'learned'], choices=['oracle', 'learned'],
                    help="b = b* (every term), or the learned base (the grid's learned-base runs: the discrete family)")
    ap.add_argument('--jobs', type=int, default=2, help='searches at once, one torch thread each')
    ap.add_argument('--out', default=str(HERE / 'grid'), help="the grid's folder; the trials go in its matched_rate/")
    ap.add_argument('--quick', action='store_true', help="make test's sizes: the grid's plain and example runs, then "
                                                         "their search (not results)")
    a = ap.parse_args(argv)
    grid, overrides = Path(a.out), QUICK if a.quick else GRID_OVERRIDES
    terms = TERMS[:1] if a.quick else TERMS
    # eps 1 first, then the cheaper family's other terms: a stopped start has the searches that matter most
    runs = sorted((GridRun(f, r, e, 'oracle', s) for r, e in terms for f in a.families for s in a.seeds
                   if 'oracle' in a.bases), key=lambda r: (r.eps != 1.0, r.family == 'discrete'))
    if 'learned' in a.bases and not a.quick:
        runs += [r for r in experiment_grid(tuple(a.seeds)) if r.base == 'learned' and r.family in a.families]
    if a.quick:                  # the grid's own runs first, as experiments/grid.py --quick makes them
        run_grid(grid, [GridRun(f, 'plain', None, 'oracle', s) for f in a.families for s in a.seeds] + runs,
                 GRID_PRESET, overrides, 1)
    out = grid / 'matched_rate'
    if a.jobs == 1: return [search(r, grid, out, overrides) for r in runs]
    with ProcessPoolExecutor(a.jobs, mp_context=multiprocessing.get_context('spawn')) as ex:
        return list(ex.map(search, runs, [str(grid)] * len(runs), [str(out)] * len(runs), [overrides] * len(runs)))

if __name__ == '__main__': main()
