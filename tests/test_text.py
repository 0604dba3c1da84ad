"Own data end to end at the scoring level: a JSONL file, a locally saved tokenizer and GPT-2, b against Hugging Face's loss."
import json, sys
from pathlib import Path

import numpy as np
import pytest
import torch

from inverse_surprisal.cache import WithBaseSurprisal, build_cache
from inverse_surprisal.reference import score_batch
from inverse_surprisal.text import TextPairs, bucketed_batches, collate, load_tokenizer, read_pairs, require_hf

transformers = pytest.importorskip('transformers')
tokenizers = pytest.importorskip('tokenizers')

def test_b_of_own_pairs_equals_hugging_face_loss(saved, tmp_path):
    "b from the cache, for every pair, equals the model's own labels loss times the number of y tokens."
    tokenizer = load_tokenizer(saved / 'base')
    model = transformers.AutoModelForCausalLM.from_pretrained(saved / 'base', local_files_only=True).eval()
    data = TextPairs(read_pairs(saved / 'pairs.jsonl'), tokenizer, max_len=model.config.n_positions)
    cache = build_cache(model, data, tmp_path / 'b.iscache', batch_size=8, progress=False)
    served = WithBaseSurprisal(data, cache)
    with torch.no_grad():
        for i in range(len(data)):
            ids, y = data[i]['input_ids'][None], data[i]['y_mask'][None]
            hf = model(input_ids=ids, labels=ids.masked_fill(~y, -100)).loss * y.sum()
            torch.testing.assert_close(served[i]['base_surprisal'].float(), hf, rtol=1e-5, atol=1e-5)
    # the same through padded, length-bucketed batches
    for idx in bucketed_batches([len(it['input_ids']) for it in data], 8):
        batch = collate([data[i] for i in idx.tolist()], tokenizer.pad_token_id)
        b = score_batch(model, **batch)
        want = torch.stack([served[i]['base_surprisal'].float() for i in idx.tolist()])
        torch.testing.assert_close(b.b, want, rtol=1e-5, atol=1e-5)

def test_own_data_errors(saved, tmp_path):
    tokenizer = load_tokenizer(saved / 'base')
    with pytest.raises(ValueError, match='longer than max_len=4'): TextPairs(read_pairs(saved / 'pairs.jsonl'), tokenizer, max_len=4)
    with pytest.raises(ValueError, match='no such folder'): load_tokenizer(tmp_path / 'missing')
    (tmp_path / 'empty').mkdir()
    with pytest.raises(ValueError, match='no tokenizer there'): load_tokenizer(tmp_path / 'empty')
    (tmp_path / 'bad.jsonl').write_text('{"x": "a", "y": "b"}\nnot json\n')
    with pytest.raises(ValueError, match=r'bad.jsonl, line 2: not JSON'): read_pairs(tmp_path / 'bad.jsonl')

def test_missing_extra_is_named(monkeypatch):
    monkeypatch.setitem(sys.modules, 'transformers', None)
    with pytest.raises(ImportError, match=r"pip install 'inverse_surprisal\[hf\]'"): require_hf('load_tokenizer')

@pytest.mark.parametrize('family', ['continuous', 'discrete'])
def test_text_batches_train_both_cvae_families(saved, family):
    "Bucketed, padded text batches through either CVAE family: finite loss, gradients on every part, a step lowers it."
    from inverse_surprisal.continuous_cvae import ContinuousCVAE, ContinuousCVAEConfig
    from inverse_surprisal.objective import ObjectiveConfig
    from inverse_surprisal.shared_discrete_cvae import SharedDiscreteCVAE, SharedDiscreteCVAEConfig
    tokenizer = load_tokenizer(saved / 'base')
    data = TextPairs(read_pairs(saved / 'pairs.jsonl'), tokenizer, max_len=16)
    torch.manual_seed(0)
    arch = dict(vocab_size=len(tokenizer), seq_len=16, d_model=32, n_layers=1, posterior_encoder='transformer', aux_head='bow')
    model = (ContinuousCVAE(ContinuousCVAEConfig(**arch), ObjectiveConfig(recon='example', aux_weight=1.0)) if family == 'continuous' else
             SharedDiscreteCVAE(SharedDiscreteCVAEConfig(code_sizes=(4,), **arch), ObjectiveConfig(recon='example', aux_weight=1.0)))
    idx = bucketed_batches([len(it['input_ids']) for it in data], 40)[0]
    batch = collate([data[i] for i in idx.tolist()], tokenizer.pad_token_id)
    b = torch.rand(len(idx)) * 10 + 1
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    losses = []
    for _ in range(2):
        torch.manual_seed(1)
        out = model(batch['input_ids'], batch['y_mask'], b, attention_mask=batch['attention_mask'])
        opt.zero_grad(); out.loss.backward(); losses.append(out.loss.item())
        if len(losses) == 1: assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in model.parameters())
        opt.step()
    assert np.isfinite(losses).all() and losses[1] < losses[0], losses

def test_cli_end_to_end_on_own_pairs(saved, tmp_path):
    "`inverse-surprisal train --data --base-model` in a new process: a finished run whose b is Hugging Face's labels loss."
    import subprocess
    from inverse_surprisal.cache import BaseSurprisalCache
    out = tmp_path / 'run'
    cmd = [str(Path(sys.executable).parent / 'inverse-surprisal'), 'train', '--data', str(saved / 'pairs.jsonl'), '--base-model', str(saved / 'base'),
           '--recon', 'example', '--set', 'steps=8', '--set', 'eval_every=4', '--set', 'batch_size=8', '--set', 'model.d_model=32',
           '--set', 'data.eval_fraction=0.25', '--out', str(out), '--no-progress']
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    assert 'code_length_reduction' in res.stdout and f'run directory: {out.resolve()}' in res.stdout
    m = json.loads((out / 'metrics.json').read_text())
    assert (m['step'], m['n_heldout'], m['n_train']) == (8, 10, 30)
    for k in ('base_surprisal_mean', 'recon_nll', 'kl', 'code_length_reduction', 'fractional_gain', 'weight_ess_fraction'):
        assert np.isfinite(m[k]), k
    assert m['weight_ess_fraction'] < 1                       # the example term weighs pairs unequally
    tokenizer = load_tokenizer(saved / 'base')
    model = transformers.AutoModelForCausalLM.from_pretrained(saved / 'base', local_files_only=True).eval()
    data = TextPairs(read_pairs(saved / 'pairs.jsonl'), tokenizer)
    served = {name: WithBaseSurprisal(data, BaseSurprisalCache(out / f'base_{name}.iscache')) for name in ('train', 'eval')}
    b, found = [], 0
    with torch.no_grad():
        for i in range(len(data)):
            ids, y = data[i]['input_ids'][None], data[i]['y_mask'][None]
            hf = (model(input_ids=ids, labels=ids.masked_fill(~y, -100)).loss * y.sum()).item()
            for s in served.values():
                try: got = s[i]['base_surprisal'].item()
                except KeyError: continue
                found += 1; b.append((got, hf))
    assert found == len(data)                                  # every pair is in exactly one of the two caches
    np.testing.assert_allclose(*zip(*b), rtol=1e-5, atol=1e-5)
    # the held-out mean in metrics.json is the mean of the eval cache
    np.testing.assert_allclose(m['base_surprisal_mean'], BaseSurprisalCache(out / 'base_eval.iscache').b.mean(), rtol=1e-6)

@pytest.mark.parametrize('z_layers', [0, 1])
def test_the_base_decoder_with_z_in_every_block_is_the_base_at_step_0(saved, tmp_path, z_layers):
    """Through the CLI, the base's copy with z in every block (or its top block only) reconstructs every held-out pair
    as the base scores it (the run's one step, at a learning rate of 1e-30, moves no weight measurably), and the
    export's two parts add up to b - l pair by pair: (b - l0) + (l0 - l)."""
    import csv, subprocess
    out, bin_ = tmp_path / 'run', Path(sys.executable).parent / 'inverse-surprisal'
    sets = ['model.decoder_init="base_model"', 'model.decoder_z="every"', 'steps=1', 'eval_every=1', 'lr=1e-30',
            'model.decoder_lr=1e-30', 'batch_size=8', 'data.eval_fraction=0.25', f'model.decoder_z_layers={z_layers}']
    res = subprocess.run([str(bin_), 'train', '--data', str(saved / 'pairs.jsonl'), '--base-model', str(saved / 'base'),
                          *[a for s in sets for a in ('--set', s)], '--out', str(out), '--no-progress'],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    m = json.loads((out / 'metrics.json').read_text())
    for k in ('code_length_reduction', 'decoder_vs_base', 'code_contribution'): assert abs(m[k]) < 1e-4, (k, m[k])
    res = subprocess.run([str(bin_), 'export', str(out), '--out', str(tmp_path / 'held.csv'), '--device', 'cpu'],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    rows = list(csv.DictReader(open(tmp_path / 'held.csv')))
    t = {k: np.array([float(r[k]) for r in rows]) for k in ('b', 'l', 'decoder_vs_base', 'code_contribution')}
    assert len(rows) == 10 and np.abs(t['b'] - t['l']).max() < 1e-4
    np.testing.assert_allclose(t['decoder_vs_base'] + t['code_contribution'], t['b'] - t['l'], atol=1e-6)

@pytest.mark.parametrize('opts, message', [
    # named as the run stores them: absolute
    ({'--base-model': 'nowhere'}, f"base model folder {Path.cwd() / 'nowhere'}: no such folder"),
    ({'--tokenizer': 'nowhere'}, f"tokenizer folder {Path.cwd() / 'nowhere'}: no such folder"),
    ({'--data': 'BAD'}, 'bad.jsonl, line 2: not JSON'),
    ({'--base-model': 'SHORT', '--tokenizer': 'BASE'}, '40 of 40 pairs are longer than max_len=2'),
    ({'--set': 'model.posterior_encoder=alignment'}, "variable-length batches need posterior_encoder='transformer'"),
    ({'--base': 'oracle'}, "base.source='pretrained' goes with own data"),
    ({'--set': 'model.decoder_z_layers=3'}, 'model.decoder_z_layers=3, but the base model has 2 blocks'),
])
def test_cli_own_data_errors(saved, tmp_path, capsys, opts, message):
    "Each unusable input stops the command line with status 2 and one message naming it, not a traceback."
    from inverse_surprisal.cli import main
    (tmp_path / 'bad.jsonl').write_text('{"x": "a", "y": "b"}\nnot json\n')
    short = transformers.GPT2Config.from_pretrained(saved / 'base', local_files_only=True); short.n_positions = 2
    transformers.GPT2LMHeadModel(short).save_pretrained(tmp_path / 'short')
    names = {'BAD': tmp_path / 'bad.jsonl', 'SHORT': tmp_path / 'short', 'BASE': saved / 'base'}
    opts = {'--data': saved / 'pairs.jsonl', '--base-model': saved / 'base', **{k: names.get(v, v) for k, v in opts.items()}}
    with pytest.raises(SystemExit) as e:
        main(['train', *[str(x) for kv in opts.items() for x in kv], '--out', str(tmp_path / 'r'), '--no-progress'])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert message in err and 'Traceback' not in err, err
