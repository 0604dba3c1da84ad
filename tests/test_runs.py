"A finished run opened again: load_run + encode against the model inside the trainer, export's columns and units, safetensors and TensorBoard read back by their own readers."
import json, shutil

import numpy as np
import pytest
import torch

from runs import BIN, records, run
from inverse_surprisal.config import make_config, merge_overrides
from inverse_surprisal.runs import EXPORT_COLUMNS, encode, load_run
from inverse_surprisal.text import read_pairs
from inverse_surprisal.train import Trainer

transformers = pytest.importorskip('transformers')
pq = pytest.importorskip('pyarrow.parquet')
# the text preset without its view (tests/test_views.py runs the view)
OWN = dict(steps=4, eval_every=2, batch_size=8, model=dict(d_model=16), data=dict(eval_fraction=0.25, view_encoder='none'))

def own_config(saved, family, **over):
    # the encoder's q off training: encode against the trainer's encoder (EM's own q* has its own test below)
    return make_config('text', merge_overrides(OWN, dict(model=dict(family=family, eval_posterior='encoder'), objective=dict(recon='example'),
                                                    data=dict(path=str(saved / 'pairs.jsonl'), base_model=str(saved / 'base')), **over)))

@pytest.fixture(scope='module', params=['discrete', 'continuous'])
def trained(request, saved, tmp_path_factory):
    "An own-data run of either family, trained in this process; the trainer keeps its model."
    out = tmp_path_factory.mktemp(request.param) / 'run'
    tr = Trainer(own_config(saved, request.param), out, progress=False, device='cpu')
    tr.fit()
    return request.param, tr, out

def test_load_run_and_encode_match_the_trainer(trained):
    family, tr, out = trained
    opened = load_run(out, device='cpu')
    assert opened.tokenizer is not None and len(opened.held_out) == len(tr.eval_set)
    for k, v in tr.model.state_dict().items(): assert torch.equal(opened.model.state_dict()[k], v), k
    enc = encode(opened, batch_size=3)
    (l, kl, w, _, l0), _ = tr.data.held_out(tr.model, tr.b['eval'], tr.b['base_mean'], tr.cfg.steps)
    got = opened.trainer.per_example()
    torch.testing.assert_close(got['l'], l); torch.testing.assert_close(got['K'], kl)
    # the posterior of the trainer's own model, one pair at a time (no padding) against encode's padded batches
    from inverse_surprisal.nn import posterior_and_prior
    with torch.no_grad():
        for i, it in enumerate(tr.eval_set):
            q, _ = posterior_and_prior(tr.model.eval(), it['input_ids'][None], it['y_mask'][None])
            if family == 'discrete':
                torch.testing.assert_close(enc['code_probs'][i], tr.model.joint_log_prob(q).exp()[0], atol=1e-5, rtol=1e-4)
            else:
                torch.testing.assert_close(enc['mean'][i], q[0][0], atol=1e-5, rtol=1e-4)
                torch.testing.assert_close(enc['logvar'][i], q[1][0], atol=1e-5, rtol=1e-4)
    # new pairs of strings, tokenised with the run's tokenizer
    x, y = read_pairs(tr.cfg.data.path)[0]
    assert len(next(iter(encode(opened, [(x, y), (x, y)]).values()))) == 2
    with pytest.raises(ValueError, match='pairs is empty'): encode(opened, [])      # IndexError before

def test_export_columns_and_units(trained, tmp_path):
    family, tr, out = trained
    res = run(BIN / 'inverse-surprisal', 'export', out, '--out', tmp_path / 'held.parquet', '--device', 'cpu')
    assert 'held-out pairs of' in res.stdout
    t = pq.read_table(tmp_path / 'held.parquet')
    rows = t.to_pydict()
    last = ['code', 'code_q'] if family == 'discrete' else ['latent_mean']
    assert list(rows) == ['pair', 'x', 'y', 'b', 'l', 'K', 'weight', 'fractional_gain', 'l0', 'code_contribution',
                          'decoder_vs_base', *last]
    assert json.loads(t.schema.metadata[b'columns']) == {k: EXPORT_COLUMNS[k] for k in rows}
    pairs = read_pairs(tr.cfg.data.path)
    assert [(x, y) for x, y in zip(rows['x'], rows['y'])] == [pairs[i] for i in rows['pair']]
    pe = tr.per_example()
    b = np.array(rows['b'])
    np.testing.assert_allclose(b, pe['b'].numpy(), rtol=1e-6)
    # the example term's weight is 1/(b + eps), eps in nats like b
    np.testing.assert_allclose(rows['weight'], 1 / (b + tr.cfg.objective.eps), rtol=1e-5)
    np.testing.assert_allclose(rows['fractional_gain'], (b - np.array(rows['l'])) / b, rtol=1e-9)
    final = json.loads((out / 'metrics.json').read_text())
    np.testing.assert_allclose(np.mean(rows['K']), final['kl'], rtol=1e-5)
    # the code apart from the decoder, pair by pair, and their means the run's own last evaluation
    l, l0 = np.array(rows['l']), np.array(rows['l0'])
    np.testing.assert_allclose(rows['code_contribution'], l0 - l, rtol=1e-9)
    np.testing.assert_allclose(rows['decoder_vs_base'], b - l0, rtol=1e-9)
    for k in ('code_contribution', 'decoder_vs_base'): np.testing.assert_allclose(np.mean(rows[k]), final[k], atol=1e-4)
    if family == 'continuous': assert len(rows['latent_mean'][0]) == tr.cfg.model.latent_dim
    # the code from the same pass as l and K (per_example): the one `encode` gives the held-out pairs
    else:
        enc = encode(load_run(out, device='cpu'))
        np.testing.assert_array_equal(rows['code'], enc['code'].numpy())
        np.testing.assert_allclose(rows['code_q'], enc['code_probs'].max(1).values.numpy(), rtol=1e-5)   # q of its code
    # the same table as JSONL; an existing --out is refused in one line
    res = run(BIN / 'inverse-surprisal', 'export', out, '--out', tmp_path / 'held.parquet', check=False)
    assert res.returncode == 2 and 'exists: pass --overwrite' in res.stderr and 'Traceback' not in res.stderr
    # the run's own files are never a table's place, --overwrite or not: its log stays as it was
    log = (out / 'metrics.jsonl').read_bytes()
    res = run(BIN / 'inverse-surprisal', 'export', out, '--out', out / 'metrics.jsonl', '--overwrite', check=False)
    assert res.returncode == 2 and f'lies in the run directory {out}' in res.stderr and 'Traceback' not in res.stderr
    assert (out / 'metrics.jsonl').read_bytes() == log

def test_model_opens_with_safetensors_alone(trained):
    "The weights under `model.` in cvae.safetensors are the trained model's state dict: no unpickling."
    from safetensors import safe_open
    _, tr, out = trained
    with safe_open(out / 'cvae.safetensors', 'pt') as f:
        weights = {k[len('model.'):]: f.get_tensor(k) for k in f.keys() if k.startswith('model.')}
    assert weights.keys() == tr.model.state_dict().keys()
    for k, v in tr.model.state_dict().items(): assert torch.equal(weights[k], v), k

def test_changed_data_is_refused(trained, tmp_path):
    _, tr, out = trained
    copy = tmp_path / 'run'; shutil.copytree(out, copy)
    data = tmp_path / 'pairs.jsonl'; shutil.copy(tr.cfg.data.path, data)
    cfg = json.loads((copy / 'config.json').read_text()); cfg['data']['path'] = str(data)
    (copy / 'config.json').write_text(json.dumps(cfg))
    load_run(copy, device='cpu')                                           # the same bytes elsewhere: opens as it is
    with open(data, 'a') as f: f.write(json.dumps(dict(x='the', y='cat')) + '\n')
    with pytest.raises(ValueError, match='load_run: what the run in .* read has changed since it started: data file'):
        load_run(copy, device='cpu')

def test_tensorboard_scalars_are_the_log(trained):
    "Every number of every metrics.jsonl record, read back with TensorBoard's event reader."
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    _, tr, out = trained
    acc = EventAccumulator(str(out / 'tensorboard'), size_guidance={'scalars': 0}).Reload()
    got = {(tag, e.step): e.value for tag in acc.Tags()['scalars'] for e in acc.Scalars(tag)}
    want = {(f"{r['phase']}/{k}", r['step']): v for r in map(json.loads, (out / 'metrics.jsonl').read_text().splitlines())
            for k, v in r.items() if k not in ('phase', 'step') and isinstance(v, (int, float)) and not isinstance(v, bool)}
    assert got.keys() == want.keys()
    np.testing.assert_allclose([got[k] for k in want], [want[k] for k in want], rtol=1e-6)

def test_model_posterior_off_training(saved, tmp_path):
    "eval_posterior='model': the held-out figures, encode (held-out and new pairs) and export read EM's own q*."
    cfg = make_config('text', merge_overrides(OWN, dict(
        model=dict(family='discrete', eval_posterior='model'), objective=dict(recon='example'),
        data=dict(path=str(saved / 'pairs.jsonl'), base_model=str(saved / 'base')))))
    tr = Trainer(cfg, tmp_path / 'run', progress=False, device='cpu')
    tr.fit()
    ex = {}
    tr.data.held_out(tr.model, tr.b['eval'], tr.b['base_mean'], tr.cfg.steps, ex)
    q_star = tr.model.joint_log_prob(ex['log_q']).exp()
    rows = lambda: (dict(input_ids=it['input_ids'][None], y_mask=it['y_mask'][None]) for it in tr.eval_set)
    with torch.no_grad():      # q* by hand, pair by pair, with the b the run used; the encoder's q differs
        b, tok = tr.b['eval']
        by_hand = torch.cat([tr.model.model_posterior(r['input_ids'], r['y_mask'], b[i:i + 1],
                                                      tok[i:i + 1, :r['input_ids'].shape[1]], tr.b['base_mean']).exp()
                             for i, r in enumerate(rows())])
        encoder = torch.cat([tr.model.joint_log_prob(tr.model.posterior(r['input_ids'])).exp() for r in rows()])
    torch.testing.assert_close(q_star, by_hand, atol=1e-5, rtol=1e-4)
    assert (q_star - encoder).abs().max() > 1e-3
    opened = load_run(tmp_path / 'run', device='cpu')
    torch.testing.assert_close(encode(opened, batch_size=3)['code_probs'], q_star, atol=1e-5, rtol=1e-4)
    pos, x, y = tr.data.eval_pairs[0]              # a new pair of strings: b from the base model, as the cache holds it
    torch.testing.assert_close(encode(opened, [(x, y)])['code_probs'][0], q_star[0], atol=1e-4, rtol=1e-3)

def test_encode_refuses_a_pair_longer_than_the_cvae_reads(trained):
    "A pair the base model reads (16 positions) but the CVAE, which knows its training pairs' length, does not."
    _, tr, out = trained
    opened = load_run(out, device='cpu')
    y = ' '.join(['the'] * (opened.model.cfg.seq_len - 1))         # with the separator and end: one too many
    assert opened.model.cfg.seq_len < 15
    with pytest.raises(ValueError, match='longer than'):
        encode(opened, [('', y)])

def test_support_and_candidates_in_a_text_run(saved, tmp_path):
    """model.support_delta and model.encoder_delta through the trainer: every step's log names the mass left out of the
    gradient (within delta), the classes kept and run forward, and on its log steps after the start q*'s mass the
    candidates missed."""
    cfg = make_config('text', merge_overrides(OWN, dict(
        steps=6, log_every=2, start=dict(steps=2),
        model=dict(family='discrete', code_sizes=(5,), support_delta=0.05, encoder_delta=0.05),
        data=dict(path=str(saved / 'pairs.jsonl'), base_model=str(saved / 'base')))))
    Trainer(cfg, tmp_path / 'run', progress=False, device='cpu').fit()
    steps = [r for r in records(tmp_path / 'run') if r['phase'] == 'cvae']
    assert [r['step'] for r in steps] == [0, 2, 4]
    for r in steps:
        assert 0 <= r['left_out_mass'] <= r['left_out_mass_max'] <= 0.05
        assert 1 <= r['support_size'] <= r['forward_classes'] <= 5
    # the start's classes stand for q* in its first steps: only they run, nothing left out, nothing to miss
    assert steps[0]['support_size'] == steps[0]['forward_classes'] == 1 and steps[0]['left_out_mass'] == 0
    assert 'candidate_miss' not in steps[0] and all(0 <= r['candidate_miss'] <= 1 for r in steps[1:])
