"""Why the grid's trained discrete runs move rate a fraction of the way the closed form asks (issue 64, item 2), and
what makes their rates follow it (item 3). The experiments page's discrete runs (experiments/grid.py: the demo task,
b = b*, the grid's settings, 800 steps), in arms that differ only in the alignment head's term of the objective:

  uniform   the grid's settings as they were, the head held: its NLL weighs aux_weight on every example alike to the end
  recon     `aux_weighting='recon'`: the head's NLL weighted per example by the reconstruction weight w
  annealed  the uniform head annealed to 0 over steps 600-700 (after the last split): the last 100 steps train the
            seed's objective alone. The grid now does this (`split.head_release=100`, the same objective step for step)

Per run, besides the grid's figures (K against K*, the closed form of the *true* decoder), the closed form of the
run's own objective with its own decoder and prior fixed, without the head (`K_own`), and the EM target the encoder
is fitted to, head included (`target`): the Spearman of K with each and each one's easy/hard ratio.
Records: experiments/grid/head_probe/<arm>/results/ (the grid's files) and <arm>/own/<run>.json (committed);
runs: <arm>/runs/ (ignored). Resumable: finished pieces are skipped. `--grid` trains nothing: it measures the grid's own
discrete runs with b = b* (experiments/grid.py, the head released) the same way, into experiments/grid/own/.
Usage: python experiments/probe_head_weighting.py [--arms recon annealed uniform] [--seeds 0 1 2] [--terms example plain]
                                                  [--jobs 2]
       python experiments/probe_head_weighting.py --grid [experiments/grid]   (the grid's runs, trained by grid.py)
       python experiments/probe_head_weighting.py --quick --out DIR   (make test's tiny version: not results)"""
import argparse, json, multiprocessing
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from pathlib import Path

import torch

from inverse_surprisal.config import merge_overrides
from inverse_surprisal.files import atomic_write_bytes
from inverse_surprisal.grid import GRID_OVERRIDES, GRID_PRESET, QUICK, GridRun, experiment_grid, grid_config, run_piece
from inverse_surprisal.per_example import easy_hard_ratio, read_per_example, spearman
from inverse_surprisal.nn import posterior_and_prior
from inverse_surprisal.run_dir import CVAE_CKPT
from inverse_surprisal.train import Trainer

HERE = Path(__file__).resolve().parent
ARMS = dict(uniform={},
            recon=dict(objective=dict(aux_weighting='recon')),
            annealed=dict(objective=dict(aux_anneal_start=600, aux_anneal_steps=100, aux_final=0.0)))
QUICK_ARMS = dict(ARMS, annealed=dict(objective=dict(aux_anneal_start=6, aux_anneal_steps=2, aux_final=0.0)))

# every arm starts from the head held to the end (no release), as the grid was when the probe was made
HELD = dict(split=dict(head_release=0))

def arm_overrides(arm: str, quick: bool=False) -> dict:
    "The grid's overrides, the head held, with the arm's objective settings for the discrete family."
    grid = merge_overrides(QUICK if quick else GRID_OVERRIDES, dict(discrete=HELD))
    return merge_overrides(grid, dict(discrete=(QUICK_ARMS if quick else ARMS)[arm]))

def runs_of(arm: str, seeds, terms=('example', 'plain')) -> list:
    "The example term at eps 1 on each seed; the plain term too where the arm changes it (w = 1: `recon` does not)."
    both = [('example', 1.0)] + ([] if arm == 'recon' else [('plain', None)])
    return [GridRun('discrete', r, e, 'oracle', s) for r, e in both if r in terms for s in seeds]

def own_rates(folder: Path, cfg) -> dict:
    """(n,) held-out rates of a finished run's own closed form: its objective's tempered posterior with its decoder and
    prior fixed, without the head (`K_own`) and with it (`target`, what EM fits the encoder to)."""
    tr = Trainer(cfg, folder, progress=False)
    tr.fit(resume=True)                          # the last checkpoint, opened again: nothing is trained
    model, ds, (b, b_tok) = tr.model.eval(), tr.eval_set, tr.b['eval']
    with torch.no_grad():
        log_p = model.joint_log_prob(posterior_and_prior(model, ds.input_ids, ds.y_mask)[1])
        def rate(obj):   # every term's inputs: b, the token term's b per token, the distribution term's E_D[b]
            lq = model.model_posterior(ds.input_ids, ds.y_mask, b, b_tok, tr.b['base_mean'], objective=obj)
            return (lq.exp() * (lq - log_p)).sum(1).double().numpy()
        return dict(K_own=rate(replace(model.objective, aux_weight=0.0)), target=rate(model.objective))

def own_record(out: Path, run: GridRun, overrides: dict) -> dict:
    "The run's figures against the three predictions, written once to out/own/<run>.json and read back."
    path = out / 'own' / f'{run.name}.json'
    if path.exists(): return json.loads(path.read_text())
    per = read_per_example(out / 'results' / f'{run.name}.csv')
    rates = own_rates(out / 'runs' / run.name, grid_config(run, GRID_PRESET, overrides))
    K, b, hard = per['K'], per['b_star'], per['difficulty'] == 2
    preds = dict(K_star=per['K_star'], **rates)
    rec = dict(name=run.name, run=dict(recon=run.recon, eps=run.eps, seed=run.seed),
               info_fraction=float(per['gain'].mean() / per['information'].mean()),
               K=float(K.mean()), easy_hard=easy_hard_ratio(K, b), noisy_K=float(K[hard].mean()),
               **{f'{k}_{m}': v for k, p in preds.items() for m, v in
                  (('mean', float(p.mean())), ('easy_hard', easy_hard_ratio(p, b)), ('noisy', float(p[hard].mean())),
                   ('spearman', spearman(K, p)), ('spearman_noisy', spearman(K[hard], p[hard])))})
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(path, (json.dumps(rec, indent=1) + '\n').encode())
    return rec

def grid_rows(grid: Path, # the grid's folder (results/ and runs/ of experiments/grid.py)
              overrides: dict=GRID_OVERRIDES, # the grid's settings (make test: QUICK)
              runs: list=None, # GridRun; the grid's discrete runs with b = b* when None
             ) -> list:
    "The grid's own runs against their own closed forms, in <grid>/own/ (committed): nothing is trained."
    runs = runs or [r for r in experiment_grid() if r.family == 'discrete' and r.base == 'oracle']
    measured = lambda r: (grid / 'own' / f'{r.name}.json').exists() or (grid / 'runs' / r.name / CVAE_CKPT).exists()
    if missing := [r.name for r in runs if not measured(r)]:   # a record, or the trained run to measure
        raise SystemExit(f"{grid}/runs/ lacks the trained runs {missing}: run python experiments/grid.py first")
    return [own_record(grid, r, overrides) for r in runs]

def train(arm: str, run: GridRun, out: str, quick: bool) -> list:
    "One run of an arm, on one torch thread (the same numbers in any process); skipped when finished."
    return run_piece([run], GRID_PRESET, arm_overrides(arm, quick), Path(out) / arm)

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--arms', nargs='+', default=['recon', 'annealed', 'uniform'], choices=list(ARMS))
    ap.add_argument('--seeds', type=int, nargs='+', default=[0, 1, 2])
    ap.add_argument('--terms', nargs='+', default=['example', 'plain'], choices=['example', 'plain'])
    ap.add_argument('--jobs', type=int, default=2, help='runs at once, one torch thread each')
    ap.add_argument('--out', default=str(HERE / 'grid' / 'head_probe'), help='each arm gets a folder here')
    ap.add_argument('--quick', action='store_true', help="make test's sizes (not results)")
    ap.add_argument('--grid', nargs='?', const=str(HERE / 'grid'), help="the grid's runs instead (trains nothing)")
    a = ap.parse_args(argv)
    if a.grid: return grid_rows(Path(a.grid), QUICK if a.quick else GRID_OVERRIDES)
    # the example term's runs of every arm first, then the plain ones: a stopped start has what matters most
    todo = sorted(((arm, r) for arm in a.arms for r in runs_of(arm, a.seeds, a.terms)), key=lambda t: t[1].recon == 'plain')
    for arm in a.arms: (Path(a.out) / arm / 'results').mkdir(parents=True, exist_ok=True)
    args = [[t[0] for t in todo], [t[1] for t in todo], [a.out] * len(todo), [a.quick] * len(todo)]
    if a.jobs == 1: list(map(train, *args))
    else:
        with ProcessPoolExecutor(a.jobs, mp_context=multiprocessing.get_context('spawn')) as ex: list(ex.map(train, *args))
    rows = [dict(arm=arm, **own_record(Path(a.out) / arm, r, arm_overrides(arm, a.quick))) for arm, r in todo]
    for r in rows:
        print(f"{r['arm']:9s} {r['name']}: info {r['info_fraction']:.3f}  K {r['K']:.3f}  easy/hard {r['easy_hard']:.2f} "
              f"(K* {r['K_star_easy_hard']:.2f}, own {r['K_own_easy_hard']:.2f})  spearman K* {r['K_star_spearman']:.3f} "
              f"own {r['K_own_spearman']:.3f} target {r['target_spearman']:.3f}", flush=True)
    return rows

if __name__ == '__main__': main()
