"""The discovery probe: `inverse-surprisal train --preset probe --seed S` for seeds 0, 1, 2 (exact oracle base, default
12-class task), one after another. Per seed: true classes with a code of their own, joint NMI over the oracle MAP code's
NMI on the same held-out examples (the ceiling), information gain and wall seconds; then the worst seed of each.
Prints one JSON object."""
import argparse, json, shutil, subprocess, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SEEDS = (0, 1, 2)

def main():
    p = argparse.ArgumentParser(description=__doc__); p.add_argument('--device', default='cpu')
    p.parse_args()
    res, rows, ms = {}, [], []
    for seed in SEEDS:
        out = ROOT / 'runs' / f'bench-probe-seed{seed}'
        if out.exists(): shutil.rmtree(out)
        subprocess.run([str(Path(sys.executable).parent / 'inverse-surprisal'), 'train', '--preset', 'probe', '--seed', str(seed),
                        '--out', str(out), '--no-progress'], check=True, capture_output=True)
        m = json.loads((out / 'metrics.json').read_text())
        rows.append(dict(seed=seed, classes_with_own_code=f"{m['classes_with_own_code']}/{m['n_classes']}",
                         nmi_joint=round(m['nmi_joint'], 4), nmi_joint_ceiling=round(m['nmi_joint_ceiling'], 4),
                         nmi_over_ceiling=round(m['nmi_joint'] / m['nmi_joint_ceiling'], 4),
                         information_gain=round(m['information_gain'], 3), oracle_information=round(m['oracle_information'], 3),
                         wall_seconds=round(m['wall_seconds'], 1)))
        ms.append(m)
    res['probe_seeds'] = rows
    res['probe_min_fraction_of_classes_with_own_code'] = min(m['classes_with_own_code'] / m['n_classes'] for m in ms)
    res['probe_min_nmi_over_ceiling'] = min(m['nmi_joint'] / m['nmi_joint_ceiling'] for m in ms)
    res['probe_max_wall_seconds'] = max(m['wall_seconds'] for m in ms)
    print(json.dumps({k: (round(v, 4) if isinstance(v, float) else v) for k, v in res.items()}))

if __name__ == '__main__': main()
