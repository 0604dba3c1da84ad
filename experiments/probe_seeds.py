"""Where a seed loses it (issue 34): for each finished speed-probe run of the discrete family (experiments/probe_speed.py's
experiments/speed/runs/<arm>-seed<S>), the held-out figures that tell apart the ways a run can fall short of the oracle
information I, in nats per example unless said:
- `fraction`: the information gain b* - l over I (the run's own figure);
- `kl_over_i`: the rate the code spends, over I;
- `classes`: true classes whose examples' most probable code is their own;
- `decoder_excess`: the decoder's NLL of y given the code that stands for the example's true class (the code most of
  that class's examples take) minus the oracle's -log p(y|x, c): what the decoder has not yet learned of each class;
- `posterior_entropy` against `oracle_entropy`: how sharp q(c|x,y) is against the exact posterior (a code that cannot
  tell the classes apart is flatter);
- `splits`, `last_split`: the split events and the step of the last one (a class found late leaves the decoder less
  time);
- `curve`: the fraction at every evaluation (still rising at the end: the run stopped early).
Each run's figures are written to experiments/speed/diagnosis/<arm>-seed<S>.json and skipped on the next start.
`--runs DIR` reads another folder of runs (make test: the speed probe's tiny run)."""
import argparse, json, statistics, sys
from pathlib import Path

import torch

from inverse_surprisal.runs import load_run

HERE = Path(__file__).resolve().parent

@torch.no_grad()
def diagnose(run: Path) -> dict:
    "The figures above for one finished run of the discrete family on the synthetic task."
    r = load_run(run, device='cpu')
    model, ds, task = r.model, r.held_out, r.held_out.task
    x, y, f = ds.batch.x, ds.batch.y, ds.batch.factors
    true = task.joint_class(f)
    l_c = model._per_class(ds.input_ids, ds.y_mask)[0].double()             # (n, K) the decoder's NLL per code
    log_q = model.joint_log_prob(model.posterior(ds.input_ids)).double()    # (n, K)
    code = log_q.argmax(1)
    own = torch.stack([torch.bincount(code[true == c], minlength=log_q.shape[1]).argmax()
                       for c in range(task.n_classes)])                     # the code of each true class
    oracle_nll = task.conditional_nll(x, y)                                  # (n, C)
    post = task.posterior(x, y)
    entropy = lambda lp: -(lp.exp() * lp).nan_to_num().sum(1).mean().item()
    info = task.information(x, y).mean().item()
    log = [json.loads(l) for l in (run / 'metrics.jsonl').read_text().splitlines()]
    evals, splits = [e for e in log if e['phase'] == 'eval'], [e['step'] for e in log if e['phase'] == 'split']
    last = evals[-1]
    return dict(oracle_information=round(info, 4),
                fraction=round(last['information_gain'] / last['oracle_information'], 4),
                kl_over_i=round(last['kl'] / last['oracle_information'], 4),
                classes=f"{last['classes_with_own_code']}/{last['n_classes']}",
                decoder_excess=round((l_c.gather(1, own[true][:, None])[:, 0]
                                      - oracle_nll.gather(1, true[:, None])[:, 0]).mean().item(), 4),
                posterior_entropy=round(entropy(log_q), 4),
                oracle_entropy=round(entropy(post.clamp_min(1e-300).log()), 4),
                splits=len(splits), last_split=max(splits, default=None),
                curve=[round(e['information_gain'] / e['oracle_information'], 3) for e in evals])

def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument('--arms', nargs='+', default=['demo-prefix', 'demo'])
    p.add_argument('--seeds', nargs='+', type=int, default=[0, 1, 2, 3, 4])
    p.add_argument('--runs', default=str(HERE / 'speed' / 'runs'), help='the runs, <arm>-seed<S> each')
    p.add_argument('--out', default=str(HERE / 'speed' / 'diagnosis'), help='one JSON per run goes here')
    a = p.parse_args(argv)
    out = Path(a.out); out.mkdir(parents=True, exist_ok=True)
    table = {}
    for arm in a.arms:
        rows = []
        for seed in a.seeds:
            name, f = f'{arm}-seed{seed}', out / f'{arm}-seed{seed}.json'
            if not f.exists():
                if not (Path(a.runs) / name / 'metrics.json').exists():
                    print(f'{name}: no finished run in {a.runs} (train it with probe_speed.py)', file=sys.stderr); continue
                row = dict(arm=arm, seed=seed, **diagnose(Path(a.runs) / name))
                tmp = f.with_suffix('.tmp'); tmp.write_text(json.dumps(row, indent=1) + '\n'); tmp.replace(f)
            rows.append(json.loads(f.read_text()))
        for r in rows: print(json.dumps(r))
        if rows: table[arm] = {k: statistics.median(r[k] for r in rows) for k in ('fraction', 'decoder_excess')}
    print(json.dumps(table))

if __name__ == '__main__': main()
