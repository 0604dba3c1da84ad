"""The speed probe (issue 33): quality per second of wall time for the discrete presets. Each arm is a preset with
overrides; each piece (arm x seed) is one `inverse-surprisal train` in a new process, nothing else running, and writes
bench/speed/results/<arm>-seed<S>.json (kept: the eval curve as wall seconds against the fraction of the oracle
information, the base model's seconds and held-out gap) and is skipped on the next start; an interrupted piece starts
again. Prints per arm the median and worst over its seeds of the seconds to 0.85/0.90/0.95 of the oracle information
(None: not reached) and of the best fraction. `--quick` runs the same code on the tiny preset (make test), not
results."""
import argparse, json, shutil, statistics, subprocess, sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
# (preset, --set overrides): today's presets, then one change at a time
ARMS = {
    'demo': ('demo', []),
    'demo-y': ('demo', ['model.z_entry=y']),
    # the shared context's steps are cheaper: as many seconds buy more of them
    'demo-y-1000': ('demo', ['model.z_entry=y', 'steps=1000']),
    'demo-y-1000-l3': ('demo', ['model.z_entry=y', 'steps=1000', 'model.n_layers=3']),
    'full': ('full', []),
    'full-y': ('full', ['model.z_entry=y']),
    # the CVAE alone: with the plain term b never enters training, so the exact b* changes only what is reported
    'full-y-oracle': ('full', ['model.z_entry=y', 'base=oracle']),
    'probe': ('probe', []),
    'probe-y': ('probe', ['model.z_entry=y']),
    'tiny': ('tiny', []),
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
    return dict(arm=arm, seed=seed, preset=preset, sets=sets,
                curve=[dict(step=e['step'], wall_seconds=round(e['wall_seconds'], 1),
                            fraction=round(e['information_gain'] / e['oracle_information'], 4),
                            nmi_over_ceiling=round(e['nmi_joint'] / e['nmi_joint_ceiling'], 4),
                            classes=f"{e['classes_with_own_code']}/{e['n_classes']}") for e in evals],
                base_gap_per_token=round(evals[-1]['base_gap_per_token'], 4))

def seconds_to(rec: dict, level: float):
    return next((e['wall_seconds'] for e in rec['curve'] if e['fraction'] >= level), None)

def summary(recs: list) -> dict:
    "Median and worst over seeds: seconds to each level (None where a seed never got there) and the best fraction."
    res = dict(seeds=len(recs))
    for lv in LEVELS:
        ts = [seconds_to(r, lv) for r in recs]
        got = sorted(t for t in ts if t is not None)
        res[f'to_{lv}_median'] = statistics.median(got) if len(got) * 2 > len(ts) else None
        res[f'to_{lv}_worst'] = None if None in ts else max(got)
    best = [max(e['fraction'] for e in r['curve']) for r in recs]
    res.update(best_median=statistics.median(best), best_worst=min(best),
               final_median=statistics.median(r['curve'][-1]['fraction'] for r in recs),
               final_worst=min(r['curve'][-1]['fraction'] for r in recs),
               wall_median=statistics.median(r['curve'][-1]['wall_seconds'] for r in recs))
    return res

def load(f: Path, arm: str) -> dict:
    "A finished piece's record; one made with other settings than the arm's today is refused."
    rec = json.loads(f.read_text())
    if [rec['preset'], rec['sets']] != list(ARMS[arm]):
        raise ValueError(f"{f} was made with other settings ({rec['preset']} {rec['sets']}, the arm is now "
                         f"{ARMS[arm]}): delete it to train it again")
    return rec

def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument('--arms', nargs='+', default=['demo', 'demo-y'], choices=sorted(ARMS))
    p.add_argument('--seeds', nargs='+', type=int, default=[0, 1, 2])
    p.add_argument('--quick', action='store_true', help='the tiny preset, one seed (make test): not results')
    p.add_argument('--out', default=str(HERE / 'speed'), help='results/ and runs/ go here')
    a = p.parse_args(argv)
    out = Path(a.out)
    arms, seeds = (['tiny'], [0]) if a.quick else (a.arms, a.seeds)
    (out / 'results').mkdir(parents=True, exist_ok=True)
    table = {}
    for arm in arms:
        recs = []
        for seed in seeds:
            f = out / 'results' / f'{arm}-seed{seed}.json'
            if not f.exists():
                rec = run_piece(arm, seed, out)
                tmp = f.with_suffix('.tmp'); tmp.write_text(json.dumps(rec, indent=1) + '\n'); tmp.replace(f)
            recs.append(load(f, arm))
        table[arm] = summary(recs)
    print(json.dumps(table))

if __name__ == '__main__': main()
