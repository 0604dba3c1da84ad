"""The continuous CVAE's probe (issue 31): the `probe` preset for the continuous family (exact b*, no base to train,
batch 64, 3000 steps, about 3 minutes on one thread), today's model and one remedy at a time, each on 3 seeds. Every
finished piece (variant x seed) writes experiments/probe_continuous/results/<variant>-seed<S>.json (kept, read by the
continuous CVAE's notebook) and is skipped on the next start; an interrupted piece starts again. Each record holds the
held-out figures at every evaluation and a diagnosis of the trained model (what the decoder and the head read from z,
how the posterior means cluster). `--quick` runs the same code on the tiny preset (make test), not results."""
import argparse, json, multiprocessing, statistics, time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import torch

from inverse_surprisal.config import merge_overrides
from inverse_surprisal.config_files import stored_form

HERE = Path(__file__).resolve().parent
# today's continuous model in the probe: the preset's continuous settings without what this probe found (the token maps
# that move with z, the mixture prior)
TODAY = dict(model=dict(family='continuous', latent_maps=False, prior='conditional'))
# each variant changes one thing from today's model: (what it is, overrides, a prototype of experiments/probe_continuous_prototypes.py)
VARIANTS = {
    'today': ('today: the Gaussian CVAE as on main', {}, None),
    'latent_maps': ("token maps that move with z (the head's W z offsets)", dict(model=dict(latent_maps=True)), None),
    'film': ('z also by FiLM on every decoder block', {}, ('film', {})),
    'mixture_prior': ('a learned 16-component mixture prior', dict(model=dict(prior='mixture')), None),
    'aggressive_encoder': ('one extra encoder-only step per step', {}, ('aggressive_encoder', dict(n_inner=1))),
    'decoder_lr_third': ("the decoder at a third of the encoder's learning rate", {}, ('decoder_lr', dict(factor=1 / 3))),
    'free_bits': ('free bits 0.25 nats per dimension', dict(objective=dict(free_bits=0.25)), None),
    'latent_dim_16': ('16 latent dimensions instead of 8', dict(model=dict(latent_dim=16)), None),
    'beta_half': ('beta 0.5 instead of 1', dict(objective=dict(beta=0.5)), None),
}
# then one more thing on top of the token maps that move with z
VARIANTS.update({f'latent_maps+{v}': (f'token maps + {VARIANTS[v][0]}', merge_overrides(VARIANTS['latent_maps'][1], VARIANTS[v][1]),
                                      VARIANTS[v][2]) for v in ('mixture_prior', 'beta_half', 'film', 'free_bits')})
SEEDS = (0, 1, 2)
QUICK = dict(steps=12, eval_every=6, n_train=256, n_eval=64, batch_size=16,
             task=dict(vocab_size=6, length=4, n_rotations=2),
             model=dict(d_model=16, n_layers=1, n_heads=2), objective=dict(warmup_steps=4))

def probe_config(variant: str, seed: int, quick: bool=False):
    "The piece's configuration: the probe preset for the continuous family, today's model, the variant's change."
    from inverse_surprisal.config import make_config
    over = merge_overrides(merge_overrides(TODAY, VARIANTS[variant][1]), dict(seed=seed))
    return make_config('probe', merge_overrides(over, QUICK) if quick else over)

@torch.no_grad()
def diagnose(tr) -> dict:
    """What the trained model reads from z on the held-out set: the decoder's NLL at the posterior mean, at the prior
    mean and at another example's posterior mean; the head's NLL likewise; the oracle's NLL given the true class; the
    5-nearest-neighbour accuracy of the joint class from the posterior means and its confusion table."""
    from inverse_surprisal.nn import sequence_nll
    m, ds, task = tr.model.eval(), tr.eval_set, tr.data.task
    g = torch.Generator().manual_seed(0)
    with torch.random.fork_rng():
        torch.manual_seed(tr.cfg.seed + 7)
        out = m(ds.input_ids, ds.y_mask, *tr.b['eval'], tr.b['base_mean'], step=tr.cfg.steps)
    mu_q, mu_p = out.extras['mu_q'], out.extras['mu_p']
    other = mu_q[torch.randperm(len(mu_q), generator=g)]
    decoder = lambda z: sequence_nll(m.decoder, ds.input_ids, ds.y_mask, m.to_prefix(z)[:, None])[0].mean().item()
    head = lambda z: m.aux_head(z, ds.input_ids, ds.y_mask).mean().item()
    f = ds.batch.factors
    joint = task.joint_class(f)
    h = len(mu_q) // 2
    near = torch.cdist(mu_q[h:], mu_q[:h]).topk(5, largest=False).indices
    pred = torch.mode(joint[:h][near], 1).values
    confusion = torch.zeros(task.n_classes, task.n_classes, dtype=torch.long)
    confusion.index_put_((joint[h:], pred), torch.ones_like(pred), accumulate=True)
    return dict(recon_nll=out.recon_nll.mean().item(), decoder_nll_at_posterior_mean=decoder(mu_q),
                decoder_nll_at_prior_mean=decoder(mu_p), decoder_nll_at_other_mean=decoder(other),
                head_nll_at_posterior_mean=head(mu_q), head_nll_at_prior_mean=head(mu_p), head_nll_at_other_mean=head(other),
                oracle_nll_true_class=task.conditional_nll(ds.batch.x, ds.batch.y).gather(1, joint[:, None]).mean().item(),
                oracle_base_surprisal=ds.oracle_base_surprisal.mean().item(),
                knn_accuracy=(pred == joint[h:]).double().mean().item(), knn_confusion=confusion.tolist(),
                kl_per_dimension=out.kl_units.mean(0).tolist())

def run_piece(variant: str, seed: int, out: str, quick: bool=False) -> dict:
    "Train one variant on one seed (one torch thread), diagnose it, write its record; returns the record."
    torch.set_num_threads(1)
    proto = VARIANTS[variant][2]
    if proto:
        import sys; sys.path.insert(0, str(HERE))
        from probe_continuous_prototypes import PROTOTYPES
        PROTOTYPES[proto[0]](**proto[1])
    from inverse_surprisal.train import Trainer
    import shutil
    out, cfg = Path(out), probe_config(variant, seed, quick)
    folder = out / 'runs' / f'{variant}-seed{seed}'
    if folder.exists(): shutil.rmtree(folder)                       # an interrupted piece starts again
    tr = Trainer(cfg, folder, progress=False)
    final = tr.fit()
    evals = [e for e in map(json.loads, (folder / 'metrics.jsonl').read_text().splitlines()) if e['phase'] == 'eval']
    record = dict(variant=variant, seed=seed, what=VARIANTS[variant][0], prototype=proto, config=stored_form(cfg),
                  torch_threads=1, final=final, diagnosis=diagnose(tr),
                  trajectory=[{k: e.get(k) for k in ('step', 'information_gain', 'oracle_information', 'kl', 'probe_joint',
                                                      'oracle_map_accuracy', 'recon_nll')} for e in evals])
    from inverse_surprisal.files import atomic_write_bytes
    atomic_write_bytes(out / 'results' / f'{variant}-seed{seed}.json', (json.dumps(record, indent=1) + '\n').encode())
    print(f"{variant} seed {seed}: {final['wall_seconds']:.0f} s, gain/I {final['information_gain'] / final['oracle_information']:.3f}, "
          f"probe {final['probe_joint']:.3f}", flush=True)
    return record

def load(out=HERE / 'probe_continuous', variants=tuple(VARIANTS), seeds=SEEDS) -> list:
    "The finished records, in the order of `variants` then `seeds`; a record made with other settings is refused."
    from inverse_surprisal.config_files import config_diff, stored_config
    recs = []
    for v in variants:
        for s in seeds:
            path = Path(out) / 'results' / f'{v}-seed{s}.json'
            if not path.exists(): continue
            r = json.loads(path.read_text())
            if diff := config_diff(stored_config(r['config']), probe_config(v, s, r['config']['steps'] < 100)):
                raise ValueError(f"{path}: made with other settings ({'; '.join(diff)}); delete it to run it again")
            recs.append(r)
    return recs

def figures(r: dict) -> dict:
    "A record's figures for the table: final and best gain over the oracle information, KL over it, probe over the MAP."
    f, traj = r['final'], r['trajectory']
    info = f['oracle_information']
    return dict(gain=f['information_gain'] / info, best_gain=max(e['information_gain'] for e in traj) / info,
                kl=f['kl'] / info, probe=f['probe_joint'] / f['oracle_map_accuracy'], wall=f['wall_seconds'])

def table(recs: list) -> list:
    "One row per variant: the median and the worst seed of each figure (worst: lowest, highest for KL and time)."
    rows = []
    for v in dict.fromkeys(r['variant'] for r in recs):
        fs = [figures(r) for r in recs if r['variant'] == v]
        row = dict(variant=v, what=VARIANTS[v][0], seeds=len(fs))
        for k in ('gain', 'best_gain', 'kl', 'probe', 'wall'):
            vals = [x[k] for x in fs]
            row[k] = round(statistics.median(vals), 3)
            row[f'{k}_worst'] = round(max(vals) if k in ('kl', 'wall') else min(vals), 3)
        rows.append(row)
    return rows

def main(argv=None):
    p = argparse.ArgumentParser(prog='experiments/probe_continuous.py', description=__doc__)
    p.add_argument('--out', default=str(HERE / 'probe_continuous'), help='results/ (kept) and runs/ (scratch) go here')
    p.add_argument('--variants', nargs='+', default=list(VARIANTS), choices=list(VARIANTS))
    p.add_argument('--seeds', type=int, nargs='+', default=list(SEEDS))
    p.add_argument('--jobs', type=int, default=2, help='pieces training at once, one torch thread each')
    p.add_argument('--quick', action='store_true', help="make test's settings (the tiny task, seconds): not results")
    a = p.parse_args(argv)
    out, t0 = Path(a.out), time.perf_counter()
    (out / 'results').mkdir(parents=True, exist_ok=True)
    done = {(r['variant'], r['seed']) for r in load(out, a.variants, a.seeds)}
    todo = [(v, s) for v in a.variants for s in a.seeds if (v, s) not in done]
    print(f"{len(done)} pieces finished, {len(todo)} to train", flush=True)
    # a fresh process per piece: a prototype's patches must not reach the next piece
    with ProcessPoolExecutor(a.jobs, mp_context=multiprocessing.get_context('spawn'), max_tasks_per_child=1) as ex:
        for f in [ex.submit(run_piece, v, s, str(out), a.quick) for v, s in todo]: f.result()
    rows = table(load(out, a.variants, a.seeds))
    lines = ['| variant | seeds | gain/I median (worst) | best gain/I | KL/I | probe/MAP | wall s |', '|---|---|---|---|---|---|---|']
    lines += [f"| {r['what']} | {r['seeds']} | {r['gain']} ({r['gain_worst']}) | {r['best_gain']} ({r['best_gain_worst']}) | "
              f"{r['kl']} ({r['kl_worst']}) | {r['probe']} ({r['probe_worst']}) | {r['wall']} ({r['wall_worst']}) |" for r in rows]
    print('\n'.join(lines)); print(f'{time.perf_counter() - t0:.0f} s')

if __name__ == '__main__': main()
