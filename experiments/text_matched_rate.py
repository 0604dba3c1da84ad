"""The seed's claim at matched rate on real text (issue 64, item 1): the copy grid's example-term runs
(experiments/text_grid.py --decoder copy: the discrete family with the text preset's own decoder, on the base at its
plateau) with beta searched per seed until the held-out KL is within 2% of the plain run's of the same seed
(`inverse_surprisal.fractional.matched_rate`). The grid's own run is the trial at beta 1 (`grid_trial`: taken, checked,
not trained again). Each trial's record and held-out rows (b, l, l0, the code, the pair) go to
experiments/real_text/grid/CORPUS-copy/matched_rate/ (committed), its run directory to matched_rate/runs/ (ignored).
Resumable: a second start trains only the trials it lacks.
Usage: python experiments/text_matched_rate.py CORPUS [--seeds 0 1 2 3 4] [--jobs 2]
       python experiments/text_matched_rate.py planted --quick --out DIR --seeds 0 --jobs 1   (make test's sizes)"""
import argparse
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import matched_rate as M    # experiments/matched_rate.py: one seed's search
import probe_real_text as P
import text_grid
from inverse_surprisal.grid import GridRun

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('corpus', choices=sorted(P.CORPORA))
    ap.add_argument('--seeds', type=int, nargs='+', default=list(text_grid.COPY_SEEDS))
    ap.add_argument('--jobs', type=int, default=2, help='searches at once, one torch thread each')
    ap.add_argument('--out', default=str(P.HERE), help="text_grid.py's: work/ and grid/CORPUS-copy/ lie here")
    ap.add_argument('--quick', action='store_true', help="make test's sizes: the copy grid's runs, then their search")
    a = ap.parse_args(argv)
    seeds = [str(s) for s in a.seeds]
    if a.quick:                  # the copy grid's own runs first, as text_grid.py --quick makes them
        text_grid.main([a.corpus, '--quick', '--out', a.out, '--decoder', 'copy', '--jobs', '1', '--seeds', *seeds])
    P.use_sizes(a.quick)
    pairs_path, base_dir = P.prepare(a.corpus, Path(a.out) / 'work', plateau=True)
    overrides = text_grid.overrides(pairs_path, base_dir, a.quick, 'copy')
    grid = text_grid.grid_folder(a.out, a.corpus, 'copy')
    runs = [GridRun('discrete', 'example', e, 'pretrained', s) for s in a.seeds for e in text_grid.COPY_EPS]
    # each seed's search with the text preset, keeping every trial's held-out rows
    shared = (str(grid), str(grid / 'matched_rate'), overrides, text_grid.PRESET, True)
    args = [runs] + [[x] * len(runs) for x in shared]
    if a.jobs == 1: return [M.search(*x) for x in zip(*args)]
    with ProcessPoolExecutor(a.jobs, mp_context=multiprocessing.get_context('spawn')) as ex:
        return list(ex.map(M.search, *args))

if __name__ == '__main__': main()
