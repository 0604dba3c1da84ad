"""The embedding view end to end on a tiny corpus: y's sentence embeddings from an encoder folder built on the spot (a
`BertModel` from a config), computed once into the run's folder, a head on the code that the E-step reads, a start from
k-means on the embeddings; report and export judge the codes beside k-means on the same embeddings; the settings that
go with the view are refused apart from it."""
import json, sys
from pathlib import Path

import numpy as np
import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))   # the tests' helpers
from runs import KILL_AFTER, cli, records, run, without_wall

transformers = pytest.importorskip('transformers')
SETS = [['cat', 'dog', 'sat', 'ran'], ['red', 'blue', 'big', 'small'], ['mat', 'log', 'on', 'under']]
VIEW = ['--set', 'steps=4', '--set', 'eval_every=2', '--set', 'batch_size=8', '--set', 'model.d_model=16',
        '--set', 'data.eval_fraction=0.25', '--set', 'model.code_sizes=[3]', '--no-progress']

@pytest.fixture(scope='module')
def corpus(saved, tmp_path_factory):
    "Pairs whose y's words come from one of three planted sets (the topic column), and a tiny BERT on the base's tokenizer."
    d = tmp_path_factory.mktemp('view')
    g = np.random.default_rng(1)
    rows = [dict(x=str(g.choice(['the', 'a'])), y=' '.join(g.choice(SETS[i % 3], 4)),
                 topic=['animal', 'colour', 'place'][i % 3]) for i in range(120)]
    (d / 'topics.jsonl').write_text(''.join(json.dumps(r) + '\n' for r in rows))
    tok = transformers.AutoTokenizer.from_pretrained(saved / 'base')
    tok.save_pretrained(d / 'encoder')
    torch.manual_seed(0)
    transformers.BertModel(transformers.BertConfig(vocab_size=len(tok), hidden_size=16, num_hidden_layers=1,
                                                   num_attention_heads=2, intermediate_size=32,
                                                   max_position_embeddings=32)).save_pretrained(d / 'encoder')
    return d

def view_args(saved, corpus, *extra):
    return ['train', '--data', corpus / 'topics.jsonl', '--base-model', saved / 'base', *VIEW,
            '--set', f"data.view_encoder={corpus / 'encoder'}", *extra]

def view_run(saved, corpus, out, *extra, check=True):
    "The run in this process (`cli`)."
    return cli(*view_args(saved, corpus, *extra), '--out', out, check=check)

def weights(run_dir):
    from safetensors import safe_open
    with safe_open(run_dir / 'cvae.safetensors', 'pt') as f: return {k: f.get_tensor(k) for k in f.keys() if k.startswith('model.')}

def test_a_run_with_the_embedding_view(saved, corpus, tmp_path):
    "Trained, reported and exported; the embeddings computed once, the same run twice the same weights."
    from safetensors import safe_open
    out = tmp_path / 'run'
    view_run(saved, corpus, out, '--set', 'start.codes=view_kmeans', '--set', 'data.label_key=topic')
    views = out / 'views.safetensors'
    texts = {json.loads(line)['y'] for line in (corpus / 'topics.jsonl').read_text().splitlines()}
    with safe_open(views, 'pt') as f: assert f.get_tensor('embeddings').shape == (len(texts), 16)   # each text once
    assert 'view encoder' in json.loads((out / 'inputs.json').read_text())
    metrics = json.loads((out / 'metrics.json').read_text())
    assert all(np.isfinite(metrics[k]) for k in ('kl', 'recon_nll', 'code_contribution'))
    stamp = views.stat().st_mtime_ns
    table = cli('report', out).stdout.split('own categories (topic)')[1]
    rows = {w[0]: float(w[1]) for w in map(str.split, table.splitlines()) if w and w[0] in ('code', 'embedding_kmeans')}
    assert set(rows) == {'code', 'embedding_kmeans'}, table    # k-means on the run's own embeddings
    cli('export', out, '--out', tmp_path / 'held.jsonl', '--device', 'cpu')
    held = [json.loads(line) for line in (tmp_path / 'held.jsonl').read_text().splitlines()]
    assert len(held) == metrics['n_heldout'] and {h['code'] for h in held} <= {0, 1, 2}
    assert views.stat().st_mtime_ns == stamp                              # read back, never embedded again
    import shutil                                    # the encoder moved (the same bytes), its setting pointed there
    shutil.copytree(corpus / 'encoder', tmp_path / 'moved_encoder')
    cfg = json.loads((out / 'config.json').read_text()); cfg['data']['view_encoder'] = str(tmp_path / 'moved_encoder')
    (out / 'config.json').write_text(json.dumps(cfg))
    assert table in cli('report', out).stdout                      # opens, and judges as before
    again = tmp_path / 'again'
    view_run(saved, corpus, again, '--set', 'start.codes=view_kmeans', '--set', 'data.label_key=topic')
    a, b = weights(out), weights(again)
    assert any('view_head' in k for k in a) and a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    assert 'model.view_head.counts' in a              # the text preset's: each code's mean its pairs' running average

def test_averaged_means_resume_exactly(saved, corpus, tmp_path):
    """The text-view preset (its encoder swapped for the tiny one): the view's means are running averages kept in the
    checkpoint, and a killed run resumes exactly (the same seed, the same weights, in other processes)."""
    avg = ['--preset', 'text-view', '--set', 'start.steps=2']
    whole, killed = tmp_path / 'whole', tmp_path / 'killed'
    view_run(saved, corpus, whole, *avg)
    res = run(sys.executable, KILL_AFTER, killed, 'cvae.safetensors', *view_args(saved, corpus, *avg), check=False)
    assert res.returncode == -9 and not (killed / 'metrics.json').exists(), res.stderr[-2000:]
    view_run(saved, corpus, killed, *avg, '--resume')
    a, b = weights(whole), weights(killed)
    assert {'model.view_head.sums', 'model.view_head.counts'} <= a.keys() and a['model.view_head.counts'].sum() > 0
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    assert [without_wall(r) for r in records(killed)] == [without_wall(r) for r in records(whole)]

@pytest.mark.parametrize('args, message', [
    (['--set', 'model.family=continuous', '--set', 'model.view_decay=0.9'],
     "model.view_decay keeps the embedding view's means: the discrete family's"),
    (['--set', 'data.view_encoder=', '--set', 'model.view_kappa=10'],
     'model.view_kappa weighs the embedding view: it needs data.view_encoder'),
    (['--set', 'data.view_encoder=', '--set', 'start.codes=view_kmeans'], "start.codes='view_kmeans'"),
    (['--set', 'data.view_encoder=nowhere'], "expected 'minilm' or a folder"),
    (['--set', 'model.view_kappa=1e40'], 'view_kappa must be a number in (0, 1e+06]'),
    (['--set', 'model.family=continuous', '--set', 'model.view_kappa=1e40'],
     'view_kappa must be a number in [0, 1e+06]'),
])
def test_view_settings_that_do_not_go_together(saved, corpus, tmp_path, args, message):
    res = view_run(saved, corpus, tmp_path / 'r', *args, check=False)
    assert res.returncode == 2 and 'Traceback' not in res.stderr and message in res.stderr, res.stderr[-2000:]
    assert not (tmp_path / 'r' / 'metrics.jsonl').exists()

def test_an_encoder_folder_that_cannot_embed_is_refused_before_the_run(saved, corpus, tmp_path):
    "Its config alone, or its weights without a tokenizer: refused in one line before the run's folder is made."
    import shutil
    for name, files in (('config_only', ['config.json']), ('no_tokenizer', ['config.json', 'model.safetensors'])):
        d = tmp_path / name; d.mkdir()
        for f in files: shutil.copy(corpus / 'encoder' / f, d)
        res = view_run(saved, corpus, tmp_path / f'r_{name}', '--set', f'data.view_encoder={d}', check=False)
        assert res.returncode == 2 and 'Traceback' not in res.stderr and 'no tokenizer there' in res.stderr, res.stderr
        assert not (tmp_path / f'r_{name}').exists()

def test_the_continuous_family_reads_the_view(saved, corpus, tmp_path):
    """The continuous family's posterior reads y's sentence embedding and a head on z predicts it: trained, with its
    latent's held-out figures, and exported with the embeddings the run used."""
    out = tmp_path / 'run'
    view_run(saved, corpus, out, '--set', 'model.family=continuous', '--set', 'model.mean_bn=0.6',
             '--set', 'model.n_components=3', '--set', 'data.label_key=topic')
    a, dim = weights(out), json.loads((out / 'config.json').read_text())['model']['latent_dim']
    # q reads the embedding, (2 dim, its width), and a head on z predicts it, (its width, dim): the preset's 32 dims
    assert dim == 32 and a['model.view_in.weight'].shape == (2 * dim, 16)
    assert a['model.view_head.proj.weight'].shape == (16, dim)
    metrics = json.loads((out / 'metrics.json').read_text())
    assert 1 <= metrics['active_units'] <= dim and 0 <= metrics['latent_mutual_information'] <= np.log(metrics['n_heldout'])
    # its categories: k-means (3, the mixture's components) on the held-out posterior means, beside the clusterings
    table = cli('report', out).stdout.split('own categories (topic)')[1]
    rows = {w[0]: float(w[1]) for w in map(str.split, table.splitlines()) if w and w[0].endswith('kmeans')}
    assert {'latent_kmeans', 'embedding_kmeans', 'tfidf_kmeans'} <= set(rows) and 0 <= rows['latent_kmeans'] <= 1, table
    cli('export', out, '--out', tmp_path / 'held.jsonl', '--device', 'cpu')
    held = [json.loads(line) for line in (tmp_path / 'held.jsonl').read_text().splitlines()]
    assert len(held) == metrics['n_heldout'] and all(len(h['latent_mean']) == dim for h in held)
    assert {h['category'] for h in held} <= {'animal', 'colour', 'place'}
    # the means k-means reads are the exported ones (the same posterior, embeddings included)
    from inverse_surprisal.runs import load_run, split_posterior
    tr = load_run(out, device='cpu').trainer
    mu, logvar = split_posterior(tr, 'eval', batch_size=5)
    assert mu.shape == logvar.shape == (len(held), dim)
    assert torch.allclose(mu, torch.tensor([h['latent_mean'] for h in held]), atol=1e-5)
    with pytest.raises(ValueError, match="split must be 'train' or 'eval', got 'test'"): split_posterior(tr, 'test')
