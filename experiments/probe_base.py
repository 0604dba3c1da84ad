"""The base model's curve (issue 33): the learned base of a preset trained for all its `base.steps`, its held-out gap to b*
per y token (on the 1000 fresh draws the plateau stop reads) measured every 100 steps, with the wall seconds, and where
`base.min_gain` would have stopped it. Each piece (preset x seed) writes experiments/speed/results/base-<preset>-seed<S>.json
and is skipped on the next start. Prints one JSON object."""
import argparse, json, tempfile, time
from pathlib import Path

from inverse_surprisal import base_model
from inverse_surprisal.config import make_config
from inverse_surprisal.train import Trainer

HERE = Path(__file__).resolve().parent
EVERY = 100

def curve(preset: str, seed: int) -> dict:
    "Train the preset's base with a check every EVERY steps that never stops it; the checks with their wall seconds."
    cfg = make_config(preset, dict(seed=seed, base=dict(check_every=EVERY)))
    tr = Trainer(cfg, Path(tempfile.mkdtemp()) / 'run', progress=False, tensorboard=False)
    tr.out.mkdir(parents=True)
    checks, plateau, t0 = [], base_model.base_plateau, time.perf_counter()
    def timed(base, cfg, task, step, gaps, log):
        plateau(base, cfg, task, step, gaps, log)
        if step % EVERY == 0: checks.append(dict(step=step, seconds=round(time.perf_counter() - t0, 1),
                                                 gap_per_token=round(gaps[-1], 4)))
        return False
    base_model.base_plateau = timed                 # train_base_model looks it up at each step
    try: tr.train_base()
    finally: base_model.base_plateau = plateau
    return dict(preset=preset, seed=seed, base_steps=cfg.base.steps, checks=checks)

def stop_at(rec: dict, every: int, min_gain: float):
    "The check at which `base.check_every=every, base.min_gain=min_gain` stops, as the trainer decides it."
    gaps = [c for c in rec['checks'] if c['step'] % every == 0]
    for i in range(1, len(gaps)):
        if min(g['gap_per_token'] for g in gaps[:i]) - gaps[i]['gap_per_token'] < min_gain: return gaps[i]
    return rec['checks'][-1]

def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument('--presets', nargs='+', default=['demo', 'full'])
    p.add_argument('--seeds', nargs='+', type=int, default=[0])
    a = p.parse_args()
    (HERE / 'speed' / 'results').mkdir(parents=True, exist_ok=True)
    res = {}
    for preset in a.presets:
        for seed in a.seeds:
            f = HERE / 'speed' / 'results' / f'base-{preset}-seed{seed}.json'
            if not f.exists():
                tmp = f.with_suffix('.tmp'); tmp.write_text(json.dumps(curve(preset, seed), indent=1) + '\n'); tmp.replace(f)
            rec = json.loads(f.read_text())
            res[f'{preset}-seed{seed}'] = dict(end=rec['checks'][-1],
                                              **{f'stop_{e}_{g}': stop_at(rec, e, g) for e in (200, 500) for g in (0.0, 0.005)})
    print(json.dumps(res))

if __name__ == '__main__': main()
