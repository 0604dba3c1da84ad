"""The presets that report a quality, each judged on seeds 0 to 4 (issue 34): median, worst and spread (best minus
worst seed) over the seeds, never one seed, as the speed probe summarises an arm. The runs are the speed probe's
pieces (experiments/probe_speed.py): one `inverse-surprisal train` in a new process per preset and seed, its record in experiments/speed/results/, a finished piece
read back and checked against today's settings, a missing one trained here (demo about 2.5 minutes, probe about 1,
full's CVAE about 6.5).
- `demo`: the fraction of the oracle information at the last evaluation, the best one, and the run's wall seconds
  (learned base included).
- `probe`: true classes with a code of their own and the joint NMI over its ceiling, and wall seconds.
- `full`: judged on its CVAE alone (arm `full-oracle`, the exact b*): with the plain term the base never enters
  training, so its fractions are the whole preset's, step for step (compared on every seed that has both records);
  the whole preset's wall seconds and its base model's held-out gap to b* per y token from the arms `full` and
  `full-constant` (the constant learning rate it had before: the same work per step) where they ran.
Prints one JSON object."""
import argparse, json, statistics, sys
from pathlib import Path

EXPERIMENTS = Path(__file__).resolve().parent.parent / 'experiments'    # the speed probe and its records
sys.path.insert(0, str(EXPERIMENTS))
from probe_speed import records, summary

SEEDS = (0, 1, 2, 3, 4)

def judged(prefix: str, recs: list) -> dict:
    "The speed probe's summary of an arm over the seeds under the preset's name, and each seed's figures."
    rows = [dict(seed=r['seed'], final=r['curve'][-1]['fraction'], best=max(e['fraction'] for e in r['curve']),
                 wall_seconds=r['curve'][-1]['wall_seconds'],
                 curve=' '.join(f"{e['fraction']:.2f}" for e in r['curve'])) for r in recs]
    return {f'{prefix}_by_seed': rows, **{f'{prefix}_{k}': v for k, v in summary(recs).items()}}

def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument('--device', default='cpu', help='the records are CPU runs: another device judges nothing here')
    if p.parse_args().device != 'cpu':
        print(json.dumps(dict(presets_note='the presets are judged on the CPU (bench/bench_presets.py)'))); return
    res = judged('demo', records('demo', SEEDS))
    probe = records('probe', SEEDS)
    res['probe_by_seed'] = [dict(seed=r['seed'], classes=r['curve'][-1]['classes'],
                               nmi_over_ceiling=r['curve'][-1]['nmi_over_ceiling'],
                               wall_seconds=r['curve'][-1]['wall_seconds']) for r in probe]
    share = lambda c: int(c.split('/')[0]) / int(c.split('/')[1])
    res['probe_classes_worst'] = min(share(r['curve'][-1]['classes']) for r in probe)
    nmi = [r['curve'][-1]['nmi_over_ceiling'] for r in probe]
    res.update(probe_nmi_over_ceiling_median=statistics.median(nmi), probe_nmi_over_ceiling_worst=min(nmi))
    res['probe_wall_worst'] = max(r['curve'][-1]['wall_seconds'] for r in probe)
    full = records('full-oracle', SEEDS)
    # its CVAE alone's seconds are not the preset's: those come from the whole runs below
    res.update({k: v for k, v in judged('full', full).items() if not k.startswith(('full_wall', 'full_to_'))})
    # the whole preset (learned base) where it ran, today's and at the constant rate it had before: the same
    # fractions as its CVAE alone, its wall seconds and its base model's gap
    whole, same, curve = [], [], lambda r: [(e['step'], e['fraction']) for e in r['curve']]
    for arm, alone in (('full', 'full-oracle'), ('full-constant', 'full-oracle-constant')):
        ran = [seed for seed in SEEDS if (EXPERIMENTS / 'speed' / 'results' / f'{arm}-seed{seed}.json').exists()]
        for w, a in zip(records(arm, ran), records(alone, ran)):
            same.append(curve(w) == curve(a))
            whole.append(dict(arm=arm, seed=w['seed'], wall_seconds=w['curve'][-1]['wall_seconds'],
                              base_gap_per_token=w['base_gap_per_token'], final=w['curve'][-1]['fraction']))
    res['full_whole_runs'] = whole
    res['full_whole_runs_match_the_cvae_alone'] = all(same) if same else None
    res['full_whole_wall_worst'] = max((w['wall_seconds'] for w in whole), default=None)
    res['full_whole_base_gap_worst'] = max((w['base_gap_per_token'] for w in whole), default=None)
    print(json.dumps({k: (round(v, 4) if isinstance(v, float) else v) for k, v in res.items()}))

if __name__ == '__main__': main()
