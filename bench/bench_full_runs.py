"""Figures of the runs in the full preset's budget (30 minutes on 2 cores each), read from their run directories when
they exist (they take longer than `make bench` may):
the discrete family, `inverse-surprisal train --preset full --out runs/full`: seconds to 90% of the oracle information,
the best fraction, the final figures, and the base model's training loss over its last 500-step windows (is it still
falling?). The continuous family's full runs are bench_continuous.py's. Prints one JSON object."""
import argparse, json, statistics
from pathlib import Path

from bench_quality import ROOT, final_figures, time_to
from inverse_surprisal.synthetic import SyntheticDataset
from inverse_surprisal.config import load_config

def log(run: Path, phase: str) -> list:
    return [e for e in map(json.loads, (run / 'metrics.jsonl').read_text().splitlines()) if e['phase'] == phase]

def oracle_map_accuracy(run: Path) -> float:
    "How often the oracle's MAP class is the true joint class on the run's held-out examples (the ceiling of a probe)."
    cfg = load_config(run / 'config.json')
    task = cfg.task.build()
    held = SyntheticDataset(task, cfg.n_eval, seed=cfg.seed + 10_000)               # the trainer's evaluation set
    f = held.batch.factors
    return (task.posterior(held.batch.x, held.batch.y).argmax(1) == f[:, 0] * task.n_rotations + f[:, 1]).double().mean().item()

def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument('--device', default='cpu', help='taken as bench/run.py passes it to every script; the runs are read, not made')
    p.parse_args()
    res = {}
    for name, prefix, frac in (('full', 'full', 0.9),):
        run = ROOT / 'runs' / name
        if not (run / 'metrics.json').exists():
            res[f'{prefix}_best_fraction'], res[f'{prefix}_note'] = None, f'no runs/{name}: see bench/bench_full_runs.py'
            continue
        res[f'{prefix}_time_to_quality_seconds'], res[f'{prefix}_best_fraction'] = time_to(run, frac)
        res.update({k: v for k, v in final_figures(run, prefix).items() if v is not None})
        res[f'{prefix}_oracle_map_accuracy'] = oracle_map_accuracy(run)
        res[f'{prefix}_curve'] = [dict(step=e['step'], fraction=round(e['information_gain'] / e['oracle_information'], 3),
                                       kl=round(e['kl'], 3), **{k: round(e[k], 3) for k in ('nmi_joint', 'probe_joint') if e.get(k) is not None})
                                  for e in log(run, 'eval')]
    base = log(ROOT / 'runs' / 'full', 'base') if (ROOT / 'runs' / 'full' / 'metrics.jsonl').exists() else []
    if base:
        last = max(e['step'] for e in base)
        res['full_base_loss_windows'] = [dict(steps=f'{s}-{s + 499}', mean_loss=round(statistics.mean(e['loss'] for e in base if s <= e['step'] < s + 500), 3))
                                         for s in range(max(0, last - 1999) // 500 * 500, last, 500)]
    print(json.dumps({k: (round(v, 4) if isinstance(v, float) else v) for k, v in res.items()}))

if __name__ == '__main__': main()
