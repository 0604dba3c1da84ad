"""The continuous family on real text (issue 63): does its Gaussian latent carry a corpus's categories, as the discrete
code does? The real-text probe's corpora, pairs, split, base models and judges (experiments/probe_real_text.py: WordNet
glosses and Debian synopses, 8 000 pairs, a quarter held out by the trainer's own split), the `text` preset for the
continuous family (`--family continuous`: a conditional Gaussian prior, the bag-of-words head, the encoder as q) for 300
steps, with each arm's settings. Judged on the held-out pairs, by the categories training never reads:
- k-means (16 clusters, the discrete code's K) fitted to the training pairs' posterior means and applied to the
  held-out ones: NMI beyond x less chance and AMI (`category_scores`), beside the same pairs' TF-IDF k-means, mixture
  of unigrams, LDA and embedding k-means (the discrete probe's baselines records, reused);
- the latent's own figures, held out: KL, the mutual information between z and the pair under q
  (`latent_mutual_information`), active units (`active_units`), l0 - l and b - l0 (the run's metrics.json).
Records: experiments/real_text/continuous/{corpus}_{arm}_s{seed}_{steps}[_plateau].json, written once and reused;
runs (checkpoints) in experiments/real_text/work/{corpus}/continuous/, not in git.
Usage: python experiments/probe_continuous_text.py CORPUS ARMS SEEDS [--base plateau] [--quick] [--steps N] [--l0-check]"""
import argparse, json, math, time
from pathlib import Path

import torch

import probe_real_text as P
from inverse_surprisal.clustering import embedding_kmeans
from inverse_surprisal.config_files import config_diff, stored_config
from inverse_surprisal.metrics import active_units, latent_mutual_information
from inverse_surprisal.runs import split_posterior
from inverse_surprisal.text import batch_rows
from inverse_surprisal.train import Trainer

CONT = dict(family='continuous')
ARMS = {
    # the documented command before issue 62 (a fresh decoder): the failure the issue reports
    'fresh': dict(model=dict(CONT)),
    # the text preset's decoder since issue 62: the base's copy with z in every block
    'copy': dict(model=dict(CONT, decoder_init='base_model', decoder_z='every')),
    # KL thresholding as Optimus uses it (each of the 8 dimensions' batch-mean KL held at >= 0.25 nats in the
    # objective: 2 nats in all) and a cyclical schedule of beta (Fu et al. 2019: three cycles of 100 steps, half of
    # each a ramp)
    **{f'{dec}-fb0.25': dict(model=m, objective=dict(free_bits=0.25))
       for dec, m in (('fresh', dict(CONT)), ('copy', dict(CONT, decoder_init='base_model', decoder_z='every')))},
    **{f'{dec}-cyclical': dict(model=m, objective=dict(cycle_steps=100, cycle_ramp=0.5))
       for dec, m in (('fresh', dict(CONT)), ('copy', dict(CONT, decoder_init='base_model', decoder_z='every')))},
    # BN-VAE (Zhu et al. 2020): the posterior means batch-normalised to a standard deviation of 0.6 per dimension
    **{f'{dec}-bn0.6': dict(model=dict(m, mean_bn=0.6))
       for dec, m in (('fresh', dict(CONT)), ('copy', dict(CONT, decoder_init='base_model', decoder_z='every')))},
    # aggressive steps (He et al. 2019): 5 updates of the encoder alone before each of the first 50 steps
    **{f'{dec}-aggressive': dict(m, aggressive_steps=50, aggressive_inner=5)
       for dec, m in (('fresh', dict(model=dict(CONT))),
                      ('copy', dict(model=dict(CONT, decoder_init='base_model', decoder_z='every'))))},
    # a mixture prior of 16 components (the discrete code's K), alone and started from the mixture of unigrams'
    # clusters of y's tokens (each pair's KL against its cluster's component for the first 100 steps, `start_kl`)
    **{f'{dec}-mixture{start}': dict(model=dict(m, prior='mixture', n_components=16),
                                     **(dict(start=dict(codes='mixture', steps=100)) if start else {}))
       for dec, m in (('fresh', dict(CONT)), ('copy', dict(CONT, decoder_init='base_model', decoder_z='every')))
       for start in ('', '-start')},
    # y's sentence embedding (all-MiniLM-L6-v2, the discrete family's embedding view) read by q beside the tokens,
    # alone and with BN-VAE's means; and with BN-VAE, a head on z that predicts it (precision 50 or 200)
    **{f'{dec}{bn}-view': dict(model=dict(m, mean_bn=0.6 if bn else 0.0, view_kappa=0.0),
                               data=dict(view_encoder='minilm'))
       for dec, m in (('fresh', dict(CONT)), ('copy', dict(CONT, decoder_init='base_model', decoder_z='every')))
       for bn in ('', '-bn0.6')},
    **{f'{dec}-bn0.6-viewhead{k}': dict(model=dict(m, mean_bn=0.6, view_kappa=float(k)), data=dict(view_encoder='minilm'))
       for dec, m in (('fresh', dict(CONT)), ('copy', dict(CONT, decoder_init='base_model', decoder_z='every')))
       for k in (50, 200)},
    # the same with 32 dimensions: room for more of the embedding than 8
    **{f'{dec}-bn0.6-viewhead200-d32': dict(model=dict(m, mean_bn=0.6, view_kappa=200.0, latent_dim=32),
                                            data=dict(view_encoder='minilm'))
       for dec, m in (('fresh', dict(CONT)), ('copy', dict(CONT, decoder_init='base_model', decoder_z='every')))},
}

@torch.no_grad()
def l0_check(tr: Trainer, seed: int, n: int=128, batches: int=8) -> dict:
    """l0 - l reads l0 as an importance-sampled estimate from 32 draws of q (`marginal_nll`), an upper bound that
    loosens as KL grows: l0 on the first `n` held-out pairs with the run's 32 draws (the mean of `batches` estimates)
    and with all 32 x `batches` draws at once, the mean of the weights of every batch."""
    data, model, est = tr.data.tensors(tr.eval_set, tr.b['eval']), tr.model.eval(), []
    torch.manual_seed(seed)
    for i in torch.arange(min(n, len(tr.eval_set))).split(32):
        r = batch_rows(data, i)
        est.append(torch.stack([model.marginal_nll(r['input_ids'], r['y_mask'], r['attention_mask'],
                                                   y_view=r.get('y_view')) for _ in range(batches)]))
    est = torch.cat(est, 1).double()                                  # (batches, n): 32 draws each
    return dict(pairs=est.shape[1], draws=[32, 32 * batches], l0=[est.mean().item(),
                (math.log(batches) - torch.logsumexp(-est, 0)).mean().item()])

def run_arm(corpus, arm, seed, steps, pairs_path, base_dir, held, work_dir, out_dir, tag: str='', check_l0=False):
    "One arm on one seed: train, then judge its held-out posterior means; the record is written once and reused."
    out = out_dir / f'{corpus}_{arm}_s{seed}_{steps}{tag}.json'
    cfg = P.arm_config(ARMS[arm], seed, steps, pairs_path, base_dir)
    if out.exists():
        rec = json.loads(out.read_text())
        if diff := config_diff(stored_config(rec['config']), cfg):
            raise SystemExit(f'{out}: its settings differ from the arm today ({diff}): remove it to rerun')
        if not check_l0 or 'l0_check' in rec: return rec
    run = work_dir / corpus / 'continuous' / f'{arm}_s{seed}_{steps}{tag}'
    if out.exists():        # a finished run, for its l0 check alone
        tr = Trainer(cfg, run, progress=False); tr.fit(resume=True)
        rec['l0_check'] = l0_check(tr, seed)
        out.write_text(json.dumps(rec, indent=1))
        return rec
    t0 = time.perf_counter()
    tr = Trainer(cfg, run, progress=False)
    tr.fit(resume=(run / 'metrics.jsonl').exists())
    wall = time.perf_counter() - t0
    curve = [{k: round(r[k], 4) for k in ('step', 'kl', 'code_contribution', 'decoder_vs_base') if k in r}
             for r in map(json.loads, (run / 'metrics.jsonl').read_text().splitlines()) if r['phase'] == 'eval']
    mu_train, _ = split_posterior(tr, 'train')
    mu, logvar = split_posterior(tr, 'eval')
    _, code = embedding_kmeans(mu_train, mu, P.K, seed)
    final = json.loads((run / 'metrics.json').read_text())
    rec = dict(corpus=corpus, arm=arm, seed=seed, steps=steps, wall_seconds=round(wall, 1),
               kl=final['kl'], code_contribution=final['code_contribution'], decoder_vs_base=final['decoder_vs_base'],
               mutual_information=latent_mutual_information(mu, logvar, torch.Generator().manual_seed(seed)),
               active_units=active_units(mu), latent_dim=mu.shape[1], curve=curve,
               code=P.judged(code, held), config=json.loads((run / 'config.json').read_text()))
    if check_l0: rec['l0_check'] = l0_check(tr, seed)
    out.write_text(json.dumps(rec, indent=1))
    return rec

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('corpus', choices=sorted(P.CORPORA))
    ap.add_argument('arms', help=f'comma-separated, of {", ".join(ARMS)}')
    ap.add_argument('seeds')
    ap.add_argument('--steps', type=int, default=300); ap.add_argument('--out', default=str(P.HERE))
    ap.add_argument('--quick', action='store_true', help="make test's sizes")
    ap.add_argument('--l0-check', action='store_true',
                    help="l0 with 32 and 256 draws on 128 held-out pairs (`l0_check`), added to records without it")
    ap.add_argument('--base', choices=('steps', 'plateau'), default='steps',
                    help="the discrete probe's base: trained for 800 steps, or to its held-out plateau")
    a = ap.parse_args(argv)
    if bad := [x for x in a.arms.split(',') if x not in ARMS]: ap.error(f'unknown arms {bad}: choose from {list(ARMS)}')
    P.use_sizes(a.quick)
    work, results, out_dir = Path(a.out) / 'work', Path(a.out) / 'results', Path(a.out) / 'continuous'
    results.mkdir(parents=True, exist_ok=True); out_dir.mkdir(parents=True, exist_ok=True)
    pairs_path, base_dir = P.prepare(a.corpus, work, plateau=a.base == 'plateau')
    records = []
    for seed in (int(s) for s in a.seeds.split(',')):
        train, held = P.split(pairs_path, base_dir, seed)
        judges = P.baselines(a.corpus, seed, train, held, results, None, None)
        for arm in a.arms.split(','):
            rec = run_arm(a.corpus, arm, seed, a.steps, pairs_path, base_dir, held, work, out_dir,
                          '_plateau' if a.base == 'plateau' else '', a.l0_check)
            records.append(rec)
            print(f"{a.corpus} {arm} s{seed}: {rec['wall_seconds']:.0f} s, KL {rec['kl']:.3f}, MI "
                  f"{rec['mutual_information']:.3f}, active {rec['active_units']}/{rec['latent_dim']}, l0-l "
                  f"{rec['code_contribution']:.3f}, b-l0 {rec['decoder_vs_base']:.3f}; k-means on the means "
                  f"{rec['code']['above_chance']:.3f} (AMI {rec['code']['ami']:.3f}); "
                  + ', '.join(f"{n} {j['above_chance']:.3f}" for n, j in judges.items()), flush=True)
            if 'l0_check' in rec:
                c = rec['l0_check']
                print(f"  l0 on {c['pairs']} held-out pairs: {c['l0'][0]:.3f} with {c['draws'][0]} draws, "
                      f"{c['l0'][1]:.3f} with {c['draws'][1]}", flush=True)
    return records

if __name__ == '__main__': main()
