"""The speed probe (issues 33 and 34): quality per second of wall time for the discrete presets. Each arm is a preset
with overrides; each piece (arm x seed) is one `inverse-surprisal train` in a new process, nothing else running, and
writes experiments/speed/results/<arm>-seed<S>.json (kept: the eval curve as wall seconds against the fraction of the oracle
information, the base model's held-out gap, and the whole configuration it ran) and is skipped on the next start; an
interrupted piece starts again, and a record whose configuration is not the one its arm trains today (a preset changed)
is refused. Prints per arm the median and worst over its seeds of the seconds to 0.85/0.90/0.95 of the oracle
information (None: not reached) and of the best fraction. `--quick` runs the same code on the tiny preset (make test),
not results."""
import argparse, json, shutil, statistics, subprocess, sys
from functools import reduce
from pathlib import Path

from inverse_surprisal.config import RunConfig, make_config, merge_overrides, parse_override
from inverse_surprisal.config_files import config_diff, stored_config

HERE = Path(__file__).resolve().parent
# (preset, --set overrides): today's presets, then one change at a time
ARMS = {
    'demo': ('demo', []), 'full': ('full', []), 'probe': ('probe', []), 'tiny': ('tiny', []),
    # issue 33: z as a prefix (the demo and probe presets before it), z at the separator and y with the old demo's
    # 600 steps, a third decoder layer
    'demo-prefix': ('demo', ['model.z_entry=prefix', 'steps=600']),
    'demo-y-600': ('demo', ['steps=600']),
    'demo-l3': ('demo', ['model.n_layers=3']),
    'probe-prefix': ('probe', ['model.z_entry=prefix']),
    # the full preset's CVAE alone (the exact b*): with the plain term b never enters training, so the learned base's
    # minutes change only what is reported
    'full-oracle': ('full', ['base.source=oracle']),
    # issue 34: the prefix with the demo's 1000 steps (did seeds 1 and 2 only run out of steps?); the learning rate
    # constant, as the full preset had it before it fell on a cosine
    'demo-prefix-1000': ('demo', ['model.z_entry=prefix']),
    'full-constant': ('full', ['lr_schedule=constant']),
    'full-oracle-constant': ('full', ['base.source=oracle', 'lr_schedule=constant']),
}
LEVELS = (0.85, 0.9, 0.95)

def run_piece(arm: str, seed: int, out: Path) -> dict:
    "Train one arm on one seed in a new process; its evaluations as (wall seconds, fraction) and its base figures."
    preset, sets = ARMS[arm]
    run = out / 'runs' / f'{arm}-seed{seed}'
    if run.exists(): shutil.rmtree(run)
    cmd = [str(Path(sys.executable).parent / 'inverse-surprisal'), 'train', '--preset', preset, '--seed', str(seed),
           '--out', str(run), '--no-progress', '--no-tensorboard'] + [a for s in sets for a in ('--set', s)]
    subprocess.run(cmd, check=True, capture_output=True)
    log = [json.loads(l) for l in (run / 'metrics.jsonl').read_text().splitlines()]
    evals = [e for e in log if e['phase'] == 'eval']
    return dict(arm=arm, seed=seed, preset=preset, sets=sets, config=json.loads((run / 'config.json').read_text()),
                curve=[dict(step=e['step'], wall_seconds=round(e['wall_seconds'], 1),
                            fraction=round(e['information_gain'] / e['oracle_information'], 4),
                            nmi_over_ceiling=round(e['nmi_joint'] / e['nmi_joint_ceiling'], 4),
                            classes=f"{e['classes_with_own_code']}/{e['n_classes']}") for e in evals],
                base_gap_per_token=round(evals[-1]['base_gap_per_token'], 4))

def seconds_to(rec: dict, level: float):
    return next((e['wall_seconds'] for e in rec['curve'] if e['fraction'] >= level), None)

def summary(recs: list) -> dict:
    """Median and worst over seeds: seconds to each level (None where a seed never got there), the best and the final
    fraction (and the final one's spread, best minus worst seed), the wall seconds."""
    res = dict(seeds=len(recs))
    for lv in LEVELS:
        ts = [seconds_to(r, lv) for r in recs]
        got = sorted(t for t in ts if t is not None)
        res[f'to_{lv}_median'] = statistics.median(got) if len(got) * 2 > len(ts) else None
        res[f'to_{lv}_worst'] = None if None in ts else max(got)
    best = [max(e['fraction'] for e in r['curve']) for r in recs]
    final, wall = ([r['curve'][-1][k] for r in recs] for k in ('fraction', 'wall_seconds'))
    res.update(best_median=statistics.median(best), best_worst=min(best),
               final_median=statistics.median(final), final_worst=min(final), final_spread=max(final) - min(final),
               wall_median=statistics.median(wall), wall_worst=max(wall))
    return res

def arm_config(arm: str, seed: int) -> RunConfig:
    "The whole configuration the arm trains on `seed` today, as the command line builds it (a preset changes under it)."
    preset, sets = ARMS[arm]
    over = reduce(merge_overrides, [parse_override(s) for s in sets], dict(seed=seed))
    return make_config(preset, over)

def load(f: Path, arm: str, seed: int) -> dict:
    """A finished piece's record; one made with other settings than the arm's today is refused (a setting added
    since, at its default, is the same run)."""
    rec = json.loads(f.read_text())
    if 'config' not in rec: raise ValueError(f"{f} records no configuration: delete it to train it again")
    if diff := config_diff(stored_config(rec['config']), arm_config(arm, seed)):
        raise ValueError(f"{f} was made with other settings than the arm {arm} ({ARMS[arm]}) trains today "
                         f"(they differ in {diff}): delete it to train it again")
    return rec

def records(arm: str, seeds: list, out: Path=HERE / 'speed') -> list:
    "The arm's record on each seed: read where finished (and checked), else trained now and written."
    (out / 'results').mkdir(parents=True, exist_ok=True)
    recs = []
    for seed in seeds:
        f = out / 'results' / f'{arm}-seed{seed}.json'
        if not f.exists():
            rec = run_piece(arm, seed, out)
            tmp = f.with_suffix('.tmp'); tmp.write_text(json.dumps(rec, indent=1) + '\n'); tmp.replace(f)
        recs.append(load(f, arm, seed))
    return recs

def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument('--arms', nargs='+', default=['demo', 'demo-prefix'], choices=sorted(ARMS))
    p.add_argument('--seeds', nargs='+', type=int, default=[0, 1, 2])
    p.add_argument('--quick', action='store_true', help='the tiny preset, one seed (make test): not results')
    p.add_argument('--out', default=str(HERE / 'speed'), help='results/ and runs/ go here')
    a = p.parse_args(argv)
    out = Path(a.out)
    arms, seeds = (['tiny'], [0]) if a.quick else (a.arms, a.seeds)
    print(json.dumps({arm: summary(records(arm, seeds, out)) for arm in arms}))

if __name__ == '__main__': main()
