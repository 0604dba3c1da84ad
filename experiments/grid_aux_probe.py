"""Why do the grid's learned discrete CVAEs spend more rate on the hardest examples than the closed form K* says?
For the trained models of experiments/grid/runs/ (made by experiments/grid.py), the rate of the EM target posterior
q(c) ~ p(c|x) exp(-(w l(c) + a aux(c)) / beta) that training fits the encoder to, on the held-out examples, with the
auxiliary head's term a aux(c) and without it, beside the measured K and K* by difficulty tag. Writes
experiments/grid/aux_probe.json (one row per run and tag)."""
import json, sys
from pathlib import Path

import torch

from inverse_surprisal.files import atomic_write_bytes
from inverse_surprisal.grid import GRID_OVERRIDES, GRID_PRESET, GridRun, grid_config, read_per_example
from inverse_surprisal.nn import posterior_and_prior
from inverse_surprisal.objective import matched_objective
from inverse_surprisal.run_dir import load_checkpoint
from inverse_surprisal.train import Trainer

GRID = Path(__file__).resolve().parent / 'grid'
RUNS = [GridRun('discrete', r, e, 'oracle', s) for r, e in (('plain', None), ('example', 0.1), ('example', 1.0),
                                                           ('example', 10.0)) for s in (0, 1, 2)]

def target_rates(run: GridRun) -> dict:
    "(n,) rates of the EM target with and without the head's term, on the run's held-out set."
    cfg, ckpt = grid_config(run, GRID_PRESET, GRID_OVERRIDES), GRID / 'runs' / run.name / 'cvae.safetensors'
    if not ckpt.exists(): sys.exit(f"{ckpt} missing: run python experiments/grid.py first")
    tr = Trainer(cfg, GRID / 'runs' / run.name, progress=False)   # reads nothing there but the data's seed
    b = tr.base_surprisals()
    torch.manual_seed(cfg.seed)
    model = tr.data.new_model(); model.load_state_dict(load_checkpoint(ckpt)['model']); model.eval()
    obj = matched_objective(cfg.objective, b['train'][0], b['base_mean'])
    ds = tr.eval_set
    with torch.no_grad():
        _, log_p = posterior_and_prior(model, ds.input_ids, ds.y_mask)
        log_pc = model.joint_log_prob(log_p)
        l_c, _, aux_c = model._per_class(ds.input_ids, ds.y_mask)
        w = 1 / (b['eval'][0] + obj.eps) if obj.recon == 'example' else torch.ones(len(l_c))
        out = {}
        for name, cost in (('with_head', w[:, None] * l_c + obj.aux_weight * aux_c), ('without_head', w[:, None] * l_c)):
            lq = torch.log_softmax(log_pc - cost / obj.beta, 1)
            out[name] = (lq.exp() * (lq - log_pc)).sum(1).double()
    return out

def main():
    rows = []
    for run in RUNS:
        per, rates = read_per_example(GRID / 'results' / f'{run.name}.csv'), target_rates(run)
        for d in (0, 1, 2):
            m = torch.from_numpy(per['difficulty'] == d)
            rows.append(dict(run=run.name, variant=run.label, seed=run.seed, difficulty=d,
                             K=float(per['K'][m.numpy()].mean()), K_star=float(per['K_star'][m.numpy()].mean()),
                             target_with_head=rates['with_head'][m].mean().item(),
                             target_without_head=rates['without_head'][m].mean().item()))
        print(run.name, [round(r['K'] - r['K_star'], 3) for r in rows[-3:]], flush=True)
    atomic_write_bytes(GRID / 'aux_probe.json', (json.dumps(rows, indent=1) + '\n').encode())

if __name__ == '__main__': main()
